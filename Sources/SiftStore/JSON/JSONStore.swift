// JSON records as documents in an in-memory SiftStore, with the schema the SQL lowering needs to
// query them: what `sift filter --backend sqlite|postgres` and the corpus runners load records into.
// The records go through the store's JSON import (StoreImport.swift); the document entity's shapes
// are inferred from them (DocumentInference, below).

import Foundation
import SiftEvaluation
import SiftJSON
import SiftSQL
import SiftSQLite

/// Why a JSON store could not be built: `id` is stable (`sqlite-error`, `schema-error`).
///
/// ```swift
/// do { _ = try JSONStore(records: []) } catch { print(error.id, error.message) }
/// ```
public struct JSONStoreError: Error, Sendable, CustomStringConvertible {
    public var id: String
    public var message: String
    public init(id: String, message: String) {
        self.id = id
        self.message = message
    }
    public var description: String { "\(id): \(message)" }
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

    public init(records: [JSONValue], entity: String = "Record") throws(JSONStoreError) {
        var nonObject: [Int] = []
        for (index, record) in records.enumerated() where record.documentKind != .object { nonObject.append(index) }
        let model: ManagedObjectModel
        do {
            model = try ManagedObjectModel(entities: [
                EntityDescription(entity, document: DocumentInference.describe(records))
            ])
        } catch {
            throw JSONStoreError(id: "schema-error", message: "the inferred model is invalid: \(error.message)")
        }
        schema = model.schema
        unsupportedKeys = model.unsupportedDocumentKeys(of: entity)
        nonObjectRecords = nonObject
        do throws(StoreError) {
            store = try PersistentStore.inMemory(model: model)
        } catch {
            throw JSONStoreError(id: "sqlite-error", message: "cannot make the store: \(error.message)")
        }
        let context = ManagedObjectContext(store: store)
        var importer = StoreImporter(context: context)
        do throws(JSONImportError) {
            _ = try importer.run(records, entity: entity)
        } catch {
            throw JSONStoreError(
                id: "sqlite-error", message: "cannot load the records: \(error.lines.joined(separator: "; "))")
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

    /// Runs a query whose first result column is the root primary key; returns record indices
    /// (0-based) in result order.
    ///
    /// ```swift
    /// try store.recordIndices(sql: q.sql, bindings: q.bindings)  // [0, 3, 7]
    /// ```
    /// The record index of the root row with primary key `pk`, nil for no such row.
    public func recordIndex(ofKey pk: Int64) -> Int? { recordOfKey[pk] }

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

// MARK: - Shape inference

/// The element kind shared by every array of one key.
private enum ElementShape {
    case scalar
    case date
    case object(ShapeNode)
}

/// Every shape one key took over all records (or, for the root, every shape of the records).
/// More than one makes a mixed key; an array of arrays, or an array whose elements are of
/// different kinds (objects and scalars), is a conflict and leaves the key out.
private final class KeyShapes {
    var scalar = false
    var date = false
    var object: ShapeNode?
    var array = false
    /// The arrays' element kind; nil while only empty arrays (and null elements) were seen.
    var element: ElementShape?
    var conflict: String?

    var kindCount: Int { [scalar, date, object != nil, array].filter { $0 }.count }

    func merge(_ value: JSONValue, record: Int) {
        guard conflict == nil else { return }
        switch value {
        case .null: break
        case .bool, .integer, .double, .string: scalar = true
        case .object(let fields):
            if ShapeNode.isDate(fields) {
                date = true
                return
            }
            let node = object ?? ShapeNode()
            object = node
            node.merge(fields: fields, record: record)
        case .array(let items):
            array = true
            for item in items {
                switch (item, element) {
                case (.null, _): continue
                case (.array, _):
                    conflict = "an array of arrays in record \(record)"
                    return
                case (.object(let f), nil) where ShapeNode.isDate(f): element = .date
                case (.object(let f), .date?) where ShapeNode.isDate(f): continue
                case (.object(let f), nil):
                    let node = ShapeNode()
                    node.merge(fields: f, record: record)
                    element = .object(node)
                case (.object(let f), .object(let node)?) where !ShapeNode.isDate(f):
                    node.merge(fields: f, record: record)
                case (.bool, nil), (.integer, nil), (.double, nil), (.string, nil): element = .scalar
                case (.bool, .scalar?), (.integer, .scalar?), (.double, .scalar?), (.string, .scalar?): continue
                default:
                    conflict = "an array mixing objects, dates and scalars in record \(record)"
                    return
                }
            }
        }
    }
}

/// The merged shape of the objects stored in one table.
private final class ShapeNode {
    var keys: [String] = []
    var shapes: [String: KeyShapes] = [:]

    func merge(fields: [(String, JSONValue)], record: Int) {
        for (key, value) in JSONValue.uniqueMembers(fields) {
            let shapes: KeyShapes
            if let s = self.shapes[key] {
                shapes = s
            } else {
                shapes = KeyShapes()
                self.shapes[key] = shapes
                keys.append(key)
            }
            shapes.merge(value, record: record)
        }
    }

    static func isDate(_ fields: [(String, JSONValue)]) -> Bool { JSONValue.object(fields).date != nil }
}

// MARK: - Shapes as the layout takes them

/// The document description of a set of JSON records: their merged shapes, and whether some are
/// not objects.
package enum DocumentInference {
    package static func describe(_ records: [JSONValue]) -> DocumentDescription {
        let root = KeyShapes()
        var values = false
        for (index, record) in records.enumerated() {
            root.merge(record, record: index)
            if record.documentKind != .object { values = true }
        }
        return DocumentDescription(shape: root.document, allowsValues: values)
    }
}

extension KeyShapes {
    /// The merged shapes as SiftStore's layout takes them.
    package var document: DocumentShape {
        var d = DocumentShape(scalar: scalar, date: date, object: object?.document, array: array, conflict: conflict)
        switch element {
        case .scalar?: d.element = .scalar
        case .date?: d.element = .date
        case .object(let node)?: d.element = .object(node.document)
        case nil: break
        }
        return d
    }
}

extension ShapeNode {
    package var document: DocumentObjectShape {
        DocumentObjectShape(keys: keys.map { DocumentObjectShape.Key(name: $0, shape: shapes[$0]!.document) })
    }
}

/// JSON records as the layout writes them: `{"$date": seconds}` is a date, other objects are
/// objects (a duplicate key's last value wins, as in memory), text is stored NFC.
extension JSONValue: DocumentValue {
    package var documentKind: DocumentKind? {
        switch self {
        case .null: nil
        case .bool, .integer, .double, .string: .scalar
        case .object(let f): ShapeNode.isDate(f) ? .date : .object
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
