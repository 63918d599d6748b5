/// SplitMix64: random numbers that a printed seed replays.
public struct SeededGenerator: RandomNumberGenerator {
    /// The state: print it with a failure to replay from there.
    public var state: UInt64

    /// A generator that gives the same numbers for the same seed.
    public init(seed: UInt64) { state = seed }

    /// The next number.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// One of `items`.
    public mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &self)] }

    /// True one time in `n`.
    public mutating func chance(_ n: Int) -> Bool { Int.random(in: 0..<n, using: &self) == 0 }
}
