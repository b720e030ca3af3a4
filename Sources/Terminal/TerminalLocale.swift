import Glibc
import Synchronization

/// The process's character locale, made UTF-8 before ncurses starts: ncurses measures and writes characters through
/// the C library, which needs a UTF-8 locale for them. (`DisplayWidth` needs no locale: it has its own table.)
public enum TerminalLocale {
    private static let done = Mutex(false)

    /// Adopts the environment's locale; when its codeset is not UTF-8 (CI often sets no `LANG`), uses `C.UTF-8` for
    /// characters. Without a UTF-8 locale ncurses treats every non-ASCII character as unprintable.
    public static func ensureUTF8() {
        done.withLock { done in
            guard !done else { return }
            done = true
            setlocale(LC_ALL, "")
            if !isUTF8 { setlocale(LC_CTYPE, "C.UTF-8") }
        }
    }

    /// Whether the character locale in force is UTF-8.
    public static var isUTF8: Bool {
        guard let codeset = nl_langinfo(nl_item(CODESET)) else { return false }
        let name = String(cString: codeset).uppercased()
        return name == "UTF-8" || name == "UTF8"
    }
}
