import Foundation
import Glibc
import Synchronization

/// A private tmux server showing one command in a window of a chosen size: end-to-end tests of what a terminal
/// program draws, without a terminal. Each session has its own server, so tests can run in parallel; the server is
/// killed by `close()` or when the session is released. After the command ends, the pane shows `EXIT=<status>`
/// and stays 30 seconds so that line can be read.
///
/// ```swift
/// let session = try TmuxSession(command: "\(FaultlineBinary.url.path) browse", width: 80, height: 24)
/// try session.waitFor("Chats")
/// try session.send(keys: "Down", "Enter")
/// try session.type("/ski")
/// try session.send(keys: "q")
/// #expect(try session.waitForExit() == 0)
/// ```
final class TmuxSession {
    /// Why a session could not do what a test asked.
    enum Failure: Error, CustomStringConvertible {
        case notInstalled
        case couldNotStart(String)
        case tmuxFailed(arguments: [String], status: Int32, message: String)
        case timedOut(waitingFor: String, screen: String)

        var description: String {
            switch self {
            case .notInstalled:
                "tmux is not installed"
            case .couldNotStart(let reason):
                "could not start tmux: \(reason)"
            case .tmuxFailed(let arguments, let status, let message):
                "tmux \(arguments.joined(separator: " ")) exited with \(status): \(message)"
            case .timedOut(let text, let screen):
                "timed out waiting for \(text.debugDescription); the screen was:\n\(screen)"
            }
        }
    }

    /// Whether tmux is installed; tests that need it are skipped otherwise.
    static let isAvailable = executable != nil

    private static let executable: URL? = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        .split(separator: ":")
        .map { URL(fileURLWithPath: String($0)).appendingPathComponent("tmux") }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    private let socketName = "faultline-test-\(UUID().uuidString)"
    private var isOpen = true

