import CZlib
import Foundation

/// Inflates a raw DEFLATE stream (no zlib or gzip header) with the system zlib: the form Core Data compresses the
/// model it keeps in a store's `Z_MODELCACHE` in.
enum RawDeflate {
    enum Failure: Error, Equatable {
        /// The stream is not DEFLATE, or is damaged; zlib's reason when it gave one.
        case damaged(String)
        /// The input ended before the stream did.
        case truncated
        /// The stream inflates to more than the limit (a model is kilobytes; this is not one).
        case tooLarge(limit: Int)
    }

    /// The inflated bytes of `data`, at most `limit` of them.
    static func inflate(_ data: Data, limit: Int = 64 << 20) throws(Failure) -> Data {
        guard !data.isEmpty else { throw .truncated }
        var stream = z_stream()
        // Negative window bits: a raw stream, with the largest window (15 bits).
        guard faultline_inflateInit2(&stream, -15) == Z_OK else { throw .damaged("zlib could not start") }
        defer { inflateEnd(&stream) }

        var output = Data()
        let chunk = 64 * 1024
        var buffer = [UInt8](repeating: 0, count: chunk)
        var input = [UInt8](data)
        let status: Int32 = input.withUnsafeMutableBufferPointer { inputBytes in
            stream.next_in = inputBytes.baseAddress
            stream.avail_in = uInt(inputBytes.count)
            while true {
                let produced: Int32 = buffer.withUnsafeMutableBufferPointer { outputBytes in
                    stream.next_out = outputBytes.baseAddress
                    stream.avail_out = uInt(chunk)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let count = chunk - Int(stream.avail_out)
                output.append(contentsOf: buffer[0..<count])
                if output.count > limit { return Z_MEM_ERROR }
                switch produced {
                case Z_OK:
                    // No progress with input left and room to write: the stream wants bytes that are not there.
                    if stream.avail_in == 0 && count == 0 { return Z_BUF_ERROR }
                case Z_BUF_ERROR where stream.avail_in == 0:
                    return Z_BUF_ERROR
                default:
                    return produced
                }
            }
        }
        switch status {
        case Z_STREAM_END:
            return output
        case Z_BUF_ERROR:
            throw .truncated
        case Z_MEM_ERROR where output.count > limit:
            throw .tooLarge(limit: limit)
        default:
            let reason = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
            throw .damaged(reason)
        }
    }
}
