/// Why a store could not be opened or written. One line each, naming the file.
public enum StoreError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file does not exist and the caller asked not to create it.
    case noSuchFile(path: String)
    case isDirectory(path: String)
    case emptyFile(path: String)
    /// The first 16 bytes are not `"SQLite format 3\0"` (or the header is otherwise not SQLite's).
    case notSQLite(path: String)
    case truncated(path: String, expectedBytes: Int64, actualBytes: Int64)
    /// The file exists but this process may not read it; `reason` is the system's text (`strerror`).
    case unreadable(path: String, reason: String)
    /// The folder a new store would be created in does not exist.
    case directoryMissing(path: String)
    /// An SQLite database, but not a Faultline / Core Data store.
    case notAStore(path: String, reason: String)
    case modelMismatch(path: String, differences: [String])
    /// A write was attempted on a store opened read-only.
    case readOnly(path: String)
    /// The file (or its folder, where SQLite keeps `-wal` and `-shm` beside it) cannot be written by this process, and
    /// the caller needs to write; `reason` says which and why.
    case notWritable(path: String, reason: String)
    /// Another connection held the database locked for the whole busy timeout.
    case locked(path: String, seconds: Double)
    /// An error reported by SQLite, `message` as SQLite words it.
    case sqlite(path: String, message: String)
    /// The store is damaged (a page SQLite's `quick_check` finds wrong, or a `-wal` that does not belong to it), so
    /// it is not opened for writing; `reason` says what was found.
    case damaged(path: String, reason: String)

    public var description: String {
        let text: String
        switch self {
        case .noSuchFile(let path):
            // SQLite would take "" for a private temporary database; there is no file to name.
            text = path.isEmpty ? "the store path is empty: give a store file" : "\(path): no such file"
        case .isDirectory(let path):
            text = "\(path): is a directory, not a store file"
        case .emptyFile(let path):
            text = "\(path): is empty (0 bytes), not a store"
        case .notSQLite(let path):
            text = "\(path): is not an SQLite database"
        case .truncated(let path, let expected, let actual):
            text = "\(path): is truncated (\(actual) of \(expected) bytes): the file is damaged"
        case .unreadable(let path, let reason):
            text = "\(path): cannot be read (\(reason))"
        case .directoryMissing(let path):
            text = "\(path): the folder \(StoreFileCheck.folder(containing: path)) does not exist"
        case .notAStore(let path, let reason):
            text = "\(path): is an SQLite database but not a Faultline store (\(reason))"
        case .modelMismatch(let path, let differences):
            text = "\(path): was made for a different model (\(differences.joined(separator: "; ")))"
        case .readOnly(let path):
            text = "\(path): is open read-only; changes cannot be saved"
        case .notWritable(let path, let reason):
            text = "\(path): cannot be written (\(reason))"
        case .locked(let path, let seconds):
            text = "\(path): \(Self.lockedMessage(seconds: seconds))"
        case .sqlite(let path, let message):
            text = "\(path): \(message)"
        case .damaged(let path, let reason):
            text = "\(path): is damaged (\(reason)), so nothing is written to it; check it, and restore it from a copy"
        }
        return Self.oneLine(text)
    }

    /// What a busy timeout that ran out means, after the path: `the database is locked by another connection (still
    /// busy after 5 s)`.
    static func lockedMessage(seconds: Double) -> String {
        let amount = seconds == seconds.rounded() && abs(seconds) < 1e9 ? String(Int(seconds)) : String((seconds * 100).rounded() / 100)
        return "the database is locked by another connection (still busy after \(amount) s)"
    }

    /// Line breaks inside a path or a message would split the report; show them escaped instead.
    private static func oneLine(_ text: String) -> String { text.escapingLineBreaks }
}

extension String {
    /// The text on one line: line breaks shown escaped (`\n`, `\r`), other line separators as spaces. For
    /// one-line error reports that quote paths or file contents.
    public var escapingLineBreaks: String {
        guard contains(where: \.isNewline) else { return self }
        var result = ""
        for character in self {
            switch character {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\r\n": result += "\\r\\n"
            default: result.append(character.isNewline ? " " : character)
            }
        }
        return result
    }
}
