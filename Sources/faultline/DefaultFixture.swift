import ChatFixture
import Foundation
import GraphStore
import TerminalText

#if canImport(Glibc)
import Glibc
#endif

/// The default chat store: what every command given no store opens. It lives in the user's data folder,
/// `$XDG_DATA_HOME/faultline/chat.sqlite`, or `~/.local/share/faultline/chat.sqlite` when `XDG_DATA_HOME` is unset
/// (or not an absolute path, which the XDG base directory rules say to ignore); `FAULTLINE_DEFAULT_STORE` names
/// another file. It is generated on first use (1,000 users, 300 chats, 60,000 messages; a few seconds), announced on
/// stderr.
///
/// Two commands started together on a machine without it (the browser in one terminal, `simulate` in another) make
/// it once: the first holds a lock on the folder while it generates, the others wait for it and then open what it
/// made. The finished file is linked into place, which never replaces anything, so no store another process is
/// already using can be swapped out from under it.
enum DefaultFixture {
    /// Where the default store is, from the environment, or why no place can be named.
    static func location(environment: [String: String] = ProcessInfo.processInfo.environment) throws(CommandFailure) -> String {
        if let path = environment["FAULTLINE_DEFAULT_STORE"], !path.isEmpty { return path }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return URL(fileURLWithPath: data).appendingPathComponent("faultline/chat.sqlite").path
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return URL(fileURLWithPath: home).appendingPathComponent(".local/share/faultline/chat.sqlite").path
        }
        throw CommandFailure("no place for the default chat store: neither XDG_DATA_HOME nor HOME is an absolute path "
            + "(set one, set FAULTLINE_DEFAULT_STORE, or name a store file)")
    }

    /// How `--help` names the default store: the place the rules give, and this environment's.
    static var helpText: String {
        let here = (try? location()).map { " (here: \($0))" } ?? ""
        return "With no store, commands open the default chat store, $XDG_DATA_HOME/faultline/chat.sqlite or "
            + "~/.local/share/faultline/chat.sqlite\(here), made on first use; FAULTLINE_DEFAULT_STORE names another file."
    }

    /// The default store's path, generating it first when it does not exist yet.
    static func ensure() throws(CommandFailure) -> String {
        let path = try location()
        if exists(path) { return path }
        let shown = ControlCharacters.escaped(path)
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            // 0700, as the XDG rules ask of the folders an application makes there.
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw CommandFailure("\(folder): cannot make the folder for the default chat store (\(error.localizedDescription))")
        }
        let lock = FolderLock(folder) {
            Output.writeError("faultline: waiting for another faultline process to finish making the default chat store at \(shown)\n")
        }
        defer { lock.release() }
        if exists(path) { return path }
        let options = FixtureOptions.defaults
        Output.writeError(
            "faultline: creating the default chat store at \(shown) (\(options.users) users, \(options.chats) chats, \(options.messages) messages)\n")
        do {
            _ = try FixtureWriting.generate(options, to: path, replacing: false, clearingLeftovers: true)
        } catch where exists(path) {
            // Another process made it while this one was generating (it held no lock, or the folder cannot be
            // locked): that store is the same, and is used as it is.
        }
        return path
    }

    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}

/// An exclusive `flock` on a folder, held until `release()`: makers of the same file wait for each other. A folder
/// that cannot be locked (a file system without `flock`) is not locked; the caller must stay safe without it.
final class FolderLock {
    private var descriptor: Int32

    /// Takes the lock, calling `waiting` once first when another process holds it.
    init(_ folder: String, waiting: () -> Void) {
        descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return }
        guard errno == EWOULDBLOCK else { return }
        waiting()
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { return }
        }
    }

    func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)  // drops the lock
        descriptor = -1
    }

    deinit { release() }
}
