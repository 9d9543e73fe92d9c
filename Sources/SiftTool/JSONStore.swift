// Loads JSON records into an in-memory SQLite database through a schema inferred from the records,
// so a predicate can run as lowered SQL over the same data the in-memory evaluator sees. Inference
// walks every record (and every nested object and array element) and gives each key one shape:
// scalar column, date column, to-one table, to-many table or value table. A key whose shapes
// disagree is left out and reported in `unsupportedKeys`; the load itself never fails on shape.
// Names: every table, column and index name is derived from the JSON keys, made unique
// (case-insensitively, as SQLite compares identifiers) and only ever written into SQL quoted.

import Foundation
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
    public init(id: String, message: String) { self.id = id; self.message = message }
    public var description: String { "\(id): \(message)" }
}

/// JSON records in an in-memory SQLite database, with the schema the lowering needs to query them.
///
/// Shapes, per key, over all records:
/// - scalars (bool, integer, double, string) → an `any` column keeping each value's storage class
///   (bool → INTEGER 0/1, double → REAL, string → TEXT in NFC);
/// - `{"$date": seconds}` objects (every non-null value) → a `date` column, seconds since 1970;
/// - objects → a to-one relationship (FK column, NULL when the object is null or missing);
/// - arrays of objects → a to-many relationship to a child table (owner column) with a count
///   column (NULL when the array is null or missing); a null element is a child row of NULLs;
/// - arrays of scalars (or of dates) → a `values` relationship with a count column;
/// - arrays that are empty in every record → a `values` relationship of type `any` (no element is
///   ever seen, so the shape cannot matter to a predicate).
/// A key that is null (or missing) everywhere → an `any` column of NULLs.
/// Duplicate keys in one object: the last wins, as in memory. A record that is not an object is a
/// row of NULLs and is listed in `nonObjectRecords`.
///
/// ```swift
/// let store = try JSONStore(records: [try JSONReader.parse(#"{"name": "Jörg", "tags": ["a"]}"#)])
/// let table = store.schema.entity(named: "Record")!.table
/// try store.recordIndices(sql: "SELECT \"_id\" FROM \"\(table)\"", bindings: [])  // [0]
/// ```
public final class JSONStore {
    /// The inferred schema; the root entity is named `entity`.
    public let schema: Schema
    public let connection: SQLiteConnection
    /// Key path (keys joined by ".") → why the key is not in the schema.
    public var unsupportedKeys: [String: String]
    /// Indices of records that are not JSON objects (stored as rows of NULLs).
    public let nonObjectRecords: [Int]

    public init(records: [JSONValue], entity: String = "Record") throws(JSONStoreError) {
        let root = ShapeNode()
        var nonObject: [Int] = []
        for (index, record) in records.enumerated() {
            if case .object(let fields) = record {
                root.merge(fields: fields, record: index)
            } else {
                nonObject.append(index)
            }
        }
        var names = NameSpace()
        var unsupported: [String: String] = [:]
        let plan = TablePlan(node: root, entity: entity, table: names.table(entity), owner: nil,
                             path: [], names: &names, unsupported: &unsupported)
        var entities: [Entity] = []
        plan.collectEntities(into: &entities)
        do {
            schema = try Schema(entities: entities)
        } catch {
            throw JSONStoreError(id: "schema-error", message: "the inferred schema is invalid: \(error.message)")
        }
        unsupportedKeys = unsupported
        nonObjectRecords = nonObject
        do {
            connection = try SQLiteConnection()
            try connection.execute(plan.createScript(names: &names))
            var loader = try Loader(connection: connection, plan: plan)
            try connection.transaction { () throws(SQLiteError) in
                for (index, record) in records.enumerated() {
                    let fields: [(String, JSONValue)]
                    if case .object(let f) = record { fields = f } else { fields = [] }
                    try loader.insert(plan, fields: fields, primaryKey: Int64(index), owner: nil)
                }
            }
            // Indexes after the data: one sorted build per index is faster than maintaining them.
            try connection.execute(plan.indexScript(names: &names))
            try connection.execute("ANALYZE")
        } catch {
            throw JSONStoreError(id: "sqlite-error", message: "cannot load the records: \(error)")
        }
    }

