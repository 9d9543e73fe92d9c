// Persistent history: when a store tracks it (opt-in, as in Core Data, and remembered in the
// store's metadata once on), every save and batch request records, in its own write transaction, a
// transaction (an increasing token, a timestamp, the context's author and name) and its changes
// (object, insert/update/delete, the keys an update changed). Other processes on the same file
// read it to learn what changed (`history(after:)`) and merge it into their contexts
// (`mergeChanges(fromHistory:)`). A delete keeps the values of the attributes the model marks
// `preservesValueInHistoryOnDeletion` (its tombstone). `setHistoryTracking(false)` turns tracking
// off and forgets what was recorded; the file remembers that too. The tables carry Core Data's names (ATRANSACTION, ACHANGE,
// ATRANSACTIONSTRING, entity numbers 16001–16003) and Z-column conventions; their columns are
// Sift's own (the reference notes give no column layout).

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite

/// A position in a store's history: the token of one transaction. Tokens only grow.
///
/// ```swift
/// let all = try store.history(after: nil)
/// let newer = try store.history(after: all.last?.token)   // only what was saved since
/// ```
public struct HistoryToken: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The transaction's number (its row in `ATRANSACTION`).
    public let value: Int64

    /// The token of transaction number `value` (as `sift store history` prints it).
    ///
    /// ```swift
    /// let newer = try store.history(after: HistoryToken(41))   // transactions 42 and later
    /// ```
    public init(_ value: Int64) { self.value = value }

    /// Earlier transactions have smaller tokens.
    ///
    /// ```swift
    /// HistoryToken(1) < HistoryToken(2)   // true
    /// ```
    public static func < (a: HistoryToken, b: HistoryToken) -> Bool { a.value < b.value }

    /// The number, e.g. `42`.
    public var description: String { String(value) }
}

/// One object's change in a ``HistoryTransaction``.
///
/// ```swift
/// for change in transaction.changes where change.kind == .update {
///     print(change.objectID, change.updatedKeys)   // Item 3 ["price"]
/// }
/// ```
public struct HistoryChange: Sendable, Hashable {
    /// What happened to the object.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The object was inserted.
        case insert
        /// Some of its properties changed (``HistoryChange/updatedKeys``).
        case update
        /// The object was deleted (its ID is kept, and the values of the attributes the model
        /// marks `preservesValueInHistoryOnDeletion`: ``HistoryChange/tombstone``).
        case delete
    }
    /// The object (still valid after a delete, as a name).
    public var objectID: ObjectID
    /// Insert, update or delete.
    public var kind: Kind
    /// For an update, the attributes and relationships it changed, in the model's order; empty
    /// otherwise.
    public var updatedKeys: [String]
    /// For a delete of an object whose entity has attributes marked
    /// ``AttributeDescription/preservesValueInHistoryOnDeletion``, their values when it was
    /// deleted (nil values included); nil otherwise (Core Data's tombstone).
    ///
    /// ```swift
    /// let gone = transaction.changes.first { $0.kind == .delete }
    /// gone?.tombstone?["name"]   // .string("Ann"): the name the deleted object had
    /// ```
    public var tombstone: [String: Value]?

    /// A change; `tombstone` only for a delete.
    ///
    /// ```swift
    /// HistoryChange(objectID: id, kind: .update, updatedKeys: ["price"])
    /// ```
    public init(objectID: ObjectID, kind: Kind, updatedKeys: [String], tombstone: [String: Value]? = nil) {
        self.objectID = objectID
        self.kind = kind
        self.updatedKeys = updatedKeys
        self.tombstone = tombstone
    }

    /// Equal when every field is (tombstone values as `Value`'s `==` compares them).
    public static func == (a: Self, b: Self) -> Bool {
        a.objectID == b.objectID && a.kind == b.kind && a.updatedKeys == b.updatedKeys && a.tombstone == b.tombstone
    }

    /// Hashes the object, the kind and the keys (equal changes agree on those).
    public func hash(into h: inout Hasher) {
        h.combine(objectID)
        h.combine(kind)
        h.combine(updatedKeys)
    }
}

