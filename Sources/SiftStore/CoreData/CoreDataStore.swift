// Core Data's SQLite stores (issue 31): `PersistentStore(coreDataStoreAt:model:create:)` lays out
// a new store for a model as Core Data does, or opens one Core Data wrote (its -wal and -shm with
// it, as every store is opened). The model is laid out in Core Data's layout (StoreLayout.swift),
// so fetching, counting, saving and batch requests run the store's usual code on `ZCAR`/`ZNAME`.
// A store matches a model by its schema (Apple's version hashes are undocumented bytes, kept
// as they are): the entity numbers and parents in `Z_PRIMARYKEY`, and each table's columns.
// `Z_METADATA` holds one row: the store's UUID and a binary property list of every metadata key,
// the application's own included, which writing metadata back keeps.

import Foundation
import SiftSQL
import SiftSQLite

extension PersistentStore {
    /// Opens the Core Data SQLite store at `url` with `model` (read from the app's `.xcdatamodeld`,
    /// ``ManagedObjectModel/init(contentsOf:version:classes:)``), or with `create: true` lays out a new
    /// store for the model as Core Data would. A store whose tables, columns or entity numbers are
    /// not the model's is a `.modelMismatch` error naming each difference, unless `migration` is a
    /// ``ModelMigration/plan(_:)`` (such as ``MigrationPlan/init(versionsOf:)`` makes of the app's
    /// bundle) ending at `model`: the store, at whichever of its versions its schema is, is then
    /// migrated in place, in one transaction (the Migrations article). A Core Data store keeps no
    /// model Sift can read, so `.inferred` alone cannot migrate one.
    ///
    /// ```swift
    /// let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "App.xcdatamodeld"))
    /// let store = try PersistentStore(coreDataStoreAt: URL(fileURLWithPath: "App.sqlite"), model: model)
    /// let cars = try ManagedObjectContext(store: store).fetch(FetchRequest("Car", predicate: "year > 2000"))
    /// ```
    public convenience init(
        coreDataStoreAt url: URL, model: ManagedObjectModel, create: Bool = false, migration: ModelMigration = .never
    ) throws(StoreError) {
        let laidOut: ManagedObjectModel
        do { laidOut = try model.laidOut(as: .coreData) } catch { throw StoreError(error) }
        let path = url.path
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        if create, size != nil {
            throw StoreError(.invalidOperation, "'\(path)' exists already (create: true lays out a new store)")
        }
        // An empty file would be laid out as a new store: only `create` does that.
        if !create, (size ?? 0) == 0 {
            throw StoreError(.sqlite, "'\(path)' is not a Core Data store (create: true lays out a new store)")
        }
        try ExternalData.check(storeAt: url)
        try self.init(model: laidOut, location: path, historyTracking: false, migration: migration)
    }

    /// The store's Core Data metadata (`Z_METADATA`'s property list): `NSStoreType`,
    /// `NSStoreUUID`, `NSStoreModelVersionHashes` (entity name → `Data`, kept as stored) and the
    /// application's own keys. Empty for Sift's own stores.
    ///
    /// ```swift
    /// let hashes = try store.coreDataMetadata()["NSStoreModelVersionHashes"] as? [String: Data]
    /// ```
    public func coreDataMetadata() throws(StoreError) -> [String: any Sendable] {
        guard model.layout == .coreData else { return [:] }
        return try locked { () throws(StoreError) in try CoreDataFile.readMetadata(connection).plist }
    }

    /// Sets metadata keys of a Core Data store (nil removes one), keeping every other key as stored.
    ///
    /// ```swift
    /// try store.setCoreDataMetadata(["LastImport": Date()])
    /// ```
    public func setCoreDataMetadata(_ values: [String: (any Sendable)?]) throws(StoreError) {
        guard model.layout == .coreData else {
            throw StoreError(.invalidOperation, "the store is not a Core Data store (it has no Z_METADATA)")
        }
        try writeTransaction { () throws(StoreError) in
            var plist = try CoreDataFile.readMetadata(connection).plist
            for (k, v) in values { plist[k] = v }
            try CoreDataFile.writeMetadata(connection, plist)
        }
    }
}