    /// Runs a query whose first result column is the root primary key; returns record indices
    /// (0-based) in result order.
    ///
    /// ```swift
    /// try store.recordIndices(sql: q.sql, bindings: q.bindings)  // [0, 3, 7]
    /// ```
    public func recordIndices(sql: String, bindings: [SQLValue]) throws(SQLiteError) -> [Int] {
        let statement = try connection.prepare(sql)
        try statement.bind(bindings)
        var out: [Int] = []
        while try statement.step() {
            guard case .integer(let pk) = statement.column(0) else {
                throw SQLiteError(code: 20 /* SQLITE_MISMATCH */, message: "the first result column is not a record index: \(statement.column(0))", sql: sql)
            }
            out.append(Int(pk))
        }
        return out
    }
}

/// Quotes an identifier through the SQLite dialect, the one place Sift quotes identifiers.
private func quote(_ name: String) -> String {
    SQLiteDialect().quote(name)
}

// MARK: - Shape inference

/// The shape of one key, merged over every value seen.
private enum Shape {
    /// Only nulls seen so far: a scalar column of NULLs unless a later value says otherwise.
    case onlyNull
    case scalar
    case date
    case object(ShapeNode)
    /// An array; the element shape is nil while only empty arrays (and null elements) were seen.
    case array(Element?)
    case conflict(String)

    enum Element {
        case scalar
        case date
        case object(ShapeNode)
    }

    var name: String {
        switch self {
        case .onlyNull: "null"
        case .scalar: "a scalar"
        case .date: "a date"
        case .object: "an object"
        case .array: "an array"
        case .conflict: "a conflict"
        }
    }
}

/// The merged shape of the objects stored in one table.
private final class ShapeNode {
    var keys: [String] = []
    var shapes: [String: Shape] = [:]

    /// The fields of one object, duplicate keys resolved last-wins as the evaluator does.
    static func lastWins(_ fields: [(String, JSONValue)]) -> [(String, JSONValue)] {
        var seen: [String: Int] = [:]
        var out: [(String, JSONValue)] = []
        for (k, v) in fields {
            if let i = seen[k] { out[i].1 = v } else { seen[k] = out.count; out.append((k, v)) }
        }
        return out
    }

    func merge(fields: [(String, JSONValue)], record: Int) {
        for (key, value) in Self.lastWins(fields) {
            let current = shapes[key]
            if current == nil { keys.append(key) }
            if case .null = value {
                if current == nil { shapes[key] = .onlyNull }
                continue
            }
            if case .onlyNull? = current {
                shapes[key] = Self.merge(nil, value, record: record)
            } else {
                shapes[key] = Self.merge(current, value, record: record)
            }
        }
    }

    static func isDate(_ fields: [(String, JSONValue)]) -> Bool { JSONValue.object(fields).date != nil }

