/// Helpers the backends share with the core, for reading and writing engine text fast.
public enum TextBytes {
    /// Whether every byte is ASCII, eight bytes at a time.
    @inlinable @inline(__always)
    public static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var offset = 0
        let raw = UnsafeRawPointer(base)
        while offset + 8 <= count {
            if raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            offset += 8
        }
        while offset < count {
            if base[offset] >= 0x80 { return false }
            offset += 1
        }
        return true
    }

    /// Copies a text's UTF-8 bytes to `destination`, which has room for
    /// `text.utf8.count` bytes: a backend's bind buffer. No terminating NUL.
    @inlinable @inline(__always)
    public static func copyUTF8(_ text: String, to destination: UnsafeMutableRawPointer) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in
            if let base = bytes.baseAddress { destination.copyMemory(from: base, byteCount: bytes.count) }
        }
        guard copied == nil else { return }
        var offset = 0
        for byte in text.utf8 {
            destination.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self)
            offset += 1
        }
    }
}