/// One save or batch request, as the store's history keeps it.
///
/// ```swift
/// for t in try store.history(after: lastSeen) where t.author != "app" {
///     print(t.token, t.timestamp, t.author ?? "-", t.contextName ?? "-", t.changes.count)
/// }
/// ```
public struct HistoryTransaction: Sendable, Hashable {
    /// Where the transaction sits in the history (pass it to `history(after:)` to read what follows).
    public var token: HistoryToken
    /// When it was committed (to the millisecond or better).
    public var timestamp: Date
    /// The saving context's ``ManagedObjectContext/transactionAuthor``.
    public var author: String?
    /// The saving context's ``ManagedObjectContext/name``.
    public var contextName: String?
    /// Every object it inserted, updated or deleted (cascades and nullified links included).
    public var changes: [HistoryChange]
}

/// Names of the history tables and their entity numbers (Core Data's, per the reference notes).
enum HistoryTables {
    static let change = "ACHANGE"
    static let transaction = "ATRANSACTION"
    static let string = "ATRANSACTIONSTRING"
    static let changeEntity: Int64 = 16001
    static let transactionEntity: Int64 = 16002
    static let stringEntity: Int64 = 16003
    /// The metadata key that says the store tracks history ('1'; '0' once turned off, the
    /// emptied tables kept so that tokens keep growing if it is turned on again).
    static let metadataKey = "history_tracking"
    /// The `ACHANGE` column of a delete's tombstone: the preserved values as a JSON object
    /// (added to stores whose history tables were made before it).
    static let tombstoneColumn = "ZTOMBSTONE"

    static var createScript: String {
        """
        CREATE TABLE \(string) (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER NOT NULL, Z_OPT INTEGER NOT NULL, ZNAME TEXT NOT NULL UNIQUE);
        CREATE TABLE \(transaction) (Z_PK INTEGER PRIMARY KEY AUTOINCREMENT, Z_ENT INTEGER NOT NULL, Z_OPT INTEGER NOT NULL, ZAUTHOR INTEGER, ZCONTEXTNAME INTEGER, ZTIMESTAMP REAL NOT NULL);
        CREATE TABLE \(change) (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER NOT NULL, Z_OPT INTEGER NOT NULL, ZCHANGETYPE INTEGER NOT NULL, ZENTITY INTEGER NOT NULL, ZENTITYPK INTEGER NOT NULL, ZTRANSACTIONID INTEGER NOT NULL, ZCOLUMNS BLOB, \(tombstoneColumn) BLOB);
        CREATE INDEX \(change)_ZTRANSACTIONID ON \(change) (ZTRANSACTIONID);
        """
    }

    /// `ZCHANGETYPE` values (Core Data's order: insert, update, delete).
    static func code(_ kind: HistoryChange.Kind) -> Int64 {
        switch kind {
        case .insert: 0
        case .update: 1
        case .delete: 2
        }
    }

    static func kind(_ code: Int64) -> HistoryChange.Kind? {
        switch code {
        case 0: .insert
        case 1: .update
        case 2: .delete
        default: nil
        }
    }
}

// MARK: Turning tracking on and off

extension PersistentStore {
    /// Whether the store records history: on when its metadata says so, or when `wanted` and the
    /// store is opened now (the tables and the metadata entry are made then, in one transaction).
    /// Once on it stays on until `setHistoryTracking(false)`: opening the file again without the
    /// option keeps recording.
    static func prepareHistory(_ db: SQLiteConnection, wanted: Bool) throws(StoreError) -> Bool {
        let clash: String?
        do throws(SQLiteError) {
            if try historyState(db) == "1" {
                try addTombstoneColumn(db)
                return true
            }
            guard wanted else { return false }
            clash = try turnOnHistory(db)
        } catch {
            throw StoreError(.sqlite, "cannot turn on history tracking: \(error.message)")
        }
        if let clash {
            throw StoreError(
                .invalidOperation,
                "cannot track history: the store already has a table or index named '\(clash)', the name of a history table"
            )
        }
        return true
    }

    /// The metadata's history entry: nil when tracking was never on, "1" when on, "0" when off.
    private static func historyState(_ db: SQLiteConnection) throws(SQLiteError) -> String? {
        let rows = try db.query(
            "SELECT value FROM \(q(Storage.metadataTable)) WHERE key = ?", [.text(HistoryTables.metadataKey)])
        if case .text(let v)? = rows.first?.first { return v }
        return nil
    }

