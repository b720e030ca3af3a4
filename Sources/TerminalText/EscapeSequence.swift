/// What follows an Esc that ncurses did not recognise, read one input at a time and turned into a key, or into
/// nothing. Terminals send keys, mouse reports and notices (focus, paste markers) as sequences that start with Esc;
/// ncurses decodes those its terminal description lists and hands back the rest as Esc followed by their
/// characters. Read that way, Esc would go back and the letters would act, so the screen feeds everything after an
/// Esc through this type instead:
///
/// - Nothing follows (within ncurses's escape delay): the Esc key itself.
/// - `ESC [` … final byte (CSI) and `ESC O` … final byte (SS3): the key it stands for — SGR mouse reports
///   (`ESC [ < b ; x ; y M`, any row and column), arrows, Home, End, PgUp, PgDn, Del, Shift-Tab, F1–F12 without
///   modifiers — and nil for any other (focus in and out, bracketed-paste markers, keys with modifiers…).
/// - `ESC [ M` and three bytes: an X10 mouse report, from a terminal whose description promised SGR.
/// - Esc then any other character, or a key ncurses decoded: Alt with that key, which Faultline does not bind;
///   nil, so neither the Esc nor the key acts.
/// - Esc then Esc: the first is the Esc key, and the second starts over.
///
/// A sequence cut by something that cannot belong to it (a control character, a non-ASCII character, a resize or
/// mouse event) ends there as nil; that input is then read again on its own. However long a sequence runs, only its
/// first `storedLimit` bytes are kept, and one that long means no key.
///
/// ```swift
/// EscapeSequence.parse("[<0;230;5M")   // .click(row: 4, column: 229)
/// EscapeSequence.parse("")             // .escape
/// EscapeSequence.parse("[1;5P")        // nil
/// ```
public struct EscapeSequence: Equatable, Sendable {
    /// One thing read after the Esc.
    public enum Input: Equatable, Sendable {
        /// A character (a code point, as `wget_wch` returns it).
        case character(UInt32)
        /// A key ncurses decoded from its own table (an arrow, a function key…).
        case keyCode
        /// A resize or a mouse report ncurses decoded: never part of a sequence.
        case event
        /// Nothing arrived in time.
        case nothing
    }

    /// Where the sequence stands after an input.
    public enum Step: Equatable, Sendable {
        /// Not whole yet: feed the next input.
        case needsMore
        /// Whole, with the input: the key it means, or nil for one that is dropped.
        case finished(Key?)
        /// Ended before the input, which is not part of it and is to be read again on its own.
        case finishedBefore(Key?)
    }

    /// Bytes of parameters and intermediates kept; a longer sequence is read to its end and dropped.
    public static let storedLimit = 32

    private enum State: Equatable, Sendable {
        case afterEscape
        case controlSequence(introducer: UInt8, bytes: [UInt8], overflowed: Bool)
        case x10Mouse(values: [UInt32])
    }

    private var state = State.afterEscape

    /// A sequence just after its Esc.
    public init() {}

    /// Whether nothing has been read since the Esc.
    public var isAtStart: Bool { state == .afterEscape }

    private static let escape: UInt32 = 0x1B
    private static let csi = UInt8(ascii: "[")
    private static let ss3 = UInt8(ascii: "O")

    /// Takes the next input.
    public mutating func read(_ input: Input) -> Step {
        switch state {
        case .afterEscape:
            switch input {
            case .nothing: return .finished(.escape)
            case .event: return .finishedBefore(.escape)
            case .keyCode: return .finished(nil)
            case .character(Self.escape): return .finishedBefore(.escape)
            case .character(UInt32(Self.csi)):
                state = .controlSequence(introducer: Self.csi, bytes: [], overflowed: false)
                return .needsMore
            case .character(UInt32(Self.ss3)):
                state = .controlSequence(introducer: Self.ss3, bytes: [], overflowed: false)
                return .needsMore
            case .character:
                return .finished(nil)
            }
        case .controlSequence(let introducer, var bytes, var overflowed):
            guard case .character(let code) = input else {
                return input == .nothing ? .finished(nil) : .finishedBefore(nil)
            }
            switch code {
            case 0x20...0x3F:
                if bytes.count < Self.storedLimit {
                    bytes.append(UInt8(truncatingIfNeeded: code))
                } else {
                    overflowed = true
                }
                state = .controlSequence(introducer: introducer, bytes: bytes, overflowed: overflowed)
                return .needsMore
            case 0x40...0x7E:
                let final = UInt8(truncatingIfNeeded: code)
                if introducer == Self.csi, bytes.isEmpty, final == UInt8(ascii: "M") {
                    state = .x10Mouse(values: [])
                    return .needsMore
                }
                guard !overflowed else { return .finished(nil) }
                return .finished(introducer == Self.csi
                    ? Self.controlSequenceKey(bytes, final: final)
                    : Self.singleShiftKey(bytes, final: final))
            default:
                return .finishedBefore(nil)
            }
        case .x10Mouse(var values):
            guard case .character(let code) = input else {
                return input == .nothing ? .finished(nil) : .finishedBefore(nil)
            }
            values.append(code)
            guard values.count == 3 else {
                state = .x10Mouse(values: values)
                return .needsMore
            }
            return .finished(Self.x10MouseKey(values))
        }
    }