/// Laying out, checking and reading the files of Core Data's layout.
enum CoreDataFile {
    /// The store's UUID: a new store laid out (a file with no tables), or an existing one checked
    /// against the model.
    static func prepare(
        _ db: SQLiteConnection, model: ManagedObjectModel, layouts: [String: TableLayout], migration: ModelMigration
    ) throws(StoreError) -> String {
        if case .plan(let plan) = migration { try plan.check(opening: model) }
        return try PersistentStore.preparing { () throws -> String in
            let tables = try PersistentStore.tableNames(db)
            if tables.isEmpty { return try create(db, model, layouts) }
            guard hasCoreDataTables(tables) else {
                throw StoreError(
                    .sqlite,
                    "the file is an SQLite database but not a Core Data store (it has no Z_METADATA or Z_PRIMARYKEY)")
            }
            let uuid = try readMetadata(db).uuid
            // A plan knows each version's schema, and the version Sift last wrote the store at.
            if case .plan(let plan) = migration {
                _ = try CoreDataFile.migrate(db, plan: plan, storeID: uuid, dryRun: false)
                return uuid
            }
            let differences = try schemaDifferences(db, model, layouts)
            guard differences.isEmpty else {

                let hint =
                    if case .inferred = migration {
                        " (a Core Data store keeps no model Sift can read: migrate it with migration: .plan(MigrationPlan(versionsOf: bundle)))"
                    } else { "" }
                throw StoreError(
                    .modelMismatch,
                    "the store does not match the model: \(differences.joined(separator: "; "))\(hint)",
                    failures: differences)
            }
            return uuid
        }
    }

    /// Lays out a new store: tables, indexes, `Z_PRIMARYKEY` rows and `Z_METADATA`.
    private static func create(_ db: SQLiteConnection, _ model: ManagedObjectModel, _ layouts: [String: TableLayout])
        throws -> String
    {
        let uuid = UUID().uuidString
        try db.execute("PRAGMA auto_vacuum = 2")
        try db.execute("BEGIN IMMEDIATE")
        do {
            try db.execute(createScript(model, layouts))
            for row in keyRows(model) { _ = try db.query(insertKeyRow, row.bindings) }
            _ = try db.query(
                "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
                [.text(uuid), .blob(try plistBytes(newMetadata(uuid, model: model)))])
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
        return uuid
    }

    /// The statement writing one entity's `Z_PRIMARYKEY` row, its key counter at 0.
    static let insertKeyRow = "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)"

    /// Every entity of `model` by entity number, with the bindings of `insertKeyRow` for it: its
    /// number, its name and its parent's number (0 for a root).
    static func keyRows(_ model: ManagedObjectModel) -> [(entity: String, bindings: [SQLValue])] {
        model.entities.map { model.resolved[$0.name]! }.sorted { $0.number < $1.number }.map { r in
            let parent = r.description.parent.flatMap { model.resolved[$0]?.number } ?? 0
            return (r.name, [.integer(r.number), .text(r.name), .integer(parent)])
        }
    }

    /// The keys Core Data's own metadata has for a new store. Apple's version hashes cannot be
    /// made (their recipe is not documented): `NSStoreModelVersionHashes` is empty, so Core Data
    /// opening the store finds no model whose hashes match and treats it as needing a migration.
    /// Sift's own key names the model's ``ManagedObjectModel/versionHash``, for a migration plan.
    static func newMetadata(_ uuid: String, model: ManagedObjectModel) -> [String: any Sendable] {
        [
            CoreDataNames.siftVersionKey: model.versionHash,
            "NSStoreType": "SQLite", "NSStoreUUID": uuid, "NSStoreModelVersionHashes": [String: Data](),
            "NSStoreModelVersionHashesVersion": 3, "NSStoreModelVersionIdentifiers": [""],
            "_NSAutoVacuumLevel": "2",
        ]
    }

    /// The SQL of every table and index of a new store. A migration passes the columns each table
    /// had (`kept`, table → column names in their order): those keep their places and the columns
    /// it adds come last, as Core Data's migrations lay them out; columns are read by name.
    static func createScript(
        _ model: ManagedObjectModel, _ layouts: [String: TableLayout], kept: [String: [String]] = [:]
    ) -> String {
        let q = PersistentStore.q
        var sql = [
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);",
        ]
        for layout in layouts.values.sorted(by: { $0.table < $1.table }) {
            let cols = layout.columns.enumerated().map { i, c in
                i == 0 ? "\(q(c)) INTEGER PRIMARY KEY" : i < 3 ? "\(q(c)) INTEGER" : "\(q(c)) \(layout.columnTypes[i])"
            }
            let before = (kept[layout.table.uppercased()] ?? []).map { $0.uppercased() }
            let place = { (i: Int) in i < 3 ? i : before.firstIndex(of: layout.columns[i].uppercased()) ?? Int.max }
            let ordered = cols.indices.sorted { (place($0), $0) < (place($1), $1) }.map { cols[$0] }
            sql.append("CREATE TABLE \(q(layout.table)) ( \(ordered.joined(separator: ", ")) );")
        }
        var joins = Set<String>()
        let orders = model.joinTableOrders
        for e in model.entities {
            let r = model.resolved[e.name]!
            if r.root == e.name, r.family.count > 1 {
                sql.append("CREATE INDEX \(q(r.table + "_Z_ENT_INDEX")) ON \(q(r.table)) (Z_ENT);")
            }
            sql += indexes(e, r)
            for rel in r.relationships where rel.declaringEntity == e.name {
                guard case .joinTable(let t, let s, let d, _) = rel.storage, joins.insert(t).inserted else { continue }
                let (a, b) = s < d ? (s, d) : (d, s)
                let fok = orders[t, default: []].map { ", \(q($0)) INTEGER" }.joined()
                sql.append(
                    "CREATE TABLE \(q(t)) ( \(q(a)) INTEGER, \(q(b)) INTEGER\(fok), PRIMARY KEY (\(q(a)), \(q(b))) );")
                sql.append("CREATE INDEX \(q(t + "_" + b + "_INDEX")) ON \(q(t)) (\(q(b)), \(q(a)));")
            }
        }
        return sql.joined(separator: "\n")
    }

