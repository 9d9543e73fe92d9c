// JSON documents in SQLite tables: given the shapes every key took over a set of documents (a
// `DocumentShape`), decide the tables and columns that hold them and the lowering's `Schema`
// entities that read them. Per key: scalars (bool, integer, double, string) → a column keeping
// each value's storage class; `{"$date": seconds}` → a date column (seconds since 1970); objects
// → a to-one row in a child table; arrays of objects → child rows with an owner column and a
// count column (NULL for a null or missing array; a null element is a row of NULLs); arrays of
// scalars or dates → a value table with a count column. A key with several shapes keeps all of
// them plus a shape column naming each row's, and so does a document that is not an object (the
// root's `selfShape`). Arrays of arrays and arrays mixing objects with values are left out
// (`unsupportedKeys`). This is the one JSON-to-SQLite layout: `sift filter --backend sqlite` and
// the store's document entities both use it; `DocumentLoader` writes the rows. Names are derived
// from the keys, made unique as SQLite compares them, and only ever written quoted.

import Foundation
import SiftSQL

/// Table and index names unique across one database (SQLite compares them without ASCII case).
struct DocumentNames {
    var used: Set<String>
    mutating func table(_ base: String) -> String { StorageNames.unique(base, in: &used) }
}

/// The tables of one set of documents: the root table (one row per document) and its children,
/// with the lowering's entities for them.
///
/// ```swift
/// let layout = DocumentLayout(shape: shape, entity: "Record", nonObjects: false)
/// try connection.execute(layout.createScript)
/// var loader = try DocumentLoader(connection: connection, layout: layout)
/// for (i, r) in records.enumerated() { try loader.insert(r, primaryKey: Int64(i)) }
/// try connection.execute(layout.indexScript)
/// ```
public final class DocumentLayout: @unchecked Sendable {
    // Immutable once planned (the loader keeps its own counters), so one layout serves every
    // thread that holds the model.
    /// The root's table plan.
    let root: DocumentTable
    /// The lowering's entities: the root (named `entity`) first, then every child table's.
    public let entities: [Schema.Entity]
    /// Key path (keys joined by ".") → why the key is left out of the tables.
    public let unsupportedKeys: [String: String]
    /// `CREATE TABLE` statements for every table.
    public let createScript: String
    /// `CREATE INDEX` statements, best run after the documents are written (one sorted build per
    /// index is faster than maintaining them row by row).
    public let indexScript: String

    /// Plans the tables for documents of `shape` (the shapes of the documents themselves), the
    /// root table named after `entity` unless that name is in `takenNames`. `nonObjects`: some
    /// documents are not objects (values, or null), so each row also says what SELF is.
    public convenience init(shape: DocumentShape, entity: String, nonObjects: Bool, takenNames: Set<String> = []) {
        self.init(shape: shape, entity: entity, nonObjects: nonObjects, takenNames: takenNames, storeRoot: nil)
    }

    /// The store's form: the root table is an entity's table (`table`, keyed by `primaryKey`, with
    /// the store's own `reserved` columns), created by the store with ``rootColumns`` added; every
    /// other table has a column naming the root row its rows belong to, so a document's rows can
    /// be replaced or deleted together.
    init(
        shape: DocumentShape, entity: String, nonObjects: Bool, takenNames: Set<String>,
        storeRoot: (table: String, primaryKey: String, reserved: [String])?
    ) {
        var names = DocumentNames(used: Set(takenNames.map { $0.lowercased() }))
        var unsupported: [String: String] = [:]
        let table = storeRoot?.table ?? names.table(entity)
        if storeRoot != nil { names.used.insert(table.lowercased()) }
        root = DocumentTable(
            node: shape.object ?? DocumentObjectShape(), entity: entity, table: table, owner: nil,
            path: [], names: &names, unsupported: &unsupported,
            store: storeRoot.map { DocumentTable.StoreRoot(primaryKey: $0.primaryKey, reserved: $0.reserved) })
        if nonObjects {
            if let why = shape.conflict {
                unsupported["SELF"] = why
            } else {
                root.addSelfShape(shape, names: &names, unsupported: &unsupported)
            }
        }
        var entities: [Schema.Entity] = []
        root.collectEntities(into: &entities)
        // In a store the root row keeps the whole document too: what the tables cannot say
        // (a dictionary's count, a null element, arrays of arrays) memory decides on it from SQL.
        if storeRoot != nil { entities[0].documentColumn = Storage.documentColumn }
        self.entities = entities
        unsupportedKeys = unsupported
        createScript = root.createScript(root: storeRoot == nil)
        indexScript = root.indexScript(names: &names)
        tables = root.allTables
    }