    /// Starts `command` (run by the shell) in a `width` × `height` window with a UTF-8 locale, plus `environment`.
    init(command: String, width: Int = 120, height: Int = 40, environment: [String: String] = [:]) throws {
        var arguments = ["new-session", "-d", "-s", "S", "-x", "\(width)", "-y", "\(height)", "-e", "LANG=C.UTF-8"]
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) {
            arguments += ["-e", "\(name)=\(value)"]
        }
        // After the command: its status, then the line discipline it left (canonical input and echo are what a
        // program that leaves the terminal raw turns off).
        arguments.append("\(command); echo EXIT=$?; echo TTY=$(stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)' | tr '\\n' ' '); sleep 30")
        try tmux(arguments)
    }

    deinit { close() }

    /// The screen as text: one line per row, trailing blanks cut, wide characters once each. With
    /// `joiningWrappedLines`, a line the terminal wrapped at its edge comes back as one.
    func capture(joiningWrappedLines: Bool = false) throws -> String {
        try tmux(["capture-pane", "-p", "-t", "S"] + (joiningWrappedLines ? ["-J"] : []))
    }

    /// Polls the screen every 50 ms until it shows `text` and two captures in a row agree (a program may draw a
    /// frame in several writes), and returns that screen.
    @discardableResult
    func waitFor(_ text: String, timeout: Duration = .seconds(10)) throws -> String {
        try waitUntil(timeout: timeout, "\(text.debugDescription) on a settled screen") { $0.contains(text) }
    }

    /// Polls until `text` is no longer on a settled screen, and returns that screen.
    @discardableResult
    func waitUntilGone(_ text: String, timeout: Duration = .seconds(10)) throws -> String {
        try waitUntil(timeout: timeout, "\(text.debugDescription) to go") { !$0.contains(text) }
    }

    /// Polls the screen as fast as tmux answers until one capture shows `text`, settled or not, and returns it: for
    /// a line that is only up while something runs (a progress line redrawn every 100 ms).
    @discardableResult
    func glimpse(_ text: String, timeout: Duration = .seconds(10)) throws -> String {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let screen = try capture()
            if screen.contains(text) { return screen }
            guard clock.now < deadline else { throw Failure.timedOut(waitingFor: text.debugDescription, screen: screen) }
        }
    }

    private func waitUntil(timeout: Duration, _ what: String, _ condition: (String) -> Bool) throws -> String {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var previous: String?
        while true {
            let screen = try capture()
            if condition(screen), screen == previous { return screen }
            previous = screen
            guard clock.now < deadline else { throw Failure.timedOut(waitingFor: what, screen: screen) }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Waits for the command to end and returns its exit status.
    func waitForExit(timeout: Duration = .seconds(10)) throws -> Int32 {
        let screen = try waitFor("EXIT=", timeout: timeout)
        let line = screen.split(separator: "\n").last { $0.hasPrefix("EXIT=") } ?? ""
        guard let status = Int32(line.dropFirst("EXIT=".count)) else {
            throw Failure.timedOut(waitingFor: "an exit status", screen: screen)
        }
        return status
    }

    /// Presses keys by tmux's names: `"Up"`, `"Enter"`, `"C-c"`, `"q"`.
    func send(keys: String...) throws {
        try tmux(["send-keys", "-t", "S"] + keys)
    }

    /// Types `literal` as it is, UTF-8 included.
    func type(_ literal: String) throws {
        try tmux(["send-keys", "-t", "S", "-l", literal])
    }

    /// A tmux format expanded for the pane, e.g. `"#{alternate_on}"` (1 while the command uses the alternate screen).
    func format(_ format: String) throws -> String {
        try tmux(["display-message", "-p", "-t", "S", format]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The terminal modes a full-screen program changes and must give back when it ends: the alternate screen,
    /// cursor visibility, mouse reporting and the keypad modes. `restored` is how a shell leaves them.
    struct Modes: Equatable, CustomStringConvertible {
        var alternateScreen: Bool
        var cursorVisible: Bool
        var mouseReporting: Bool
        var keypad: Bool
        var cursorKeys: Bool

        static let restored = Modes(alternateScreen: false, cursorVisible: true, mouseReporting: false, keypad: false,
                                    cursorKeys: false)

        var description: String {
            "alternate \(alternateScreen), cursor \(cursorVisible), mouse \(mouseReporting), keypad \(keypad), "
                + "cursor keys \(cursorKeys)"
        }
    }

    /// The pane's terminal modes now.
    func modes() throws -> Modes {
        let flags = try format("#{alternate_on} #{cursor_flag} #{mouse_any_flag} #{keypad_flag} #{keypad_cursor_flag}")
            .split(separator: " ").map { $0 == "1" }
        guard flags.count == 5 else { throw Failure.couldNotStart("unexpected mode flags from tmux") }
        return Modes(alternateScreen: flags[0], cursorVisible: flags[1], mouseReporting: flags[2], keypad: flags[3],
                     cursorKeys: flags[4])
    }

    /// Whether the terminal had canonical input and echo on once the command ended (read by `stty` after it), as a
    /// shell needs them; a program that leaves the terminal raw turns both off.
    func lineDisciplineAfterExit(timeout: Duration = .seconds(10)) throws -> (canonical: Bool, echo: Bool) {
        let screen = try waitFor("TTY=", timeout: timeout)
        // Not necessarily at the start of its line: without output processing a newline does not return the carriage.
        let line = screen.split(separator: "\n").last { $0.contains("TTY=") } ?? ""
        let flags = line.components(separatedBy: "TTY=").last.map { $0.split(separator: " ").map(String.init) } ?? []
        guard flags.contains(where: { $0.hasSuffix("icanon") }), flags.contains(where: { $0.hasSuffix("echo") }) else {
            throw Failure.timedOut(waitingFor: "stty's icanon and echo", screen: screen)
        }
        return (flags.contains("icanon"), flags.contains("echo"))
    }

    /// Resizes the window; the command gets a SIGWINCH.
    func resize(width: Int, height: Int) throws {
        try tmux(["resize-window", "-t", "S", "-x", "\(width)", "-y", "\(height)"])
    }

    /// Kills the server. Its status is not checked: the server ends by itself once the command and its 30 seconds
    /// are over.
    func close() {
        guard isOpen else { return }
        isOpen = false
        _ = try? tmux(["kill-server"])
    }

    /// Runs one tmux command against this session's server and returns what it printed (output and errors
    /// together). Spawned with `posix_spawn`, not Foundation's `Process`: `Process` learns that a child ended from
    /// a socket the child inherits, and the tmux server that `new-session` forks inherits it as well, so waiting
    /// for the client would last as long as the server.
    @discardableResult
    private func tmux(_ arguments: [String]) throws -> String {
        guard let executable = Self.executable else { throw Failure.notInstalled }
        let commandLine = [executable.path, "-L", socketName, "-f", "/dev/null"] + arguments
        let (process, reading) = try Self.spawning.withLock { _ throws(Failure) in
            try Self.spawn(executable, commandLine)
        }
        defer { Glibc.close(reading) }
        let printed = String(decoding: readToEnd(reading), as: UTF8.self)
        var status: Int32 = 0
        while waitpid(process, &status, 0) == -1 && errno == EINTR {}
        // The wait status holds the exit status in its second byte when the low seven bits (a signal) are 0.
        let exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + status & 0x7F
        guard exitStatus == 0 else {
            throw Failure.tmuxFailed(
                arguments: arguments, status: exitStatus,
                message: printed.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return printed
    }

    /// Held while a pipe for tmux exists that it must not inherit: a tmux server started by a concurrent spawn
    /// would keep that pipe open, and reading it would last as long as that server.
    private static let spawning = Mutex(())

    /// Starts tmux with standard output and error into a new pipe; returns its process and the pipe's reading end.
    private static func spawn(_ executable: URL, _ commandLine: [String]) throws(Failure) -> (pid_t, Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .couldNotStart(String(cString: strerror(errno))) }
        let (reading, writing) = (ends[0], ends[1])
        // Neither end goes to other children; tmux gets the writing end as its descriptors 1 and 2 below.
        _ = fcntl(reading, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writing, F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writing, 1)
        posix_spawn_file_actions_adddup2(&actions, writing, 2)
        // Test threads may block or ignore signals, and children inherit that: a tmux server that blocks SIGHUP
        // outlives kill-server. Start tmux with every signal unblocked and at its default action.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var process: pid_t = 0
        let spawned = withCStrings(commandLine) { argv in
            withCStrings(environment) { envp in
                posix_spawn(&process, executable.path, &actions, &attributes, argv, envp)
            }
        }
        Glibc.close(writing)
        guard spawned == 0 else {
            Glibc.close(reading)
            throw .couldNotStart(String(cString: strerror(spawned)))
        }
        return (process, reading)
    }

    /// The environment tmux runs with. The server keeps the one it starts with: UTF-8 for tmux itself, and no TMUX
    /// so a test run inside tmux is not taken for nesting.
    private static let environment: [String] = {
        var environment = ProcessInfo.processInfo.environment
        environment["TMUX"] = nil
        environment["LC_ALL"] = nil
        environment["LC_CTYPE"] = nil
        environment["LANG"] = "C.UTF-8"
        return environment.map { "\($0.key)=\($0.value)" }
    }()
}

/// Calls `body` with `strings` as a C array of C strings, ended by a null pointer (as `argv` and `envp` are).
private func withCStrings<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result) -> Result {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return body(pointers)
}

/// Everything readable from `descriptor` until its writers close it.
private func readToEnd(_ descriptor: Int32) -> [UInt8] {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(descriptor, &buffer, buffer.count)
        if count > 0 {
            bytes += buffer[..<count]
        } else if count == 0 || errno != EINTR {
            return bytes
        }
    }
}