    static func merge(_ current: Shape?, _ value: JSONValue, record: Int) -> Shape {
        if case .conflict? = current { return current! }
        func conflict(_ was: Shape, _ now: String) -> Shape {
            .conflict("\(was.name) before, \(now) in record \(record)")
        }
        switch value {
        case .null:
            return current ?? .array(nil)  // not reached: nulls are skipped by the callers
        case .bool, .integer, .double, .string:
            guard let current else { return .scalar }
            if case .scalar = current { return current }
            return conflict(current, "a scalar")
        case .object(let fields):
            if isDate(fields) {
                guard let current else { return .date }
                if case .date = current { return current }
                return conflict(current, "a date")
            }
            let node: ShapeNode
            switch current {
            case nil: node = ShapeNode()
            case .object(let n)?: node = n
            case let other?: return conflict(other, "an object")
            }
            node.merge(fields: fields, record: record)
            return .object(node)
        case .array(let items):
            var element: Shape.Element?
            switch current {
            case nil: element = nil
            case .array(let e)?: element = e
            case let other?: return conflict(other, "an array")
            }
            for item in items {
                switch (item, element) {
                case (.null, _): continue
                case (.array, _):
                    return .conflict("an array of arrays in record \(record)")
                case (.object(let f), nil) where isDate(f): element = .date
                case (.object(let f), .date?) where isDate(f): continue
                case (.object(let f), nil):
                    let node = ShapeNode()
                    node.merge(fields: f, record: record)
                    element = .object(node)
                case (.object(let f), .object(let node)?) where !isDate(f):
                    node.merge(fields: f, record: record)
                case (.bool, nil), (.integer, nil), (.double, nil), (.string, nil): element = .scalar
                case (.bool, .scalar?), (.integer, .scalar?), (.double, .scalar?), (.string, .scalar?): continue
                default:
                    return .conflict("an array mixing objects, dates and scalars in record \(record)")
                }
            }
            return .array(element)
        }
    }
}

// MARK: - Naming

/// Allocates table and index names unique across the database (SQLite compares them ASCII
/// case-insensitively), with NUL characters replaced because the C API stops at them.
private struct NameSpace {
    var used: Set<String> = []

    static func unique(_ base: String, in used: inout Set<String>) -> String {
        let clean = base.replacingOccurrences(of: "\u{0}", with: "?")
        var candidate = clean, n = 1
        while !used.insert(candidate.lowercased()).inserted {
            n += 1
            candidate = "\(clean)#\(n)"
        }
        return candidate
    }

    mutating func table(_ base: String) -> String { Self.unique(base, in: &used) }
}

// MARK: - Table plans

/// One table to create and fill: its entity, columns and children, all names decided.
private final class TablePlan {
    enum Column {
        case scalar(key: String, column: String)
        case date(key: String, column: String)
        case toOne(key: String, column: String, child: TablePlan)
        case toMany(key: String, countColumn: String, child: TablePlan)
        case values(key: String, countColumn: String, table: String, isDate: Bool)
    }

    let entity: String
    let table: String
    let primaryKey: String
    /// The owner column, for the children of a to-many relationship.
    let owner: String?
    var columns: [Column] = []
    var nextRowID: Int64 = 0
    /// Some key of this object was left out for conflicting shapes. Then the entity cannot be open
    /// (undeclared keys reading nil): that key is not nil in memory.
    var hasUnsupportedKey = false

    init(node: ShapeNode, entity: String, table: String, owner: String?, path: [String],
         names: inout NameSpace, unsupported: inout [String: String]) {
        self.entity = entity
        self.table = table
        // Column names of this table: the primary key and owner first, chosen to avoid every key.
        var used = Set<String>()
        let lowerKeys = Set(node.keys.map { $0.lowercased() })
        var pk = "_id"
        while lowerKeys.contains(pk.lowercased()) { pk = "_" + pk }
        primaryKey = NameSpace.unique(pk, in: &used)
        if owner != nil {
            var o = "_owner"
            while lowerKeys.contains(o.lowercased()) { o = "_" + o }
            self.owner = NameSpace.unique(o, in: &used)
        } else {
            self.owner = nil
        }
        // Keys claim their own names before count columns, so a count column never takes a key's name.
        var keyColumns: [String: String] = [:]
        for key in node.keys { keyColumns[key] = NameSpace.unique(key, in: &used) }
        for key in node.keys {
            let keyPath = (path + [key]).joined(separator: ".")
            let column = keyColumns[key]!
            switch node.shapes[key]! {
            case .conflict(let why):
                unsupported[keyPath] = why
                hasUnsupportedKey = true
            case .scalar, .onlyNull:
                columns.append(.scalar(key: key, column: column))
            case .date:
                columns.append(.date(key: key, column: column))
            case .object(let child):
                // Entity and table share one unique name ("Record.address").
                let name = names.table(entity + "." + key)
                let plan = TablePlan(node: child, entity: name, table: name, owner: nil,
                                     path: path + [key], names: &names, unsupported: &unsupported)
                columns.append(.toOne(key: key, column: column, child: plan))
            case .array(.object(let child)?):
                let name = names.table(entity + "." + key)
                let plan = TablePlan(node: child, entity: name, table: name, owner: "_owner",
                                     path: path + [key], names: &names, unsupported: &unsupported)
                columns.append(.toMany(key: key, countColumn: NameSpace.unique(key + "@count", in: &used), child: plan))
            case .array(let element):
                var isDate = false
                if case .date? = element { isDate = true }
                columns.append(.values(key: key, countColumn: NameSpace.unique(key + "@count", in: &used),
                                       table: names.table(entity + "." + key), isDate: isDate))
            }
        }
    }

