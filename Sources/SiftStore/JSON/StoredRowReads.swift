// How `printStoredRows` reads a printed table's rows and then its children's: on the store's own
// connection under the store's lock, or on a connection a read holds for itself. A large request
// for rows in key order is read in two halves of the root's keys on two threads (`HalvedRead`):
// a predicate's rows read whole, every row in two streams. Each half is on a connection of its
// own, both connections in one snapshot of the store: a third connection holds the store's write
// lock (never waiting for it) while the two begin reading, so that no commit can fall between
// them. The halves' lines, put one after the other, are the lines of one read; when either half
// meets an error or a row it cannot print, the halves are dropped and the request is read again on
// one thread, which gives the very error or the object path a one-thread read gives.

import Foundation
import SiftJSON
import SiftSQL
import SiftSQLite

/// A connection a read holds for itself, with its prepared statements (used by one thread at a time).
final class OwnConnection: @unchecked Sendable {
    let connection: SQLiteConnection
    private var statements = StatementCache()

    init(_ connection: SQLiteConnection) { self.connection = connection }

    /// A prepared statement for `sql`, reset and ready to bind.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try statements.statement(sql, on: connection)
    }

    /// Ends the read transaction and drops the statements (the connection closes when released).
    func finish() {
        statements.removeAll()
        try? connection.execute("COMMIT")
    }
}

/// Reads printed tables' rows, on the store's connection (`own` nil, each statement under the
/// store's lock) or on a connection of its own.
struct StoredRowReader {
    let store: PersistentStore
    let own: OwnConnection?

    /// Runs `body` with a reset statement for `sql` (reset again after), SQLite's errors as the store's.
    private func withStatement<R>(_ sql: String, _ body: (SQLiteStatement) throws -> R) throws(StoreError) -> R {
        if let own {
            return try storeErrors {
                let s = try own.statement(sql)
                defer { try? s.reset() }
                return try body(s)
            }
        }
        return try store.locked { () throws(StoreError) -> R in
            try storeErrors {
                let s = try store.statement(sql)
                defer { try? s.reset() }
                return try body(s)
            }
        }
    }

    /// Reads `table`'s rows with `sql`, then its children's with the keys its rows named. False
    /// when a row is not one `table` prints (a sub-entity's) or a to-one names no row.
    func read(_ table: PrintedTable, sql: String, bindings: [SQLValue], reading: StoredRowReading)
        throws(StoreError) -> Bool
    {
        var outcome = try readRows(table, sql: sql, bindings: bindings)
        if outcome == .outOfOrder, case .byOwner(let keyed, _) = table.reached {
            // The scan met the rows out of their owners' order: read them again by key, in order.
            table.restart()
            outcome = try readRows(table, sql: keyed, bindings: [.text(Self.jsonArray(table.keys))])
        }
        guard outcome == .read else { return false }
        for child in table.children {
            child.index = KeyIndex(asking: child.keys)
            // Nothing asked for: nothing to read, here or below.
            if child.index.asked == 0 { continue }
            let keyed: String
            let scanned: String?
            let named: String
            switch child.reached {
            case .toOne(let k, let s, let t): (keyed, scanned, named) = (k, s, t)
            case .byOwner(let k, let s): (keyed, scanned, named) = (k, s, table.info?.layout.table ?? "")
            case .root: return false
            }
            let scans: Bool
            switch reading {
            case .keyed: scans = false
            case .scanned: scans = true
            case .automatic:
                // Fewer rows than the count limit: `scans(asked:of:)` is true for each such count.
                scans = try !hasRows(named, atLeast: StoredRowReading.countLimit(child.index.asked))
            }
            let done =
                if let scanned, scans {
                    try read(child, sql: scanned, bindings: [], reading: reading)
                } else if let driven = child.inKeyOrder {
                    try read(
                        child, sql: driven, bindings: [.text(Self.jsonArray(child.index.askedKeys))], reading: reading)
                } else {
                    try read(child, sql: keyed, bindings: [.text(Self.jsonArray(child.keys))], reading: reading)
                }
            child.keys = []
            guard done else { return false }
            if case .toOne = child.reached, !child.index.allRead { return false }
        }
        return true
    }

