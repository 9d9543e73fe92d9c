// The one error type of the text layer. Both back-ends (the in-memory evaluator and the SQLite
// functions) surface these to the user, so the kind is a stable machine-readable code and the
// message is a lower-case sentence that quotes the offending pattern.

/// A LIKE or MATCHES pattern that cannot be used.
///
/// ```swift
/// do { _ = try LikePattern("ab\\", []) } catch { print(error.kind) } // likeTrailingBackslash
/// ```
public struct TextError: Error, Sendable, CustomStringConvertible {
    /// The stable code of the failure; the raw value is what tools print.
    public enum Kind: String, Sendable {
        case likeTrailingBackslash = "invalid-like-pattern"
        case invalidRegex = "invalid-regex"
        case regexLimitExceeded = "regex-limit"
    }

    public var kind: Kind
    public var message: String

    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