    /// Makes the history tables (unless a previous tracking left them) and marks the store in its
    /// metadata, in one write transaction (another process may have done it since the caller
    /// looked: then nothing is left to do). Returns the name of a table or index already in the
    /// way instead, changing nothing.
    private static func turnOnHistory(_ db: SQLiteConnection) throws(SQLiteError) -> String? {
        try db.execute("BEGIN IMMEDIATE")
        do {
            switch try historyState(db) {
            case "1"?: break
            case _?:
                // Turned off before: the tables are the store's own, emptied.
                try setHistoryState(db, "1")
            case nil:
                let names = [HistoryTables.change, HistoryTables.transaction, HistoryTables.string]
                let taken = try db.query(
                    "SELECT name FROM sqlite_master WHERE lower(name) IN (?, ?, ?)",
                    names.map { .text($0.lowercased()) })
                if case .text(let name)? = taken.first?.first {
                    try db.execute("ROLLBACK")
                    return name
                }
                try db.execute(HistoryTables.createScript)
                try setHistoryState(db, "1")
            }
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
        try addTombstoneColumn(db)
        return nil
    }

    private static func setHistoryState(_ db: SQLiteConnection, _ value: String) throws(SQLiteError) {
        _ = try db.query(
            "INSERT OR REPLACE INTO \(q(Storage.metadataTable)) (key, value) VALUES (?, ?)",
            [.text(HistoryTables.metadataKey), .text(value)])
    }

    /// Adds the tombstone column to history tables made before it existed (in a write
    /// transaction, looking again there: another process may be doing the same). Inside a
    /// transaction already (a migration's custom code opens the store in the migration's), the
    /// column joins that one, kept or rolled back with it.
    private static func addTombstoneColumn(_ db: SQLiteConnection) throws(SQLiteError) {
        func has() throws(SQLiteError) -> Bool {
            try db.query("PRAGMA table_info(\(HistoryTables.change))").contains {
                $0.count > 1 && $0[1] == .text(HistoryTables.tombstoneColumn)
            }
        }
        guard try !has() else { return }
        let add = "ALTER TABLE \(HistoryTables.change) ADD COLUMN \(HistoryTables.tombstoneColumn) BLOB"
        guard db.isAutocommit else { return try db.execute(add) }
        try db.execute("BEGIN IMMEDIATE")
        do {
            if try !has() { try db.execute(add) }
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
    }

    /// Turns persistent history on or off for the store file. On: as opening it with
    /// `historyTracking: true`. Off: saves and batch requests stop recording and every recorded
    /// transaction is deleted, in one write transaction; `history(after:)` and `purgeHistory`
    /// then throw the "does not track history" error. The file remembers it: other store objects
    /// on it (other processes too) stop recording at their next save, and opening it again
    /// without the option leaves it off. Turning it on again starts an empty history whose
    /// tokens follow the old ones. Setting the current state changes nothing.
    ///
    /// ```swift
    /// try store.setHistoryTracking(false)   // stops recording, forgets the transactions
    /// try store.setHistoryTracking(true)    // records again from the next save
    /// ```
    public func setHistoryTracking(_ on: Bool) throws(StoreError) {
        guard model.layout == .sift else {
            throw StoreError(.invalidOperation, "history tracking on a Core Data store is not supported yet")
        }
        try locked { () throws(StoreError) in
            if on {
                historyOn = try Self.prepareHistory(connection, wanted: true)
                return
            }
            try writeTransaction { () throws(StoreError) in
                do throws(SQLiteError) {
                    guard try Self.historyState(connection) == "1" else { return }
                    let t = HistoryTables.self
                    for table in [t.change, t.transaction, t.string] { try run("DELETE FROM \(table)", []) }
                    try Self.setHistoryState(connection, "0")
                } catch { throw StoreError(.sqlite, "cannot turn off history tracking: \(error.message)") }
            }
            historyOn = false
        }
    }

    /// Whether the file still tracks history, for a store object that does (with the lock held,
    /// inside a write transaction): another store object may have turned it off since, and then
    /// this one stops recording too.
    func historyStillTracked() throws(SQLiteError) -> Bool {
        guard
            case .text("1")? = try rows(
                "SELECT value FROM \(Self.q(Storage.metadataTable)) WHERE key = ?", [.text(HistoryTables.metadataKey)]
            ).first?.first
        else {
            historyOn = false
            return false
        }
        return true
    }

    /// Throws unless the file tracks history (looked up again: another store object may have
    /// turned it on or off since this one was opened).
    private func requireHistory() throws(StoreError) {
        if model.layout == .coreData {
            throw StoreError(
                .invalidOperation,
                "a Core Data store has no history Sift records (its persistent-history tables are Core Data's, left as they are)"
            )
        }
        let on = try locked { () throws(StoreError) -> Bool in
            do throws(SQLiteError) { historyOn = try Self.historyState(connection) == "1" } catch {
                throw error.storeError
            }
            return historyOn
        }
        guard on else {
            throw StoreError(
                .invalidOperation,
                "the store does not track history (open or create it with historyTracking: true)")
        }
    }
}

// MARK: Recording

extension ManagedObjectContext {
    /// Records one transaction of this context's save or batch request (inside its write
    /// transaction, after its rows are written): `inserted` have their new keys, `updated` their
    /// snapshots. Objects whose update changed nothing are left out, and so is a transaction with
    /// no change at all; nothing is recorded once the file no longer tracks history.
    func recordHistory(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject])
        throws(SQLiteError)
    {
        guard try store.historyStillTracked() else { return }
        var changes: [(entity: Int64, pk: Int64, kind: HistoryChange.Kind, columns: [UInt8]?)] = []
        changes.reserveCapacity(inserted.count + updated.count + deleted.count)
        for o in inserted {
            if let pk = o.objectID.primaryKey ?? o.assignedKey {
                changes.append((o.info.entity.number, pk, .insert, nil))
            }
        }
        for o in updated {
            guard let pk = o.objectID.primaryKey, let mask = Self.changedMask(o) else { continue }
            changes.append((o.info.entity.number, pk, .update, mask))
        }
        for o in deleted {
            if let pk = o.objectID.primaryKey { changes.append((o.info.entity.number, pk, .delete, Self.tombstone(o))) }
        }
        guard !changes.isEmpty else { return }
        let author = try store.historyString(transactionAuthor)
        let contextName = try store.historyString(name)
        let t = HistoryTables.self
        try store.run(
            "INSERT INTO \(t.transaction) (Z_ENT, Z_OPT, ZAUTHOR, ZCONTEXTNAME, ZTIMESTAMP) VALUES (?, 1, ?, ?, ?)",
            [
                .integer(t.transactionEntity), author.map { .integer($0) } ?? .null,
                contextName.map { .integer($0) } ?? .null, .double(Date().timeIntervalSinceReferenceDate),
            ])
        guard case .integer(let token)? = try store.rows("SELECT last_insert_rowid()", []).first?.first else { return }
        let insert = try store.statement(
            "INSERT INTO \(t.change) (Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS, \(t.tombstoneColumn)) VALUES (?, 1, ?, ?, ?, ?, ?, ?)"
        )
        for c in changes {
            // An update's bytes are its changed-keys mask, a delete's its tombstone.
            let bytes: SQLValue = c.columns.map { .blob($0) } ?? .null
            try insert.bind([
                .integer(t.changeEntity), .integer(t.code(c.kind)), .integer(c.entity), .integer(c.pk), .integer(token),
                c.kind == .delete ? .null : bytes, c.kind == .delete ? bytes : .null,
            ])
            while try insert.step() {}
            try insert.reset()
        }
    }

    /// The values of `o`'s attributes marked `preservesValueInHistoryOnDeletion`, as the store
    /// held them (its snapshot when it has one), as a JSON object; nil when none is marked.
    static func tombstone(_ o: ManagedObject) -> [UInt8]? {
        let e = o.info.entity
        let values = o.snapshot?.attributes ?? o.attributes
        var kept: [String: Value] = [:]
        for (i, a) in e.attributes.enumerated() where a.description.preservesValueInHistoryOnDeletion {
            kept[a.name] = i < values.count ? values[i] : .null
        }
        return kept.isEmpty ? nil : Array(TransformableCodec.json(.dictionary(kept)))
    }

    /// The properties `o` changed since its snapshot as a bit set over its entity's attributes,
    /// then its relationships (bit i is byte i / 8, bit i % 8); nil when nothing changed.
    static func changedMask(_ o: ManagedObject) -> [UInt8]? {
        guard let s = o.snapshot else { return nil }
        // The entity's own count, as `historyChange` decodes the bits (a document's one value included).
        let attributes = min(o.info.entity.attributes.count, o.attributes.count, s.attributes.count)
        var mask = [UInt8](repeating: 0, count: (attributes + o.links.count + 7) / 8)
        var any = false
        func set(_ i: Int) {
            mask[i / 8] |= 1 << UInt8(i % 8)
            any = true
        }
        for i in 0..<attributes where !o.attributes[i].isIdentical(to: s.attributes[i]) { set(i) }
        for i in o.links.indices where !Link.same(o.links[i], s.links[i]) { set(attributes + i) }
        return any ? mask : nil
    }
}

extension PersistentStore {
    /// The `ATRANSACTIONSTRING` row of `text`, made when new (nil for nil).
    func historyString(_ text: String?) throws(SQLiteError) -> Int64? {
        guard let text else { return nil }
        let t = HistoryTables.self
        try run(
            "INSERT OR IGNORE INTO \(t.string) (Z_ENT, Z_OPT, ZNAME) VALUES (?, 1, ?)",
            [.integer(t.stringEntity), .text(text)])
        if case .integer(let k)? = try rows("SELECT Z_PK FROM \(t.string) WHERE ZNAME = ?", [.text(text)]).first?.first
        {
            return k
        }
        return nil
    }

