// The one error type of the text layer. Both back-ends (the in-memory evaluator and the SQLite
// functions) surface these to the user, so the kind is a stable machine-readable code and the
// message is a lower-case sentence that quotes the offending pattern.

import SiftSyntax

/// A LIKE or MATCHES pattern that cannot be used.
///
/// ```swift
/// do { _ = try LikePattern("ab\\", []) } catch { print(error.kind) } // likeTrailingBackslash
/// ```
public struct TextError: SiftError, Hashable {
    /// The stable code of the failure; the raw value is what tools print.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// A LIKE pattern that ends with a lone backslash.
        case likeTrailingBackslash = "invalid-like-pattern"
        /// A MATCHES pattern PCRE2 cannot compile.
        case invalidRegex = "invalid-regex"
        /// A match that passed ``RegexPattern/matchLimit`` or ``RegexPattern/depthLimit``.
        case regexLimitExceeded = "regex-limit"
    }

    /// What failed.
    public var kind: Kind
    /// A lower-case sentence quoting the offending pattern.
    public var message: String
    /// The kind's raw value: `invalid-like-pattern`, `invalid-regex` or `regex-limit`, the ids of
    /// the evaluator's errors for these.
    public var id: String { kind.rawValue }

    /// An error of `kind` with its message.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