    /// The root table's columns other than its primary key (the store adds them to the entity's
    /// table).
    var rootColumns: [String] { Array(root.columnNames.dropFirst()) }
    /// Every table other than the root, with the column naming a row's root (store form only).
    let tables: [(table: String, rootColumn: String?)]

    /// The root table's name.
    public var table: String { root.table }
    /// The root table's primary-key column.
    public var primaryKey: String { root.primaryKey }
}

/// Quotes an identifier of the document tables (layout and loader) through the SQLite dialect,
/// which the lowering quotes with too.
func quote(_ name: String) -> String {
    SQLiteDialect().quote(name)
}

/// One table to create and fill: its entity, columns and children, all names decided.
final class DocumentTable: @unchecked Sendable {
    indirect enum Column {
        case scalar(key: String, column: String)
        case date(key: String, column: String)
        case toOne(key: String, column: String, child: DocumentTable)
        case toMany(key: String, countColumn: String, child: DocumentTable)
        case values(key: String, countColumn: String, table: String, isDate: Bool)
        /// A key of several shapes: the shape column, then one column per shape with its tag.
        case mixed(key: String, shapeColumn: String, parts: [(tag: Int64, column: Column)])

        var key: String {
            switch self {
            case .scalar(let k, _), .date(let k, _), .toOne(let k, _, _), .toMany(let k, _, _),
                .values(let k, _, _, _), .mixed(let k, _, _):
                k
            }
        }
    }

    /// How the store keeps a document: the root table's key and own columns.
    struct StoreRoot {
        var primaryKey: String
        var reserved: [String]
    }

    let entity: String
    let table: String
    let primaryKey: String
    /// The owner column, for the children of a to-many relationship.
    let owner: String?
    /// In a store, the column of every table but the root naming the document's root row.
    let rootColumn: String?
    /// Whether this layout is a store's (nested tables carry `rootColumn`, value tables `root`).
    let inStore: Bool
    var columns: [Column] = []
    /// Root only, when some documents are not objects: what SELF is per row (no part for objects,
    /// whose tag is `DocumentTag.object`: the row itself).
    var selfShape: (shapeColumn: String, parts: [(tag: Int64, column: Column)], hasObjects: Bool)?
    /// Some key of this object was left out for conflicting shapes. Then the entity cannot be open
    /// (undeclared keys reading nil): that key is not nil in memory.
    var hasUnsupportedKey = false
    /// Column names taken in this table (lower-cased).
    private var used = Set<String>()

    init(
        node: DocumentObjectShape, entity: String, table: String, owner: String?, path: [String],
        names: inout DocumentNames, unsupported: inout [String: String], store: StoreRoot? = nil, inStore: Bool = false
    ) {
        self.entity = entity
        self.table = table
        self.inStore = inStore || store != nil
        // Column names of this table: the primary key and owner first, chosen to avoid every key.
        let lowerKeys = Set(node.keys.map { $0.name.lowercased() })
        if let store {
            primaryKey = StorageNames.unique(store.primaryKey, in: &used)
            for c in store.reserved { _ = StorageNames.unique(c, in: &used) }
        } else {
            var pk = "_id"
            while lowerKeys.contains(pk.lowercased()) { pk = "_" + pk }
            primaryKey = StorageNames.unique(pk, in: &used)
        }
        if owner != nil {
            var o = "_owner"
            while lowerKeys.contains(o.lowercased()) { o = "_" + o }
            self.owner = StorageNames.unique(o, in: &used)
        } else {
            self.owner = nil
        }
        if self.inStore && store == nil {
            var r = "_root"
            while lowerKeys.contains(r.lowercased()) { r = "_" + r }
            rootColumn = StorageNames.unique(r, in: &used)
        } else {
            rootColumn = nil
        }
        // Keys claim their own names before the extra columns, so those never take a key's name.
        var keyColumns: [String: String] = [:]
        for key in node.keys { keyColumns[key.name] = StorageNames.unique(key.name, in: &used) }
        for key in node.keys {
            if let why = key.shape.conflict {
                unsupported[(path + [key.name]).joined(separator: ".")] = why
                hasUnsupportedKey = true
                continue
            }
            let parts = self.parts(
                key: key.name, key.shape, scalarColumn: keyColumns[key.name]!, path: path + [key.name],
                names: &names, unsupported: &unsupported)
            if parts.count == 1 {
                columns.append(parts[0].column)
            } else {
                let shapeColumn = StorageNames.unique(key.name + "@shape", in: &used)
                columns.append(.mixed(key: key.name, shapeColumn: shapeColumn, parts: parts))
            }
        }
    }

