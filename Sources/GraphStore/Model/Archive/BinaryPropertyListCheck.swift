import Foundation

/// A look at a binary property list's structure before Foundation parses it.
///
/// Foundation here parses a damaged binary property list into values it then fails on while bridging them to Swift
/// (a UID or a collection as a set member or dictionary key, a collection that holds itself), ending the process. The
/// check reads only the format's frame: the trailer, the offset table, and each collection's references, and refuses
/// what Foundation could not bridge. What it passes may still be no archive; the reader refuses that as usual.
enum BinaryPropertyListCheck {
    /// Nil when the structure is sound, otherwise what is wrong with it.
    static func problem(in data: Data) -> String? {
        let bytes = [UInt8](data)
        guard bytes.count >= 40, bytes.starts(with: Array("bplist00".utf8)) else { return "it is not a binary property list" }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
              let count = integer(bytes, at: trailer + 8, size: 8), let top = integer(bytes, at: trailer + 16, size: 8),
              let table = integer(bytes, at: trailer + 24, size: 8),
              count > 0, count <= bytes.count, top < count, table >= 8,
              table <= trailer, count <= (trailer - table) / offsetSize else { return "its trailer is damaged" }
        var offsets: [Int] = []
        offsets.reserveCapacity(count)
        for index in 0..<count {
            guard let offset = integer(bytes, at: table + index * offsetSize, size: offsetSize), offset >= 8, offset < table else {
                return "its offset table is damaged"
            }
            offsets.append(offset)
        }

        /// An object's kind (the marker's high nibble) and, for a collection, its references.
        func collection(_ index: Int) -> (kind: UInt8, references: [Int])? {
            let offset = offsets[index]
            let marker = bytes[offset]
            let kind = marker >> 4
            guard kind == 0xA || kind == 0xC || kind == 0xD else { return (kind, []) }
            var length = Int(marker & 0x0F)
            var start = offset + 1
            if length == 0x0F {
                guard start < table, bytes[start] >> 4 == 0x1 else { return nil }
                let size = 1 << Int(bytes[start] & 0x0F)
                guard size <= 8, let value = integer(bytes, at: start + 1, size: size), value <= count * 2 else { return nil }
                length = value
                start += 1 + size
            }
            let total = kind == 0xD ? length * 2 : length
            guard start + total * referenceSize <= table else { return nil }
            var references: [Int] = []
            for position in 0..<total {
                guard let reference = integer(bytes, at: start + position * referenceSize, size: referenceSize), reference < count else { return nil }
                references.append(reference)
            }
            return (kind, references)
        }

        var kinds: [UInt8] = []
        var children: [[Int]] = []
        for index in 0..<count {
            guard let found = collection(index) else { return "object \(index) is damaged" }
            kinds.append(found.kind)
            children.append(found.references)
        }
        // Set members and dictionary keys must be plain values: not a UID (kind 8) nor a collection.
        let plain: Set<UInt8> = [0x0, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6]
        for index in 0..<count {
            switch kinds[index] {
            case 0xC:
                if children[index].contains(where: { !plain.contains(kinds[$0]) }) { return "a set holds something other than a plain value" }
            case 0xD:
                let keys = children[index].prefix(children[index].count / 2)
                if keys.contains(where: { !plain.contains(kinds[$0]) }) { return "a dictionary key is not a plain value" }
            default:
                break
            }
        }
        // No collection may hold itself, at any depth (depth-first, without recursion).
        var state = [UInt8](repeating: 0, count: count)  // 0 unseen, 1 on the path, 2 done
        for root in 0..<count where state[root] == 0 {
            var stack: [(node: Int, next: Int)] = [(root, 0)]
            state[root] = 1
            while let last = stack.last {
                if last.next < children[last.node].count {
                    stack[stack.count - 1].next += 1
                    let child = children[last.node][last.next]
                    if state[child] == 1 { return "a collection holds itself" }
                    if state[child] == 0 {
                        state[child] = 1
                        stack.append((child, 0))
                    }
                } else {
                    state[last.node] = 2
                    stack.removeLast()
                }
            }
        }
        return nil
    }

    /// A big-endian unsigned integer of `size` bytes at `offset`, nil when out of bounds or too large.
    private static func integer(_ bytes: [UInt8], at offset: Int, size: Int) -> Int? {
        guard offset >= 0, size > 0, offset <= bytes.count - size else { return nil }
        var value: UInt64 = 0
        for byte in bytes[offset..<(offset + size)] {
            guard value <= UInt64.max >> 8 else { return nil }
            value = value << 8 | UInt64(byte)
        }
        return value <= UInt64(Int.max) ? Int(value) : nil
    }
}
