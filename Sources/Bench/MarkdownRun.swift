import Foundation
import GRDBSQLite

/// Writes a run into a Markdown page between two marker lines, leaving the rest of the page (the goals, the
/// explanations) as it was: `faultline bench --markdown docs/benchmarks.md`.
public struct MarkdownRun {
    /// The marker lines of a run of the cases (`--markdown`).
    public static let begin = "<!-- faultline bench: begin -->"
    public static let end = "<!-- faultline bench: end -->"
    /// The marker lines of a sweep (`--sweep --markdown`): others, so that one page can hold a run and a sweep.
    public static let sweepBegin = "<!-- faultline bench sweep: begin -->"
    public static let sweepEnd = "<!-- faultline bench sweep: end -->"

    public let path: String
    /// The lines the run goes between.
    public let begin: String
    public let end: String

    /// Checks, before the run, that `path` can take a run (or, with `sweep`, a sweep): a file that exists, holds its
    /// two markers in order once each, and can be written. Throws a message naming the problem.
    public init(path: String, sweep: Bool = false) throws(BenchmarkError) {
        self.path = path
        (begin, end) = sweep ? (Self.sweepBegin, Self.sweepEnd) : (Self.begin, Self.end)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw BenchmarkError("\(path): no such file (it must hold the lines \(begin) and \(end))")
        }
        guard !isFolder.boolValue else { throw BenchmarkError("\(path): is a folder, not a Markdown file") }
        // A pipe or a device would block or never end when read, and could not be replaced by a rewritten page.
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw BenchmarkError("\(path): is not a regular file, not a Markdown page")
        }
        guard FileManager.default.isWritableFile(atPath: path) else { throw BenchmarkError("\(path): not writable") }
        _ = try split(try read())
    }

    /// Replaces what lies between the markers with `run`.
    public func write(_ run: String) throws(BenchmarkError) {
        let (head, tail) = try split(try read())
        let text = head + begin + "\n\n" + run + "\n" + end + tail
        do {
            // Written whole or not at all (a temporary file renamed over the page), to the file a link names: the
            // link stays a link.
            try Data(text.utf8).write(to: URL(fileURLWithPath: path).resolvingSymlinksInPath(), options: .atomic)
        } catch {
            throw BenchmarkError("\(path): cannot write: \(error.localizedDescription)")
        }
    }

    private func read() throws(BenchmarkError) -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw BenchmarkError("\(path): cannot read it as UTF-8 text")
        }
    }

    /// The text before the begin marker and after the end marker.
    private func split(_ text: String) throws(BenchmarkError) -> (String, String) {
        let begins = text.components(separatedBy: begin).count - 1
        let ends = text.components(separatedBy: end).count - 1
        guard begins == 1, ends == 1, let first = text.range(of: begin), let last = text.range(of: end),
              first.upperBound <= last.lowerBound else {
            throw BenchmarkError("\(path): needs the line \(begin) and, after it, the line \(end), once each")
        }
        return (String(text[..<first.lowerBound]), String(text[last.upperBound...]))
    }

    /// The machine a run happens on, in one line: processor, cores, memory, system, SQLite.
    public static func machine() -> String {
        var processor = "unknown processor"
        if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
           let colon = line.firstIndex(of: ":") {
            processor = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var system = "Linux"
        if let release = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8),
           let line = release.split(separator: "\n").first(where: { $0.hasPrefix("PRETTY_NAME=") }) {
            system = line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        let info = ProcessInfo.processInfo
        let memory = Double(info.physicalMemory) / 1_073_741_824
        return "\(processor), \(info.activeProcessorCount) cores, \(String(format: "%.0f", memory)) GiB; \(system); "
            + "SQLite \(String(cString: sqlite3_libversion()))"
    }
}
