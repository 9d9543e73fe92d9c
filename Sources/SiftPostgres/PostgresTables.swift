// The tables a lowering schema names, as PostgreSQL tables: one column type per schema type
// (bigint for integers, booleans and keys, double precision for doubles and seconds-encoded
// dates, text in the "C" collation for strings, bytea for data), and for a dynamically typed
// attribute two columns, an exact NUMERIC for its numbers and a text column for its strings, which
// `prepared(_:)` names in the schema (`Attribute.textColumn`) so the lowering reads both. Rows come
// in as a SQLite store holds them (one value per column, of any kind) and are split and converted
// here, exactly: a double becomes the exact decimal expansion of its binary value. Every string
// column also gets three folded copies (`[c]`, `[d]`, `[cd]`, folded by SiftText exactly as memory
// folds), which the lowering compares under string options, since PostgreSQL cannot call Sift.

import SiftSQL
import SiftText

/// Creates a schema's tables in PostgreSQL and loads rows into them.
///
/// ```swift
/// let tables = try PostgresTables(schema: schema)        // adds text columns for `any` attributes
/// try tables.create(on: connection)
/// try tables.load(tables.tables[0], rows: sqliteRows, on: connection)
/// let lowering = try SQLLowering(schema: tables.schema, entity: "Record", dialect: PostgreSQLDialect())
/// ```
public struct PostgresTables: Sendable {
    /// One column of a table.
    public struct Column: Hashable, Sendable {
        /// The column's name in PostgreSQL (the schema's, unless PostgreSQL cannot take it).
        public var name: String
        /// The column's name in the source (the SQLite store); nil for an added text column.
        public var source: String?
        /// How its values are stored.
        public var kind: Kind
        /// For a `number` column of a dynamically typed value: the column its strings go to.
        public var textColumn: String?
        /// For a folded copy: the column (by its name here) whose strings it holds folded, and how.
        public var foldedFrom: String?
        /// The options the copy is folded under (raw `ComparisonOptions`).
        public var folding: UInt8?
        /// For a string column: its folded copies.
        public var folded: Schema.FoldedColumns?
    }

    /// One table: its name in PostgreSQL and in the source, and its columns in creation order.
    public struct Table: Hashable, Sendable {
        /// The table's name in PostgreSQL.
        public var name: String
        /// The table's name in the source.
        public var source: String
        /// The columns.
        public var columns: [Column]
    }

    /// The PostgreSQL type of a column.
    public enum Kind: String, Hashable, Sendable {
        /// bigint: integers, booleans (0/1), keys, counts, shapes, positions.
        case integer = "BIGINT"
        /// double precision: doubles, REAL-encoded decimals, dates as seconds.
        case double = "DOUBLE PRECISION"
        /// text in the "C" collation (Unicode scalar order): strings, ISO-8601 dates, TEXT decimals.
        case text = "TEXT COLLATE \"C\""
        /// bytea.
        case data = "BYTEA"
        /// numeric: the numbers of a dynamically typed value, exactly.
        case number = "NUMERIC"
    }

    /// The schema as the PostgreSQL tables hold it: a text column named for every dynamically
    /// typed attribute and value table, and names PostgreSQL cannot take (empty, or longer than
    /// its 63 bytes) replaced.
    public let schema: Schema
    /// The tables, in creation order.
    public let tables: [Table]

    /// The tables of `schema`. Text columns are named `<column>@text`; a name PostgreSQL cannot
    /// take becomes its first bytes and a hash (`@` alone for the empty name), unique in its table.
    public init(schema: Schema) throws(PostgresError) {
        let plan = ColumnPlan(schema)
        let names = PostgresNames(plan)
        let renamer = SchemaRenamer(schema: schema, layout: plan.layout, names: names)
        let prepared = renamer.prepared()
        do throws(SchemaError) { try prepared.validate() } catch {
            throw PostgresError(kind: .query, message: "the schema for PostgreSQL is invalid: \(error.message)")
        }
        self.schema = prepared
        self.tables = names.tables
    }

