import Foundation

/// The texts the generator draws from: plain files under `Sources/ChatFixture/Corpus/`, one entry per line, written for this
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

    /// The corpus files, compiled into the program (`Sources/ChatFixture/Corpus`, embedded by SwiftPM), so a binary
    /// copied anywhere makes the same fixtures with no files beside it.
    static let embeddedFiles: [String: [UInt8]] = [
        "bios.en.txt": PackageResources.bios_en_txt,
        "bios.id.txt": PackageResources.bios_id_txt,
        "bios.ja.txt": PackageResources.bios_ja_txt,
        "bios.ko.txt": PackageResources.bios_ko_txt,
        "bios.th.txt": PackageResources.bios_th_txt,
        "bios.zh-Hant.txt": PackageResources.bios_zh_Hant_txt,
        "emoji-reactions.txt": PackageResources.emoji_reactions_txt,
        "family-names.en.txt": PackageResources.family_names_en_txt,
        "family-names.id.txt": PackageResources.family_names_id_txt,
        "family-names.ja.txt": PackageResources.family_names_ja_txt,
        "family-names.ko.txt": PackageResources.family_names_ko_txt,
        "family-names.th.txt": PackageResources.family_names_th_txt,
        "family-names.zh-Hant.txt": PackageResources.family_names_zh_Hant_txt,
        "file-names.txt": PackageResources.file_names_txt,
        "folders.txt": PackageResources.folders_txt,
        "given-names.en.txt": PackageResources.given_names_en_txt,
        "given-names.id.txt": PackageResources.given_names_id_txt,
        "given-names.ja.txt": PackageResources.given_names_ja_txt,
        "given-names.ko.txt": PackageResources.given_names_ko_txt,
        "given-names.th.txt": PackageResources.given_names_th_txt,
        "given-names.zh-Hant.txt": PackageResources.given_names_zh_Hant_txt,
        "handles.txt": PackageResources.handles_txt,
        "messages.en.txt": PackageResources.messages_en_txt,
        "messages.id.txt": PackageResources.messages_id_txt,
        "messages.ja.txt": PackageResources.messages_ja_txt,
        "messages.ko.txt": PackageResources.messages_ko_txt,
        "messages.th.txt": PackageResources.messages_th_txt,
        "messages.zh-Hant.txt": PackageResources.messages_zh_Hant_txt,
        "status.en.txt": PackageResources.status_en_txt,
        "status.id.txt": PackageResources.status_id_txt,
        "status.ja.txt": PackageResources.status_ja_txt,
        "status.ko.txt": PackageResources.status_ko_txt,
        "status.th.txt": PackageResources.status_th_txt,
        "status.zh-Hant.txt": PackageResources.status_zh_Hant_txt,
        "stickers.txt": PackageResources.stickers_txt,
        "topics.en.txt": PackageResources.topics_en_txt,
        "topics.id.txt": PackageResources.topics_id_txt,
        "topics.ja.txt": PackageResources.topics_ja_txt,
        "topics.ko.txt": PackageResources.topics_ko_txt,
        "topics.th.txt": PackageResources.topics_th_txt,
        "topics.zh-Hant.txt": PackageResources.topics_zh_Hant_txt,
    ]

    /// Reads every embedded file; a missing, empty or non-UTF-8 file is an error naming it.
    public static func load() throws(FixtureError) -> ChatCorpus {
        func lines(_ name: String) throws(FixtureError) -> [String] {
            guard let bytes = embeddedFiles[name] else { throw .corpus("the corpus file \(name) is not in this build") }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw .corpus("the corpus file \(name) is not UTF-8 text")
            }
            let entries = text.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.isEmpty }
            guard !entries.isEmpty else { throw .corpus("the corpus file \(name) is empty") }
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
    /// Something appeared at the path while the store was being made (or was there already) and was left alone.
    case alreadyExists(path: String)

    public var description: String {
        switch self {
        case .corpus(let message), .options(let message), .output(let message), .store(let message): message
        case .alreadyExists(let path): "\(path): already exists (use --force to replace it)"
        }
    }

    /// The same error with the temporary file a store was built in named as the store it was for.
    func naming(_ path: String, for temporary: String) -> FixtureError {
        switch self {
        case .corpus, .options, .alreadyExists: self
        case .output(let message): .output(message.replacingOccurrences(of: temporary, with: path))
        case .store(let message): .store(message.replacingOccurrences(of: temporary, with: path))
        }
    }
}