    /// How reading a table's rows ended.
    private enum RowsRead {
        case read
        /// A row this path does not print.
        case notPrintable
        /// A scan by owner met a row before one it comes after (read again by key).
        case outOfOrder
    }

    /// Reads `table`'s own rows with `sql`. A scan by owner, or a read in the keys' order (its SQL
    /// not the keyed one), has the elements' order last: the rows must come by owner, each owner's
    /// in order, or the read stops.
    private func readRows(_ table: PrintedTable, sql: String, bindings: [SQLValue]) throws(StoreError) -> RowsRead {
        let owners: Bool
        var checksOrder = false
        if case .byOwner(let keyed, _) = table.reached {
            owners = true
            checksOrder = sql != keyed
        } else {
            owners = false
        }
        return try withStatement(sql) { s throws -> RowsRead in
            try s.bind(bindings)
            let last = s.columnCount - 1
            var previous: (owner: Int64, order: Int64)?
            while try s.step() {
                if checksOrder, case .integer(let owner) = s.key(0) {
                    let order: Int64 = if case .integer(let o) = s.key(last) { o } else { .min }
                    if let p = previous, owner < p.owner || (owner == p.owner && order <= p.order) {
                        return .outOfOrder
                    }
                    previous = (owner, order)
                }
                guard try table.add(ShiftedRow(base: s, by: owners ? 1 : 0), owner: owners ? s.key(0) : nil) else {
                    return .notPrintable
                }
            }
            table.close()
            return .read
        }
    }

    /// Whether `table` holds at least `count` rows (stored keys come from one counter for every
    /// table, so the largest key says nothing about one table's rows). Counting a whole table
    /// visits every page of it: a few rows asked of a big table would pay for a scan to decide
    /// against one, so the rows are passed only up to `count` (by OFFSET, without counting them).
    func hasRows(_ table: String, atLeast count: Int64) throws(StoreError) -> Bool {
        try withStatement("SELECT 1 FROM \(PersistentStore.q(table)) LIMIT 1 OFFSET ?") { s throws -> Bool in
            try s.bind([.integer(max(count - 1, 0))])
            return try s.step()
        }
    }

    /// `keys` as a JSON array, for `json_each`.
    static func jsonArray(_ keys: [Int64]) -> String {
        var text: [UInt8] = [UInt8(ascii: "[")]
        for (n, key) in keys.enumerated() {
            if n > 0 { text.append(UInt8(ascii: ",")) }
            JSONScanner.write(key, into: &text)
        }
        text.append(UInt8(ascii: "]"))
        return String(decoding: text, as: UTF8.self)
    }
}

