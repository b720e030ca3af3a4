import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The binary copied to an empty folder, with the source tree out of sight (an empty file system mounted over it in
/// a mount namespace of the test's own): every command works with no store argument, and the default store is made
/// in the user's data folder, never in the source tree.
@Suite struct RelocatedBinaryTests {
    static let canHide: Bool = {
        guard getuid() == 0 else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["unshare", "-m", "/bin/sh", "-c", "mount -t tmpfs tmpfs /mnt"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    @Test(.enabled(if: canHide, "needs root and 'unshare -m' to hide the source tree behind an empty mount"))
    func theBinaryRunsAnywhereWithTheSourceTreeHidden() throws {
        let folder = TemporaryFolder()
        let binary = folder.path("bin/faultline")
        try FileManager.default.createDirectory(atPath: folder.path("bin"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.path("home"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.path("work"), withIntermediateDirectories: true)
        // The package and its build folder (where the binary was built) both vanish behind an empty mount.
        let hidden = packageRoot.path
        let steps = [
            "\"$FL\" fixture generate --out small.sqlite --users 20 --chats 4 --messages 80",
            "\"$FL\" trace --size 80x24 --script 'down; open'",
            "\"$FL\" check",
            "\"$FL\" scenario associates",
            "\"$FL\" --help",
        ]
        // The copy is made by the child shell, not in this process: a file this process had open for writing could be
        // inherited by a process another test forks meanwhile, and running the copy would then fail ("Text file busy").
        let script = "cp \"$SOURCE\" \"$FL\" && mount -t tmpfs tmpfs \"$HIDE\" && cd \"$WORK\" && " + steps.map { "{ \($0) > /dev/null || echo \"failed: \($0)\" >&2; }" }
            .joined(separator: " && ") + " && echo \"hidden: $(ls -A \"$HIDE\" | tr '\\n' ' ')\" >&2"
        let ran = try FaultlineBinary.runTool(["-i", "HOME=\(folder.path("home"))", "PATH=/usr/bin:/bin", "FL=\(binary)", "SOURCE=\(FaultlineBinary.url.path)",
                                               "HIDE=\(hidden)", "WORK=\(folder.path("work"))", "unshare", "-m", "/bin/sh", "-c", script])
        let stderr = ran.stderr
        #expect(ran.status == 0, "\(stderr)")
        #expect(!stderr.contains("failed:"), "\(stderr)")
        #expect(!stderr.contains("error:") && !stderr.contains("Fatal error"), "\(stderr)")
        let store = folder.path("home/.local/share/faultline/chat.sqlite")
        #expect(stderr.contains("faultline: creating the default chat store at \(store) "), "\(stderr)")
        #expect(FileManager.default.fileExists(atPath: store))
        #expect(FileManager.default.fileExists(atPath: folder.path("work/small.sqlite")))
        // Nothing was written where the source tree was.
        #expect(stderr.split(separator: "\n").contains("hidden: "), "\(stderr)")
    }
}
