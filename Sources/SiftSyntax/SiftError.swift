// The one shape of Sift's errors. Every public error type of every module is a struct that conforms
// here: a `kind` to switch on, a stable kebab-case `id` that tools, the corpus and tests match on, a
// `message` without position or prefix, and a `location` where the input has a place to point at
// (not a requirement: a syntax error always has one, an evaluation error only when its source is
// known). The shape lives in SiftSyntax because every other module depends on it.

/// The shape every error type of Sift shares.
///
/// Each error is a struct with a ``kind`` (an enum, with the values involved where there are any),
/// a stable ``id`` (kebab-case, what tools, scripts and tests match on), a ``message`` (lower-case,
/// without position or prefix) and a description that reads well on its own line. Errors about a
/// place in a text (a predicate, a JSON input) also have a `location` (``SourceLocation``, 1-based
/// line and column), which the description starts with.
///
/// ```swift
/// do { _ = try PredicateSyntax.parse("age >") } catch {
///     let e: any SiftError = error
///     print(e.id)         // expected-expression
///     print(e.message)    // expected expression after '>'
///     print(e)            // 1:6: error: expected expression after '>'
/// }
/// ```
public protocol SiftError: Error, Sendable, CustomStringConvertible {
    /// The kinds of failure of this error type.
    associatedtype Kind: Hashable, Sendable

    /// What kind of failure this is.
    var kind: Kind { get }
    /// The stable identifier of the kind, in kebab-case (`incomparable-values`, `unknown-key`).
    var id: String { get }
    /// What went wrong, in words, without the position or a prefix.
    var message: String { get }
}