    /// The key for the characters after an Esc, read to the end of the sequence or of `characters`: what the screen
    /// would make of them arriving together, minus the reads again (a finished-before input is not looked at).
    public static func parse(_ characters: String) -> Key? {
        var sequence = EscapeSequence()
        for scalar in characters.unicodeScalars {
            switch sequence.read(.character(scalar.value)) {
            case .needsMore: continue
            case .finished(let key), .finishedBefore(let key): return key
            }
        }
        switch sequence.read(.nothing) {
        case .needsMore: return nil
        case .finished(let key), .finishedBefore(let key): return key
        }
    }

    // MARK: - Decoding

    /// A CSI sequence: SGR mouse reports and the plain editing and function keys; nil for the rest.
    private static func controlSequenceKey(_ bytes: [UInt8], final: UInt8) -> Key? {
        if bytes.first == UInt8(ascii: "<") {
            return final == UInt8(ascii: "M") ? sgrMouseKey(bytes.dropFirst()) : nil
        }
        guard let parameters = numbers(bytes), parameters.count <= 2 else { return nil }
        // A second parameter is the modifiers plus one: 1 is none. Keys with modifiers are not bound.
        guard parameters.count < 2 || parameters[1] == 1 else { return nil }
        let first = parameters.first ?? 1
        switch final {
        case UInt8(ascii: "A"), UInt8(ascii: "B"), UInt8(ascii: "C"), UInt8(ascii: "D"),
             UInt8(ascii: "H"), UInt8(ascii: "F"):
            return first == 1 ? cursorKey(final) : nil
        case UInt8(ascii: "Z"):
            return parameters.isEmpty ? .backTab : nil
        case UInt8(ascii: "~"):
            return tildeKey(first)
        default:
            return nil
        }
    }

    /// An SS3 sequence: the arrows, Home, End, F1–F4 and the keypad's Enter, without parameters.
    private static func singleShiftKey(_ bytes: [UInt8], final: UInt8) -> Key? {
        guard bytes.isEmpty else { return nil }
        switch final {
        case UInt8(ascii: "P"): return .function(1)
        case UInt8(ascii: "Q"): return .function(2)
        case UInt8(ascii: "R"): return .function(3)
        case UInt8(ascii: "S"): return .function(4)
        case UInt8(ascii: "M"): return .enter
        default: return cursorKey(final)
        }
    }

    private static func cursorKey(_ final: UInt8) -> Key? {
        switch final {
        case UInt8(ascii: "A"): .up
        case UInt8(ascii: "B"): .down
        case UInt8(ascii: "C"): .right
        case UInt8(ascii: "D"): .left
        case UInt8(ascii: "H"): .home
        case UInt8(ascii: "F"): .end
        default: nil
        }
    }

    /// `ESC [ n ~`: the editing keys and F1–F12 as VT220 and xterm number them.
    private static func tildeKey(_ number: Int) -> Key? {
        switch number {
        case 1, 7: .home
        case 4, 8: .end
        case 3: .delete
        case 5: .pageUp
        case 6: .pageDown
        case 11...15: .function(number - 10)
        case 17...21: .function(number - 11)
        case 23, 24: .function(number - 12)
        default: nil
        }
    }

    /// `b;x;y` of an SGR press (`M`): button 1 is a click, buttons 4 and 5 the wheel, at the 1-based column x and
    /// row y. Shift, Alt and Ctrl (4, 8, 16) are ignored; motion (32) and other buttons are nil.
    private static func sgrMouseKey(_ bytes: ArraySlice<UInt8>) -> Key? {
        guard let fields = numbers(bytes), fields.count == 3 else { return nil }
        return mouseKey(button: fields[0], column: fields[1] - 1, row: fields[2] - 1)
    }

    /// The three characters after `ESC [ M`: button, column and row, each plus 32, 1-based.
    private static func x10MouseKey(_ values: [UInt32]) -> Key? {
        guard values.count == 3, values.allSatisfy({ $0 >= 32 && $0 < 0x11_0000 }) else { return nil }
        return mouseKey(button: Int(values[0]) - 32, column: Int(values[1]) - 33, row: Int(values[2]) - 33)
    }

    private static func mouseKey(button: Int, column: Int, row: Int) -> Key? {
        guard column >= 0, row >= 0 else { return nil }
        switch button & ~(4 | 8 | 16) {
        case 0: return .click(row: row, column: column)
        case 64: return .wheelUp(row: row, column: column)
        case 65: return .wheelDown(row: row, column: column)
        default: return nil
        }
    }

    /// Semicolon-separated decimal numbers, an empty one reading as 0; nil when anything else is there or a number
    /// has more than six digits. No bytes are no numbers.
    private static func numbers<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [Int]? {
        guard !bytes.isEmpty else { return [] }
        var numbers: [Int] = []
        for field in bytes.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false) {
            guard field.count <= 6, field.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                return nil
            }
            numbers.append(field.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) })
        }
        return numbers
    }
}
