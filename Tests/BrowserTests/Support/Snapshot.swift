import Foundation
import TerminalText
import Testing

/// Plain-text snapshots: a rendered screen compared with a `.txt` file kept beside the tests, or written there when
/// `FAULTLINE_RECORD_SNAPSHOTS=1` is set.
enum Snapshot {
    /// The environment variable that switches from comparing to recording.
    static let recordVariable = "FAULTLINE_RECORD_SNAPSHOTS"

    static var isRecording: Bool { ProcessInfo.processInfo.environment[recordVariable] == "1" }

    /// The folder `Snapshots` next to the file that calls (found from its `#filePath`).
    static func folder(besides filePath: String) -> URL {
        URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Snapshots", isDirectory: true)
    }

    /// Compares `text` with `Snapshots/<name>.txt`, or records it there; a missing file or a difference is an
    /// issue naming the first differing line, expected against actual.
    static func check(_ text: String, named name: String, filePath: String = #filePath, sourceLocation: SourceLocation = #_sourceLocation) {
        let file = folder(besides: filePath).appendingPathComponent("\(name).txt")
        let rerecord = "re-record with \(recordVariable)=1 swift test --filter ViewSnapshotTests"
        if isRecording {
            do {
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try (text + "\n").write(to: file, atomically: true, encoding: .utf8)
                print("recorded snapshot \(file.path)")
            } catch {
                Issue.record("could not write the snapshot \(file.path): \(error)", sourceLocation: sourceLocation)
            }
            return
        }
        guard let data = FileManager.default.contents(atPath: file.path) else {
            Issue.record("no snapshot \(file.path); \(rerecord)", sourceLocation: sourceLocation)
            return
        }
        guard let stored = String(data: data, encoding: .utf8) else {
            Issue.record("snapshot \(file.path) is not UTF-8; \(rerecord)", sourceLocation: sourceLocation)
            return
        }
        // The file ends with one newline that the rendered text does not have.
        let expected = stored.hasSuffix("\n") ? String(stored.dropLast()) : stored
        guard let difference = firstDifference(expected: expected, actual: text) else { return }
        Issue.record("""
            snapshot \(name) differs at line \(difference.line), column \(difference.column):
              expected: |\(difference.expected)|
              actual:   |\(difference.actual)|
            (\(file.path); if the change is intended, \(rerecord))
            """, sourceLocation: sourceLocation)
    }

    /// The first line where the two texts differ, the display column where that line starts to differ (both
    /// counted from 1), and both versions of the line; nil when the texts are equal.
    static func firstDifference(expected: String, actual: String) -> (line: Int, column: Int, expected: String, actual: String)? {
        let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(expectedLines.count, actualLines.count) {
            let left = index < expectedLines.count ? String(expectedLines[index]) : "<no line>"
            let right = index < actualLines.count ? String(actualLines[index]) : "<no line>"
            // Byte for byte: `==` on strings would let canonically equivalent spellings pass.
            if !left.utf8.elementsEqual(right.utf8) || (index < expectedLines.count) != (index < actualLines.count) {
                let common = zip(left, right).prefix { $0.unicodeScalars.elementsEqual($1.unicodeScalars) }.map { String($0.0) }
                return (index + 1, DisplayWidth.of(common.joined()) + 1, left, right)
            }
        }
        return nil
    }
}