    /// `"name"` for PostgreSQL, quotes doubled.
    public static func quote(_ name: String) -> String { PostgreSQLDialect().quote(name) }

    /// `CREATE TABLE` for every table, and an index on every column (keys for the joins and
    /// correlated subqueries, attributes for `==`, ranges, IN and prefixes).
    public var createScript: String {
        tablesScript + tables.map(indexScript).joined()
    }

    /// `CREATE TABLE` for every table, without indexes (for a bulk load that indexes afterwards).
    ///
    /// ```swift
    /// try db.executeScript(tables.tablesScript)
    /// ```
    public var tablesScript: String {
        tables.map { table in
            "CREATE TABLE \(Self.quote(table.name)) ("
                + table.columns.map { "\(Self.quote($0.name)) \($0.kind.rawValue)" }.joined(separator: ", ") + ");\n"
        }.joined()
    }

    /// `CREATE INDEX` on every column of `table` but `bytea` ones (index names `sift_<table>_<column>`
    /// by position, unique in the schema).
    ///
    /// ```swift
    /// try db.executeScript(tables.indexScript(tables.tables[0]))
    /// ```
    public func indexScript(_ table: Table) -> String {
        let n = tables.firstIndex(of: table) ?? 0
        let q = Self.quote(table.name)
        var sql = ""
        for (i, c) in table.columns.enumerated() where c.kind != .data {
            sql += "CREATE INDEX \(Self.quote("sift_\(n)_\(i)")) ON \(q) (\(Self.quote(c.name)));\n"
        }
        return sql
    }

    /// Creates the tables on `connection` (in its current schema).
    public func create(on connection: PostgresConnection) throws(PostgresError) {
        try connection.executeScript(createScript)
    }

    /// Loads `rows` into `table`: each row holds the values of the table's source columns (those
    /// with a `source` name, in order) as a SQLite store holds them; each is converted to its
    /// column's type exactly. A value without an exact counterpart (a fraction in an integer
    /// column, an infinite number of a dynamically typed value, a blob where text goes) is an
    /// error naming the table and column.
    ///
    /// ```swift
    /// // person(id, name, age): the text column's folded copies are filled in here.
    /// try tables.load(tables.tables[0], rows: [[.integer(1), .text("José"), .integer(41)]], on: db)
    /// ```
    public func load(_ table: Table, rows: [[SQLValue]], on connection: PostgresConnection) throws(PostgresError) {
        let sourceCount = table.columns.filter { $0.source != nil }.count
        let position = Dictionary(uniqueKeysWithValues: table.columns.enumerated().map { ($1.name, $0) })
        var converted: [[SQLValue]] = []
        converted.reserveCapacity(rows.count)
        for row in rows {
            guard row.count == sourceCount else {
                throw PostgresError(
                    kind: .query,
                    message: "a row of '\(table.source)' has \(row.count) values for \(sourceCount) columns")
            }
            var out = [SQLValue](repeating: .null, count: table.columns.count)
            var next = 0
            for (i, c) in table.columns.enumerated() where c.source != nil {
                let (value, text) = try Self.convert(row[next], to: c, table: table.source)
                next += 1
                out[i] = value
                if let t = c.textColumn, let j = position[t] { out[j] = text }
            }
            // Folded copies after their columns are filled (a text column comes after its number column).
            for (i, c) in table.columns.enumerated() {
                guard let from = c.foldedFrom, let options = c.folding, let j = position[from],
                    case .text(let s) = out[j]
                else { continue }
                out[i] = .text(TextFolding.fold(s, TextOptions(rawValue: options)))
            }
            converted.append(out)
        }
        try connection.copy(into: table.name, columns: table.columns.map(\.name), rows: converted)
    }