    // MARK: Reading and purging

    /// The transactions recorded after `token` (all of them for nil), oldest first, each with its
    /// changes. Throws `.invalidOperation` when the store does not track history.
    ///
    /// ```swift
    /// var seen: HistoryToken? = nil
    /// let news = try store.history(after: seen)
    /// try context.mergeChanges(fromHistory: news)
    /// seen = news.last?.token ?? seen
    /// ```
    public func history(after token: HistoryToken?) throws(StoreError) -> [HistoryTransaction] {
        try requireHistory()
        let t = HistoryTables.self
        // One statement, so one snapshot of the file even while other processes write.
        let sql = """
            SELECT x.Z_PK, x.ZTIMESTAMP, a.ZNAME, n.ZNAME, c.ZCHANGETYPE, c.ZENTITY, c.ZENTITYPK, c.ZCOLUMNS, \
            c.\(t.tombstoneColumn) \
            FROM \(t.transaction) AS x LEFT JOIN \(t.string) AS a ON a.Z_PK = x.ZAUTHOR \
            LEFT JOIN \(t.string) AS n ON n.Z_PK = x.ZCONTEXTNAME \
            LEFT JOIN \(t.change) AS c ON c.ZTRANSACTIONID = x.Z_PK \
            WHERE x.Z_PK > ? ORDER BY x.Z_PK, c.Z_PK
            """
        let rows = try locked { () throws(StoreError) in
            do throws(SQLiteError) { return try self.rows(sql, [.integer(token?.value ?? 0)]) } catch {
                throw error.storeError
            }
        }
        var out: [HistoryTransaction] = []
        for row in rows {
            guard case .integer(let number) = row[0] else { continue }
            if out.last?.token.value != number {
                let seconds: Double
                switch row[1] {
                case .double(let d): seconds = d
                case .integer(let i): seconds = Double(i)
                default: seconds = 0
                }
                out.append(
                    HistoryTransaction(
                        token: HistoryToken(number), timestamp: Date(timeIntervalSinceReferenceDate: seconds),
                        author: Self.text(row[2]), contextName: Self.text(row[3]), changes: []))
            }
            if let change = try historyChange(row) { out[out.count - 1].changes.append(change) }
        }
        return out
    }

