import Foundation

/// The bytes of a COPY waiting to be sent: one allocation, grown when a row
/// needs more, written with plain stores and `memcpy`.
///
/// A value type over raw memory, so a row is written into a local copy with
/// no runtime exclusivity check per field (a `[UInt8]` property of the writer
/// cost about 1,600 instructions a row in checks alone). Not copyable in
/// meaning: exactly one owner calls ``deallocate()``.
struct PostgresCopyBuffer {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 8)
    }

    func deallocate() { base.deallocate() }

    var isEmpty: Bool { count == 0 }

    mutating func removeAll() { count = 0 }

    /// Forgets what was written after the first `count` bytes.
    mutating func truncate(to count: Int) { self.count = min(self.count, count) }

    /// Room for `extra` more bytes.
    @inline(__always) mutating func reserve(_ extra: Int) {
        if extra > capacity &- count { grow(extra) }
    }

    private mutating func grow(_ extra: Int) {
        var newCapacity = capacity
        while newCapacity - count < extra { newCapacity = newCapacity * 2 }
        let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        grown.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }

    /// A big-endian integer, as COPY's binary format and the field lengths take it.
    @inline(__always) mutating func integer<T: FixedWidthInteger>(_ value: T) {
        reserve(MemoryLayout<T>.size)
        (base + count).storeBytes(of: value.bigEndian, as: T.self)
        count &+= MemoryLayout<T>.size
    }

    @inline(__always) mutating func byte(_ value: UInt8) {
        reserve(1)
        (base + count).storeBytes(of: value, as: UInt8.self)
        count &+= 1
    }

    @inline(__always) mutating func bytes(_ source: UnsafeRawBufferPointer) {
        reserve(source.count)
        if let start = source.baseAddress { (base + count).copyMemory(from: start, byteCount: source.count) }
        count &+= source.count
    }

    /// Bytes written by `body` into room for at most `maximum`; it returns how many it wrote.
    @inline(__always) mutating func write(atMost maximum: Int, _ body: (UnsafeMutableRawBufferPointer) -> Int) {
        reserve(maximum)
        count &+= body(UnsafeMutableRawBufferPointer(start: base + count, count: maximum))
    }

    /// A string's UTF-8 bytes, copied whole.
    @inline(__always) mutating func utf8(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ bytes(UnsafeRawBufferPointer($0)) }) == nil {
            var copy = text
            copy.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
        }
    }

    /// What is buffered, for `PQputCopyData`.
    var pointer: UnsafePointer<CChar> { UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self) }
}
