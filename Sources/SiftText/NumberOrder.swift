// The one numeric ordering rule that is not plain `<`: a Double against an Int64, compared exactly
// (no rounding of large integers to Double). It lives here, beside the text rules, because every
// back-end (the in-memory evaluator and the SQLite functions) must apply the same one.

/// The exact order of a double against an integer: -1, 0 or 1. NaN sorts first.
///
/// ```swift
/// compareExactly(9_007_199_254_740_992.0, 9_007_199_254_740_993)  // -1 (Double(i) would say 0)
/// ```
@inline(__always)
public func compareExactly(_ d: Double, _ i: Int64) -> Int {
    if d.isNaN { return -1 }
    // Doubles beyond the Int64 range order by sign; inside it, compare after exact conversion.
    if d >= 9_223_372_036_854_775_808.0 { return 1 }
    if d < -9_223_372_036_854_775_808.0 { return -1 }
    let t = Int64(d.rounded(.towardZero))
    if t != i { return t < i ? -1 : 1 }
    let frac = d - d.rounded(.towardZero)
    return frac == 0 ? 0 : (frac < 0 ? -1 : 1)
}
