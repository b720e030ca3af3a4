import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Every byte the commands write to stdout and stderr goes through here, so that failing to write is an error of its
/// own and never a crash.
///
/// - stdout is written with `write(2)`, unbuffered, and every failure is thrown: a closed stdout, a full disk
///   (`/dev/full`), a reader that went away (a broken pipe; SIGPIPE is ignored, so the write fails with EPIPE instead
///   of killing the process) all end the command with one `error: stdout: …` line and exit status 1.
/// - stderr is written the same way, but a failure there is dropped: there is nowhere left to report it, and the exit
///   status still says what happened.
/// - A standard descriptor closed at launch is held open on `/dev/null` (stdout read-only, so writing to it still
///   fails as it should), so that no file the command opens later (the SQL log, a store) can land on descriptor 1 or
///   2 and receive output or error lines meant for the terminal.
///
/// ```swift
/// Output.prepare()                       // first thing in main
/// try Output.write(report.text())        // throws CommandFailure("stdout: cannot write the output (…)")
/// Output.writeError("error: …\n")
/// ```
enum Output {
    /// Ignores SIGPIPE and holds closed standard descriptors open; call once, before anything is opened or written.
    static func prepare() {
        signal(SIGPIPE, SIG_IGN)
        // In order: `open` takes the lowest free descriptor, which is the one found closed.
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", descriptor == 2 ? O_WRONLY : O_RDONLY)
            if opened >= 0, opened != descriptor {
                // Not the expected slot (cannot happen when the lower ones are open): leave things as they were.
                close(opened)
            }
        }
    }

    /// Writes `text` to stdout in full.
    static func write(_ text: String) throws(CommandFailure) {
        if let reason = writeAll(text, to: STDOUT_FILENO) {
            if reason == EBADF { throw CommandFailure("stdout is closed: cannot write the output") }
            throw CommandFailure("stdout: cannot write the output (\(String(cString: strerror(reason))))")
        }
    }

    /// Writes `text` to stderr as far as it can; a failure is dropped (see above).
    static func writeError(_ text: String) {
        _ = writeAll(text, to: STDERR_FILENO)
    }

    /// Flushes C's stdout buffer, in case a library printed to it, and reports a failure to do so.
    static func finish() throws(CommandFailure) {
        // Every C stream (nil): naming `stdout` is not allowed in strict concurrency, and ours are the only ones.
        if fflush(nil) != 0 {
            throw CommandFailure("stdout: cannot write the output (\(String(cString: strerror(errno))))")
        }
    }

    /// Writes every byte of `text` to `descriptor`, retrying after an interruption and waiting while a non-blocking
    /// descriptor is full. Returns the error number it stopped short with, or nil when all was written.
    private static func writeAll(_ text: String, to descriptor: Int32) -> Int32? {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.write(descriptor, base + offset, buffer.count - offset)
            }
            if written > 0 {
                offset += written
                continue
            }
            let code = written < 0 ? errno : EIO
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {
                var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&poller, 1, -1)
                continue
            }
            return code
        }
        return nil
    }
}