    func collectEntities(into out: inout [Entity]) {
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
        var children: [TablePlan] = []
        for c in columns {
            switch c {
            case .scalar(let key, let column):
                attributes.append(Attribute(name: key, column: column, type: .any))
            case .date(let key, let column):
                attributes.append(Attribute(name: key, column: column, type: .date, encoding: .secondsSince1970))
            case .toOne(let key, let column, let child):
                relationships.append(Relationship(name: key, toOne: child.entity, foreignKey: column))
                children.append(child)
            case .toMany(let key, let count, let child):
                // Child rows and value rows are numbered in array order: the key is the position.
                relationships.append(Relationship(name: key, toMany: child.entity, foreignKey: child.owner!, countColumn: count,
                                                  orderColumn: child.primaryKey))
                children.append(child)
            case .values(let key, let count, let table, let isDate):
                let values = Relationship.ValueTable(table: table, owner: "owner", column: "value",
                                                     type: isDate ? .date : .any, encoding: isDate ? .secondsSince1970 : nil)
                relationships.append(Relationship(name: key, values: values, countColumn: count, orderColumn: "id"))
            }
        }
        // JSON objects answer nil for keys they lack, so the inferred entities are open.
        out.append(Entity(name: entity, table: table, primaryKey: primaryKey,
                          attributes: attributes, relationships: relationships, open: !hasUnsupportedKey))
        for child in children { child.collectEntities(into: &out) }
    }

    /// The columns of this table in insert order (primary key, owner, then one per key).
    var columnNames: [String] {
        var names = [primaryKey]
        if let owner { names.append(owner) }
        for c in columns {
            switch c {
            case .scalar(_, let n), .date(_, let n), .toOne(_, let n, _): names.append(n)
            case .toMany(_, let n, _), .values(_, let n, _, _): names.append(n)
            }
        }
        return names
    }

    func createScript(names: inout NameSpace) -> String {
        var defs = [quote(primaryKey) + " INTEGER PRIMARY KEY"]
        defs += columnNames.dropFirst().map(quote)
        var script = "CREATE TABLE \(quote(table)) (\(defs.joined(separator: ", ")));\n"
        for c in columns {
            switch c {
            case .toOne(_, _, let child), .toMany(_, _, let child):
                script += child.createScript(names: &names)
            case .values(_, _, let valueTable, _):
                script += "CREATE TABLE \(quote(valueTable)) (\"id\" INTEGER PRIMARY KEY, \"owner\" INTEGER, \"value\");\n"
            default: break
            }
        }
        return script
    }

    func indexScript(names: inout NameSpace) -> String {
        var script = ""
        func index(_ table: String, _ column: String) {
            let name = names.table("sift_index_\(table)_\(column)")
            script += "CREATE INDEX \(quote(name)) ON \(quote(table)) (\(quote(column)));\n"
        }
        if let owner { index(table, owner) }
        for c in columns {
            switch c {
            case .scalar(_, let column), .date(_, let column): index(table, column)
            case .toOne(_, let column, let child):
                index(table, column)
                script += child.indexScript(names: &names)
            case .toMany(_, _, let child):
                script += child.indexScript(names: &names)
            case .values(_, _, let valueTable, _):
                index(valueTable, "owner")
                index(valueTable, "value")
            }
        }
        return script
    }
}

