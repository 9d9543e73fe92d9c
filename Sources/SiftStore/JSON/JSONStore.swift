// JSON records as documents in an in-memory SiftStore, with the schema the SQL lowering needs to
// query them: what `sift filter --backend sqlite|postgres` and the corpus runners load records into.
// The records go through the store's JSON import (StoreImport.swift); the document entity's shapes
// are inferred from them (DocumentInference, below).

import Foundation
import SiftEvaluation
import SiftJSON
import SiftSQL
import SiftSQLite
import SiftSyntax

/// Why a JSON store could not be built.
///
/// ```swift
/// do { _ = try JSONStore(records: records) } catch {
///     print(error.id, error.message)   // records-refused cannot load the records: …
/// }
/// ```
public struct JSONStoreError: SiftError, Hashable {
    /// The kinds of failure; the raw value is the error's id.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// The model inferred from the records does not hold together.
        case invalidModel = "invalid-model"
        /// The in-memory store could not be made.
        case storeUnavailable = "store-unavailable"
        /// The store refused the records (a value it cannot hold, a shape conflict).
        case recordsRefused = "records-refused"
    }

    /// What kind of failure this is.
    public var kind: Kind
    /// What went wrong.
    public var message: String
    /// An error of `kind` with its message.
    public init(_ kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }
    /// The kind's raw value, e.g. `records-refused`.
    public var id: String { kind.rawValue }
    /// The message.
    public var description: String { message }
}

/// JSON records in an in-memory SiftStore, as documents of one document entity, with the schema
/// the lowering needs to query them. The records go through the store's import (`sift store
/// import`'s), the one way JSON reaches SQLite; the document entity's shapes are inferred here.
///
/// Shapes, per key, over all records (see SiftStore's `DocumentLayout`):
/// - scalars (bool, integer, double, string) → an `any` column keeping each value's storage class
///   (bool → INTEGER 0/1, double → REAL, string → TEXT in NFC);
/// - `{"$date": seconds}` objects (every non-null value) → a `date` column, seconds since 1970;
/// - objects → a to-one relationship (FK column, NULL when the object is null or missing);
/// - arrays of objects → a to-many relationship to a child table (owner column) with a count
///   column (NULL when the array is null or missing); a null element is a child row of NULLs;
/// - arrays of scalars (or of dates) → a `values` relationship with a count column;
/// - arrays that are empty in every record → a `values` relationship of type `any`.
/// A key that is null (or missing) everywhere → an `any` column of NULLs. A key with several of
/// these shapes → a `Schema.MixedKey`: one column (or table) per shape and a shape column per row.
/// Duplicate keys in one object: the last wins, as in memory. When some records are not objects
/// (strings, numbers, dates, arrays, null) the root entity gets a `selfShape` in the same way, its
/// `object` case being the record's own row; those records are listed in `nonObjectRecords`.
///
/// ```swift
/// let store = try JSONStore(records: [try JSONReader.parse(#"{"name": "Jörg", "tags": ["a"]}"#)])
/// let table = store.schema.entity(named: "Record")!.table
/// try store.recordIndices(sql: "SELECT \"Z_PK\" FROM \"\(table)\"", bindings: [])  // [0]
/// ```
public final class JSONStore {
    /// The inferred schema (the model's); the root entity is named `entity`.
    public let schema: Schema
    /// The store holding the records.
    public let store: PersistentStore
    /// Key path (keys joined by ".") → why the key is not in the schema.
    public let unsupportedKeys: [String: String]
    /// Indices of records that are not JSON objects (their `SELF` is kept in the root's value columns).
    public let nonObjectRecords: [Int]
    /// Record index by the primary key of its row.
    private let recordOfKey: [Int64: Int]

    /// Loads `records` into a new in-memory store as documents of one entity named `entity`, whose shapes
    /// are inferred from the records.
    ///
    /// ```swift
    /// let store = try JSONStore(records: records, entity: "Person")
    /// store.nonObjectRecords   // indices of the records that are not objects
    /// ```
    ///
    /// - Throws: ``JSONStoreError`` when the inferred model is invalid or SQLite cannot make the store or
    ///   take the records.
    public init(records: [JSONValue], entity: String = "Record") throws(JSONStoreError) {
        var nonObject: [Int] = []
        for (index, record) in records.enumerated() where record.documentKind != .object { nonObject.append(index) }
        let model: ManagedObjectModel
        do {
            model = try ManagedObjectModel(entities: [
                EntityDescription(entity, document: DocumentInference.describe(records))
            ])
        } catch {
            throw JSONStoreError(.invalidModel, message: "the inferred model is invalid: \(error.message)")
        }
        schema = model.schema
        unsupportedKeys = model.unsupportedDocumentKeys(of: entity)
        nonObjectRecords = nonObject
        do throws(StoreError) {
            store = try PersistentStore.inMemory(model: model)
        } catch {
            throw JSONStoreError(.storeUnavailable, message: "cannot make the store: \(error.message)")
        }
        let context = ManagedObjectContext(store: store)
        var importer = StoreImporter(context: context)
        do throws(JSONImportError) {
            _ = try importer.run(records, entity: entity)
        } catch {
            throw JSONStoreError(
                .recordsRefused, message: "cannot load the records: \(error.lines.joined(separator: "; "))")
        }
        var keys: [Int64: Int] = [:]
        keys.reserveCapacity(records.count)
        for (i, o) in importer.roots.enumerated() { if let pk = o.objectID.primaryKey { keys[pk] = i } }
        recordOfKey = keys
        // Queries read the rows; the objects are not needed any more.
        context.reset()
        // Statistics for the planner, as a store's indexes are built with the rows.
        _ = try? store.query("ANALYZE")
    }