    /// A stored value as column `c` holds it, and for a dynamically typed value its text column's value.
    static func convert(_ v: SQLValue, to c: Column, table: String) throws(PostgresError) -> (SQLValue, SQLValue) {
        func refuse(_ why: String) -> PostgresError {
            PostgresError(kind: .query, message: "'\(table)'.'\(c.source ?? c.name)': \(why)")
        }
        if v == .null { return (.null, .null) }
        switch (c.kind, v) {
        case (.integer, .integer): return (v, .null)
        case (.integer, .double(let d)):
            guard let i = Int64(exactly: d) else { throw refuse("\(d) is not an integer") }
            return (.integer(i), .null)
        case (.double, .integer(let i)): return (.double(Double(i)), .null)
        case (.double, .double): return (v, .null)
        case (.text, .text): return (v, .null)
        case (.data, .blob): return (v, .null)
        case (.number, .integer(let i)): return (.text(String(i)), .null)
        case (.number, .double(let d)):
            guard let exact = ExactDecimal.text(d) else { throw refuse("\(d) has no exact NUMERIC value") }
            return (.text(exact), .null)
        case (.number, .text): return (.null, v)
        default: throw refuse("\(v) cannot be stored in a \(c.kind.rawValue) column")
        }
    }
}

/// Pass 1 of `PostgresTables.init`: every column each table needs, by the source's names, with
/// its kind, plus a text column per dynamically typed one and folded copies of every string column.
private struct ColumnPlan {
    typealias Column = PostgresTables.Column
    let schema: Schema
    /// Table (source name) → its columns in creation order.
    var layout: [String: [Column]] = [:]
    /// The tables in creation order.
    var order: [String] = []

    init(_ schema: Schema) {
        self.schema = schema
        for e in schema.entities {
            add(e.table, e.primaryKey, .integer)
            for a in e.attributes { attribute(a.type, a.encoding, a.column, in: e.table) }
            for r in e.relationships { relationship(r, of: e) }
            if let d = e.discriminator { add(e.table, d.column, .integer) }
            for m in e.mixedKeys + (e.selfShape.map { [$0] } ?? []) {
                add(e.table, m.shapeColumn, .integer)
                for c in m.cases {
                    if let a = c.attribute { attribute(a.type, a.encoding, a.column, in: e.table) }
                    if let r = c.relationship { relationship(r, of: e) }
                }
            }
        }
    }

    mutating func add(_ table: String, _ name: String, _ kind: PostgresTables.Kind, text: Bool = false) {
        if layout[table] == nil {
            layout[table] = []
            order.append(table)
        }
        if layout[table]!.contains(where: { $0.source == name }) { return }
        layout[table]!.append(Column(name: name, source: text ? nil : name, kind: kind))
    }

    static func kind(_ type: Schema.ValueType, _ encoding: Schema.StorageEncoding?) -> PostgresTables.Kind {
        switch type {
        case .integer, .boolean: return .integer
        case .double: return .double
        case .decimal: return encoding == .text ? .text : .double
        case .date: return encoding == .iso8601 ? .text : .double
        case .string: return .text
        case .data: return .data
        case .any: return .number
        }
    }

    func fresh(_ base: String, in table: String) -> String {
        let taken = Set(layout[table]!.map(\.name))
        var name = base
        var n = 2
        while taken.contains(name) {
            name = "\(base)\(n)"
            n += 1
        }
        return name
    }

    /// Folded copies of the strings of `column` (by name here).
    mutating func addFolds(_ column: String, in table: String) {
        guard let i = layout[table]!.firstIndex(where: { $0.name == column }), layout[table]![i].folded == nil else {
            return
        }
        var names: [String] = []
        for (suffix, options) in [
            ("c", TextOptions.caseInsensitive), ("d", .diacriticInsensitive),
            ("cd", [.caseInsensitive, .diacriticInsensitive]),
        ] {
            let name = fresh(column + "@" + suffix, in: table)
            layout[table]!.append(
                Column(name: name, source: nil, kind: .text, foldedFrom: column, folding: options.rawValue))
            names.append(name)
        }
        layout[table]![i].folded = Schema.FoldedColumns(c: names[0], d: names[1], cd: names[2])
    }

