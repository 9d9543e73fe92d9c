// Objects as `%@` arguments. SiftSyntax knows no store: a store's object type converts itself to
// an `ObjectReference` (its identity as a URI, and its row's key once it has one) through
// `PredicateArgumentConvertible`, and evaluation and SQL lowering compare by that identity.

/// The identity of a store's object inside a predicate: equal references name the same object.
///
/// ```swift
/// let ref = ObjectReference(uri: "sift://6F96…/Employee/p3", primaryKey: 3)
/// try SiftPredicate(format: "manager == %@", arguments: [LiteralValue.object(ref)])
/// // description: manager == <sift://6F96…/Employee/p3>
/// ```
public struct ObjectReference: Hashable, Sendable, Codable {
    /// The object's identity, e.g. its ID's URI; two references are equal when their URIs are.
    public let uri: String
    /// The primary key of the object's stored row, or nil when it has none yet (an unsaved
    /// object), so that SQL can match no stored row and only memory decides.
    public let primaryKey: Int64?

    /// A reference to the object identified by `uri`, stored under `primaryKey` when saved.
    public init(uri: String, primaryKey: Int64?) {
        self.uri = uri
        self.primaryKey = primaryKey
    }

    /// Equal when the URIs are (the key follows from the URI).
    public static func == (a: ObjectReference, b: ObjectReference) -> Bool { a.uri == b.uri }
    /// Hashes the URI.
    public func hash(into h: inout Hasher) { h.combine(uri) }
}

/// A type whose values convert themselves into a predicate constant when passed for `%@`.
///
/// ```swift
/// extension ManagedObject: PredicateArgumentConvertible {
///     public var predicateArgument: LiteralValue { .object(objectReference) }
/// }
/// ```
public protocol PredicateArgumentConvertible {
    /// The constant this value stands for in a predicate.
    var predicateArgument: LiteralValue { get }
}

extension ObjectReference: PredicateArgumentConvertible {
    /// The reference itself, as a constant.
    public var predicateArgument: LiteralValue { .object(self) }
}