    /// The indexes of entity `e`'s own properties: to-one keys, indexed attributes, fetch indexes
    /// and uniqueness constraints.
    private static func indexes(_ e: EntityDescription, _ r: ResolvedEntity) -> [String] {
        let q = PersistentStore.q
        func column(_ property: String) -> String {
            if let a = r.attribute(property) { return a.column }
            if case .foreignKey(let c)? = r.relationship(property)?.storage { return c }
            return property
        }
        var out: [String] = []
        for rel in r.relationships where rel.declaringEntity == e.name {
            guard case .foreignKey(let c) = rel.storage else { continue }
            out.append("CREATE INDEX \(q("\(r.table)_\(c)_INDEX")) ON \(q(r.table)) (\(q(c)));")
        }
        for a in e.attributes where a.isIndexed {
            let c = column(a.name)
            out.append("CREATE INDEX \(q("\(r.table)_\(c)_INDEX")) ON \(q(r.table)) (\(q(c)));")
        }
        for index in e.indexes {
            let cols = index.elements.map { q(column($0.property)) + ($0.isDescending ? " DESC" : "") }
            let name = "Z_\(e.name)_" + (index.name ?? index.elements.map(\.property).joined(separator: "_"))
            out.append("CREATE INDEX \(q(name)) ON \(q(r.table)) (\(cols.joined(separator: ", ")));")
        }
        for constraint in e.uniquenessConstraints {
            let name = "Z_\(e.name)_UNIQUE_" + constraint.joined(separator: "_")
            let cols = constraint.map { q(column($0)) }.joined(separator: ", ")
            out.append("CREATE UNIQUE INDEX \(q(name)) ON \(q(r.table)) (\(cols));")
        }
        return out
    }

    // MARK: Matching a store to a model