    mutating func attribute(
        _ type: Schema.ValueType, _ encoding: Schema.StorageEncoding?, _ column: String, in table: String
    ) {
        add(table, column, Self.kind(type, encoding))
        if type == .string { addFolds(column, in: table) }
        if type == .any, let i = layout[table]!.firstIndex(where: { $0.source == column }),
            layout[table]![i].textColumn == nil
        {
            let text = fresh(column + "@text", in: table)
            layout[table]![i].textColumn = text
            add(table, text, .text, text: true)
            addFolds(text, in: table)
        }
    }

    mutating func relationship(_ r: Schema.Relationship, of e: Schema.Entity) {
        if let fk = r.foreignKey, r.toOne != nil { add(e.table, fk, .integer) }
        if let cc = r.countColumn { add(e.table, cc, .integer) }
        if let d = r.toMany, let destination = schema.entity(named: d) {
            add(destination.table, destination.primaryKey, .integer)
            if let fk = r.foreignKey { add(destination.table, fk, .integer) }
            if r.joinTable == nil, let oc = r.orderColumn { add(destination.table, oc, .integer) }
        }
        if let j = r.joinTable {
            add(j.table, j.source, .integer)
            add(j.table, j.destination, .integer)
            if let oc = r.orderColumn { add(j.table, oc, .integer) }
        }
        if let v = r.values {
            add(v.table, v.owner, .integer)
            if let oc = r.orderColumn { add(v.table, oc, .integer) }
            attribute(v.type, v.encoding, v.column, in: v.table)
        }
    }
}

/// Pass 2: the names PostgreSQL takes. It keeps 63 bytes of an identifier and refuses the empty one.
private struct PostgresNames {
    /// Table (source) → its name in PostgreSQL.
    var tableNames: [String: String] = [:]
    /// Table (source) → column (source or text) → its name in PostgreSQL.
    var columnNames: [String: [String: String]] = [:]
    /// The tables in those names.
    var tables: [PostgresTables.Table] = []

    init(_ plan: ColumnPlan) {
        var takenTables = Set<String>()
        for table in plan.order {
            let pgTable = Self.usable(table, taken: &takenTables)
            tableNames[table] = pgTable
            var taken = Set<String>()
            var map: [String: String] = [:]
            for c in plan.layout[table]! { map[c.name] = Self.usable(c.name, taken: &taken) }
            columnNames[table] = map
            tables.append(
                PostgresTables.Table(
                    name: pgTable, source: table,
                    columns: plan.layout[table]!.map { c in
                        PostgresTables.Column(
                            name: map[c.name]!, source: c.source, kind: c.kind,
                            textColumn: c.textColumn.map { map[$0]! },
                            foldedFrom: c.foldedFrom.map { map[$0]! }, folding: c.folding,
                            folded: c.folded.map { Schema.FoldedColumns(c: map[$0.c]!, d: map[$0.d]!, cd: map[$0.cd]!) }
                        )
                    }))
        }
    }

    static func usable(_ name: String, taken: inout Set<String>) -> String {
        var candidate = name
        if name.isEmpty || name.utf8.count > 63 {
            var head = ""
            for ch in name.unicodeScalars where head.utf8.count + String(ch).utf8.count <= 48 {
                head.unicodeScalars.append(ch)
            }
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: stable across runs, unlike Hasher
            for b in name.utf8 { hash = (hash ^ UInt64(b)) &* 0x100_0000_01b3 }
            candidate = head + "@" + String(hash, radix: 16)
        }
        var unique = candidate
        var n = 2
        while taken.contains(unique) {
            unique = "\(candidate)\(n)"
            n += 1
        }
        taken.insert(unique)
        return unique
    }
}

