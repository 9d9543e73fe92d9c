// The store's one error type: a stable kind (what tools and tests match on), a message naming the
// object, the key and the rule, and every failure when a save breaks several rules at once (as
// Core Data reports them together), each failure also as fields (object ID, entity, key, value,
// constraint) so a UI can point at the field without parsing the words. Predicate and lowering
// errors keep their `line:column`.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSyntax

/// A failure of the model, the store, a context or a request.
///
/// ```swift
/// do { try context.save() } catch {
///     print(error.kind)      // .validation
///     print(error)           // store error: Person (temporary 1) 'age': -1 is below the minimum 0
/// }
/// ```
public struct StoreError: SiftError {
    /// The stable kinds; the raw value is the error's id.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A model that does not hold together, or a model file that cannot be read.
        case model
        /// The store was created with another model (the message names what differs).
        case modelMismatch = "model-mismatch"
        /// An entity the model does not have.
        case unknownEntity = "unknown-entity"
        /// A key the entity does not have.
        case unknownKey = "unknown-key"
        /// A value of the wrong type for its attribute.
        case typeMismatch = "type-mismatch"
        /// A validation rule, a required value or a count bound broken at save.
        case validation
        /// Two objects with the same values for a uniqueness constraint.
        case uniqueness
        /// A deny delete rule refused a delete.
        case deleteDenied = "delete-denied"
        /// An object ID that names no object of this store.
        case objectNotFound = "object-not-found"
        /// An insert into an abstract entity, an object of another context, a deleted object used.
        case invalidOperation = "invalid-operation"
        /// A predicate that does not parse.
        case syntax
        /// A predicate that raised while it was evaluated.
        case evaluation
        /// A save found objects changed or deleted in the store since they were read, and the
        /// context's merge policy is `.error` (``StoreError/conflicts`` lists them).
        case mergeConflict = "merge-conflict"
        /// SQLite failed (I/O, a locked database, a corrupt file).
        case sqlite
    }

    /// The rule a failure broke (Core Data's validation error codes, in Swift's words).
    ///
    /// ```swift
    /// if error.constraint == .maxLength { highlight(error.key) }
    /// ```
    public enum Constraint: String, Sendable, Hashable, CaseIterable {
        /// A non-optional attribute or to-one relationship was nil.
        case required
        /// A number below the attribute's `min`.
        case minValue
        /// A number above the attribute's `max`.
        case maxValue
        /// A string or data shorter than `minLength`.
        case minLength
        /// A string or data longer than `maxLength`.
        case maxLength
        /// A string the attribute's `regex` does not match (or that the pattern failed on).
        case regularExpression
        /// A to-many relationship with fewer objects than its `minCount`.
        case minCount
        /// A to-many relationship with more objects than its `maxCount`.
        case maxCount
        /// Two objects with the same values for a uniqueness constraint.
        case uniqueness
        /// A relationship whose delete rule is deny still holds objects.
        case deleteDeny
        /// A value of the wrong type (or shape, for mixed attributes and documents).
        case type
        /// A key the entity does not have.
        case unknownKey
    }

    /// One broken rule: which object, entity and key, the offending value and the rule, with the
    /// line the error prints for it.
    ///
    /// ```swift
    /// do { try context.save() } catch {
    ///     for f in error.failures { print(f.objectID!, f.key!, f.constraint!) }  // Person (temporary 1) age minValue
    /// }
    /// ```
    public struct Failure: Sendable, Equatable, CustomStringConvertible {
        /// The object that broke the rule, when there is one.
        public var objectID: ObjectID?
        /// Its entity's name.
        public var entity: String?
        /// The attribute or relationship (for a uniqueness constraint of several attributes, the
        /// first; ``keys`` has them all).
        public var key: String? { keys.first }
        /// Every key the rule reads (one, except for a uniqueness constraint of several
        /// attributes).
        public var keys: [String]
        /// The offending value (an array of the values for a uniqueness constraint of several
        /// attributes; the number of objects for a count bound).
        public var value: Value?
        /// The rule that was broken.
        public var constraint: Constraint?
        /// The other objects involved: the one with the same values (uniqueness), the ones a deny
        /// relationship still holds.
        public var relatedObjectIDs: [ObjectID]
        /// The failure as the error prints it, e.g. `Person (temporary 1) 'age': -1 is below the
        /// minimum 0`.
        public var message: String

        /// A failure with its fields; `message` is the line printed for it.
        public init(
            _ message: String, objectID: ObjectID? = nil, entity: String? = nil, keys: [String] = [],
            value: Value? = nil, constraint: Constraint? = nil, relatedObjectIDs: [ObjectID] = []
        ) {
            self.message = message
            self.objectID = objectID
            self.entity = entity
            self.keys = keys
            self.value = value
            self.constraint = constraint
            self.relatedObjectIDs = relatedObjectIDs
        }

        /// The message.
        public var description: String { message }
    }

    /// What kind of failure this is.
    public var kind: Kind
    /// The first or only problem, in words.
    public var message: String
    /// Where in the predicate, sort key or expression a syntax or evaluation error points, when
    /// its source is known.
    public var location: SourceLocation?
    /// Every broken rule, when a save fails validation (the first is `message`, after
    /// `line:column: error: ` when the error has a ``location``), each with its fields.
    public var failures: [Failure]
    /// The evaluator's error (with its source range and `annotated` caret line) when a predicate
    /// or expression raised in memory.
    public var evaluationError: EvaluationError?
    /// The primary key of the row on which a fetch's predicate raised in memory (the SQL row
    /// guard's error, kind `.evaluation`; see SiftSQL's RowGuard.swift).
    public var raisedRow: Int64?
    /// Every conflicting object, when a save failed with `.mergeConflict`.
    public var conflicts: [MergeConflict] = []
    /// The text ``location`` points into, when the error knows it: the predicate, a sort key, a
    /// property, an aggregate (`n=@sum.price`) or an expression, each as written.
    public var source: String?
    /// The UTF-8 byte range of the failing part of ``source``.
    public var range: SourceRange?

    /// An error of `kind`; `failures` lists every broken rule of a failed save.
    public init(_ kind: Kind, _ message: String, failures: [String] = []) {
        self.init(kind, failures: (failures.isEmpty ? [message] : failures).map { Failure($0) })
        self.message = message
    }

    /// An error of `kind` for `failures` (at least one); the message is the first one's.
    ///
    /// ```swift
    /// let f = StoreError.Failure("Item (temporary 1) 'price': is required", keys: ["price"], constraint: .required)
    /// throw StoreError(.validation, failures: [f])
    /// ```
    public init(_ kind: Kind, failures: [Failure]) {
        self.kind = kind
        self.message = failures.first?.message ?? ""
        self.failures = failures
    }

    /// The first failure's object ID (the object of a single-failure error).
    public var objectID: ObjectID? { failures.first?.objectID }
    /// The first failure's entity.
    public var entity: String? { failures.first?.entity }
    /// The first failure's key.
    public var key: String? { failures.first?.key }
    /// The first failure's offending value.
    public var value: Value? { failures.first?.value }
    /// The first failure's broken rule.
    public var constraint: Constraint? { failures.first?.constraint }

    /// `store error: ` followed by the message (after `line:column: error:` when the error has a
    /// location), or by every failure when a save broke several rules.
    public var description: String {
        if failures.count > 1 {
            return "store error: \(failures.count) problems: " + failures.map(\.message).joined(separator: "; ")
        }
        return "store error: " + (location.map { "\($0): error: " } ?? "") + message
    }

    /// `line:column: error: ` and the message, then the source line and a caret under the
    /// failing part, as syntax errors print, when the error knows its ``source``; otherwise
    /// ``description``.
    ///
    /// ```swift
    /// do { _ = try context.fetch(try FetchRequest("Item", predicate: "price < 3 AND prise > 5")) } catch {
    ///     print(error.annotated)
    ///     // 1:15: error: Item has no key 'prise'; did you mean 'price'?
    ///     // price < 3 AND prise > 5
    ///     //               ^~~~~
    /// }
    /// ```
    public var annotated: String {
        guard let source, let location, let range else { return description }
        let text = SourceText(source)
        let end = text.location(of: max(range.lowerBound, range.upperBound))
        let width = end.line == location.line ? max(1, end.column - location.column) : 1
        let line = text.line(location.line)
        let indent = String(line.prefix(location.column - 1).map { $0 == "\t" ? "\t" : " " })
        return "\(location): error: \(message)\n\(line)\n\(indent)^" + String(repeating: "~", count: width - 1)
    }

    /// Points the error at `range` of `source` (its location, and the `line:column` of its one
    /// failure line).
    mutating func locate(in source: String, _ range: SourceRange) {
        self.source = source
        self.range = range
        location = SourceText(source).location(of: range.lowerBound)
        var failure = failures.first ?? Failure(message)
        failure.message = "\(location!): error: " + message
        failures = [failure]
    }

    /// `o` has no property `key`: an `unknown-key` error with the object, its entity and the key.
    static func unknownKey(_ key: String, of o: ManagedObject, _ message: String) -> StoreError {
        StoreError(
            .unknownKey,
            failures: [
                Failure(message, objectID: o.objectID, entity: o.info.name, keys: [key], constraint: .unknownKey)
            ])
    }

    /// `value` cannot be `o`'s `key`: a `type-mismatch` error worded `Person (temporary 1) 'age':
    /// <words>`.
    static func typeMismatch(_ o: ManagedObject, _ key: String, _ value: Value, _ words: String) -> StoreError {
        StoreError(
            .typeMismatch,
            failures: [
                Failure(
                    "\(o.objectID) '\(key)': \(words)", objectID: o.objectID, entity: o.info.name, keys: [key],
                    value: value, constraint: .type)
            ])
    }

    /// ``typeMismatch(_:_:_:_:)`` for a value the caller handed in.
    static func typeMismatch(_ o: ManagedObject, _ key: String, _ value: Any?, _ words: String) -> StoreError {
        typeMismatch(o, key, Value(storing: value), words)
    }

    /// The stable id, e.g. `uniqueness`.
    public var id: String { kind.rawValue }

    init(_ e: ModelError) { self.init(.model, e.message) }
    init(_ e: SyntaxError) {
        self.init(.syntax, e.message, at: e.location)
        source = e.source
        range = e.range
    }
    init(_ e: EvaluationError) {
        self.init(.evaluation, e.message, at: e.location)
        evaluationError = e
        if e.source != nil {
            source = e.source
            range = e.range
        }
    }
    /// An evaluation error of `text` (an expression, a key path) on one object:
    /// `Record 17: + needs numbers, got nil in 'age + 1'`, located in `text`.
    init(_ e: EvaluationError, object: ObjectID, in text: String) {
        self.init(e)
        message = "\(object): \(e.message) in '\(text)'"
        failures = [Failure((location.map { "\($0): error: " } ?? "") + message)]
    }
    init(_ e: SQLLoweringError) { self.init(.syntax, e.message, at: e.location) }

    /// An error at a place in a predicate; its one failure line starts with `line:column: error: `.
    private init(_ kind: Kind, _ message: String, at location: SourceLocation?) {
        self.init(kind, message, failures: [(location.map { "\($0): error: " } ?? "") + message])
        self.location = location
    }
}