// MARK: - Loading

/// Inserts records through one prepared statement per table.
private struct Loader {
    var statements: [ObjectIdentifier: SQLiteStatement] = [:]
    var valueStatements: [String: SQLiteStatement] = [:]
    var valueRowID: [String: Int64] = [:]

    init(connection: SQLiteConnection, plan: TablePlan) throws(SQLiteError) {
        try prepare(connection, plan)
    }

    mutating func prepare(_ connection: SQLiteConnection, _ plan: TablePlan) throws(SQLiteError) {
        let names = plan.columnNames
        let sql = "INSERT INTO \(quote(plan.table)) (\(names.map(quote).joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))"
        statements[ObjectIdentifier(plan)] = try connection.prepare(sql)
        for c in plan.columns {
            switch c {
            case .toOne(_, _, let child), .toMany(_, _, let child): try prepare(connection, child)
            case .values(_, _, let table, _):
                valueStatements[table] = try connection.prepare(
                    "INSERT INTO \(quote(table)) (\"id\", \"owner\", \"value\") VALUES (?, ?, ?)")
                valueRowID[table] = 0
            default: break
            }
        }
    }

    static func scalar(_ v: JSONValue) -> SQLValue {
        switch v {
        case .bool(let b): .integer(b ? 1 : 0)
        case .integer(let i): .integer(i)
        case .double(let d): .double(d)
        case .string(let s): .text(s.precomposedStringWithCanonicalMapping)
        default: .null
        }
    }

    static func date(_ v: JSONValue) -> SQLValue {
        guard case .object(let f) = v, f.count == 1 else { return .null }
        switch f[0].1 {
        case .integer(let i): return .double(Double(i))
        case .double(let d): return .double(d)
        default: return .null
        }
    }

    mutating func insert(_ plan: TablePlan, fields: [(String, JSONValue)], primaryKey: Int64, owner: Int64?) throws(SQLiteError) {
        var byKey: [String: JSONValue] = [:]
        for (k, v) in fields { byKey[k] = v }  // last wins
        var row: [SQLValue] = [.integer(primaryKey)]
        if plan.owner != nil { row.append(owner.map(SQLValue.integer) ?? .null) }
        for c in plan.columns {
            switch c {
            case .scalar(let key, _):
                row.append(byKey[key].map(Self.scalar) ?? .null)
            case .date(let key, _):
                row.append(byKey[key].map(Self.date) ?? .null)
            case .toOne(let key, _, let child):
                guard case .object(let f)? = byKey[key] else { row.append(.null); break }
                let id = child.nextRowID
                child.nextRowID += 1
                try insert(child, fields: f, primaryKey: id, owner: nil)
                row.append(.integer(id))
            case .toMany(let key, _, let child):
                guard case .array(let items)? = byKey[key] else { row.append(.null); break }
                for item in items {
                    let id = child.nextRowID
                    child.nextRowID += 1
                    // A null element is a child row whose every value is NULL.
                    var f: [(String, JSONValue)] = []
                    if case .object(let o) = item { f = o }
                    try insert(child, fields: f, primaryKey: id, owner: primaryKey)
                }
                row.append(.integer(Int64(items.count)))
            case .values(let key, _, let table, let isDate):
                guard case .array(let items)? = byKey[key] else { row.append(.null); break }
                let statement = valueStatements[table]!
                for item in items {
                    let id = valueRowID[table]!
                    valueRowID[table] = id + 1
                    try statement.reset()
                    try statement.bind([.integer(id), .integer(primaryKey), isDate ? Self.date(item) : Self.scalar(item)])
                    _ = try statement.step()
                }
                row.append(.integer(Int64(items.count)))
            }
        }
        let statement = statements[ObjectIdentifier(plan)]!
        try statement.reset()
        try statement.bind(row)
        _ = try statement.step()
    }
}