/// Pass 3: the schema in PostgreSQL's names, with the text columns and folded copies named.
private struct SchemaRenamer {
    let schema: Schema
    let layout: [String: [PostgresTables.Column]]
    let names: PostgresNames

    func col(_ table: String, _ name: String) -> String { names.columnNames[table]?[name] ?? name }

    func text(_ table: String, _ name: String) -> String? {
        layout[table]?.first { $0.source == name }?.textColumn.map { col(table, $0) }
    }

    /// The folded copies of a string column, or of a dynamically typed column's text column.
    func folds(_ table: String, _ name: String) -> Schema.FoldedColumns? {
        guard let c = layout[table]?.first(where: { $0.source == name }) else { return nil }
        let holder = c.textColumn.flatMap { t in layout[table]?.first { $0.name == t } } ?? c
        return holder.folded.map {
            Schema.FoldedColumns(c: col(table, $0.c), d: col(table, $0.d), cd: col(table, $0.cd))
        }
    }

    func renamed(_ a: Schema.Attribute, in table: String) -> Schema.Attribute {
        var a = a
        if a.type == .any { a.textColumn = text(table, a.column) }
        if a.type == .any || a.type == .string { a.foldedColumns = folds(table, a.column) }
        a.column = col(table, a.column)
        return a
    }

    func renamed(_ r: Schema.Relationship, of e: Schema.Entity) -> Schema.Relationship {
        var r = r
        if let fk = r.foreignKey, r.toOne != nil { r.foreignKey = col(e.table, fk) }
        if let cc = r.countColumn { r.countColumn = col(e.table, cc) }
        if let d = r.toMany, let destination = schema.entity(named: d) {
            if let fk = r.foreignKey { r.foreignKey = col(destination.table, fk) }
            if r.joinTable == nil, let oc = r.orderColumn { r.orderColumn = col(destination.table, oc) }
        }
        if var j = r.joinTable {
            if let oc = r.orderColumn { r.orderColumn = col(j.table, oc) }
            j.source = col(j.table, j.source)
            j.destination = col(j.table, j.destination)
            j.table = names.tableNames[j.table] ?? j.table
            r.joinTable = j
        }
        if var v = r.values {
            if let oc = r.orderColumn { r.orderColumn = col(v.table, oc) }
            if v.type == .any { v.textColumn = text(v.table, v.column) }
            if v.type == .any || v.type == .string { v.foldedColumns = folds(v.table, v.column) }
            v.owner = col(v.table, v.owner)
            v.column = col(v.table, v.column)
            v.table = names.tableNames[v.table] ?? v.table
            r.values = v
        }
        return r
    }

    func renamed(_ m: Schema.MixedKey, of e: Schema.Entity) -> Schema.MixedKey {
        var m = m
        m.shapeColumn = col(e.table, m.shapeColumn)
        m.cases = m.cases.map { c in
            var c = c
            c.attribute = c.attribute.map { renamed($0, in: e.table) }
            c.relationship = c.relationship.map { renamed($0, of: e) }
            return c
        }
        return m
    }

    /// The whole schema renamed.
    func prepared() -> Schema {
        var prepared = schema
        for (i, e) in schema.entities.enumerated() {
            var entity = e
            entity.table = names.tableNames[e.table] ?? e.table
            entity.primaryKey = col(e.table, e.primaryKey)
            entity.attributes = e.attributes.map { renamed($0, in: e.table) }
            entity.relationships = e.relationships.map { renamed($0, of: e) }
            if var d = e.discriminator {
                d.column = col(e.table, d.column)
                entity.discriminator = d
            }
            entity.mixedKeys = e.mixedKeys.map { renamed($0, of: e) }
            entity.selfShape = e.selfShape.map { renamed($0, of: e) }
            prepared.entities[i] = entity
        }
        return prepared
    }
}
