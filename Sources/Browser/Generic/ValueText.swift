import Foundation
import GraphStore
import TerminalText

/// Attribute values as the entity browser shows them: one line each, readable whatever the type, with no control
/// character left to reach the terminal.
///
/// ```swift
/// ValueText.text(.data(png), of: imageAttribute, in: context)     // "48 B  89 50 4e 47 0d 0a 1a 0a…"
/// ValueText.text(.boolean(true), of: flagAttribute, in: context)  // "yes"
/// ```
/// - Binary data: its size, then its first bytes in hex. Transformable the same (it is bytes in the store), after
///   the class its value holds when the model names it.
/// - A value Core Data may keep outside the store ("Allows External Storage"): the column's first byte says where
///   it is. 0x01: the bytes follow inline; 0x02: the rest is the UUID naming a file in
///   `.<store>_SUPPORT/_EXTERNAL_DATA/` beside the store, shown as `external file <uuid>`.
/// - Dates (seconds since 2001-01-01 UTC in the store) in local time; Decimal as its decimal text; UUID in its
///   canonical form; Boolean as yes/no.
enum ValueText {
    /// What a value's text depends on besides the value.
    struct Setting {
        /// Dates are shown in this zone: the local one, or a fixed one in tests.
        var timeZone: TimeZone
        /// The folder Core Data keeps external values in (`.<store>_SUPPORT/_EXTERNAL_DATA`), for the sizes the
        /// object pane shows.
        var externalDataFolder: String?
    }

    /// How many bytes of binary data a list shows, and the object pane.
    static let shortHead = 8
    static let longHead = 16

    /// The text of `value`, an attribute's value. `full` is for the object pane: longer heads of bytes, the zone of
    /// a date, whether an external file is there.
    static func text(_ value: AttributeValue, of attribute: AttributeDescription, detail: ModelFileDetails.Attribute?,
                     setting: Setting, full: Bool = false) -> String {
        switch value {
        case .null: return nullText
        case .integer(let number):
            return attribute.type == .boolean ? (number != 0 ? "yes" : "no") : String(number)
        case .double(let number): return String(number)
        case .decimal(let decimal): return decimal.description
        case .string(let text): return ControlCharacters.escaped(text)
        case .boolean(let flag): return flag ? "yes" : "no"
        case .date(let date): return dateText(date, in: setting.timeZone, full: full)
        case .uuid(let uuid): return uuid.uuidString.lowercased()
        case .uri(let url): return ControlCharacters.escaped(url.absoluteString)
        case .data(let data):
            let bytes = bytesText(data, detail: detail, setting: setting, full: full)
            guard attribute.type == .transformable, let className = detail?.valueClassName else { return bytes }
            return ControlCharacters.escaped(className) + " · " + bytes
        }
    }

    /// What a missing value reads as.
    static let nullText = "—"

    /// `48 B  89 50 4e 47…`, or where an external-storage marker says the bytes are.
    static func bytesText(_ data: Data, detail: ModelFileDetails.Attribute?, setting: Setting, full: Bool) -> String {
        guard detail?.allowsExternalStorage == true, let marker = data.first else {
            return sizeAndHead(data, full: full)
        }
        switch marker {
        case 0x01:
            return sizeAndHead(data.dropFirst(), full: full) + (full ? "  (kept in the store)" : "")
        case 0x02:
            guard let name = externalFileName(data) else { return sizeAndHead(data, full: full) }
            var text = "external file \(name)"
            if full, let folder = setting.externalDataFolder {
                let path = folder + "/" + name
                if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber {
                    text += " (\(count(size.intValue)) B)"
                } else {
                    text += " (not found in \((folder as NSString).lastPathComponent))"
                }
            }
            return text
        default:
            return sizeAndHead(data, full: full)
        }
    }

    /// The UUID after an external-storage marker (0x02), as Core Data writes it: ASCII, sometimes ended by a NUL.
    static func externalFileName(_ data: Data) -> String? {
        let rest = data.dropFirst().prefix { $0 != 0 }
        let text = String(decoding: rest, as: UTF8.self)
        return UUID(uuidString: text) != nil ? text : nil
    }

    /// `48 B  89 50 4e 47 0d 0a 1a 0a…`: the size, then the first bytes in hex.
    static func sizeAndHead<Bytes: Collection>(_ bytes: Bytes, full: Bool) -> String where Bytes.Element == UInt8 {
        let limit = full ? longHead : shortHead
        let head = bytes.prefix(limit).map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }
        let more = bytes.count > limit ? "…" : ""
        return "\(count(bytes.count)) B" + (head.isEmpty ? "" : "  " + head.joined(separator: " ") + more)
    }

    /// `2021-04-07 14:32:49` in `zone`; with `full`, thousandths and the zone's offset (`… 14:32:49.638 +02:00`).
    static func dateText(_ date: Date, in zone: TimeZone, full: Bool) -> String {
        let seconds = date.timeIntervalSinceReferenceDate
        // A stored number beyond any calendar is shown as the number it is rather than trapping.
        guard seconds.isFinite, abs(seconds) < 1e13 else { return "\(seconds) s after 2001-01-01" }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
        func two(_ value: Int?) -> String { let text = String(value ?? 0); return text.count < 2 ? "0" + text : text }
        var text = "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
        if full {
            let thousandths = String((parts.nanosecond ?? 0) / 1_000_000)
            text += "." + String(repeating: "0", count: 3 - thousandths.count) + thousandths
            let offset = zone.secondsFromGMT(for: date)
            text += " " + (offset < 0 ? "-" : "+") + two(abs(offset) / 3_600) + ":" + two(abs(offset) % 3_600 / 60)
        }
        return text
    }

    private static func count(_ value: Int) -> String { ActivityFormat.count(value) }
}