    /// Every way the store's schema differs from the model's layout, in words: entities missing,
    /// renumbered or reparented in `Z_PRIMARYKEY`, tables and columns missing or extra.
    static func schemaDifferences(_ db: SQLiteConnection, _ model: ManagedObjectModel, _ layouts: [String: TableLayout])
        throws(SQLiteError) -> [String]
    {
        var out: [String] = []
        var stored: [String: (number: Int64, parent: Int64)] = [:]
        for row in try db.query("SELECT Z_NAME, Z_ENT, Z_SUPER FROM Z_PRIMARYKEY") {
            // Persistent history's own entities (16001…) are not the model's.
            guard case .text(let name) = row[0], case .integer(let n) = row[1], n < 16000 else { continue }
            if case .integer(let p) = row[2] { stored[name] = (n, p) } else { stored[name] = (n, 0) }
        }
        for e in model.entities {
            let r = model.resolved[e.name]!
            let parent = e.parent.flatMap { model.resolved[$0]?.number } ?? 0
            guard let s = stored.removeValue(forKey: e.name) else {
                out.append("the store has no entity '\(e.name)'")
                continue
            }
            if s.number != r.number {
                out.append("entity '\(e.name)' is number \(s.number) in the store, \(r.number) in the model")
            }
            if s.parent != parent {
                out.append("entity '\(e.name)' has parent number \(s.parent) in the store, \(parent) in the model")
            }
        }
        for name in stored.keys.sorted() { out.append("the store has entity '\(name)', which the model has not") }
        var expected: [String: [String]] = [:]
        for layout in layouts.values { expected[layout.table] = layout.columns }
        let orders = model.joinTableOrders
        for r in model.resolved.values {
            for rel in r.relationships {
                if case .joinTable(let t, let s, let d, _) = rel.storage {
                    expected[t] = [s, d] + orders[t, default: []]
                }
            }
        }
        for (table, columns) in expected.sorted(by: { $0.key < $1.key }) {
            let have = try db.query("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap {
                row -> String? in
                if case .text(let c) = row[0] { return c.uppercased() }
                return nil
            }
            guard !have.isEmpty else {
                out.append("the store has no table \(table)")
                continue
            }
            let want = columns.map { $0.uppercased() }
            for c in want where !have.contains(c) { out.append("table \(table) has no column \(c)") }
            for c in have where !want.contains(c) {
                out.append("table \(table) has column \(c), which the model has not")
            }
        }
        return out
    }

    // MARK: Metadata

    /// The store's UUID and metadata property list.
    static func readMetadata(_ db: SQLiteConnection) throws(StoreError) -> (uuid: String, plist: [String: any Sendable])
    {
        let rows: [[SQLValue]]
        do { rows = try db.query("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1") } catch {
            throw StoreError(.sqlite, "cannot read Z_METADATA: \(error.message)")
        }
        guard let row = rows.first, case .text(let uuid) = row[0] else {
            throw StoreError(.sqlite, "the store's Z_METADATA has no row with a UUID")
        }
        guard case .blob(let bytes) = row[1] else { return (uuid, [:]) }
        let value: Any
        do { value = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil) } catch {
            throw StoreError(.sqlite, "the store's metadata (Z_METADATA.Z_PLIST) is not a property list: \(error)")
        }
        guard let plist = value as? [String: Any] else {
            throw StoreError(.sqlite, "the store's metadata (Z_METADATA.Z_PLIST) is not a dictionary")
        }
        return (uuid, plist.mapValues(sendable))
    }

    /// Writes the metadata property list back (binary, as Core Data writes it).
    static func writeMetadata(_ db: SQLiteConnection, _ plist: [String: any Sendable]) throws(StoreError) {
        do {
            _ = try db.query(
                "UPDATE Z_METADATA SET Z_PLIST = ? WHERE Z_VERSION = (SELECT MIN(Z_VERSION) FROM Z_METADATA)",
                [.blob(try plistBytes(plist))])
        } catch let e as StoreError {
            throw e
        } catch {
            throw StoreError(.sqlite, "cannot write Z_METADATA: \(error)")
        }
    }

    static func plistBytes(_ plist: [String: any Sendable]) throws(StoreError) -> [UInt8] {
        do {
            return [UInt8](try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0))
        } catch {
            throw StoreError(.invalidOperation, "the metadata cannot be written as a property list: \(error)")
        }
    }

    /// A property list value as a `Sendable` one (property lists hold strings, numbers, dates,
    /// data, arrays and dictionaries, all of which are).
    private static func sendable(_ v: Any) -> any Sendable {
        switch v {
        case let d as [String: Any]: return d.mapValues(sendable)
        case let a as [Any]: return a.map(sendable)
        case let s as String: return s
        case let n as NSNumber: return n
        case let d as Data: return d
        case let d as Date: return d
        default: return String(describing: v)
        }
    }
}