    /// One column per shape the key took (a scalar column of NULLs when it was only ever null).
    private func parts(
        key: String, _ shapes: DocumentShape, scalarColumn: String, path: [String],
        names: inout DocumentNames, unsupported: inout [String: String]
    ) -> [(tag: Int64, column: Column)] {
        let mixed = shapes.kindCount > 1
        var out: [(tag: Int64, column: Column)] = []
        if shapes.scalar || shapes.kindCount == 0 {
            out.append((DocumentTag.scalar, .scalar(key: key, column: scalarColumn)))
        }
        if shapes.date {
            let column = mixed ? StorageNames.unique(key + "@date", in: &used) : scalarColumn
            out.append((DocumentTag.date, .date(key: key, column: column)))
        }
        if let child = shapes.object {
            // Entity and table share one unique name ("Record.address").
            let name = names.table(entity + "." + key)
            let plan = DocumentTable(
                node: child, entity: name, table: name, owner: nil,
                path: path, names: &names, unsupported: &unsupported, inStore: inStore)
            let column = mixed ? StorageNames.unique(key + "@object", in: &used) : scalarColumn
            out.append((DocumentTag.object, .toOne(key: key, column: column, child: plan)))
        }
        if shapes.array {
            let count = StorageNames.unique(key + "@count", in: &used)
            let name = names.table(entity + "." + key)
            switch shapes.element {
            case .object(let child)?:
                let plan = DocumentTable(
                    node: child, entity: name, table: name, owner: "_owner",
                    path: path, names: &names, unsupported: &unsupported, inStore: inStore)
                out.append((DocumentTag.array, .toMany(key: key, countColumn: count, child: plan)))
            case let element:
                var isDate = false
                if case .date? = element { isDate = true }
                out.append((DocumentTag.array, .values(key: key, countColumn: count, table: name, isDate: isDate)))
            }
        }
        return out
    }

    /// Columns for what the documents that are not objects are (root only).
    func addSelfShape(_ shapes: DocumentShape, names: inout DocumentNames, unsupported: inout [String: String]) {
        let value = StorageNames.unique("SELF", in: &used)
        var values = shapes
        values.object = nil  // the object documents are this table's own rows
        let parts = self.parts(
            key: "SELF", values, scalarColumn: value, path: ["SELF"], names: &names, unsupported: &unsupported
        )
        .filter { part in
            // A scalar column of NULLs only when nothing else is there: null documents need no part.
            if case .scalar = part.column, !shapes.scalar { return false }
            return true
        }
        selfShape = (StorageNames.unique("SELF@shape", in: &used), parts, shapes.object != nil)
    }

    /// The schema side of one column: an attribute, a relationship and its child plan, or a mixed key.
    private static func property(_ c: Column) -> (
        attribute: Schema.Attribute?, relationship: Schema.Relationship?, child: DocumentTable?
    ) {
        switch c {
        case .scalar(let key, let column):
            return (Schema.Attribute(name: key, column: column, type: .any), nil, nil)
        case .date(let key, let column):
            return (Schema.Attribute(name: key, column: column, type: .date, encoding: .secondsSince1970), nil, nil)
        case .toOne(let key, let column, let child):
            return (nil, Schema.Relationship(name: key, toOne: child.entity, foreignKey: column), child)
        case .toMany(let key, let count, let child):
            // Child rows and value rows are numbered in array order: the key is the position.
            return (
                nil,
                Schema.Relationship(
                    name: key, toMany: child.entity, foreignKey: child.owner!, countColumn: count,
                    orderColumn: child.primaryKey), child
            )
        case .values(let key, let count, let table, let isDate):
            let values = Schema.Relationship.ValueTable(
                table: table, owner: "owner", column: "value",
                type: isDate ? .date : .any, encoding: isDate ? .secondsSince1970 : nil)
            return (nil, Schema.Relationship(name: key, values: values, countColumn: count, orderColumn: "id"), nil)
        case .mixed:
            return (nil, nil, nil)
        }
    }

