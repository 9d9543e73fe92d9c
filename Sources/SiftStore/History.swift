// Persistent history: when a store tracks it (opt-in, as in Core Data, and remembered in the
// store's metadata once on), every save and batch request records, in its own write transaction, a
// transaction (an increasing token, a timestamp, the context's author and name) and its changes
// (object, insert/update/delete, the keys an update changed). Other processes on the same file
// read it to learn what changed (`history(after:)`) and merge it into their contexts
// (`mergeChanges(fromHistory:)`). The tables carry Core Data's names (ATRANSACTION, ACHANGE,
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
        /// The object was deleted (its ID is all that is kept: the model marks no attribute to
        /// keep after deletion).
        case delete
    }
    /// The object (still valid after a delete, as a name).
    public var objectID: ObjectID
    /// Insert, update or delete.
    public var kind: Kind
    /// For an update, the attributes and relationships it changed, in the model's order; empty
    /// otherwise.
    public var updatedKeys: [String]
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
    /// The metadata key that says the store tracks history.
    static let metadataKey = "history_tracking"

    static var createScript: String {
        """
        CREATE TABLE \(string) (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER NOT NULL, Z_OPT INTEGER NOT NULL, ZNAME TEXT NOT NULL UNIQUE);
        CREATE TABLE \(transaction) (Z_PK INTEGER PRIMARY KEY AUTOINCREMENT, Z_ENT INTEGER NOT NULL, Z_OPT INTEGER NOT NULL, ZAUTHOR INTEGER, ZCONTEXTNAME INTEGER, ZTIMESTAMP REAL NOT NULL);
        CREATE TABLE \(change) (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER NOT NULL, Z_OPT INTEGER NOT NULL, ZCHANGETYPE INTEGER NOT NULL, ZENTITY INTEGER NOT NULL, ZENTITYPK INTEGER NOT NULL, ZTRANSACTIONID INTEGER NOT NULL, ZCOLUMNS BLOB);
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

// MARK: Turning tracking on

extension PersistentStore {
    /// Whether the store records history: on when its metadata says so, or when `wanted` and the
    /// store is opened now (the tables and the metadata entry are made then, in one transaction).
    /// Once on it stays on: opening the file again without the option keeps recording.
    static func prepareHistory(_ db: SQLiteConnection, wanted: Bool) throws(StoreError) -> Bool {
        let clash: String?
        do throws(SQLiteError) {
            if try isTrackingHistory(db) { return true }
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

    private static func isTrackingHistory(_ db: SQLiteConnection) throws(SQLiteError) -> Bool {
        let rows = try db.query(
            "SELECT value FROM \(q(Storage.metadataTable)) WHERE key = ?", [.text(HistoryTables.metadataKey)])
        return rows.first?.first == .text("1")
    }

    /// Makes the history tables and marks the store in its metadata, in one write transaction
    /// (another process may have done it since the caller looked: then nothing is left to do).
    /// Returns the name of a table or index already in the way instead, changing nothing.
    private static func turnOnHistory(_ db: SQLiteConnection) throws(SQLiteError) -> String? {
        try db.execute("BEGIN IMMEDIATE")
        do {
            if try !isTrackingHistory(db) {
                let names = [HistoryTables.change, HistoryTables.transaction, HistoryTables.string]
                let taken = try db.query(
                    "SELECT name FROM sqlite_master WHERE lower(name) IN (?, ?, ?)",
                    names.map { .text($0.lowercased()) })
                if case .text(let name)? = taken.first?.first {
                    try db.execute("ROLLBACK")
                    return name
                }
                try db.execute(HistoryTables.createScript)
                _ = try db.query(
                    "INSERT OR REPLACE INTO \(q(Storage.metadataTable)) (key, value) VALUES (?, '1')",
                    [.text(HistoryTables.metadataKey)])
            }
            try db.execute("COMMIT")
            return nil
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
    }

    private func requireHistory() throws(StoreError) {
        guard tracksHistory else {
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
    /// no change at all.
    func recordHistory(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject])
        throws(SQLiteError)
    {
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
            if let pk = o.objectID.primaryKey { changes.append((o.info.entity.number, pk, .delete, nil)) }
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
            "INSERT INTO \(t.change) (Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS) VALUES (?, 1, ?, ?, ?, ?, ?)"
        )
        for c in changes {
            try insert.bind([
                .integer(t.changeEntity), .integer(t.code(c.kind)), .integer(c.entity), .integer(c.pk), .integer(token),
                c.columns.map { .blob($0) } ?? .null,
            ])
            while try insert.step() {}
            try insert.reset()
        }
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
            SELECT x.Z_PK, x.ZTIMESTAMP, a.ZNAME, n.ZNAME, c.ZCHANGETYPE, c.ZENTITY, c.ZENTITYPK, c.ZCOLUMNS \
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

    private static func text(_ v: SQLValue) -> String? { if case .text(let s) = v { s } else { nil } }

    /// The change in columns 4… of a history row (nil when the transaction has none).
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
        return HistoryChange(objectID: ObjectID(info.names, key: .permanent(pk)), kind: kind, updatedKeys: keys)
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
