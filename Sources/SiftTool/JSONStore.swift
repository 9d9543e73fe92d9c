// Loads JSON records into an in-memory SQLite database through a schema inferred from the records,
// so a predicate can run as lowered SQL over the same data the in-memory evaluator sees. Inference
// walks every record (and every nested object and array element) and gives each key its shapes:
// scalar column, date column, to-one table, to-many table or value table. A key with several
// (a string in one record, an array in another) keeps all of them plus a shape column saying which
// one each row uses, and so does a record that is not an object. Only arrays whose elements
// disagree are left out, reported in `unsupportedKeys`; the load itself never fails on shape.
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
/// A key that is null (or missing) everywhere → an `any` column of NULLs. A key with several of
/// these shapes → a ``MixedKey``: one column (or table) per shape and a shape column per row.
/// Duplicate keys in one object: the last wins, as in memory. When some records are not objects
/// (strings, numbers, dates, arrays, null) the root entity gets a `selfShape` in the same way, its
/// `object` case being the record's own row; those records are listed in `nonObjectRecords`.
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
    /// Indices of records that are not JSON objects (their `SELF` is kept in the root's value columns).
    public let nonObjectRecords: [Int]

    public init(records: [JSONValue], entity: String = "Record") throws(JSONStoreError) {
        let root = KeyShapes()
        var nonObject: [Int] = []
        for (index, record) in records.enumerated() {
            root.merge(record, record: index)
            if Loader.tag(record) != TablePlan.Tag.object { nonObject.append(index) }
        }
        var names = NameSpace()
        var unsupported: [String: String] = [:]
        let plan = TablePlan(node: root.object ?? ShapeNode(), entity: entity, table: names.table(entity), owner: nil,
                             path: [], names: &names, unsupported: &unsupported)
        if !nonObject.isEmpty {
            if let why = root.conflict {
                unsupported["SELF"] = why
            } else {
                plan.addSelfShape(root, names: &names, unsupported: &unsupported)
            }
        }
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
                    try loader.insert(plan, record: record, primaryKey: Int64(index), owner: nil)
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
            if ShapeNode.isDate(fields) { date = true; return }
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
            let shapes: KeyShapes
            if let s = self.shapes[key] { shapes = s } else {
                shapes = KeyShapes()
                self.shapes[key] = shapes
                keys.append(key)
            }
            shapes.merge(value, record: record)
        }
    }

    static func isDate(_ fields: [(String, JSONValue)]) -> Bool { JSONValue.object(fields).date != nil }
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
    indirect enum Column {
        case scalar(key: String, column: String)
        case date(key: String, column: String)
        case toOne(key: String, column: String, child: TablePlan)
        case toMany(key: String, countColumn: String, child: TablePlan)
        case values(key: String, countColumn: String, table: String, isDate: Bool)
        /// A key of several shapes: the shape column, then one column per shape with its tag.
        case mixed(key: String, shapeColumn: String, parts: [(tag: Int64, column: Column)])
    }

    /// The shape tags, stable across stores: what a row's shape column holds.
    enum Tag {
        static let scalar: Int64 = 1, date: Int64 = 2, object: Int64 = 3, array: Int64 = 4
    }

    let entity: String
    let table: String
    let primaryKey: String
    /// The owner column, for the children of a to-many relationship.
    let owner: String?
    var columns: [Column] = []
    /// Root only, when some records are not objects: what SELF is per row (no part for objects,
    /// whose tag is `Tag.object`: the row itself).
    var selfShape: (shapeColumn: String, parts: [(tag: Int64, column: Column)], hasObjects: Bool)?
    var nextRowID: Int64 = 0
    /// Some key of this object was left out for conflicting shapes. Then the entity cannot be open
    /// (undeclared keys reading nil): that key is not nil in memory.
    var hasUnsupportedKey = false
    /// Column names taken in this table (lower-cased).
    private var used = Set<String>()

    init(node: ShapeNode, entity: String, table: String, owner: String?, path: [String],
         names: inout NameSpace, unsupported: inout [String: String]) {
        self.entity = entity
        self.table = table
        // Column names of this table: the primary key and owner first, chosen to avoid every key.
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
        // Keys claim their own names before the extra columns, so those never take a key's name.
        var keyColumns: [String: String] = [:]
        for key in node.keys { keyColumns[key] = NameSpace.unique(key, in: &used) }
        for key in node.keys {
            let shapes = node.shapes[key]!
            if let why = shapes.conflict {
                unsupported[(path + [key]).joined(separator: ".")] = why
                hasUnsupportedKey = true
                continue
            }
            let parts = self.parts(key: key, shapes, scalarColumn: keyColumns[key]!, path: path + [key],
                                   names: &names, unsupported: &unsupported)
            if parts.count == 1 {
                columns.append(parts[0].column)
            } else {
                let shapeColumn = NameSpace.unique(key + "@shape", in: &used)
                columns.append(.mixed(key: key, shapeColumn: shapeColumn, parts: parts))
            }
        }
    }

    /// One column per shape the key took (a scalar column of NULLs when it was only ever null).
    private func parts(key: String, _ shapes: KeyShapes, scalarColumn: String, path: [String],
                       names: inout NameSpace, unsupported: inout [String: String]) -> [(tag: Int64, column: Column)] {
        let mixed = shapes.kindCount > 1
        var out: [(tag: Int64, column: Column)] = []
        if shapes.scalar || shapes.kindCount == 0 { out.append((Tag.scalar, .scalar(key: key, column: scalarColumn))) }
        if shapes.date {
            let column = mixed ? NameSpace.unique(key + "@date", in: &used) : scalarColumn
            out.append((Tag.date, .date(key: key, column: column)))
        }
        if let child = shapes.object {
            // Entity and table share one unique name ("Record.address").
            let name = names.table(entity + "." + key)
            let plan = TablePlan(node: child, entity: name, table: name, owner: nil,
                                 path: path, names: &names, unsupported: &unsupported)
            let column = mixed ? NameSpace.unique(key + "@object", in: &used) : scalarColumn
            out.append((Tag.object, .toOne(key: key, column: column, child: plan)))
        }
        if shapes.array {
            let count = NameSpace.unique(key + "@count", in: &used)
            let name = names.table(entity + "." + key)
            switch shapes.element {
            case .object(let child)?:
                let plan = TablePlan(node: child, entity: name, table: name, owner: "_owner",
                                     path: path, names: &names, unsupported: &unsupported)
                out.append((Tag.array, .toMany(key: key, countColumn: count, child: plan)))
            case let element:
                var isDate = false
                if case .date? = element { isDate = true }
                out.append((Tag.array, .values(key: key, countColumn: count, table: name, isDate: isDate)))
            }
        }
        return out
    }

    /// Columns for what the records that are not objects are (root only).
    func addSelfShape(_ shapes: KeyShapes, names: inout NameSpace, unsupported: inout [String: String]) {
        let value = NameSpace.unique("SELF", in: &used)
        let object = shapes.object
        shapes.object = nil  // the object records are this table's own rows
        let parts = self.parts(key: "SELF", shapes, scalarColumn: value, path: ["SELF"], names: &names, unsupported: &unsupported)
            .filter { part in
                // A scalar column of NULLs only when nothing else is there: null records need no part.
                if case .scalar = part.column, !shapes.scalar { return false }
                return true
            }
        shapes.object = object
        selfShape = (NameSpace.unique("SELF@shape", in: &used), parts, object != nil)
    }

    /// The schema side of one column: an attribute, a relationship and its child plan, or a mixed key.
    private static func property(_ c: Column) -> (attribute: Attribute?, relationship: Relationship?, child: TablePlan?) {
        switch c {
        case .scalar(let key, let column):
            return (Attribute(name: key, column: column, type: .any), nil, nil)
        case .date(let key, let column):
            return (Attribute(name: key, column: column, type: .date, encoding: .secondsSince1970), nil, nil)
        case .toOne(let key, let column, let child):
            return (nil, Relationship(name: key, toOne: child.entity, foreignKey: column), child)
        case .toMany(let key, let count, let child):
            // Child rows and value rows are numbered in array order: the key is the position.
            return (nil, Relationship(name: key, toMany: child.entity, foreignKey: child.owner!, countColumn: count,
                                      orderColumn: child.primaryKey), child)
        case .values(let key, let count, let table, let isDate):
            let values = Relationship.ValueTable(table: table, owner: "owner", column: "value",
                                                 type: isDate ? .date : .any, encoding: isDate ? .secondsSince1970 : nil)
            return (nil, Relationship(name: key, values: values, countColumn: count, orderColumn: "id"), nil)
        case .mixed:
            return (nil, nil, nil)
        }
    }

    private static func mixedKey(_ key: String, _ shapeColumn: String, _ parts: [(tag: Int64, column: Column)],
                                 children: inout [TablePlan]) -> MixedKey {
        var cases: [MixedKey.Case] = []
        for part in parts {
            let p = property(part.column)
            cases.append(MixedKey.Case(tag: part.tag, attribute: p.attribute, relationship: p.relationship))
            if let child = p.child { children.append(child) }
        }
        return MixedKey(name: key, shapeColumn: shapeColumn, cases: cases)
    }

    func collectEntities(into out: inout [Entity]) {
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
        var mixedKeys: [MixedKey] = []
        var children: [TablePlan] = []
        for c in columns {
            if case .mixed(let key, let shapeColumn, let parts) = c {
                mixedKeys.append(Self.mixedKey(key, shapeColumn, parts, children: &children))
                continue
            }
            let p = Self.property(c)
            if let a = p.attribute { attributes.append(a) }
            if let r = p.relationship { relationships.append(r) }
            if let child = p.child { children.append(child) }
        }
        var selfKey: MixedKey?
        if let selfShape {
            var key = Self.mixedKey("SELF", selfShape.shapeColumn, selfShape.parts, children: &children)
            if selfShape.hasObjects { key.cases.append(MixedKey.Case(tag: Tag.object, object: true)) }
            selfKey = key
        }
        // JSON objects answer nil for keys they lack, so the inferred entities are open.
        out.append(Entity(name: entity, table: table, primaryKey: primaryKey,
                          attributes: attributes, relationships: relationships, open: !hasUnsupportedKey,
                          mixedKeys: mixedKeys, selfShape: selfKey))
        for child in children { child.collectEntities(into: &out) }
    }

    /// Every column, nested parts flattened, in insert order.
    private var allColumns: [Column] {
        func flatten(_ c: Column) -> [Column] {
            if case .mixed(_, _, let parts) = c { return parts.map(\.column) }
            return [c]
        }
        return columns.flatMap(flatten) + (selfShape?.parts.map(\.column) ?? [])
    }

    /// The columns of this table in insert order: primary key, owner, then per key its shape
    /// column (mixed keys) and its value columns, then SELF's.
    var columnNames: [String] {
        var names = [primaryKey]
        if let owner { names.append(owner) }
        func add(_ c: Column) {
            switch c {
            case .scalar(_, let n), .date(_, let n), .toOne(_, let n, _): names.append(n)
            case .toMany(_, let n, _), .values(_, let n, _, _): names.append(n)
            case .mixed(_, let shape, let parts):
                names.append(shape)
                for p in parts { add(p.column) }
            }
        }
        for c in columns { add(c) }
        if let selfShape {
            names.append(selfShape.shapeColumn)
            for p in selfShape.parts { add(p.column) }
        }
        return names
    }

    func createScript(names: inout NameSpace) -> String {
        var defs = [quote(primaryKey) + " INTEGER PRIMARY KEY"]
        defs += columnNames.dropFirst().map(quote)
        var script = "CREATE TABLE \(quote(table)) (\(defs.joined(separator: ", ")));\n"
        for c in allColumns {
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
        for c in allColumns {
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
            case .mixed: break
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
        func prepare(_ c: TablePlan.Column) throws(SQLiteError) {
            switch c {
            case .toOne(_, _, let child), .toMany(_, _, let child): try self.prepare(connection, child)
            case .values(_, _, let table, _):
                valueStatements[table] = try connection.prepare(
                    "INSERT INTO \(quote(table)) (\"id\", \"owner\", \"value\") VALUES (?, ?, ?)")
                valueRowID[table] = 0
            case .mixed(_, _, let parts):
                for p in parts { try prepare(p.column) }
            default: break
            }
        }
        for c in plan.columns { try prepare(c) }
        for p in plan.selfShape?.parts ?? [] { try prepare(p.column) }
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

    /// The shape tag of a non-null value (nil for null: the shape column is NULL).
    static func tag(_ v: JSONValue) -> Int64? {
        switch v {
        case .null: nil
        case .bool, .integer, .double, .string: TablePlan.Tag.scalar
        case .object(let f): ShapeNode.isDate(f) ? TablePlan.Tag.date : TablePlan.Tag.object
        case .array: TablePlan.Tag.array
        }
    }

    /// The cells of the parts of a mixed key (or of SELF): the shape tag, then the value in the
    /// part of its shape and NULL in the others.
    mutating func mixedCells(_ parts: [(tag: Int64, column: TablePlan.Column)], _ value: JSONValue?, owner: Int64,
                             into row: inout [SQLValue]) throws(SQLiteError) {
        let tag = value.flatMap(Self.tag)
        let hasPart = parts.contains { $0.tag == tag }
        row.append(hasPart ? tag.map(SQLValue.integer) ?? .null : .null)
        for part in parts {
            try cells(part.column, part.tag == tag ? value : nil, owner: owner, into: &row)
        }
    }

    /// The cells of one column for `value` (nil: missing), inserting its child and value rows.
    mutating func cells(_ column: TablePlan.Column, _ value: JSONValue?, owner primaryKey: Int64,
                        into row: inout [SQLValue]) throws(SQLiteError) {
        switch column {
        case .scalar:
            row.append(value.map(Self.scalar) ?? .null)
        case .date:
            row.append(value.map(Self.date) ?? .null)
        case .toOne(_, _, let child):
            guard case .object(let f)? = value else { row.append(.null); return }
            let id = child.nextRowID
            child.nextRowID += 1
            try insert(child, record: .object(f), primaryKey: id, owner: nil)
            row.append(.integer(id))
        case .toMany(_, _, let child):
            guard case .array(let items)? = value else { row.append(.null); return }
            for item in items {
                let id = child.nextRowID
                child.nextRowID += 1
                // A null element is a child row whose every value is NULL.
                var f: [(String, JSONValue)] = []
                if case .object(let o) = item { f = o }
                try insert(child, record: .object(f), primaryKey: id, owner: primaryKey)
            }
            row.append(.integer(Int64(items.count)))
        case .values(_, _, let table, let isDate):
            guard case .array(let items)? = value else { row.append(.null); return }
            let statement = valueStatements[table]!
            for item in items {
                let id = valueRowID[table]!
                valueRowID[table] = id + 1
                try statement.reset()
                try statement.bind([.integer(id), .integer(primaryKey), isDate ? Self.date(item) : Self.scalar(item)])
                _ = try statement.step()
            }
            row.append(.integer(Int64(items.count)))
        case .mixed(_, _, let parts):
            try mixedCells(parts, value, owner: primaryKey, into: &row)
        }
    }

    mutating func insert(_ plan: TablePlan, record: JSONValue, primaryKey: Int64, owner: Int64?) throws(SQLiteError) {
        var byKey: [String: JSONValue] = [:]
        if case .object(let fields) = record, Self.tag(record) == TablePlan.Tag.object {
            for (k, v) in fields { byKey[k] = v }  // last wins
        }
        var row: [SQLValue] = [.integer(primaryKey)]
        if plan.owner != nil { row.append(owner.map(SQLValue.integer) ?? .null) }
        for c in plan.columns {
            let key: String
            switch c {
            case .scalar(let k, _), .date(let k, _), .toOne(let k, _, _), .toMany(let k, _, _),
                 .values(let k, _, _, _), .mixed(let k, _, _): key = k
            }
            try cells(c, byKey[key], owner: primaryKey, into: &row)
        }
        if let selfShape = plan.selfShape {
            if Self.tag(record) == TablePlan.Tag.object {
                row.append(.integer(TablePlan.Tag.object))
                for part in selfShape.parts { try cells(part.column, nil, owner: primaryKey, into: &row) }
            } else {
                try mixedCells(selfShape.parts, record, owner: primaryKey, into: &row)
            }
        }
        let statement = statements[ObjectIdentifier(plan)]!
        try statement.reset()
        try statement.bind(row)
        _ = try statement.step()
    }
}
