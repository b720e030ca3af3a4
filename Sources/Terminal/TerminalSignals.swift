import CNcursesw
import Glibc
import Synchronization

/// The signal handling a screen needs while it is open; the only process-wide state of this module. Handlers
/// only note what arrived, and the main loop acts on it: an ending signal (Ctrl-C, `kill`, a closed terminal)
/// shows as `TerminalScreen.pendingSignal`, a window size change as a `.resize` key. A crash restores the terminal
/// before the process dies, and so does `exit` while a screen is open.
///
/// ```swift
/// TerminalSignals.install()          // before newterm, so ncurses leaves these signals to us
/// TerminalSignals.pendingEnding.load(ordering: .relaxed)   // SIGINT after Ctrl-C
/// TerminalSignals.restore()
/// ```
enum TerminalSignals {
    /// The last of SIGINT, SIGTERM, SIGHUP that arrived; 0 for none.
    static let pendingEnding = Atomic<Int32>(0)
    /// Whether a SIGWINCH arrived that the screen has not adopted yet.
    static let resizePending = Atomic<Bool>(false)
    /// Whether a screen is open, so crash and exit hooks know whether there is a terminal to restore.
    static let screenIsOpen = Atomic<Bool>(false)
    /// Whether our handlers are in place, so a second `install` cannot take them for the actions to restore.
    private static let handlersInstalled = Atomic<Bool>(false)
    /// Set by the first crash signal; a second one ends the process with the default action.
    private static let crashing = Atomic<Bool>(false)
    private static let exitHookRegistered = Atomic<Bool>(false)

    private static let endingSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]
    private static let crashSignals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT]

    /// What each signal did before `install`, to put back on `restore` and to hand a crash over to (the default
    /// action, or Swift's backtracer). Written only while none of our handlers is installed; read by them.
    nonisolated(unsafe) private static var previousActions: [Int32: sigaction] = [:]

    /// Installs the handlers and, once per process, the exit hook. Does nothing while they are installed.
    static func install() {
        guard !handlersInstalled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pendingEnding.store(0, ordering: .relaxed)
        resizePending.store(false, ordering: .relaxed)
        previousActions = [:]
        for signal in endingSignals + [SIGWINCH] + crashSignals {
            var current = sigaction()
            sigaction(signal, nil, &current)
            previousActions[signal] = current
        }
        for signal in endingSignals {
            setHandler(of: signal) { signal in TerminalSignals.pendingEnding.store(signal, ordering: .relaxed) }
        }
        // A parent may have started us with these blocked (a mask is inherited): then a Ctrl-C or a kill would wait
        // unseen, and the browser could not be ended but by SIGKILL.
        var handled = sigset_t()
        sigemptyset(&handled)
        for signal in endingSignals + [SIGWINCH] { sigaddset(&handled, signal) }
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
        setHandler(of: SIGWINCH) { _ in TerminalSignals.resizePending.store(true, ordering: .relaxed) }
        for signal in crashSignals {
            setHandler(of: signal) { signal in TerminalSignals.restoreTerminalThenCrash(signal) }
        }
        if !exitHookRegistered.exchange(true, ordering: .relaxed) {
            atexit {
                if TerminalSignals.screenIsOpen.load(ordering: .acquiring) {
                    endwin()
                    SGRMouseMode.turnOff()
                }
            }
        }
    }

    /// Puts back what each signal did before `install`.
    static func restore() {
        guard handlersInstalled.exchange(false, ordering: .acquiringAndReleasing) else { return }
        for (signal, action) in previousActions {
            var action = action
            sigaction(signal, &action, nil)
        }
    }

    /// Installs `handler` for `signal`. No `SA_RESTART`: a signal cuts the wait for a key short, so the main loop
    /// sees it at once.
    private static func setHandler(of signal: Int32, to handler: @convention(c) (Int32) -> Void) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        sigemptyset(&action.sa_mask)
        sigaction(signal, &action, nil)
    }

    /// Leaves the terminal usable, then lets the crash proceed as it would have without a screen: the previous
    /// action runs on the re-raised signal once this handler returns. Should that action lead back here, the
    /// default one ends the process rather than a loop.
    private static func restoreTerminalThenCrash(_ signal: Int32) {
        var next = sigaction()
        if !crashing.exchange(true, ordering: .relaxed) {
            if screenIsOpen.load(ordering: .acquiring) {
                endwin()
                SGRMouseMode.turnOff()
            }
            next = previousActions[signal] ?? next
        }
        sigaction(signal, &next, nil)
        raise(signal)
    }
}