    /// The token of the newest recorded transaction (nil while the history is empty), without
    /// reading the transactions: where a reader that has just fetched starts following (Core
    /// Data's `currentPersistentHistoryToken`). Throws `.invalidOperation` when the store does
    /// not track history.
    ///
    /// ```swift
    /// var seen = try store.currentHistoryToken()
    /// // … later: only what was saved since
    /// let news = try store.history(after: seen)
    /// ```
    public func currentHistoryToken() throws(StoreError) -> HistoryToken? {
        try requireHistory()
        let rows = try locked { () throws(StoreError) in
            do throws(SQLiteError) {
                return try self.rows("SELECT max(Z_PK) FROM \(HistoryTables.transaction)", [])
            } catch { throw error.storeError }
        }
        if case .integer(let n)? = rows.first?.first { return HistoryToken(n) }
        return nil
    }

    private static func text(_ v: SQLValue) -> String? { if case .text(let s) = v { s } else { nil } }

    /// The change in columns 4… of a history row (nil when the transaction has none): an
    /// update's changed keys from the mask in column 7, a delete's tombstone from column 8.
    private func historyChange(_ row: [SQLValue]) throws(StoreError) -> HistoryChange? {
        guard case .integer(let code) = row[4], case .integer(let entity) = row[5], case .integer(let pk) = row[6]
        else { return nil }
        guard let kind = HistoryTables.kind(code), let info = infoByNumber[entity] else {
            throw StoreError(
                .sqlite, "the history holds a change of unknown type \(code) or entity number \(entity)")
        }
        var keys: [String] = []
        if case .blob(let mask) = row[7] {
            let e = info.entity
            let names = e.attributes.map(\.name) + e.relationships.map(\.name)
            for (i, name) in names.enumerated() where i / 8 < mask.count && mask[i / 8] & (1 << UInt8(i % 8)) != 0 {
                keys.append(name)
            }
        }
        return HistoryChange(
            objectID: ObjectID(info.names, key: .permanent(pk)), kind: kind, updatedKeys: keys,
            tombstone: row.count > 8 ? Self.tombstone(row[8], info) : nil)
    }