    /// Runs `sql` on the store and returns its rows.
    public func query(_ sql: String, _ bindings: [SQLValue] = []) throws(StoreError) -> [[SQLValue]] {
        try store.query(sql, bindings)
    }

    /// The record index of the root row with primary key `pk`, nil for no such row.
    public func recordIndex(ofKey pk: Int64) -> Int? { recordOfKey[pk] }

    /// Runs a query whose first result column is the root primary key; returns record indices
    /// (0-based) in result order.
    ///
    /// ```swift
    /// try store.recordIndices(sql: q.sql, bindings: q.bindings)  // [0, 3, 7]
    /// ```
    ///
    /// - Throws: ``StoreError`` when SQLite rejects the query, or a row's first column is not the
    ///   primary key of a record's row.
    public func recordIndices(sql: String, bindings: [SQLValue]) throws(StoreError) -> [Int] {
        var out: [Int] = []
        for row in try store.query(sql, bindings) {
            guard case .integer(let pk)? = row.first, let i = recordOfKey[pk] else {
                throw StoreError(.sqlite, "the first result column is not a record's key: \(row.first ?? .null)")
            }
            out.append(i)
        }
        return out
    }
}

// MARK: - Shapes as the layout takes them

/// The document description of a set of JSON records: their merged shapes, and whether some are
/// not objects.
package enum DocumentInference {
    package static func describe(_ records: [JSONValue]) -> DocumentDescription {
        var rest = records[...]
        return describe { () -> JSONValue? in rest.popFirst() }
    }

    /// The description of the records `next` hands out, in order, until it answers nil (one at
    /// a time: memory holds the merged shapes, not the records).
    package static func describe<E: Error>(next: () throws(E) -> JSONValue?) throws(E) -> DocumentDescription {
        let root = FieldShape()
        var values = false
        var index = 0
        while let record = try next() {
            root.merge(record, record: index)
            if record.documentKind != .object { values = true }
            index += 1
        }
        return DocumentDescription(shape: root.document, allowsValues: values)
    }
}

extension FieldShape {
    /// The merged shapes as SiftStore's layout takes them: one flag per kind of value, the objects'
    /// and the arrays' elements' merged shapes, and why the key cannot have tables of its own (an
    /// array of arrays, or arrays whose elements are of different kinds: the first record where it
    /// shows).
    var document: DocumentShape {
        let kinds = kindSet()
        var d = DocumentShape(
            scalar: !kinds.isDisjoint(with: [.boolean, .integer, .double, .string]), date: kinds.contains(.date),
            object: object?.document, array: kinds.contains(.array), conflict: elementConflict)
        if d.conflict == nil, let elements, let first = elements.kinds.first {
            switch first.kind {
            case .date: d.element = .date
            case .object: d.element = .object(elements.object?.document ?? DocumentObjectShape())
            default: d.element = .scalar
            }
        }
        return d
    }

    /// The first element, in record order, that makes the arrays' elements unstorable as one kind.
    private var elementConflict: String? {
        guard let elements else { return nil }
        func category(_ k: JSONKind) -> Int { k == .date ? 1 : k == .object ? 2 : 0 }
        var first: Int?
        for (kind, record) in elements.kinds {
            if kind == .array { return "an array of arrays in record \(record)" }
            if let first, category(kind) != first {
                return "an array mixing objects, dates and scalars in record \(record)"
            }
            first = first ?? category(kind)
        }
        return nil
    }
}

extension ObjectShape {
    var document: DocumentObjectShape {
        DocumentObjectShape(keys: keys.map { DocumentObjectShape.Key(name: $0, shape: fields[$0]!.document) })
    }
}

/// JSON records as the layout writes them: `{"$date": seconds}` is a date, other objects are
/// objects (a duplicate key's last value wins, as in memory), text is stored NFC.
extension JSONValue: DocumentValue {
    package var documentKind: DocumentKind? {
        switch self {
        case .null: nil
        case .bool, .integer, .double, .string: .scalar
        case .object: date != nil ? .date : .object
        case .array: .array
        }
    }

    package var documentScalar: SQLValue {
        switch self {
        case .bool(let b): .integer(b ? 1 : 0)
        case .integer(let i): .integer(i)
        case .double(let d): .double(d)
        case .string(let s): .text(s.precomposedStringWithCanonicalMapping)
        default: .null
        }
    }

    package var documentDate: SQLValue {
        guard case .object(let f) = self, f.count == 1 else { return .null }
        switch f[0].1 {
        case .integer(let i): return .double(Double(i))
        case .double(let d): return .double(d)
        default: return .null
        }
    }

    package var documentMembers: [String: JSONValue] {
        guard case .object(let fields) = self else { return [:] }
        return Dictionary(uniqueKeysWithValues: JSONValue.uniqueMembers(fields))
    }

    package var documentElements: [JSONValue] {
        if case .array(let items) = self { return items }
        return []
    }
}
