// The errors of the SQL lowering. A predicate the lowering cannot translate exactly is rejected
// with one of these rather than turned into SQL that might select different rows. Each has a
// stable id, a lower-case message naming the key, operator or types involved, and the range of
// the offending part of the predicate, rendered `line:column: error: …` like evaluation errors.

import SiftSyntax

/// A predicate (or sort key) that cannot be lowered to SQL.
///
/// ```swift
/// do { _ = try lowering.select(try PredicateSyntax.parse("nme == 1")) }
/// catch { print(error.kind, error) }   // unknownKey  error: Person has no key 'nme'
/// ```
public struct SQLLoweringError: SiftError, Hashable {
    /// The stable kinds.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// A key the entity does not have (entities that are not open).
        case unknownKey = "unknown-key"
        /// An entity the schema does not have.
        case unknownEntity = "unknown-entity"
        /// Values compared or combined against the schema's types (a string attribute with a number…).
        case typeMismatch = "type-mismatch"
        /// A to-many key path where one value is needed, or inside another to-many path.
        case toManyKeyPath = "to-many-key-path"
        /// A collection operator or quantifier over something that is not a collection.
        case notACollection = "not-a-collection"
        /// A form the lowering does not translate exactly (FUNCTION, `random()`…).
        case unsupported = "unsupported"
        /// A `$VARIABLE` without a value.
        case unboundVariable = "unbound-variable"
    }

    /// Which kind of rejection this is.
    public var kind: Kind
    /// The message, naming the key, operator or types involved.
    public var message: String
    /// The UTF-8 range of the offending node, when there is one.
    public var range: SourceRange?
    /// The predicate's source text, for `line:column` and the caret line.
    public var source: String?
    /// A type mismatch between values read from rows (or a row and a constant), which memory
    /// may still answer: the lowering then asks memory (`Builtins.compare`) from SQL.
    var betweenValues = false
    /// A comparison memory answers (or raises on) as usual, but whose operands SQL cannot compare as
    /// stored: dates in two encodings, a dynamically typed value against a date. The lowering then
    /// asks memory from SQL wherever it meets one.
    var askMemory = false
    /// A rejection that holds for every row alike, or for no row reproducibly: a constant part that
    /// raises in memory, `random()`. Memory on the row's document would not do better (see
    /// ``documentCanDecide``).
    var rowIndependent = false
    /// A key an object's table does not declare, a key or collection operator applied to a value
    /// or an object, a to-many inside another, an object compared whole: the row's document (when
    /// there is one) holds what memory reads.
    var readsDocument = false

    /// Whether memory, given the row's whole document, answers the comparison this error rejects
    /// exactly (see ``Entity/documentColumn``): forms the tables cannot express, not type errors
    /// (which memory raises on too) nor rejections that hold whatever the row.
    var documentCanDecide: Bool {
        switch kind {
        case .unsupported: return !rowIndependent
        case .unknownKey, .toManyKeyPath, .typeMismatch, .notACollection: return readsDocument
        default: return false
        }
    }

    /// An error of `kind`; pass the node's `range` and the predicate's `source` for `line:column`.
    public init(_ kind: Kind, _ message: String, range: SourceRange? = nil, source: String? = nil) {
        self.kind = kind
        self.message = message
        self.range = range
        self.source = source
    }

    /// A `betweenValues` error (see there).
    static func ofValues(_ kind: Kind, _ message: String, range: SourceRange?) -> SQLLoweringError {
        var e = SQLLoweringError(kind, message, range: range)
        e.betweenValues = true
        return e
    }

    /// An `askMemory` error (see there).
    static func forMemory(_ message: String, range: SourceRange?) -> SQLLoweringError {
        var e = SQLLoweringError(.unsupported, "\(message) cannot be lowered to SQL", range: range)
        e.askMemory = true
        return e
    }

    /// A `rowIndependent` error (see there).
    static func everyRow(_ message: String, range: SourceRange?) -> SQLLoweringError {
        var e = SQLLoweringError(.unsupported, message, range: range)
        e.rowIndependent = true
        return e
    }

    /// The stable identifier, e.g. `unknown-key`.
    public var id: String { kind.rawValue }

    /// `line:column` of the offending node, when both range and source are known.
    public var location: SourceLocation? {
        guard let source, let range else { return nil }
        return SourceText(source).location(of: range.lowerBound)
    }

    /// `1:5: error: Person has no key 'nme'`.
    public var description: String {
        if let location { return "\(location): error: \(message)" }
        return "error: \(message)"
    }

    /// The description followed by the source line and a caret under the offending node.
    public var annotated: String {
        guard let source, let range, let location else { return description }
        let text = SourceText(source)
        let end = text.location(of: max(range.lowerBound, range.upperBound))
        let width = end.line == location.line ? max(1, end.column - location.column) : 1
        let caret = String(repeating: " ", count: location.column - 1) + "^" + String(repeating: "~", count: width - 1)
        return "\(description)\n\(text.line(location.line))\n\(caret)"
    }
}
