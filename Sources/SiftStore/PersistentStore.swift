// The SQLite store: opens (or creates) the file, checks the model against the one the store was
// created with, creates the tables the model's layout names, and holds the connection, its cache
// of prepared statements and the write transaction every save and batch request runs in. The SQL
// of a save is written by `RowWriter` (Saving.swift); queries come from the lowering. SQLite runs
// in WAL mode with `synchronous=FULL` (a save reported done survives a power loss), a busy
// timeout, and `BEGIN IMMEDIATE` for every write so two writers never deadlock upgrading a read lock.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite

/// A persistent store: a SQLite file, or an in-memory SQLite database.
///
/// ```swift
/// let store = try PersistentStore(model: model, path: "people.sqlite")
/// let context = ManagedObjectContext(store: store)
/// ```
///
/// Threading: a store serializes its own work with a lock, so several contexts on several threads
/// may share one; each context, like Core Data's, is used from one thread at a time.
public final class PersistentStore: @unchecked Sendable {
    /// The model the store was opened with.
    public let model: ManagedObjectModel
    /// The file, or nil for an in-memory store.
    public let path: String?
    /// The store's UUID (kept in its metadata; object ID URIs name the store by it).
    public let identifier: String
    /// Whether saves and batch requests record persistent history (``history(after:)``): on when
    /// the store was opened or created with `historyTracking: true` once, since the store's
    /// metadata remembers it, until ``setHistoryTracking(_:)`` turns it off.
    ///
    /// ```swift
    /// if !store.tracksHistory { try store.setHistoryTracking(true) }
    /// ```
    public var tracksHistory: Bool { lock.withLock { historyOn } }
    /// `tracksHistory`, read and written with `lock` held (History.swift).
    var historyOn = false
    /// The contexts on this store object that merge the others' saves automatically, weakly held
    /// (`automaticallyMergesChangesFromParent` on a context without a parent). Contexts live on
    /// several queues: behind `autoMergeLock`.
    private var autoMergers: [WeakContext] = []
    private let autoMergeLock = NSLock()
    /// `identifier`'s number among the interned names object IDs refer to.
    private(set) var names: UInt32 = 0
    let connection: SQLiteConnection
    let layouts: [String: TableLayout]
    let infos: [String: EntityInfo]
    /// Entity facts by `Z_ENT` number (index 0 unused), an array because every fetched row asks.
    let infoByNumber: EntityNumbers
    /// The model's schema with each entity's rows limited to the entity itself (fetches that
    /// exclude sub-entities).
    let ownEntitySchema: Schema
    let lock = NSRecursiveLock()
    private var statements = StatementCache()
    /// Per document layout, its loader for the current write transaction (with the lock held).
    var documentLoaders: [ObjectIdentifier: DocumentLoader<Value>] = [:]
    /// Inside `bulkWrite` (BulkWrite.swift, with the lock held): saves write into its transaction.
    var inBulkWrite = false
    /// How the store issues primary keys.
    let keyScope: KeyScope

    /// Where a primary key is unique, and so which counter issues it.
    enum KeyScope {
        /// One counter for every table (Sift's stores): a key alone names an object of the store.
        case store
        /// One counter per root entity (Core Data's `Z_MAX`): objects of two hierarchies may share
        /// a key, and an object is named by its root and its key (its ID's key space).
        case hierarchy
    }

    /// Opens the store at `path`, creating it (tables, metadata) when the file is new or empty.
    /// An existing store made with another model is a `.modelMismatch` error naming what differs.
    /// `historyTracking: true` turns on persistent history (kept on from then on). With
    /// `migration: .inferred`, a store made with an older model is migrated in place instead, in
    /// one transaction, when every change can be inferred (<doc:Migrations>).
    ///
    /// ```swift
    /// let store = try PersistentStore(model: model, path: "people.sqlite", historyTracking: true)
    /// let migrated = try PersistentStore(model: version2, path: "old.sqlite", migration: .inferred)
    /// ```
    public convenience init(
        model: ManagedObjectModel, path: String, historyTracking: Bool = false, migration: ModelMigration = .never
    ) throws(StoreError) {
        try self.init(model: model, location: path, historyTracking: historyTracking, migration: migration)
    }