    private static func mixedKey(
        _ key: String, _ shapeColumn: String, _ parts: [(tag: Int64, column: Column)],
        children: inout [DocumentTable]
    ) -> Schema.MixedKey {
        var cases: [Schema.MixedKey.Case] = []
        for part in parts {
            let p = property(part.column)
            cases.append(Schema.MixedKey.Case(tag: part.tag, attribute: p.attribute, relationship: p.relationship))
            if let child = p.child { children.append(child) }
        }
        return Schema.MixedKey(name: key, shapeColumn: shapeColumn, cases: cases)
    }

    func collectEntities(into out: inout [Schema.Entity]) {
        var attributes: [Schema.Attribute] = []
        var relationships: [Schema.Relationship] = []
        var mixedKeys: [Schema.MixedKey] = []
        var children: [DocumentTable] = []
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
        var selfKey: Schema.MixedKey?
        if let selfShape {
            var key = Self.mixedKey("SELF", selfShape.shapeColumn, selfShape.parts, children: &children)
            if selfShape.hasObjects { key.cases.append(Schema.MixedKey.Case(tag: DocumentTag.object, object: true)) }
            selfKey = key
        }
        // JSON objects answer nil for keys they lack, so the entities are open.
        out.append(
            Schema.Entity(
                name: entity, table: table, primaryKey: primaryKey,
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
        if let rootColumn { names.append(rootColumn) }
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

    /// `CREATE TABLE` statements for this table (unless it is a store's root, which the store
    /// creates) and every table below it.
    func createScript(root: Bool = true) -> String {
        var script = ""
        if root {
            var defs = [quote(primaryKey) + " INTEGER PRIMARY KEY"]
            // Value columns have no type (each value keeps its storage class). The owner and root
            // columns are INTEGER, as the keys they are compared with: a column without affinity
            // compared with an INTEGER key cannot use its index, and every correlated subquery
            // over an array then scanned all elements for each row (quadratic).
            defs += columnNames.dropFirst().map { $0 == owner || $0 == rootColumn ? quote($0) + " INTEGER" : quote($0) }
            script += "CREATE TABLE \(quote(table)) (\(defs.joined(separator: ", ")));\n"
        }
        for c in allColumns {
            switch c {
            case .toOne(_, _, let child), .toMany(_, _, let child):
                script += child.createScript()
            case .values(_, _, let valueTable, _):
                script +=
                    "CREATE TABLE \(quote(valueTable)) (\"id\" INTEGER PRIMARY KEY, \"owner\" INTEGER, \"value\"\(inStore ? ", \"root\" INTEGER" : ""));\n"
            default: break
            }
        }
        return script
    }

    /// Every table below this one (children and value tables), with its root column.
    var allTables: [(table: String, rootColumn: String?)] {
        var out: [(table: String, rootColumn: String?)] = []
        for c in allColumns {
            switch c {
            case .toOne(_, _, let child), .toMany(_, _, let child):
                out.append((child.table, child.rootColumn))
                out += child.allTables
            case .values(_, _, let valueTable, _):
                out.append((valueTable, inStore ? "root" : nil))
            default: break
            }
        }
        return out
    }

    func indexScript(names: inout DocumentNames) -> String {
        var script = ""
        func index(_ table: String, _ column: String, after owner: String? = nil) {
            let name = names.table("sift_index_\(table)_\(column)")
            let columns = (owner.map { [$0] } ?? []) + [column]
            script +=
                "CREATE INDEX \(quote(name)) ON \(quote(table)) (\(columns.map(quote).joined(separator: ", ")));\n"
        }
        if let owner { index(table, owner) }
        if let rootColumn { index(table, rootColumn) }
        for c in allColumns {
            switch c {
            // The rows of an array are only ever read through their owner (EXISTS, counts,
            // aggregates correlated to the owning row), so their columns are indexed after the
            // owner: an index on the column alone lets the planner scan every owner's elements
            // for each row (quadratic; 20,000 records took minutes).
            case .scalar(_, let column), .date(_, let column): index(table, column, after: owner)
            case .toOne(_, let column, let child):
                index(table, column)
                script += child.indexScript(names: &names)
            case .toMany(_, _, let child):
                script += child.indexScript(names: &names)
            case .values(_, _, let valueTable, _):
                index(valueTable, "owner")
                index(valueTable, "value", after: "owner")
                if inStore { index(valueTable, "root") }
            case .mixed: break
            }
        }
        return script
    }
}
