// Helpers the backends share with the core, for reading engine text fast.

/// Whether every byte is ASCII, eight bytes at a time.
@_spi(Driver) @inlinable @inline(__always)
public func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
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
