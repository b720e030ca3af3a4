/// Text made of one piece repeated: the padding, rules and fills every screen line ends with.
///
/// `String(repeating:count:)` appends the piece once per repetition, each append checking and growing the
/// string; a 200-column screen pads and rules about a hundred lines a frame that way, which measured a quarter of a
/// frame's instructions. This writes the bytes once into storage of the final size.
///
/// ```swift
/// Repeated.text(" ", count: 3)     // "   "
/// Repeated.text("─", count: 2)     // "──"
/// ```
public enum Repeated {
    /// `piece` written `count` times; empty when `count` is 0 or less.
    public static func text(_ piece: String, count: Int) -> String {
        guard count > 0, !piece.isEmpty else { return "" }
        var piece = piece
        return piece.withUTF8 { bytes in
            let (total, overflow) = bytes.count.multipliedReportingOverflow(by: count)
            precondition(!overflow, "Repeated.text: \(count) repetitions of \(bytes.count) bytes do not fit in memory")
            return String(unsafeUninitializedCapacity: total) { buffer in
                guard let base = buffer.baseAddress, let source = bytes.baseAddress else { return 0 }
                if bytes.count == 1 {
                    base.initialize(repeating: source.pointee, count: total)
                } else {
                    for start in stride(from: 0, to: total, by: bytes.count) {
                        (base + start).initialize(from: source, count: bytes.count)
                    }
                }
                return total
            }
        }
    }
}
