import Foundation

/// The texts the generator draws from: plain files under `fixtures/corpus/`, one entry per line, written for this
/// project (names, messages, statuses, bios and group names in six languages; handles, stickers, file names,
/// reaction emoji and folder names).
public struct ChatCorpus: Sendable {
    public struct Language: Sendable {
        public let code: String
        public let givenNames: [String]
        public let familyNames: [String]
        public let messages: [String]
        public let statuses: [String]
        public let bios: [String]
        public let topics: [String]

        /// Whether names are written family name first (Japanese, Chinese, Korean).
        public var familyNameFirst: Bool { ["ja", "zh-Hant", "ko"].contains(code) }
    }

    /// The languages, in a fixed order.
    public static let languageCodes = ["ja", "th", "zh-Hant", "id", "ko", "en"]

    public let languages: [Language]
    public let handles: [String]
    public let stickers: [String]
    public let fileNames: [String]
    public let reactions: [String]
    public let folders: [String]

    /// `fixtures/corpus` in the package, found from this file's path at build time.
    public static var defaultFolder: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("fixtures/corpus")
    }

    /// Reads every file; a missing or empty file is an error naming it.
    public static func load(from folder: URL = defaultFolder) throws(FixtureError) -> ChatCorpus {
        func lines(_ name: String) throws(FixtureError) -> [String] {
            let url = folder.appendingPathComponent(name)
            guard let text = try? String(contentsOf: url, encoding: .utf8) else {
                throw .corpus("\(url.path): cannot read this corpus file")
            }
            let entries = text.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.isEmpty }
            guard !entries.isEmpty else { throw .corpus("\(url.path): the corpus file is empty") }
            return entries
        }
        var languages: [Language] = []
        for code in languageCodes {
            languages.append(Language(
                code: code, givenNames: try lines("given-names.\(code).txt"), familyNames: try lines("family-names.\(code).txt"),
                messages: try lines("messages.\(code).txt"), statuses: try lines("status.\(code).txt"),
                bios: try lines("bios.\(code).txt"), topics: try lines("topics.\(code).txt")))
        }
        return ChatCorpus(
            languages: languages, handles: try lines("handles.txt"), stickers: try lines("stickers.txt"),
            fileNames: try lines("file-names.txt"), reactions: try lines("emoji-reactions.txt"), folders: try lines("folders.txt"))
    }
}

/// Why a fixture could not be made.
public enum FixtureError: Error, CustomStringConvertible, Sendable {
    case corpus(String)
    case options(String)
    case output(String)
    case store(String)

    public var description: String {
        switch self {
        case .corpus(let message), .options(let message), .output(let message), .store(let message): message
        }
    }
}
