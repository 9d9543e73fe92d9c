// The comparison options every text operation takes. The raw values are those of
// `SiftSyntax.ComparisonOptions` (c = 1, d = 2, n = 4, l = 8) so the evaluator and the SQLite
// functions can pass a predicate's options straight through without this target importing the parser.

/// How two strings are compared: `[c]`, `[d]`, `[n]`, `[l]`.
///
/// ```swift
/// let cd: TextOptions = [.caseInsensitive, .diacriticInsensitive]   // [cd]
/// textEqual("José", "JOSE", cd)                 // true
/// textEqual("José", "JOSE", .caseInsensitive)   // false: the accent still counts
/// ```
public struct TextOptions: OptionSet, Hashable, Sendable {
    /// The option bits, the same as `SiftSyntax.ComparisonOptions` (c = 1, d = 2, n = 4, l = 8).
    public let rawValue: UInt8
    /// Options from their bits.
    ///
    /// ```swift
    /// TextOptions(rawValue: 3) == [.caseInsensitive, .diacriticInsensitive]   // true
    /// ```
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `[c]`: full Unicode case folding (and width folding).
    public static let caseInsensitive = TextOptions(rawValue: 1 << 0)
    /// `[d]`: diacritics removed (and width folding).
    public static let diacriticInsensitive = TextOptions(rawValue: 1 << 1)
    /// `[n]`: the strings are already normalised; compare them literally, overriding `c` and `d`.
    public static let normalized = TextOptions(rawValue: 1 << 2)
    /// `[l]`: locale-sensitive; Sift uses the root locale, so this changes nothing.
    public static let localeSensitive = TextOptions(rawValue: 1 << 3)
}
