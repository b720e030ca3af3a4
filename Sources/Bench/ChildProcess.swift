import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program run to completion as a child process, with what it printed.
///
/// Its peak memory is not taken from `wait4`'s resource usage: Linux folds the memory of the process that spawned
/// it (as it stood at the `exec`) into that figure, so a child of a large process looks large. A child that must
/// report its peak reads its own `VmHWM`, which starts afresh at `exec`.
struct ChildProcess {
    struct Outcome {
        /// The exit status, or 128 + the signal that ended it.
        let status: Int32
        let standardOutput: String
        let standardError: String
    }

    let executable: String
    let arguments: [String]

    /// Runs the child with its output sent to files in `folder` (so a chatty child cannot fill a pipe and stall),
    /// and waits for it.
    func run(outputIn folder: URL) throws(BenchmarkError) -> Outcome {
        let stem = folder.appendingPathComponent("child-\(UUID().uuidString)").path
        let outputPath = stem + ".out"
        let errorPath = stem + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: outputPath)
            try? FileManager.default.removeItem(atPath: errorPath)
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw BenchmarkError("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }

        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw BenchmarkError("lost track of \(executable): \(String(cString: strerror(errno)))") }
        }
        let exitStatus = Self.exited(status) ? Self.exitCode(status) : 128 + Self.signal(status)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        return Outcome(status: exitStatus, standardOutput: output, standardError: errors)
    }

    // The W* macros of <sys/wait.h>, which Swift does not import.
    private static func exited(_ status: Int32) -> Bool { status & 0x7f == 0 }
    private static func exitCode(_ status: Int32) -> Int32 { (status >> 8) & 0xff }
    private static func signal(_ status: Int32) -> Int32 { status & 0x7f }
}