    /// A stored tombstone read back, each value in its attribute's type as far as JSON kept it
    /// (dates and data come back as they were; decimals, UUIDs and URIs are coerced back).
    private static func tombstone(_ stored: SQLValue, _ info: EntityInfo) -> [String: Value]? {
        guard case .blob(let bytes) = stored, case .dictionary(let d) = TransformableCodec.decodeJSON(bytes) else {
            return nil
        }
        var out: [String: Value] = [:]
        for (name, v) in d {
            let a = info.entity.attributes.first { $0.name == name }
            if let a, !a.description.isCollection, let typed = try? Value(coercing: v, to: a.type) {
                out[name] = typed
            } else {
                out[name] = v
            }
        }
        return out
    }

    /// Deletes the transactions before `token` (not the one it names) with their changes;
    /// returns how many went.
    ///
    /// ```swift
    /// let read = try store.history(after: nil)
    /// if let last = read.last?.token { try store.purgeHistory(before: last) }   // keeps the newest
    /// ```
    @discardableResult
    public func purgeHistory(before token: HistoryToken) throws(StoreError) -> Int {
        try purgeHistory(where: "Z_PK < ?", .integer(token.value))
    }

    /// Deletes the transactions committed before `date` with their changes; returns how many went.
    ///
    /// ```swift
    /// try store.purgeHistory(before: Date().addingTimeInterval(-7 * 24 * 3600))   // keep a week
    /// ```
    @discardableResult
    public func purgeHistory(before date: Date) throws(StoreError) -> Int {
        try purgeHistory(where: "ZTIMESTAMP < ?", .double(date.timeIntervalSinceReferenceDate))
    }

    private func purgeHistory(where test: String, _ bound: SQLValue) throws(StoreError) -> Int {
        try requireHistory()
        let t = HistoryTables.self
        return try writeTransaction { () throws(StoreError) -> Int in
            do throws(SQLiteError) {
                try run(
                    "DELETE FROM \(t.change) WHERE ZTRANSACTIONID IN (SELECT Z_PK FROM \(t.transaction) WHERE \(test))",
                    [bound])
                try run("DELETE FROM \(t.transaction) WHERE \(test)", [bound])
                if case .integer(let n)? = try rows("SELECT changes()", []).first?.first { return Int(n) }
                return 0
            } catch { throw error.storeError }
        }
    }
}

// MARK: Merging

extension ManagedObjectContext {
    /// Brings this context up to date with transactions read from the history (another
    /// context's or another process's saves): registered objects they updated are read again
    /// with this context's unsaved changes kept on top, objects they deleted report `isDeleted`
    /// and can no longer be read (as after ``mergeChanges(fromContextDidSave:)``), and inserted
    /// objects are found by the next fetch. Objects this context does not hold are
    /// not loaded. Posts one objects-did-change notification with what changed here.
    ///
    /// ```swift
    /// let news = try store.history(after: lastToken)
    /// try context.mergeChanges(fromHistory: news)   // held objects show the other process's values
    /// lastToken = news.last?.token ?? lastToken
    /// ```
    public func mergeChanges(fromHistory transactions: [HistoryTransaction]) throws(StoreError) {
        // An object's last change decides: one updated and then deleted is deleted.
        var last: [ObjectID: HistoryChange.Kind] = [:]
        var order: [ObjectID] = []
        for t in transactions {
            for c in t.changes where c.objectID.names.store == store.names {
                if last.updateValue(c.kind, forKey: c.objectID) == nil { order.append(c.objectID) }
            }
        }
        // Merged as another context's did-save is: in proportion to the changes, deleted objects
        // marked gone (Merging.swift).
        var changes = ChangeSet()
        for id in order {
            switch last[id] {
            case .delete?: changes.deleted.append(id)
            case .insert?: changes.inserted.append(id)
            default: changes.updated.append(id)
            }
        }
        try mergeChanges(fromContextDidSave: changes)
    }
}
