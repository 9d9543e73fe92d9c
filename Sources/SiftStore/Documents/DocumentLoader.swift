// Writing JSON documents into the tables a `DocumentLayout` planned: one prepared statement per
// table, child and value rows numbered in array order (the lowering's order column), a mixed key's
// value in the column of its shape. Any JSON type can be written by conforming to `DocumentValue`
// (the store's `Value`, the tool's JSON values).

import SiftSQL
import SiftSQLite

/// A JSON value that can be written into a ``DocumentLayout``'s tables.
///
/// ```swift
/// extension MyJSON: DocumentValue { … }
/// try loader.insert(record, primaryKey: 0)
/// ```
package protocol DocumentValue {
    /// The value's kind; nil for null.
    var documentKind: DocumentKind? { get }
    /// A scalar as a column stores it: booleans as 0/1, integers, doubles, text in NFC; NULL for
    /// anything else.
    var documentScalar: SQLValue { get }
    /// A date as seconds since 1970; NULL for anything else.
    var documentDate: SQLValue { get }
    /// An object's members, a duplicate key resolved to its last value (as memory reads it).
    var documentMembers: [String: Self] { get }
    /// An array's elements, in order.
    var documentElements: [Self] { get }
}

/// Writes documents into a ``DocumentLayout``'s tables through one prepared statement per table.
///
/// ```swift
/// var loader = try DocumentLoader(connection: connection, layout: layout)
/// try loader.insert(record, primaryKey: 0)
/// ```
package struct DocumentLoader<V: DocumentValue> {
    let layout: DocumentLayout
    var statements: [ObjectIdentifier: SQLiteStatement] = [:]
    var valueStatements: [String: SQLiteStatement] = [:]
    /// The next primary key of each child table and each value table: rows are numbered in the
    /// order they are written, which is array order (the lowering's order column).
    var nextID: [ObjectIdentifier: Int64] = [:]
    var valueRowID: [String: Int64] = [:]
    /// In a store, the root row the document being written belongs to.
    var currentRoot: Int64 = 0

    /// Prepares the statements for `layout`'s tables on `connection`.
    package init(connection: SQLiteConnection, layout: DocumentLayout) throws(SQLiteError) {
        self.layout = layout
        try prepare(connection, layout.root, isRoot: true)
    }

    mutating func prepare(_ connection: SQLiteConnection, _ plan: DocumentTable, isRoot: Bool) throws(SQLiteError) {
        let names = plan.columnNames
        let sql: String
        if isRoot && plan.inStore {
            // The store has inserted the row with its own columns; the document fills the rest.
            let set = names.dropFirst().map { "\(quote($0)) = ?" }.joined(separator: ", ")
            sql =
                set.isEmpty
                ? "SELECT 1 WHERE ? IS NOT NULL"
                : "UPDATE \(quote(plan.table)) SET \(set) WHERE \(quote(plan.primaryKey)) = ?"
        } else {
            sql =
                "INSERT INTO \(quote(plan.table)) (\(names.map(quote).joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))"
        }
        statements[ObjectIdentifier(plan)] = try connection.prepare(sql)
        nextID[ObjectIdentifier(plan)] =
            plan.inStore && !isRoot ? try Self.nextKey(connection, plan.table, plan.primaryKey) : 0
        func prepare(_ c: DocumentTable.Column) throws(SQLiteError) {
            switch c {
            case .toOne(_, _, let child), .toMany(_, _, let child): try self.prepare(connection, child, isRoot: false)
            case .values(_, _, let table, _):
                valueStatements[table] = try connection.prepare(
                    plan.inStore
                        ? "INSERT INTO \(quote(table)) (\"id\", \"owner\", \"value\", \"root\") VALUES (?, ?, ?, ?)"
                        : "INSERT INTO \(quote(table)) (\"id\", \"owner\", \"value\") VALUES (?, ?, ?)")
                valueRowID[table] = plan.inStore ? try Self.nextKey(connection, table, "id") : 0
            case .mixed(_, _, let parts):
                for p in parts { try prepare(p.column) }
            default: break
            }
        }
        for c in plan.columns { try prepare(c) }
        for p in plan.selfShape?.parts ?? [] { try prepare(p.column) }
    }

    /// One past the largest key of `table` (0 when it is empty).
    static func nextKey(_ connection: SQLiteConnection, _ table: String, _ key: String) throws(SQLiteError) -> Int64 {
        let s = try connection.prepare("SELECT coalesce(max(\(quote(key))) + 1, 0) FROM \(quote(table))")
        _ = try s.step()
        if case .integer(let n) = s.column(0) { return n }
        return 0
    }

    /// Writes one document as the root row `primaryKey` (and its child and value rows).
    package mutating func insert(_ document: V, primaryKey: Int64) throws(SQLiteError) {
        currentRoot = primaryKey
        try insert(layout.root, document: document, primaryKey: primaryKey, owner: nil)
    }

    /// The next key of `plan`'s table.
    mutating func takeID(_ plan: DocumentTable) -> Int64 {
        let id = nextID[ObjectIdentifier(plan)]!
        nextID[ObjectIdentifier(plan)] = id + 1
        return id
    }

    /// The shape tag of a value (nil for null: the shape column is NULL).
    static func tag(_ v: V) -> Int64? {
        switch v.documentKind {
        case nil: nil
        case .scalar?: DocumentTag.scalar
        case .date?: DocumentTag.date
        case .object?: DocumentTag.object
        case .array?: DocumentTag.array
        }
    }

    /// The cells of the parts of a mixed key (or of SELF): the shape tag, then the value in the
    /// part of its shape and NULL in the others.
    mutating func mixedCells(
        _ parts: [(tag: Int64, column: DocumentTable.Column)], _ value: V?, owner: Int64,
        into row: inout [SQLValue]
    ) throws(SQLiteError) {
        var tag: Int64?
        if let value { tag = Self.tag(value) }
        let hasPart = parts.contains { $0.tag == tag }
        row.append(hasPart ? tag.map(SQLValue.integer) ?? .null : .null)
        for part in parts {
            try cells(part.column, part.tag == tag ? value : nil, owner: owner, into: &row)
        }
    }

    /// The cells of one column for `value` (nil: missing), inserting its child and value rows.
    mutating func cells(
        _ column: DocumentTable.Column, _ value: V?, owner primaryKey: Int64,
        into row: inout [SQLValue]
    ) throws(SQLiteError) {
        switch column {
        case .scalar:
            row.append(value?.documentScalar ?? .null)
        case .date:
            row.append(value?.documentDate ?? .null)
        case .toOne(_, _, let child):
            guard let value, value.documentKind == .object else {
                row.append(.null)
                return
            }
            let id = takeID(child)
            try insert(child, document: value, primaryKey: id, owner: nil)
            row.append(.integer(id))
        case .toMany(_, _, let child):
            guard let value, value.documentKind == .array else {
                row.append(.null)
                return
            }
            let items = value.documentElements
            for item in items {
                let id = takeID(child)
                // A null element (or any element that is not an object) is a child row whose
                // every value is NULL.
                try insert(
                    child, document: item.documentKind == .object ? item : nil, primaryKey: id, owner: primaryKey)
            }
            row.append(.integer(Int64(items.count)))
        case .values(_, _, let table, let isDate):
            guard let value, value.documentKind == .array else {
                row.append(.null)
                return
            }
            let items = value.documentElements
            let statement = valueStatements[table]!
            for item in items {
                let id = valueRowID[table]!
                valueRowID[table] = id + 1
                try statement.reset()
                var cells: [SQLValue] = [
                    .integer(id), .integer(primaryKey), isDate ? item.documentDate : item.documentScalar,
                ]
                if layout.root.inStore { cells.append(.integer(currentRoot)) }
                try statement.bind(cells)
                _ = try statement.step()
            }
            row.append(.integer(Int64(items.count)))
        case .mixed(_, _, let parts):
            try mixedCells(parts, value, owner: primaryKey, into: &row)
        }
    }

    /// One row of `plan` for `document` (nil: a row of NULLs, for a null array element).
    mutating func insert(_ plan: DocumentTable, document: V?, primaryKey: Int64, owner: Int64?) throws(SQLiteError) {
        let isObject = document?.documentKind == .object
        let members = isObject ? document!.documentMembers : [:]
        var row: [SQLValue] = [.integer(primaryKey)]
        if plan.owner != nil { row.append(owner.map(SQLValue.integer) ?? .null) }
        if plan.rootColumn != nil { row.append(.integer(currentRoot)) }
        for c in plan.columns {
            try cells(c, members[c.key], owner: primaryKey, into: &row)
        }
        if let selfShape = plan.selfShape {
            if isObject {
                row.append(.integer(DocumentTag.object))
                for part in selfShape.parts { try cells(part.column, nil, owner: primaryKey, into: &row) }
            } else {
                try mixedCells(selfShape.parts, document, owner: primaryKey, into: &row)
            }
        }
        if plan.inStore, plan === layout.root {
            // The UPDATE's key comes last.
            row.append(row.removeFirst())
        }
        let statement = statements[ObjectIdentifier(plan)]!
        try statement.reset()
        try statement.bind(row)
        _ = try statement.step()
    }
}