    /// Opens an existing store with the model it was created with (kept in its metadata);
    /// `historyTracking: true` turns on persistent history (kept on from then on).
    ///
    /// ```swift
    /// let store = try PersistentStore(path: "people.sqlite")
    /// store.model.entities.map(\.name)
    /// ```
    public convenience init(path: String, historyTracking: Bool = false) throws(StoreError) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.sqlite, "'\(path)' does not exist (create the store with its model first)")
        }
        // The connection that reads the model becomes the store's (unserialized, as `init` says):
        // one closed before the store's opened would be the file's last, and SQLite would delete
        // the -wal and -shm files only to create them again.
        let db: SQLiteConnection
        let json: String
        do {
            db = try Self.openConnection(path, serialized: false)
            guard
                try !db.query(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(Storage.metadataTable)]
                ).isEmpty
            else {
                throw StoreError(.sqlite, "'\(path)' is not a Sift store (it has no '\(Storage.metadataTable)' table)")
            }
            guard
                case .text(let text)? = try db.query(
                    "SELECT value FROM \(Self.q(Storage.metadataTable)) WHERE key = 'model'"
                ).first?.first
            else {
                throw StoreError(.sqlite, "the metadata of '\(path)' holds no model")
            }
            json = text
        } catch let e as StoreError {
            throw e
        } catch {
            throw StoreError(.sqlite, "cannot read '\(path)': \(error)")
        }
        let model: ManagedObjectModel
        do { model = try ManagedObjectModel(json: Data(json.utf8)) } catch { throw StoreError(error) }
        try self.init(model: model, location: path, opened: db, historyTracking: historyTracking)
    }

    /// An in-memory store (an SQLite database that lives as long as the store).
    ///
    /// ```swift
    /// let store = try PersistentStore.inMemory(model: model, historyTracking: true)
    /// ```
    public static func inMemory(model: ManagedObjectModel, historyTracking: Bool = false) throws(StoreError)
        -> PersistentStore
    {
        try PersistentStore(model: model, location: nil, historyTracking: historyTracking)
    }

    /// `opened`: the store's connection when `init(path:)` opened it to read the model;
    /// `keyScope`: how keys are issued when not as the model's layout issues them.
    init(
        model: ManagedObjectModel, location: String?, opened: SQLiteConnection? = nil, historyTracking: Bool,
        migration: ModelMigration = .never, keyScope: KeyScope? = nil
    ) throws(StoreError) {
        try AttributeTransformers.check(model)
        self.model = model
        self.path = location
        self.keyScope = keyScope ?? model.layout.keyScope
        let layouts = TableLayout.make(model)
        self.layouts = layouts
        var infos: [String: EntityInfo] = [:]
        var byNumber: [Int64: EntityInfo] = [:]
        for (name, r) in model.resolved {
            let info = EntityInfo(
                r, layout: layouts[r.table]!, classes: model.classes, storeLayout: model.layout)
            infos[name] = info
            byNumber[r.number] = info
        }
        self.infos = infos
        self.infoByNumber = EntityNumbers(byNumber)
        var own = model.schema
        for (i, e) in own.entities.enumerated() where e.discriminator != nil {
            own.entities[i].discriminator = Schema.Entity.Discriminator(
                column: Storage.entityColumn, values: [model.resolved[e.name]!.number])
        }
        self.ownEntitySchema = own
        do {
            if let opened {
                connection = opened
            } else {
                // Every use of the connection holds `lock`, so SQLite's own per-call mutex is redundant.
                connection = try Self.openConnection(location ?? ":memory:", serialized: false)
            }
            if location != nil {
                _ = try connection.query("PRAGMA journal_mode=WAL")
                try connection.execute("PRAGMA synchronous=FULL")
            }
        } catch {
            throw StoreError(
                .sqlite, "cannot open the store \(location.map { "'\($0)'" } ?? "in memory"): \(error.message)")
        }
        switch model.layout {
        case .sift:
            identifier = try Self.prepare(connection, model: model, layouts: layouts, migration: migration)
            historyOn = try Self.prepareHistory(connection, wanted: historyTracking)
        case .coreData:
            identifier = try CoreDataFile.prepare(connection, model: model, layouts: layouts, migration: migration)
        }
        var storeNumber: UInt32 = 0
        for (name, info) in infos {
            let space = keyScope == .store ? 0 : UInt32(model.resolved[info.entity.root]!.number)
            info.names = IDNames.shared.pair(store: identifier, entity: name, space: space)
            storeNumber = info.names.store
        }
        names = infos.isEmpty ? IDNames.shared.pair(store: identifier, entity: "").store : storeNumber
    }

    // MARK: Creating and checking

    private static func prepare(
        _ db: SQLiteConnection, model: ManagedObjectModel, layouts: [String: TableLayout], migration: ModelMigration
    ) throws(StoreError) -> String {
        if case .plan(let plan) = migration { try plan.check(opening: model) }
        return try preparing { () throws -> String in
            let tables = try tableNames(db)
            if tables.contains(Storage.metadataTable) {
                let rows = try db.query("SELECT key, value FROM \(q(Storage.metadataTable))")
                var meta: [String: String] = [:]
                for r in rows { if case .text(let k) = r[0], case .text(let v) = r[1] { meta[k] = v } }
                guard let hash = meta["version_hash"], let id = meta["store_uuid"] else {
                    throw StoreError(.sqlite, "the store's metadata is incomplete (no version hash or store UUID)")
                }
                if hash != model.versionHash {
                    let stored = meta["model"].flatMap { try? ManagedObjectModel(json: Data($0.utf8)) }
                    switch migration {
                    case .inferred where stored != nil:
                        _ = try StoreMigration.run(db, from: stored!, to: model, storeID: id, dryRun: false)
                        return id
                    case .plan(let plan):
                        _ = try StoreMigration.run(db, plan: plan, storedHash: hash, storeID: id, dryRun: false)
                        return id
                    case .inferred, .never: break
                    }
                    let what =
                        stored.map { ModelDifference.describe(from: $0, to: model) }
                        ?? "the stored model cannot be read"
                    throw StoreError(
                        .modelMismatch,
                        "the store was created with model \(hash), not \(model.versionHash): \(what) (open it with migration: .inferred to migrate it)"
                    )
                }
                return id
            }
            guard tables.isEmpty else {
                throw StoreError(
                    .sqlite,
                    "the file is an SQLite database but not a Sift store (it has tables and no '\(Storage.metadataTable)')"
                )
            }
            let id = UUID().uuidString.lowercased()
            try db.execute("BEGIN IMMEDIATE")
            do {
                try db.execute(createScript(model, layouts))
                let insert = try db.prepare("INSERT INTO \(q(Storage.metadataTable)) (key, value) VALUES (?, ?)")
                for (k, v) in [
                    ("version_hash", model.versionHash), ("store_uuid", id), ("model", model.jsonString),
                    ("format", "1"),
                ] {
                    try insert.bind([.text(k), .text(v)])
                    _ = try insert.step()
                    try insert.reset()
                }
                try db.execute("COMMIT")
            } catch {
                try? db.execute("ROLLBACK")
                throw error
            }
            return id
        }
    }

    /// The names of the database's tables.
    static func tableNames(_ db: SQLiteConnection) throws(SQLiteError) -> [String] {
        try db.query("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { row -> String? in
            if case .text(let t) = row[0] { return t }
            return nil
        }
    }

    /// Runs the preparing of a store's file: its errors as the store's (SQLite's as `.sqlite`).
    static func preparing<R>(_ body: () throws -> R) throws(StoreError) -> R {
        do { return try body() } catch let e as StoreError {
            throw e
        } catch let e as SQLiteError {
            throw StoreError(.sqlite, "cannot prepare the store: \(e.message)")
        } catch {
            throw StoreError(.sqlite, "cannot prepare the store: \(error)")
        }
    }

    static func q(_ name: String) -> String { SQLiteDialect().quote(name) }

    static func createScript(_ model: ManagedObjectModel, _ layouts: [String: TableLayout]) -> String {
        var sql = "CREATE TABLE \(q(Storage.metadataTable)) (key TEXT PRIMARY KEY, value TEXT);\n"
        sql += "CREATE TABLE \(q(Storage.keyTable)) (entity TEXT PRIMARY KEY, max INTEGER NOT NULL);\n"
        var extra: [String] = []
        var made = Set<String>()
        var taken = tableNames(model, layouts)
        let orders = model.joinTableOrders
        for layout in layouts.values.sorted(by: { $0.table < $1.table }) {
            sql += layoutScript(layout, &taken)
        }
        for e in model.entities {
            let r = model.resolved[e.name]!
            if let layout = r.document {
                extra.append(layout.createScript + layout.indexScript)
                continue
            }
            extra += sideTablesScript(r, orders: orders, &made, &taken)
            extra += countTriggers(r, e.name, &taken)
            for constraint in r.constraints
            where e.uniquenessConstraints.contains(constraint.map { r.attributes[$0].name }) {
                let cols = constraint.map { q(r.attributes[$0].column) }.joined(separator: ", ")
                let name = "Z_\(e.name)_unique_" + constraint.map { r.attributes[$0].name }.joined(separator: "_")
                extra.append("CREATE INDEX \(uniqueName(name, &taken)) ON \(q(r.table)) (\(cols));")
            }
            extra += indexScript(e, r, &taken)
        }
        return sql + extra.joined(separator: "\n")
    }

    /// The indexes entity `e` declares: one per indexed attribute of its own, and its `indexes`.
    private static func indexScript(_ e: EntityDescription, _ r: ResolvedEntity, _ taken: inout Set<String>)
        -> [String]
    {
        func column(_ property: String) -> String {
            if let a = r.attribute(property) { return a.column }
            // The resolver checked that an index names attributes and to-one relationships.
            guard case .foreignKey(let c) = r.relationship(property)!.storage else { preconditionFailure() }
            return c
        }
        var out: [String] = []
        for a in e.attributes where a.isIndexed {
            let name = uniqueName("Z_\(e.name)_\(a.name)_index", &taken)
            out.append("CREATE INDEX \(name) ON \(q(r.table)) (\(q(column(a.name))));")
        }
        for index in e.indexes {
            let cols = index.elements.map { q(column($0.property)) + ($0.isDescending ? " DESC" : "") }
            let name = uniqueName(
                "Z_\(e.name)_" + (index.name ?? index.elements.map(\.property).joined(separator: "_")), &taken)
            out.append("CREATE INDEX \(name) ON \(q(r.table)) (\(cols.joined(separator: ", ")));")
        }
        return out
    }

    /// Every table name of the store, lower-cased. Index names share the tables' namespace and are
    /// derived from names that may be any string, so they are made unique against every table and
    /// each other (`uniqueName`).
    static func tableNames(_ model: ManagedObjectModel, _ layouts: [String: TableLayout]) -> Set<String> {
        var taken = Set((model.layout.reservedTables + layouts.keys).map { $0.lowercased() })
        for r in model.resolved.values {
            for t in r.document?.tables ?? [] { taken.insert(t.table.lowercased()) }
            for a in r.attributes { if let t = a.valueTable ?? a.mixed?.valueTable { taken.insert(t.lowercased()) } }
            for rel in r.relationships {
                if case .joinTable(let t, _, _, _) = rel.storage { taken.insert(t.lowercased()) }
            }
        }
        return taken
    }

    /// A new index or trigger name made from `base`, unique among `taken`, quoted.
    private static func uniqueName(_ base: String, _ taken: inout Set<String>) -> String {
        q(StorageNames.unique(base, in: &taken))
    }

    /// The table of one entity layout, with its indexes on the entity and foreign-key columns.
    private static func layoutScript(_ layout: TableLayout, _ taken: inout Set<String>) -> String {
        let cols = layout.columns.enumerated().map { i, c -> String in
            i == 0 ? "\(q(c)) INTEGER PRIMARY KEY" : "\(q(c)) \(layout.columnTypes[i])"
        }
        var sql = "CREATE TABLE \(q(layout.table)) (\(cols.joined(separator: ", ")));\n"
        sql +=
            "CREATE INDEX \(uniqueName("Z_\(layout.table)_Z_ENT", &taken)) ON \(q(layout.table)) (\(q(Storage.entityColumn)));\n"
        for fk in layout.foreignKeyColumns {
            sql += "CREATE INDEX \(uniqueName("Z_\(layout.table)_\(fk)", &taken)) ON \(q(layout.table)) (\(q(fk)));\n"
        }
        return sql
    }

    /// The value tables of an entity's array attributes and the join tables of its many-to-manys,
    /// each made once (`made`), with their indexes. A join table has `Z_SRC_ORD` (the order of
    /// the side that names it, or of a to-many without inverse), and `Z_DST_ORD` when the other
    /// side of a many-to-many is ordered (`orders`: each join table's order columns).
    private static func sideTablesScript(
        _ r: ResolvedEntity, orders: [String: [String]], _ made: inout Set<String>, _ taken: inout Set<String>
    ) -> [String] {
        var extra: [String] = []
        for a in r.attributes {
            // A mixed attribute's elements keep their storage class, or are dates.
            let elementType = a.mixed.map {
                $0.shapes.array == .date ? TableLayout.sqlType(.date) : TableLayout.sqlType(.dynamic)
            }
            guard let t = a.valueTable ?? a.mixed?.valueTable, made.insert(t).inserted else { continue }
            extra.append(
                "CREATE TABLE \(q(t)) (\(q(Storage.owner)) INTEGER NOT NULL, \(q(Storage.order)) INTEGER NOT NULL, \(q(Storage.value)) \(elementType ?? TableLayout.sqlType(a.type)));"
            )
            extra.append(
                "CREATE INDEX \(uniqueName(t + "_owner", &taken)) ON \(q(t)) (\(q(Storage.owner)), \(q(Storage.order)));"
            )
        }
        for rel in r.relationships {
            guard case .joinTable(let t, _, _, _) = rel.storage, made.insert(t).inserted else { continue }
            let other = orders[t, default: []].contains("Z_DST_ORD") ? ", \(q("Z_DST_ORD")) INTEGER" : ""
            extra.append(
                "CREATE TABLE \(q(t)) (\(q("Z_SRC")) INTEGER NOT NULL, \(q("Z_DST")) INTEGER NOT NULL, \(q("Z_SRC_ORD")) INTEGER\(other));"
            )
            extra.append("CREATE INDEX \(uniqueName(t + "_src", &taken)) ON \(q(t)) (\(q("Z_SRC")));")
            extra.append("CREATE INDEX \(uniqueName(t + "_dst", &taken)) ON \(q(t)) (\(q("Z_DST")));")
        }
        return extra
    }

    /// A to-many that allows nil keeps its count in the source row; these triggers keep it in step
    /// with every write to the rows that hold the links (saves, batch deletes, deletes under
    /// `noAction`), while a save sets it whole for the objects it writes.
    private static func countTriggers(_ r: ResolvedEntity, _ entity: String, _ taken: inout Set<String>) -> [String] {
        var extra: [String] = []
        for rel in r.relationships where rel.declaringEntity == entity {
            guard let c = rel.countColumn else { continue }
            let (t, fk): (String, String)
            switch rel.storage {
            case .inverseForeignKey(let table, let column, _): (t, fk) = (table, column)
            case .joinTable(let table, let source, _, _): (t, fk) = (table, source)
            case .foreignKey: continue
            }
            func bump(_ side: String, _ delta: String) -> String {
                "UPDATE \(q(r.table)) SET \(q(c)) = \(q(c)) \(delta) 1 WHERE \(q(Storage.primaryKey)) = \(side).\(q(fk)) AND \(q(c)) IS NOT NULL;"
            }
            let base = "Z_\(r.table)_\(c)"
            extra.append(
                "CREATE TRIGGER \(uniqueName(base + "_insert", &taken)) AFTER INSERT ON \(q(t)) WHEN NEW.\(q(fk)) IS NOT NULL BEGIN \(bump("NEW", "+")) END;"
            )
            extra.append(
                "CREATE TRIGGER \(uniqueName(base + "_delete", &taken)) AFTER DELETE ON \(q(t)) WHEN OLD.\(q(fk)) IS NOT NULL BEGIN \(bump("OLD", "-")) END;"
            )
            extra.append(
                "CREATE TRIGGER \(uniqueName(base + "_update", &taken)) AFTER UPDATE OF \(q(fk)) ON \(q(t)) WHEN OLD.\(q(fk)) IS NOT NEW.\(q(fk)) BEGIN \(bump("OLD", "-")) \(bump("NEW", "+")) END;"
            )
        }
        return extra
    }

    // MARK: Statements

    /// A cached prepared statement, reset and ready to bind.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try statements.statement(sql, on: connection)
    }

    /// The statement inserting rows of `info`'s entity (with the lock held).
    func insertStatement(_ info: EntityInfo) throws(SQLiteError) -> SQLiteStatement {
        if let s = info.insertStatement { return s }
        let s = try statement(info.insertSQL)
        info.insertStatement = s
        return s
    }

    /// Runs one cached statement with bindings, returning its rows.
    func rows(_ sql: String, _ bindings: [SQLValue]) throws(SQLiteError) -> [[SQLValue]] {
        let s = try statement(sql)
        try s.bind(bindings)
        var out: [[SQLValue]] = []
        while try s.step() { out.append(s.row()) }
        try s.reset()
        return out
    }

    func run(_ sql: String, _ bindings: [SQLValue]) throws(SQLiteError) {
        let s = try statement(sql)
        try s.bind(bindings)
        while try s.step() {}
        try s.reset()
    }

    /// Runs `body` in `BEGIN IMMEDIATE … COMMIT`; rolls back when it throws.
    func writeTransaction<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        lock.lock()
        defer { lock.unlock() }
        // Part of a bulk write's one transaction, which commits or rolls back for all its saves.
        if inBulkWrite { return try body() }
        do { try connection.execute("BEGIN IMMEDIATE") } catch {
            throw StoreError(.sqlite, "cannot start a write: \(error.message)")
        }
        // Another connection may have written documents since: loaders start again from the
        // stored row numbers.
        documentLoaders = [:]
        do throws(StoreError) {
            let r = try body()
            do { try connection.execute("COMMIT") } catch {
                throw StoreError(.sqlite, "cannot commit: \(error.message)")
            }
            return r
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// New primary keys for rows of `entities`, one each in order (inside a write transaction):
    /// from the store's one counter (Sift's stores), or each from its root's counter, so that
    /// keys repeat across hierarchies as Core Data's do.
    func allocateKeys(for entities: [EntityInfo]) throws(SQLiteError) -> [Int64] {
        switch keyScope {
        case .store:
            let first = try raiseKeyCounter(.text("*"), by: entities.count)
            return (0..<Int64(entities.count)).map { first + $0 }
        case .hierarchy:
            var counts: [String: Int] = [:]
            for e in entities { counts[e.entity.root, default: 0] += 1 }
            var next: [String: Int64] = [:]
            for (root, n) in counts.sorted(by: { $0.key < $1.key }) {
                next[root] = try raiseKeyCounter(model.layout.keyCounter(root: model.resolved[root]!), by: n)
            }
            return entities.map { e in
                defer { next[e.entity.root]! += 1 }
                return next[e.entity.root]!
            }
        }
    }

    /// Raises key counter `counter` by `n`; the first of the `n` keys.
    private func raiseKeyCounter(_ counter: SQLValue, by n: Int) throws(SQLiteError) -> Int64 {
        let sql = model.layout.keyCounterSQL
        var current: Int64 = 0
        if case .integer(let m)? = try rows(sql.read, [counter]).first?.first { current = m }
        try run(sql.write, [counter, .integer(current + Int64(n))])
        return current + 1
    }

    /// Adds `context` to the contexts told of the others' saves, or takes it out.
    func setAutoMerging(_ context: ManagedObjectContext, _ on: Bool) {
        autoMergeLock.withLock {
            autoMergers.removeAll { $0.context == nil || $0.context === context }
            if on { autoMergers.append(WeakContext(context)) }
        }
    }

    /// A context on this store object saved: every other one that merges automatically takes the
    /// save in (Merging.swift). One lock and an empty check when none does.
    func contextDidSave(_ saved: ChangeSet, by saver: ManagedObjectContext) {
        let others = autoMergeLock.withLock { () -> [ManagedObjectContext] in
            guard !autoMergers.isEmpty else { return [] }
            autoMergers.removeAll { $0.context == nil }
            return autoMergers.compactMap { $0.context === saver ? nil : $0.context }
        }
        for c in others { c.takeSiblingSave(saved) }
    }

    /// Runs `body` holding the store's lock (reads and writes never interleave between threads).
    func locked<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

extension PersistentStore {
    /// A connection of its own on the store's file, beside the store's connection (a streamed
    /// fetch's cursor, `sift store watch`'s poll of the data version, the tool's key-order table, a
    /// read in halves): opened serialized unless asked otherwise, with the busy timeout the store's connection has. An in-memory store has
    /// no file to open (a `.cannotOpen` error).
    ///
    /// ```swift
    /// let db = try store.openSideConnection()
    /// let version = try db.query("PRAGMA data_version")
    /// ```
    /// `serialized: false` leaves out SQLite's mutex on every call, for a connection only one
    /// thread uses at a time.
    package func openSideConnection(serialized: Bool = true) throws(SQLiteError) -> SQLiteConnection {
        // 14 is SQLITE_CANTOPEN.
        guard let path else { throw SQLiteError(code: 14, message: "an in-memory store has no file to open again") }
        return try Self.openConnection(path, serialized: serialized)
    }

    /// A connection on a store's file (or ":memory:") with the busy timeout every connection on a
    /// store has: set first, as the next statement may need a lock another connection or process
    /// holds (switching to WAL does). Core Data's derived-attribute trigger function is there too
    /// (inert), so that a Core Data store's triggers run on any connection.
    private static func openConnection(_ path: String, serialized: Bool) throws(SQLiteError) -> SQLiteConnection {
        let db = try SQLiteConnection(path: path, serialized: serialized)
        _ = try db.query("PRAGMA busy_timeout = 10000")
        try db.registerInertFunction(named: CoreDataNames.derivedAttributeTriggerFunction)
        return db
    }
}

/// Prepared statements kept by their SQL text, for one connection (used by one thread at a time).
struct StatementCache {
    private var statements: [String: SQLiteStatement] = [:]

    /// The statement for `sql` on `connection`, prepared the first time, reset and ready to bind.
    mutating func statement(_ sql: String, on connection: SQLiteConnection) throws(SQLiteError) -> SQLiteStatement {
        if let s = statements[sql] {
            try s.reset()
            return s
        }
        let s = try connection.prepare(sql)
        statements[sql] = s
        return s
    }

    /// Resets every statement kept (so none holds its connection's read transaction open) and
    /// forgets them.
    mutating func removeAll() {
        for s in statements.values { try? s.reset() }
        statements = [:]
    }
}

extension SQLiteError {
    /// The store's error: memory's evaluation error (with the row) where the row guard met a row
    /// on which the predicate raises, else an SQLite failure.
    var storeError: StoreError {
        if let raised {
            var e = StoreError(raised.error)
            e.message = "row \(raised.row): " + e.message
            e.failures = [.init((e.location.map { "\($0): error: " } ?? "") + e.message)]
            e.raisedRow = raised.row
            return e
        }
        return StoreError(.sqlite, message + (sql.map { " (in: \($0))" } ?? ""))
    }
}

/// Entity facts by entity number.
struct EntityNumbers: Sendable {
    let infos: [EntityInfo?]
    init(_ byNumber: [Int64: EntityInfo]) {
        var infos = [EntityInfo?](repeating: nil, count: Int(byNumber.keys.max() ?? 0) + 1)
        for (n, info) in byNumber { infos[Int(n)] = info }
        self.infos = infos
    }
    subscript(_ n: Int64) -> EntityInfo? { n >= 0 && n < Int64(infos.count) ? infos[Int(n)] : nil }
}

/// The columns of one hierarchy's table, and where each entity's properties sit among them.
struct TableLayout: Sendable {
    var table: String
    /// Z_PK, Z_ENT, Z_OPT, then every attribute, exact-decimal, foreign-key and order column.
    var columns: [String]
    var columnTypes: [String]
    var foreignKeyColumns: [String]
    var index: [String: Int]

    static func make(_ model: ManagedObjectModel) -> [String: TableLayout] {
        var out: [String: TableLayout] = [:]
        for e in model.entities {
            let r = model.resolved[e.name]!
            var layout =
                out[r.table]
                ?? TableLayout(
                    table: r.table,
                    columns: [Storage.primaryKey, Storage.entityColumn, Storage.versionColumn],
                    columnTypes: ["INTEGER", "INTEGER NOT NULL", "INTEGER NOT NULL"], foreignKeyColumns: [],
                    index: [Storage.primaryKey: 0, Storage.entityColumn: 1, Storage.versionColumn: 2])
            func add(_ c: String, _ t: String) {
                guard layout.index[c] == nil else { return }
                layout.index[c] = layout.columns.count
                layout.columns.append(c)
                layout.columnTypes.append(t)
            }
            for a in r.attributes {
                add(a.column, a.description.isCollection ? "INTEGER" : model.layout.columnType(a.type))
                if let x = a.exactColumn { add(x, "TEXT") }
                if let m = a.mixed {
                    add(m.shapeColumn, "INTEGER")
                    if let c = m.scalarColumn { add(c, sqlType(.dynamic)) }
                    if let c = m.dateColumn { add(c, sqlType(.date)) }
                    if let c = m.countColumn { add(c, "INTEGER") }
                }
            }
            for rel in r.relationships {
                if case .foreignKey(let c) = rel.storage {
                    add(c, "INTEGER")
                    if !layout.foreignKeyColumns.contains(c) { layout.foreignKeyColumns.append(c) }
                    if let e = rel.entityColumn { add(e, "INTEGER") }
                }
                if let c = rel.countColumn { add(c, "INTEGER") }
            }
            // A document's own columns, untyped: each value keeps its storage class.
            for c in r.document?.rootColumns ?? [] { add(c, "") }
            out[r.table] = layout
        }
        // Order columns of ordered to-manys live in the destination's table.
        for e in model.entities {
            for rel in model.resolved[e.name]!.relationships {
                if case .inverseForeignKey(let t, _, let order?) = rel.storage, var layout = out[t],
                    layout.index[order] == nil
                {
                    layout.index[order] = layout.columns.count
                    layout.columns.append(order)
                    layout.columnTypes.append("INTEGER")
                    out[t] = layout
                }
            }
        }
        return out
    }

    /// The declared type of a column (its affinity); dynamic columns have none, so each value
    /// keeps its own storage class.
    static func sqlType(_ t: AttributeType) -> String {
        switch t {
        case .integer16, .integer32, .integer64, .boolean: "INTEGER"
        case .double, .float, .decimal, .date: "REAL"
        case .string, .uuid, .uri: "TEXT"
        case .binary, .transformable, .mixed: "BLOB"
        case .dynamic: ""
        }
    }
}

/// What differs between two models, in words.
enum ModelDifference {
    static func describe(from old: ManagedObjectModel, to new: ManagedObjectModel) -> String {
        var out: [String] = []
        let oldNames = Set(old.entities.map(\.name))
        let newNames = Set(new.entities.map(\.name))
        for n in newNames.subtracting(oldNames).sorted() { out.append("entity '\(n)' was added") }
        for n in oldNames.subtracting(newNames).sorted() { out.append("entity '\(n)' was removed") }
        for n in oldNames.intersection(newNames).sorted() {
            let a = old.entity(named: n)!
            let b = new.entity(named: n)!
            let oa = Dictionary(a.attributes.map { ($0.name, $0) }, uniquingKeysWith: { x, _ in x })
            let na = Dictionary(b.attributes.map { ($0.name, $0) }, uniquingKeysWith: { x, _ in x })
            for k in Set(na.keys).subtracting(oa.keys).sorted() { out.append("attribute '\(n).\(k)' was added") }
            for k in Set(oa.keys).subtracting(na.keys).sorted() { out.append("attribute '\(n).\(k)' was removed") }
            for k in Set(oa.keys).intersection(na.keys).sorted() where oa[k] != na[k] {
                if oa[k]!.type != na[k]!.type {
                    out.append(
                        "attribute '\(n).\(k)' changed type from \(oa[k]!.type.rawValue) to \(na[k]!.type.rawValue)")
                } else {
                    out.append("attribute '\(n).\(k)' changed its options")
                }
            }
            let orl = Dictionary(a.relationships.map { ($0.name, $0) }, uniquingKeysWith: { x, _ in x })
            let nrl = Dictionary(b.relationships.map { ($0.name, $0) }, uniquingKeysWith: { x, _ in x })
            for k in Set(nrl.keys).subtracting(orl.keys).sorted() { out.append("relationship '\(n).\(k)' was added") }
            for k in Set(orl.keys).subtracting(nrl.keys).sorted() { out.append("relationship '\(n).\(k)' was removed") }
            for k in Set(orl.keys).intersection(nrl.keys).sorted() where orl[k] != nrl[k] {
                out.append("relationship '\(n).\(k)' changed")
            }
            if a.parent != b.parent { out.append("entity '\(n)' changed its parent") }
            if a.isAbstract != b.isAbstract { out.append("entity '\(n)' changed whether it is abstract") }
            if a.isOpen != b.isOpen { out.append("entity '\(n)' changed whether it is open") }
            if a.uniquenessConstraints != b.uniquenessConstraints {
                out.append("entity '\(n)' changed its uniqueness constraints")
            }
        }
        if out.isEmpty { out.append("the entities are listed in another order") }
        return out.joined(separator: "; ")
    }
}
