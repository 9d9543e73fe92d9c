// What every benchmark executable needs and should measure the same way: a monotonic clock in
// nanoseconds, a sink the optimizer cannot see through, the median of repeated rounds, and a small
// seeded generator so every run builds the same data on every platform.

import Foundation

/// Monotonic time in nanoseconds.
@inline(never)
public func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Sink that keeps results observable so the optimizer cannot drop the measured work.
nonisolated(unsafe) public var blackhole: Int = 0

/// Feeds a result into `blackhole`.
@inline(never)
public func consume(_ value: Int) { blackhole &+= value }

/// The median of the rounds (the mean of the middle two for an even count).
public func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// SplitMix64: small, fast, deterministic across platforms.
public struct SplitMix64 {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A value in 0..<n.
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    /// A value in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }
    public mutating func pick<T>(_ xs: [T]) -> T { xs[below(xs.count)] }
}