/// The two halves of a read on two threads (see the file's header).
package enum HalvedRead {
    /// Root tables whose keys span less than this are read on one thread: the second thread, its
    /// connections and their snapshot cost more than half of so small a read saves.
    package static let threshold: Int64 = 20_000

    /// Whether reading `table`'s rows in halves is worth it: its keys span at least `halving`.
    /// The span is read from the key index's two ends, without passing the rows; keys the table
    /// shares a counter with make it an upper bound of the rows, which costs a small table no more
    /// than the halves' set-up.
    static func worthIt(_ table: String, halving: Int64, store: PersistentStore) throws(StoreError) -> Bool {
        let rows = try store.locked { () throws(StoreError) -> [[SQLValue]] in
            try storeErrors { try store.rows(ends(table), []) }
        }
        guard let row = rows.first, row.count == 2, case .integer(let low) = row[0], case .integer(let high) = row[1]
        else { return false }
        return high - low >= halving
    }

    /// The smallest and the largest key of `table`: each its own query, which SQLite answers from
    /// one end of the key index (one query asking both reads every row).
    private static func ends(_ table: String) -> String {
        let pk = PersistentStore.q(Storage.primaryKey)
        let t = PersistentStore.q(table)
        return "SELECT (SELECT min(\(pk)) FROM \(t)), (SELECT max(\(pk)) FROM \(t))"
    }

    /// Reads `sql`'s rows (a query of `root`'s entity in key order, without limit or offset) in two
    /// halves of the keys on two threads, into `root` and `second` (a table built as `root` was);
    /// false (both tables then to be dropped) when the read cannot be halved here or a half met an
    /// error or a row it does not print, for a one-thread read to answer.
    static func read(
        _ root: PrintedTable, _ second: PrintedTable, sql: SQLQuery, store: PersistentStore
    ) -> Bool {
        guard let table = root.info?.layout.table else { return false }
        return onTwoConnections(store, table: table) { first, other, middle in
            read(root, second, sql: sql, store: store, first: first, other: other, middle: middle)
        }
    }

    /// `read`'s halves, on `first` and `other`, split at `middle`.
    private static func read(
        _ root: PrintedTable, _ second: PrintedTable, sql: SQLQuery, store: PersistentStore, first: OwnConnection,
        other: OwnConnection, middle: Int64
    ) -> Bool {
        let pk = PersistentStore.q(Storage.primaryKey)
        // The query's own rows, those before the middle key and those from it on (the range joins
        // the query's WHERE when SQLite flattens the subquery, which the key order allows).
        let halves = [
            "SELECT * FROM (\(sql.sql)) WHERE \(pk) < ?", "SELECT * FROM (\(sql.sql)) WHERE \(pk) >= ?",
        ]
        let bindings = sql.bindings + [.integer(middle)]
        nonisolated(unsafe) let unsafeSecond = second
        let (firstRead, secondRead) = bothHalves {
            (try? StoredRowReader(store: store, own: first).read(
                root, sql: halves[0], bindings: bindings, reading: .automatic)) == true
        } second: {
            (try? StoredRowReader(store: store, own: other).read(
                unsafeSecond, sql: halves[1], bindings: bindings, reading: .automatic)) == true
        }
        return firstRead && secondRead
    }

    /// Every row's lines (a request that streams on one thread) in two halves of the root's keys on
    /// two threads, each half streamed as the one-thread stream streams (each table below scanned
    /// beside the root) over its own part of each table, on a connection of its own, its lines held;
    /// then handed to `sink` in order. False (nothing handed; `root` and `second` to be dropped)
    /// when the halves cannot be read here or either met anything that keeps it from printing, for
    /// the one-thread stream to answer. Only for a root whose tables below have none below them,
    /// and a store file of at most `2 * holding` bytes: each half holds at most `holding` bytes.
    ///
    /// The parts: the second half reads a to-one's table from the smallest key its rows name (a key
    /// it then misses is not printable: the halves give way), and a by-owner table from the first
    /// row (by rowid, the scan's order) of an owner in the second half, where the first half's scan
    /// of it stops. Every row of a by-owner table is thus passed by one of the two scans, each run
    /// to the end of its part checking the rows' order as the one-thread stream's scans do. A row of
    /// a first-half owner in the second half's part comes after the row of a later owner that
    /// starts that part, so its scan finds it out of order. When both halves pass, the table is
    /// stored in the order it prints in, and each half met every row it prints.
    static func stream(
        _ root: PrintedTable, _ second: PrintedTable, store: PersistentStore, holding: Int,
        into sink: ([UInt8]) -> Void
    ) -> Bool {
        guard let info = root.info, root.children.allSatisfy({ $0.children.isEmpty && $0.scan != nil }),
            let size = try? store.locked({ () throws(StoreError) -> [[SQLValue]] in
                try storeErrors {
                    try store.rows("SELECT page_count * page_size FROM pragma_page_count, pragma_page_size", [])
                }
            }),
            case .integer(let bytes) = size.first?.first, bytes <= 2 * Int64(holding)
        else { return false }
        return onTwoConnections(store, table: info.layout.table) { first, other, middle in
            guard let (earlierBounds, laterBounds) = try? bounds(root, second, info, middle: middle, on: first)
            else { return false }
            nonisolated(unsafe) let unsafeSecond = second
            let (earlier, later) = bothHalves {
                streamHalf(root, info, before: middle, bounds: earlierBounds, on: first, holding: holding)
            } second: {
                streamHalf(unsafeSecond, info, from: middle, bounds: laterBounds, on: other, holding: holding)
            }
            guard var earlier, var later else { return false }
            earlier.send(to: sink)
            later.send(to: sink)
            return true
        }
    }

    /// `body`'s answer on two connections of their own in one snapshot (`snapshot`) and the key
    /// halving `table`'s keys; false when there are not two processors, no snapshot to be had, or
    /// fewer than two keys.
    private static func onTwoConnections(
        _ store: PersistentStore, table: String, _ body: (OwnConnection, OwnConnection, Int64) -> Bool
    ) -> Bool {
        guard ProcessInfo.processInfo.activeProcessorCount >= 2, let (first, other) = snapshot(store, table: table)
        else { return false }
        defer {
            first.finish()
            other.finish()
        }
        guard let middle = middleKey(table, on: first) else { return false }
        return body(first, other, middle)
    }

    /// Each half's bounds on the scans of the tables below the root (`root`'s for the first half,
    /// `second`'s for the second), read on `own` in its snapshot.
    private static func bounds(
        _ root: PrintedTable, _ second: PrintedTable, _ info: EntityInfo, middle: Int64, on own: OwnConnection
    ) throws -> ([ObjectIdentifier: PrintedTable.ScanBounds], [ObjectIdentifier: PrintedTable.ScanBounds]) {
        let q = PersistentStore.q
        let pk = q(Storage.primaryKey)
        var earlier: [ObjectIdentifier: PrintedTable.ScanBounds] = [:]
        var later: [ObjectIdentifier: PrintedTable.ScanBounds] = [:]
        func smallest(_ sql: String) throws -> Int64? {
            let rows = try own.connection.query(sql, [.integer(middle)])
            if case .integer(let n) = rows.first?.first { return n }
            return nil
        }
        for (i, child) in root.children.enumerated() {
            guard let scan = child.scan else { throw SQLiteError(code: 1, message: "no scan", sql: nil) }
            let other = second.children[i]
            if let owner = scan.owner {
                // The first row of an owner from the middle on: where the first half stops.
                let start =
                    try smallest(
                        "SELECT min(rowid) FROM \(q(scan.table)) WHERE \(q(owner)) >= ?") ?? Int64.max
                earlier[ObjectIdentifier(child)] = .init(lower: nil, upper: start)
                later[ObjectIdentifier(other)] = .init(lower: start, upper: nil)
            } else {
                // A to-one's: the smallest key the second half's rows name.
                guard let column = root.toOneColumn(child: i) else {
                    throw SQLiteError(code: 1, message: "no column", sql: nil)
                }
                let name = q(info.layout.columns[column])
                let start =
                    try smallest(
                        "SELECT min(\(name)) FROM \(q(info.layout.table)) WHERE \(pk) >= ?") ?? Int64.max
                later[ObjectIdentifier(other)] = .init(lower: start, upper: nil)
            }
        }
        return (earlier, later)
    }

    /// The lines of every row of `info`'s entity with keys before `before` or from `from` on, in
    /// key order, streamed as the one-thread stream streams them with the scans below bounded by
    /// `bounds`, held whole; each scan run to the end of its part, checking the order. Nil when a
    /// table is out of order, a row is not one this path prints, an error comes, or the lines pass
    /// `holding` bytes.
    private static func streamHalf(
        _ root: PrintedTable, _ info: EntityInfo, before: Int64? = nil, from: Int64? = nil,
        bounds: [ObjectIdentifier: PrintedTable.ScanBounds], on own: OwnConnection, holding: Int
    ) -> HeldBlocks? {
        let pk = PersistentStore.q(Storage.primaryKey)
        let range = before != nil ? " WHERE \(pk) < ?" : " WHERE \(pk) >= ?"
        let sql = ManagedObjectContext.rowsSQL(info.layout, keyed: false) + range + " ORDER BY " + pk
        defer { root.closeCursors() }
        do {
            guard try root.openCursors(own.connection, bounds: bounds) else { return nil }
            let s = try storeErrors { try own.statement(sql) }
            try storeErrors { try s.bind([.integer(before ?? from ?? 0)]) }
            defer { try? s.reset() }
            var held = HeldBlocks()
            while try storeErrors({ try s.step() }) {
                guard case .integer(let key) = s.key(0) else { return nil }
                // Another entity's row, in a table the entity shares.
                if case .integer(let ent) = s.key(1), ent != info.entity.number { continue }
                guard try root.writeRow(s, pk: key, info: info, into: &held.out, streaming: true) else { return nil }
                held.out.append(0x0A)
                if held.out.count >= 1 << 20 {
                    held.keep()
                    guard held.bytes <= holding else { return nil }
                }
            }
            guard try root.scansEndInOrder(), !root.metOutOfOrder else { return nil }
            held.keep()
            return held
        } catch {
            return nil
        }
    }

    /// `first` on this thread and `second` on a thread of its own (with the main thread's stack
    /// size, as `FirstPass`'s second half has), both results once both are done.
    private static func bothHalves<T>(_ first: () -> T, second: @escaping () -> T) -> (T, T) {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var later: T?
        nonisolated(unsafe) let body = second
        let thread = Thread {
            later = body()
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
        let earlier = first()
        done.wait()
        guard let later else { preconditionFailure("the second half ended without a result") }
        return (earlier, later)
    }

    /// The key halving `table`'s keys (on `own`, in its snapshot); nil when it has fewer than two.
    private static func middleKey(_ table: String, on own: OwnConnection) -> Int64? {
        guard let bounds = try? own.connection.query(ends(table)), let row = bounds.first, row.count == 2,
            case .integer(let low) = row[0], case .integer(let high) = row[1], high > low
        else { return nil }
        return low + (high - low) / 2 + 1
    }

    /// Two connections of their own on `store`'s file, each in a read transaction on the same
    /// snapshot, or nil when the store is not a file, its connection is in a transaction, or a
    /// writer holds its write lock (nothing waits for it).
    private static func snapshot(_ store: PersistentStore, table: String) -> (OwnConnection, OwnConnection)? {
        guard store.path != nil,
            (try? store.locked { () throws(StoreError) -> Bool in store.connection.isAutocommit }) == true,
            let guardian = try? store.openSideConnection(), let a = try? store.openSideConnection(serialized: false),
            let b = try? store.openSideConnection(serialized: false)
        else { return nil }
        // No commit can come while `guardian` holds the write lock: both snapshots are the latest.
        guard (try? guardian.query("PRAGMA busy_timeout = 0")) != nil, (try? guardian.execute("BEGIN IMMEDIATE")) != nil
        else { return nil }
        defer { try? guardian.execute("ROLLBACK") }
        let first = OwnConnection(a)
        let second = OwnConnection(b)
        do throws(SQLiteError) {
            // The first read of each transaction fixes its snapshot.
            for c in [a, b] {
                try c.execute("BEGIN")
                _ = try c.query("SELECT 1 FROM \(PersistentStore.q(table)) LIMIT 1")
            }
        } catch {
            first.finish()
            second.finish()
            return nil
        }
        return (first, second)
    }
}
