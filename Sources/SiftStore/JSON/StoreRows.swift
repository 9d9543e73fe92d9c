// `sift store query` printing stored rows directly: the lines `StoreRenderer.render` prints for
// fetched objects, written from the rows without managed objects, `JSONValue` trees or a `String`
// per line. The fetch's own lowered SQL picks the root rows; every table the printed graph needs
// (to-one and to-many destinations, collection values) is then read once, keyed by the keys the
// level above collected, and each row's JSON is written into its table's buffer with a hole where
// each child's JSON goes; the lines are put together from the buffers at the end. Everything is
// read before a byte is printed, so an error prints nothing, as on the object path. A child table
// asked for most of its rows (or of its owners') is scanned whole instead of looked up key by key,
// the rows not asked for skipped: the same rows, without a B-tree search each. The request
// takes the object path instead (nothing printed here) when memory judges part of it (a residual,
// a sort SQL cannot make, pending changes) or the graph is not a tree of plain entities (an entity
// reached again below itself, sub-entities, a to-one stored on the other side). Every row with
// nothing else asked streams instead: each table scanned beside the root, each line written as
// its root row is read, each scan checking the order of the rows it passes. A table met out of
// the order it prints in is read whole instead; since such a row can belong to a line written
// long before, the lines are held until the scans end (up to 32 MB; past that the order is
// checked once up front, and blocks go out as they fill): an error after a block went out says
// how many lines were printed.

import Foundation
import SiftEvaluation
import SiftJSON
import SiftSQL
import SiftSQLite

/// How `printStoredRows` reads the tables below the root: each by the keys asked for, or whole
/// with the rows not asked for skipped; `automatic` scans a table when the keys asked for are at
/// least a third of the rows of the table they name.
package enum StoredRowReading: Sendable {
    /// Each table as `scans(asked:of:)` says.
    case automatic
    /// Every table by the keys asked for.
    case keyed
    /// Every table whole (a join table by key all the same).
    case scanned
}

/// What `printStoredRows` did.
///
/// ```swift
/// let printed = try context.printStoredRows(FetchRequest("Record"), renderer: renderer, into: write)
/// if printed == .streamed(checked: false) { /* each line written as its row was read */ }
/// ```
package enum StoredRowsPrinted: Equatable, Sendable {
    /// Nothing printed: the request needs the object path.
    case declined
    /// Every row streamed as read; `checked`: the tables' order was checked once `holding`
    /// bytes were held (a smaller output was checked by its scans alone, then let out).
    case streamed(checked: Bool)
    /// The tables read whole, then the lines printed; for a request that streams, the line at
    /// which the stream met a table out of order (nil: the order checks found it, or a join table).
    case readWhole(outOfOrderAt: Int?)
    /// The root's rows read in two halves of its keys on two threads, each with the tables below
    /// it, each half's lines held until both were read, then printed (`HalvedRead`); for a request
    /// that streams, in two streams (`outOfOrderAt` nil), else as `readWhole`.
    case readInHalves(outOfOrderAt: Int?)

    /// The bytes a streamed print holds before it checks the tables' order and lets lines out:
    /// a smaller output is never checked (its scans check it), a larger one pays for the checks.
    package static let holding = 32 << 20

    /// Whether lines were printed (not declined).
    package var printed: Bool { self != .declined }
}

/// The lines a streamed print has written and not let out yet: full blocks of about 1 MB, and
/// the one filling (with room for a row past 1 MB, so that it is rarely copied to grow).
struct HeldBlocks {
    private var blocks: [[UInt8]] = []
    var out = HeldBlocks.block()
    /// The bytes of the full blocks.
    private(set) var bytes = 0

    private static func block() -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity((1 << 20) + (1 << 16))
        return b
    }

    /// Holds the block filling, a new one filling.
    mutating func keep() {
        guard !out.isEmpty else { return }
        bytes += out.count
        blocks.append(out)
        out = Self.block()
    }

    /// Lets out every block held, then the one filling (its buffer kept for the next lines).
    mutating func send(to sink: ([UInt8]) -> Void) {
        for b in blocks { sink(b) }
        blocks = []
        bytes = 0
        guard !out.isEmpty else { return }
        sink(out)
        out.removeAll(keepingCapacity: true)
    }
}

extension ManagedObjectContext {
    /// Writes the objects `request` matches as `renderer` prints them, one line each, to `sink`
    /// (in blocks of about 1 MB), read straight from the stored rows. Returns `.declined`, having
    /// printed nothing, when the request needs the object path (`fetch` then `render`).
    /// `reading` chooses how the tables below the root are read (the bytes are the same);
    /// `holding` is how many bytes a streamed print keeps before it checks the tables' order
    /// and lets them out (see `stream`); `halving`, the span of the root's keys from which a read
    /// of every row in key order is halved on two threads (see `HalvedRead`).
    ///
    /// ```swift
    /// let printed = try context.printStoredRows(FetchRequest("Record"), renderer: renderer) {
    ///     FileHandle.standardOutput.write(Data($0))
    /// }
    /// printed.printed  // false: nothing written, fetch the objects instead
    /// ```
    package func printStoredRows(
        _ request: FetchRequest<ManagedObject>, renderer: StoreRenderer, reading: StoredRowReading = .automatic,
        holding: Int = StoredRowsPrinted.holding, halving: Int64 = HalvedRead.threshold,
        into sink: ([UInt8]) -> Void
    ) throws(StoreError) -> StoredRowsPrinted {
        guard let (printed, plan) = try printedRoot(request, renderer) else { return .declined }
        var root = printed
        var metOutOfOrder: Int?
        if reading == .automatic, Self.streams(request, plan) {
            if let halved = try streamInHalves(&root, plan, renderer, holding: holding, halving: halving, into: sink) {
                return halved
            }
            let streamed = try stream(root, holding: holding, into: sink)
            guard case .readWhole(let at) = streamed else { return streamed }
            metOutOfOrder = at
        }
        let q = try query(plan, request, columns: plan.info.layout.columns, limited: true)
        guard let tables = try readWhole(root, request, plan, renderer, query: q, reading: reading, halving: halving)
        else { return .declined }
        var out: [UInt8] = []
        out.reserveCapacity(1 << 20)
        for table in tables {
            for entry in table.entries {
                table.emit(entry, into: &out)
                out.append(0x0A)
                if out.count >= 1 << 20 {
                    sink(out)
                    out.removeAll(keepingCapacity: true)
                }
            }
        }
        if !out.isEmpty { sink(out) }
        return tables.count == 2 ? .readInHalves(outOfOrderAt: metOutOfOrder) : .readWhole(outOfOrderAt: metOutOfOrder)
    }

    /// Every row streamed in two halves on two threads (`HalvedRead.stream`) when the root's keys
    /// span `halving` or more; nil when nothing was printed, `root` then a fresh table for the
    /// one-thread stream.
    private func streamInHalves(
        _ root: inout PrintedTable, _ plan: FetchPlan, _ renderer: StoreRenderer, holding: Int, halving: Int64,
        into sink: ([UInt8]) -> Void
    ) throws(StoreError) -> StoredRowsPrinted? {
        let halved = try inHalves(&root, plan, renderer, halving: halving) { first, second in
            HalvedRead.stream(first, second, store: store, holding: holding, into: sink)
        }
        return halved == nil ? nil : .readInHalves(outOfOrderAt: nil)
    }

    /// The second half's table when `attempt` read `root` and it in halves (the root's keys
    /// spanning `halving` or more); nil otherwise, `root` then a fresh table if the halves were
    /// tried (what they read is dropped, for one thread to read again).
    private func inHalves(
        _ root: inout PrintedTable, _ plan: FetchPlan, _ renderer: StoreRenderer, halving: Int64,
        _ attempt: (PrintedTable, PrintedTable) -> Bool
    ) throws(StoreError) -> PrintedTable? {
        func table() throws(StoreError) -> PrintedTable? {
            try PrintedTable.entity(plan.info, renderer: renderer, skipping: nil, path: [], store: store)
        }
        guard let name = root.info?.layout.table, try HalvedRead.worthIt(name, halving: halving, store: store),
            let second = try table()
        else { return nil }
        if attempt(root, second) { return second }
        // Built as `root` was a moment ago, from the same model: it cannot fail now.
        guard let fresh = try table() else { preconditionFailure("a printed table could not be built again") }
        root = fresh
        return nil
    }

    /// `query`'s rows read whole into `root`, or into two tables whose lines follow each other when
    /// the request is read in halves on two threads (`HalvedRead`: every row in key order, no
    /// limit or offset, the root's keys spanning `halving` or more); nil when a row is not one this
    /// path prints.
    private func readWhole(
        _ root: PrintedTable, _ request: FetchRequest<ManagedObject>, _ plan: FetchPlan, _ renderer: StoreRenderer,
        query q: SQLQuery, reading: StoredRowReading, halving: Int64
    ) throws(StoreError) -> [PrintedTable]? {
        var root = root
        if reading == .automatic, request.sortDescriptors.isEmpty, request.fetchLimit == nil, request.fetchOffset == 0,
            let second = try inHalves(
                &root, plan, renderer, halving: halving,
                { first, second in
                    HalvedRead.read(first, second, sql: q, store: store)
                })
        {
            return [root, second]
        }
        let reader = StoredRowReader(store: store, own: nil)
        guard try reader.read(root, sql: q.sql, bindings: q.bindings, reading: reading) else { return nil }
        return [root]
    }

    /// Whether `printStoredRows` (reading `.automatic`) prints `request`'s lines as it reads the
    /// rows: every row of an entity, unsorted, every table of the printed graph stored in the
    /// order it prints in (the order checks a print past its held bytes runs). Otherwise the
    /// tables are read whole before a line is printed.
    ///
    /// ```swift
    /// try context.streamsStoredRows(FetchRequest("Record"), renderer: renderer)  // true, as imported
    /// ```
    package func streamsStoredRows(_ request: FetchRequest<ManagedObject>, renderer: StoreRenderer)
        throws(StoreError) -> Bool
    {
        guard let (root, plan) = try printedRoot(request, renderer), Self.streams(request, plan) else { return false }
        return try locked { try root.storedInOrder(store) }
    }

    /// The table printing `request`'s rows, nil when the request needs the object path.
    private func printedRoot(_ request: FetchRequest<ManagedObject>, _ renderer: StoreRenderer) throws(StoreError)
        -> (PrintedTable, FetchPlan)?
    {
        let plan = try makePlan(request)
        guard plan.residual == nil, request.sortDescriptors.isEmpty || plan.sqlSort != nil, plan.family.count == 1,
            try dirtyObjects(request, plan) == nil,
            let root = try PrintedTable.entity(plan.info, renderer: renderer, skipping: nil, path: [], store: store)
        else { return nil }
        return (root, plan)
    }

    /// Whether `request` asks for every row of its entity: no predicate, sort, limit or offset (a
    /// few rows are read sooner by key than by checking and scanning every table).
    private static func streams(_ request: FetchRequest<ManagedObject>, _ plan: FetchPlan) -> Bool {
        guard request.sortDescriptors.isEmpty, request.fetchLimit == nil, request.fetchOffset == 0,
            case .constant(value: true) = plan.pushed.kind
        else { return false }
        return true
    }

    /// Prints every row of `root`'s entity in key order as it is read, each table below scanned
    /// alongside it, in one read transaction, without checking first that every table is stored
    /// in the order it prints in: each scan checks the rows it passes instead (a to-many's or a
    /// collection's by owner, each owner's in order; a to-one's keys asked rising). A row met out
    /// of order may belong to a line already written (a toy given last to the first owner is met
    /// at the end), so no block goes out until the order is known: at the end, the scans run to
    /// the end of their tables; or once `holding` bytes are held, by the order checks
    /// (`storedInOrder`), after which every block goes out as it fills. `.readWhole` (nothing
    /// printed) when a table is out of order: the line where it was met, nil when the checks said so.
    /// `.declined`, having printed nothing, when a row is not one this path prints; after a block
    /// went out, that (a store changed under its own rules) or an error is thrown with the count
    /// of lines printed.
    private func stream(_ root: PrintedTable, holding: Int, into sink: ([UInt8]) -> Void) throws(StoreError)
        -> StoredRowsPrinted
    {
        guard let info = root.info else { return .readWhole(outOfOrderAt: nil) }
        let sql = Self.rowsSQL(info.layout, keyed: false) + " ORDER BY " + PersistentStore.q(Storage.primaryKey)
        var printed = 0
        // Nothing printed yet: the object path takes over; else the store broke its own rules.
        func notPrintable() throws(StoreError) -> StoredRowsPrinted {
            guard printed > 0 else { return .declined }
            throw StoreError(
                .objectNotFound, "a stored relationship names a row that is not in the store, or is of another entity")
        }
        do throws(StoreError) {
            return try locked { () throws -> StoredRowsPrinted in
                let connection = store.connection
                let begins = connection.isAutocommit
                if begins { try connection.execute("BEGIN") }
                defer { if begins { try? connection.execute("COMMIT") } }
                defer { root.closeCursors() }
                guard try root.openCursors(connection) else { return .readWhole(outOfOrderAt: nil) }
                let s = try connection.prepare(sql)
                // Blocks not out yet (the order unknown), and whether the checks said it holds.
                var held = HeldBlocks()
                var checked = false
                var lines = 0
                while try s.step() {
                    guard case .integer(let pk) = s.key(0) else { return try notPrintable() }
                    // Another entity's row, in a table the entity shares.
                    if case .integer(let ent) = s.key(1), ent != info.entity.number { continue }
                    guard try root.writeRow(s, pk: pk, info: info, into: &held.out, streaming: true) else {
                        if printed == 0, root.metOutOfOrder { return .readWhole(outOfOrderAt: lines) }
                        return try notPrintable()
                    }
                    held.out.append(0x0A)
                    lines += 1
                    guard held.out.count >= 1 << 20 else { continue }
                    if !checked {
                        held.keep()
                        guard held.bytes >= holding else { continue }
                        guard try root.storedInOrder(store) else { return .readWhole(outOfOrderAt: nil) }
                        checked = true
                    }
                    held.send(to: sink)
                    printed = lines
                }
                if !checked, try !root.scansEndInOrder() { return .readWhole(outOfOrderAt: lines) }
                held.keep()
                held.send(to: sink)
                return .streamed(checked: checked)
            }
        } catch {
            guard printed > 0 else { throw error }
            var e = error
            e.message += " (after \(printed) lines were printed)"
            throw e
        }
    }

    /// `body` under the store's lock, SQLite's errors as the store's.
    private func locked<R>(_ body: () throws -> R) throws(StoreError) -> R {
        try store.locked { () throws(StoreError) -> R in try storeErrors(body) }
    }

}

extension StoredRowReading {
    /// Whether `automatic` scans a table of which `asked` keys are wanted, of a table holding
    /// `rows` rows: a scan reads every row in order, a keyed read searches the B-tree for each key
    /// (about three times a scanned row's cost).
    ///
    /// ```swift
    /// StoredRowReading.scans(asked: 100, of: 200)  // true
    /// ```
    package static func scans(asked: Int, of rows: Int64) -> Bool { Int64(asked) * 3 >= rows }

    /// The most rows worth counting to decide for `asked` keys: one more than a scan would take.
    ///
    /// ```swift
    /// StoredRowReading.scans(asked: 10, of: StoredRowReading.countLimit(10))  // false
    /// ```
    package static func countLimit(_ asked: Int) -> Int64 { Int64(asked) * 3 + 1 }
}

/// A row of a statement whose columns of interest start at `by`.
struct ShiftedRow<Base: RowSource>: RowSource {
    let base: Base
    let by: Int
    func column(_ i: Int) -> SQLValue { base.column(i + by) }
    func key(_ i: Int) -> SQLValue { base.key(i + by) }
    func attribute(_ i: Int, _ type: AttributeType) -> Value { base.attribute(i + by, type) }
    func textBytes(_ i: Int) -> UnsafeBufferPointer<UInt8>? { base.textBytes(i + by) }
    func double(_ i: Int) -> Double? { base.double(i + by) }
    func isNull(_ i: Int) -> Bool { base.isNull(i + by) }
}

/// One table of the printed graph (an entity's rows, or a collection attribute's values): the JSON
/// of its rows, with holes where its children's JSON goes.
final class PrintedTable {
    /// How the rows are reached from the table above.
    enum Reached {
        case root
        /// By the keys of a to-one's foreign key: the SQL reading the rows of the keys bound, that
        /// reading every row, and the table the keys name.
        case toOne(keyed: String, scanned: String, table: String)
        /// By owner (the owner's key first): a to-many's destination rows or a collection attribute's
        /// values; the SQL reading those of the owners bound, in the owners' and then the elements'
        /// order, and that reading every owner's in the table's order, the elements' order last (nil
        /// for a join table: read by key only).
        case byOwner(keyed: String, scanned: String?)
    }

    /// What one property of a row prints (its quoted name and colon: `name`'s bytes of `names`;
    /// no reference counted payload, so going through the steps retains nothing).
    enum Step {
        /// A stored attribute: `column`'s value of `type` when nothing but the column is read
        /// (no value transformer, no exact-decimal column), else `storedValue`'s of attribute `index`.
        case attribute(name: Range<Int>, index: Int, plain: (column: Int, type: AttributeType)?)
        case collection(name: Range<Int>, column: Int, child: Int)
        case toOne(name: Range<Int>, column: Int, child: Int)
        case toMany(name: Range<Int>, countColumn: Int?, child: Int)
    }

    /// Where a child's JSON goes: before byte `at`, the child's entry for `key`.
    struct Hole {
        var at: Int
        var child: Int
        var key: Int64
    }

    /// The bytes of one printed object (or of one owner's elements) and the holes in them.
    struct Entry {
        var start: Int
        var end: Int
        var holes: Range<Int>
    }

    let reached: Reached
    let info: EntityInfo?
    let valueType: AttributeType
    let renderer: StoreRenderer
    let steps: [Step]
    let names: [UInt8]
    @exclusivity(unchecked) var children: [PrintedTable] = []
    /// SQL whose rows, (owner or key, place, stored key), have their first two columns rising
    /// together and their last rising when this table (reached from the one above) is stored in the
    /// order it prints in; nil when it cannot be (a join table).
    var orderCheck: String?
    /// SQL reading this table's rows of the distinct keys bound (a rising JSON array) in their
    /// order, a B-tree search each, unsorted (a by-owner read's place last, checked as it is read;
    /// the keyed SQL reads them again when it does not rise); nil: the keyed SQL (a join table).
    var inKeyOrder: String?
    // Unchecked: every row appends to these, and nothing reads one while another writes it (the
    // dynamic checks cost a tenth of the printing).
    /// The keys the table above asked for, while it is read.
    @exclusivity(unchecked) var keys: [Int64] = []
    @exclusivity(unchecked) var bytes: [UInt8] = []
    @exclusivity(unchecked) var holes: [Hole] = []
    /// The entries read: the root's in query order, a child's in the order read.
    @exclusivity(unchecked) var entries: [Entry] = []
    /// A child's entries (their places in `entries`) by key (a to-one's) or by owner (a to-many's,
    /// a collection's), and the keys asked for.
    @exclusivity(unchecked) var index = KeyIndex(asking: [])
    @exclusivity(unchecked) private var owner: Int64?
    @exclusivity(unchecked) private var open: Entry?
    /// Streaming: this table's scan, whether it stands on a row not yet printed, and that row's
    /// first column (its key, or its owner's; `.min` for none, `.max` past the end).
    @exclusivity(unchecked) private var cursor: SQLiteStatement?
    @exclusivity(unchecked) private var pending = false
    @exclusivity(unchecked) private var current: Int64 = .max
    /// Streaming: whether the scan is a to-one's (else by owner).
    @exclusivity(unchecked) private var scansToOne = false
    /// Streaming: the (owner, place) of the last row a by-owner scan passed (its place the scan's
    /// column `placeColumn`), or the last key asked of a to-one's scan (`.0`); each must rise.
    @exclusivity(unchecked) private var passed: (Int64, Int64) = (.min, .min)
    @exclusivity(unchecked) private var placeColumn = 0
    /// Streaming: whether the scan met a row out of the order this table prints in.
    @exclusivity(unchecked) private var outOfOrder = false
    /// A scan of this table, in parts, for a stream in halves (`HalvedRead.stream`); nil for the
    /// root and for a table read by key only.
    var scan: Scan?

    /// A table's scan in parts: its SQL before the ORDER BY (`filtered`: with a WHERE), the rowid
    /// term it goes in the order of (the ORDER BY term), its table and, for a by-owner table, the
    /// owner column.
    struct Scan {
        let head: String
        let filtered: Bool
        let rowid: String
        let table: String
        let owner: String?

        /// The whole scan, in its rowid order (a table's `scanned` SQL).
        var ordered: String { head + " ORDER BY " + rowid }

        /// The scan of the rows `bounds` keeps, in its rowid order, with the values to bind.
        func bounded(_ bounds: ScanBounds) -> (sql: String, values: [SQLValue]) {
            var terms: [String] = []
            var values: [SQLValue] = []
            if let lower = bounds.lower {
                terms.append("\(rowid) >= ?")
                values.append(.integer(lower))
            }
            if let upper = bounds.upper {
                terms.append("\(rowid) < ?")
                values.append(.integer(upper))
            }
            guard !terms.isEmpty else { return (ordered, []) }
            return (
                head + (filtered ? " AND " : " WHERE ") + terms.joined(separator: " AND ") + " ORDER BY " + rowid,
                values
            )
        }
    }

    /// Bounds on the scans `openCursors` starts, for a stream in halves: the rows from rowid
    /// `lower` on and before rowid `upper`.
    struct ScanBounds {
        var lower: Int64?
        var upper: Int64?
    }

    private init(
        reached: Reached, info: EntityInfo?, valueType: AttributeType, renderer: StoreRenderer, steps: [Step] = [],
        names: [UInt8] = []
    ) {
        self.reached = reached
        self.info = info
        self.valueType = valueType
        self.renderer = renderer
        self.steps = steps
        self.names = names
    }

    /// The table printing `info`'s objects, reached as `reached`, and its children; nil when the
    /// graph below it is not a tree of plain entities.
    static func entity(
        _ info: EntityInfo, renderer: StoreRenderer, skipping: String?, path: Set<String>, store: PersistentStore,
        reached: Reached = .root
    ) throws(StoreError) -> PrintedTable? {
        guard info.entity.family.count == 1 else { return nil }
        if info.isDocument {
            return PrintedTable(reached: reached, info: info, valueType: .transformable, renderer: renderer)
        }
        var steps: [Step] = []
        var names: [UInt8] = []
        var children: [PrintedTable] = []
        let path = path.union([info.name])
        for p in renderer.properties(of: info.name) where p.name != skipping {
            let start = names.count
            JSONScanner.writeQuoted(p.name, into: &names)
            names.append(UInt8(ascii: ":"))
            let name = start..<names.count
            switch p {
            case .attribute(let a):
                guard let i = info.entity.attributeIndex[a] else { return nil }
                if info.isScalar[i] {
                    let a = info.entity.attributes[i]
                    let type = info.attributeTypes[i]
                    let transformed = type == .transformable && a.description.valueTransformerName != nil
                    let plain = transformed || info.exactColumns[i] != nil ? nil : (info.attributeColumns[i], type)
                    steps.append(.attribute(name: name, index: i, plain: plain))
                    continue
                }
                guard let table = info.entity.attributes[i].valueTable else { return nil }
                steps.append(.collection(name: name, column: info.attributeColumns[i], child: children.count))
                children.append(values(of: info.entity.attributes[i], in: table, renderer: renderer))
            case .relationship(let r):
                guard let i = info.entity.relationshipIndex[r.name], !path.contains(r.destination) else { return nil }
                let destination = try store.info(r.destination)
                let rel = info.entity.relationships[i]
                let step: Step
                let reachedBy: Reached
                let check: String?
                var scan: Scan?
                if r.isToMany {
                    guard let read = toManyRead(rel, destination) else { return nil }
                    (reachedBy, scan, check) = (read.reached, read.scan, toManyOrderCheck(rel))
                    step = .toMany(name: name, countColumn: info.countColumns[i], child: children.count)
                } else {
                    guard let column = info.foreignKeyColumns[i] else { return nil }
                    (reachedBy, scan, check) = toOneRead(column: column, of: info, destination)
                    step = .toOne(name: name, column: column, child: children.count)
                }
                guard
                    let child = try entity(
                        destination, renderer: renderer, skipping: r.inverse, path: path, store: store,
                        reached: reachedBy)
                else { return nil }
                steps.append(step)
                child.orderCheck = check
                child.scan = scan
                child.inKeyOrder =
                    r.isToMany
                    ? ManagedObjectContext.toManyInKeyOrderSQL(rel, destination.layout)
                    : ManagedObjectContext.rowsInKeyOrderSQL(destination.layout)
                children.append(child)
            }
        }
        let table = PrintedTable(
            reached: reached, info: info, valueType: .transformable, renderer: renderer, steps: steps, names: names)
        table.children = children
        return table
    }

    /// The table printing collection `attribute`'s values, stored in `table`.
    private static func values(of attribute: ResolvedAttribute, in table: String, renderer: StoreRenderer)
        -> PrintedTable
    {
        let scan = Scan(
            head: valuesSQL(table, keyed: false), filtered: false, rowid: "rowid", table: table, owner: Storage.owner)
        let reached = Reached.byOwner(keyed: valuesSQL(table, keyed: true), scanned: scan.ordered)
        let values = PrintedTable(reached: reached, info: nil, valueType: attribute.type, renderer: renderer)
        values.inKeyOrder = valuesInKeyOrderSQL(table)
        values.scan = scan
        let q = PersistentStore.q
        let (owner, order) = (q(Storage.owner), q(Storage.order))
        values.orderCheck = "SELECT \(owner), \(order), rowid FROM \(q(table)) ORDER BY \(owner), \(order)"
        return values
    }

    /// How to-many `rel`'s destination rows are read (by owner) and scanned; nil for a to-many the
    /// keyed read cannot serve.
    private static func toManyRead(_ rel: ResolvedRelationship, _ destination: EntityInfo)
        -> (reached: Reached, scan: Scan?)?
    {
        guard let keyed = ManagedObjectContext.toManySQL(rel, destination.layout) else { return nil }
        // In the table's order (stated: an index on the owner could serve the filter).
        let head = ManagedObjectContext.toManySQL(rel, destination.layout, keyed: false)
        let rowid = "r.\(PersistentStore.q(Storage.primaryKey))"
        var scan: Scan?
        if let head, case .inverseForeignKey(let table, let column, _) = rel.storage {
            scan = Scan(head: head, filtered: true, rowid: rowid, table: table, owner: column)
        }
        return (.byOwner(keyed: keyed, scanned: head.map { $0 + " ORDER BY " + rowid }), scan)
    }

    /// How a to-one's destination rows are read (by the keys in foreign-key `column` of `info`'s
    /// table), scanned, and checked to be stored in the order they print in.
    private static func toOneRead(column: Int, of info: EntityInfo, _ destination: EntityInfo)
        -> (reached: Reached, scan: Scan?, check: String?)
    {
        let (q, fk, k) = (PersistentStore.q, PersistentStore.q(info.layout.columns[column]), Storage.primaryKey)
        let check =
            "SELECT \(fk), 0, \(q(k)) FROM \(q(info.layout.table)) WHERE \(fk) IS NOT NULL ORDER BY \(fk), \(q(k))"
        let layout = destination.layout
        let scan = Scan(
            head: ManagedObjectContext.rowsSQL(layout, keyed: false), filtered: false, rowid: q(k), table: layout.table,
            owner: nil)
        let reached = Reached.toOne(
            keyed: ManagedObjectContext.rowsSQL(layout), scanned: scan.ordered, table: layout.table)
        return (reached, scan, check)
    }

    /// The check that to-many `rel`'s destination table is stored in the order it prints in (see
    /// `orderCheck`): its rows by owner, each owner's in the relationship's order (its order column,
    /// else its key); nil for a join table.
    private static func toManyOrderCheck(_ rel: ResolvedRelationship) -> String? {
        guard case .inverseForeignKey(let table, let column, let order) = rel.storage else { return nil }
        let q = PersistentStore.q
        let (owner, k) = (q(column), q(Storage.primaryKey))
        // Unordered: the owner's index gives (owner, key), whose keys must rise.
        guard let order else {
            return "SELECT \(owner), \(k), \(k) FROM \(q(table)) WHERE \(owner) IS NOT NULL ORDER BY \(owner), \(k)"
        }
        return "SELECT \(owner), \(q(order)), \(k) FROM \(q(table)) WHERE \(owner) IS NOT NULL ORDER BY \(k)"
    }

    /// The values of collection table `table` (the owner's key first) of the owners whose keys are
    /// in the JSON array bound to `?`, by owner in the collection's order (`keyed`); or every
    /// owner's in the table's order, each value's place in the collection last.
    private static func valuesSQL(_ table: String, keyed: Bool) -> String {
        let q = PersistentStore.q
        let (owner, value, order) = (q(Storage.owner), q(Storage.value), q(Storage.order))
        guard keyed else { return "SELECT \(owner), \(value), \(order) FROM \(q(table))" }
        return
            "SELECT \(owner), \(value) FROM \(q(table)) WHERE \(owner) IN (SELECT value FROM json_each(?)) ORDER BY \(owner), \(order)"
    }

    /// `valuesSQL`'s keyed values owner by owner in the order of the owner keys bound (each owner
    /// one search of the owner index, whose order is the collection's), not sorted: each value's
    /// place last, for the reader to check that it rises.
    private static func valuesInKeyOrderSQL(_ table: String) -> String {
        let q = PersistentStore.q
        let (owner, value, order) = (q(Storage.owner), q(Storage.value), q(Storage.order))
        return
            "SELECT r.\(owner), r.\(value), r.\(order) FROM \(ManagedObjectContext.keysBound) CROSS JOIN \(q(table)) AS r ON r.\(owner) = k.value"
    }

    // MARK: Reading

    /// Adds a row (of `owner`'s elements when the table is read by owner), or skips it when its
    /// key or owner was not asked for. False when the row is not one this table prints.
    func add<Row: RowSource>(_ row: Row, owner: SQLValue?) throws(StoreError) -> Bool {
        let start = bytes.count
        if let owner {
            guard case .integer(let o) = owner else { return false }
            if o != self.owner {
                close()
                self.owner = o
                guard index.asks(o) else { return true }
                open = Entry(start: bytes.count, end: bytes.count, holes: holes.count..<holes.count)
            } else {
                guard open != nil else { return true }
                bytes.append(UInt8(ascii: ","))
            }
        }
        guard let info else {
            writeElement(row, into: &bytes)
            return true
        }
        guard case .integer(let pk) = row.key(0) else { return false }
        let root: Bool
        if case .root = reached { root = true } else { root = false }
        if owner == nil, !root, !index.asks(pk) { return true }
        let firstHole = holes.count
        guard try writeRow(row, pk: pk, info: info, into: &bytes, streaming: false) else { return false }
        if owner == nil {
            if !root { index.read(pk, entry: entries.count) }
            entries.append(Entry(start: start, end: bytes.count, holes: firstHole..<holes.count))
        }
        return true
    }

    /// Forgets the rows read (and the keys they asked of the tables below), to read them again.
    func restart() {
        bytes.removeAll(keepingCapacity: true)
        holes.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
        index = KeyIndex(asking: keys)
        owner = nil
        open = nil
        for child in children { child.keys.removeAll() }
    }

    /// Ends the entry of the owner being read.
    func close() {
        guard var entry = open, let owner else { return }
        entry.end = bytes.count
        entry.holes = entry.holes.lowerBound..<holes.count
        index.read(owner, entry: entries.count)
        entries.append(entry)
        open = nil
    }

    /// Writes `row` (key `pk`) as this table prints it (an object, or a document) to `bytes`; false
    /// when the row is of another entity, or (`streaming`) a child names a row its scan does not have.
    func writeRow<Row: RowSource>(
        _ row: Row, pk: Int64, info: EntityInfo, into bytes: inout [UInt8], streaming: Bool
    ) throws(StoreError) -> Bool {
        guard case .integer(let ent) = row.key(1), ent == info.entity.number else { return false }
        if info.isDocument {
            let document = try ManagedObjectContext.storedValue(
                row, attribute: 0, of: info, id: ObjectID(info.names, key: .permanent(pk)))
            renderer.write(renderer.json(document: document, of: info.name), into: &bytes)
            return true
        }
        return try writeObject(row, pk: pk, info: info, into: &bytes, streaming: streaming)
    }

    /// One object's JSON, as `StoreRenderer.render` prints it: each child's JSON left as a hole
    /// (read later), or written from the child's scan (`streaming`; false when it has no such row).
    private func writeObject<Row: RowSource>(
        _ row: Row, pk: Int64, info: EntityInfo, into bytes: inout [UInt8], streaming: Bool
    ) throws(StoreError) -> Bool {
        bytes.append(UInt8(ascii: "{"))
        // No nested functions capturing `first` or `bytes`: their boxes and closure contexts were
        // three allocations a row.
        var first = true
        let printsNils = renderer.printsNils
        for step in steps {
            switch step {
            case .attribute(let name, let i, let plain):
                try writeAttribute(row, name, index: i, plain, pk: pk, info: info, first: &first, into: &bytes)
            case .collection(let name, let column, let child):
                if row.isNull(column) {
                    if printsNils { writeMember(name, "null", first: &first, into: &bytes) }
                    continue
                }
                writeMember(name, "[", first: &first, into: &bytes)
                guard try hole(child, pk, streaming: streaming, into: &bytes) else { return false }
                bytes.append(UInt8(ascii: "]"))
            case .toOne(let name, let column, let child):
                if case .integer(let key) = row.key(column) {
                    writeMember(name, first: &first, into: &bytes)
                    guard try hole(child, key, streaming: streaming, into: &bytes) else { return false }
                } else if printsNils {
                    writeMember(name, "null", first: &first, into: &bytes)
                }
            case .toMany(let name, let countColumn, let child):
                if let countColumn, case .null = row.key(countColumn) {
                    if printsNils { writeMember(name, "null", first: &first, into: &bytes) }
                    continue
                }
                writeMember(name, "[", first: &first, into: &bytes)
                guard try hole(child, pk, streaming: streaming, into: &bytes) else { return false }
                bytes.append(UInt8(ascii: "]"))
            }
        }
        bytes.append(UInt8(ascii: "}"))
        return true
    }

    /// Writes attribute `index`'s member (`name`) of `row` (key `pk`): a plain one's text and
    /// numbers straight from the column, without a `Value` between; nothing for nil unless the
    /// renderer prints nils.
    private func writeAttribute<Row: RowSource>(
        _ row: Row, _ name: Range<Int>, index: Int, _ plain: (column: Int, type: AttributeType)?, pk: Int64,
        info: EntityInfo, first: inout Bool, into bytes: inout [UInt8]
    ) throws(StoreError) {
        let v: Value
        if let plain {
            if plain.type.printsTextAsString, let text = row.textBytes(plain.column) {
                writeMember(name, first: &first, into: &bytes)
                JSONScanner.writeQuoted(utf8: text, into: &bytes)
                return
            }
            if let scalar = Scalar(row, plain.column, plain.type) {
                writeMember(name, first: &first, into: &bytes)
                scalar.write(into: &bytes)
                return
            }
            v = row.attribute(plain.column, plain.type)
        } else {
            v = try ManagedObjectContext.storedValue(
                row, attribute: index, of: info, id: ObjectID(info.names, key: .permanent(pk)))
        }
        if v.isNull && !renderer.printsNils { return }
        writeMember(name, first: &first, into: &bytes)
        renderer.write(v, into: &bytes)
    }

    /// A child's JSON for `key` where a row's member needs it: written from the child's scan
    /// (`streaming`; false when it has no such row), or left as a hole, the key asked of the child.
    private func hole(_ child: Int, _ key: Int64, streaming: Bool, into bytes: inout [UInt8]) throws(StoreError)
        -> Bool
    {
        if streaming { return try children[child].stream(key, into: &bytes) }
        holes.append(Hole(at: bytes.count, child: child, key: key))
        children[child].keys.append(key)
        return true
    }

    /// Writes a collection's value (column 0 of `row`) as `renderer` prints it: text and numbers
    /// straight from the column, as `writeObject` writes a plain attribute's.
    private func writeElement<Row: RowSource>(_ row: Row, into out: inout [UInt8]) {
        if valueType.printsTextAsString, let text = row.textBytes(0) {
            JSONScanner.writeQuoted(utf8: text, into: &out)
        } else if let scalar = Scalar(row, 0, valueType) {
            scalar.write(into: &out)
        } else {
            renderer.write(row.attribute(0, valueType), into: &out)
        }
    }

    /// Appends a member's comma (unless it is the `first`, which it no longer is after), its
    /// quoted name and colon, and `then`, in one append (a few bytes: `append(contentsOf:)` costs
    /// about 90 instructions a call, an empty one too).
    private func writeMember(
        _ name: Range<Int>, _ then: StaticString = "", first: inout Bool, into bytes: inout [UInt8]
    ) {
        let comma = !first
        first = false
        let tail = UnsafeBufferPointer(start: then.utf8Start, count: then.utf8CodeUnitCount)
        let count = (comma ? 1 : 0) + name.count + tail.count
        names.withUnsafeBufferPointer { all in
            bytes.append(addingCapacity: count) { span in
                span.withUnsafeMutableBufferPointer { buffer, initialized in
                    guard let to = buffer.baseAddress, let from = all.baseAddress else { return }
                    var at = to + initialized
                    if comma {
                        at.initialize(to: UInt8(ascii: ","))
                        at += 1
                    }
                    at.initialize(from: from + name.lowerBound, count: name.count)
                    if let t = tail.baseAddress { (at + name.count).initialize(from: t, count: tail.count) }
                    initialized += count
                }
            }
        }
    }

    // MARK: Streaming

    /// Whether every table below this one is stored in the order it prints in, so that a scan
    /// of each in its table's order meets the rows as the rows above ask for them: a to-many's
    /// rows (or a collection's values) by owner, each owner's together and in order; a to-one's
    /// keys rising with this table's keys (each destination named once). Stored keys of the rows
    /// visited rise the same way at every level, so the check of each table alone suffices.
    func storedInOrder(_ store: PersistentStore) throws -> Bool {
        for child in children {
            guard let check = child.orderCheck, try Self.rises(store, check), try child.storedInOrder(store) else {
                return false
            }
        }
        return true
    }

    /// Whether `sql`'s rows come with their first two columns strictly rising together (a NULL
    /// second column lowest) and their last strictly rising; rows whose first column is not an
    /// integer (no owner, no destination) left out.
    private static func rises(_ store: PersistentStore, _ sql: String) throws -> Bool {
        let s = try store.statement(sql)
        defer { try? s.reset() }
        var previous: (Int64, Int64, Int64)?
        while try s.step() {
            guard case .integer(let a) = s.key(0) else { continue }
            let b: Int64 = if case .integer(let o) = s.key(1) { o } else { .min }
            guard case .integer(let k) = s.key(2) else { return false }
            if let p = previous, (a, b) <= (p.0, p.1) || k <= p.2 { return false }
            previous = (a, b, k)
        }
        return true
    }

    /// Starts a scan of every table below this one, each on a statement of its own. False when
    /// one cannot be scanned (a join table's).
    func openCursors(_ connection: SQLiteConnection, bounds: [ObjectIdentifier: ScanBounds] = [:])
        throws(StoreError) -> Bool
    {
        for child in children {
            var sql: String
            switch child.reached {
            case .toOne(_, let scanned, _), .byOwner(_, let scanned?): sql = scanned
            case .root, .byOwner(_, nil): return false
            }
            var values: [SQLValue] = []
            if let bound = bounds[ObjectIdentifier(child)] {
                guard let scan = child.scan else { return false }
                (sql, values) = scan.bounded(bound)
            }
            let s: SQLiteStatement
            do throws(SQLiteError) {
                s = try connection.prepare(sql)
                try s.bind(values)
            } catch { throw error.storeError }
            child.cursor = s
            child.placeColumn = s.columnCount - 1
            child.passed = (.min, .min)
            child.outOfOrder = false
            if case .toOne = child.reached { child.scansToOne = true } else { child.scansToOne = false }
            try child.advance(s)
            guard try child.openCursors(connection, bounds: bounds) else { return false }
        }
        return true
    }

    /// The foreign-key column (in the table's columns) of the to-one read into child `child`; nil
    /// for another kind of child.
    func toOneColumn(child: Int) -> Int? {
        for step in steps {
            if case .toOne(_, let column, let c) = step, c == child { return column }
        }
        return nil
    }

    /// Ends the scans `openCursors` started.
    func closeCursors() {
        for child in children {
            try? child.cursor?.reset()
            child.cursor = nil
            child.closeCursors()
        }
    }

    /// Whether a scan below met a row out of the order its table prints in.
    var metOutOfOrder: Bool { children.contains { $0.outOfOrder || $0.metOutOfOrder } }

    /// Runs every by-owner scan below to the end of its table, checking the rows' order: whether
    /// no row of an owner already printed comes after the rows printed (false: out of order).
    func scansEndInOrder() throws(StoreError) -> Bool {
        for child in children {
            if !child.scansToOne, let s = child.cursor {
                while child.pending { try child.advance(s) }
            }
            guard !child.outOfOrder, try child.scansEndInOrder() else { return false }
        }
        return true
    }

    /// Steps the scan to its next row and reads that row's first column into `current`. A
    /// by-owner scan checks the row comes after the one before: its owner's key higher, or the
    /// same owner's and a higher place; out of order, `outOfOrder` is set and the scan ended. A
    /// row without an owner is passed.
    private func advance(_ s: SQLiteStatement) throws(StoreError) {
        do throws(SQLiteError) { pending = try s.step() } catch { throw error.storeError }
        guard pending else {
            current = .max
            return
        }
        guard case .integer(let first) = s.key(0) else {
            current = .min
            return
        }
        current = first
        if scansToOne { return }
        let place: Int64 = if case .integer(let p) = s.key(placeColumn) { p } else { .min }
        if first < passed.0 || (first == passed.0 && place <= passed.1) {
            outOfOrder = true
            pending = false
            current = .max
        }
        passed = (first, place)
    }

    /// Writes this table's JSON for `key` to `out` from its scan, passing the rows before it: a
    /// to-one's destination row, or the elements of owner `key` (none: nothing). False when the
    /// to-one's row is not there, a row is of another entity, or the table is met out of order
    /// (`outOfOrder`: a to-one's key not above the last asked, a by-owner row before the last).
    func stream(_ key: Int64, into out: inout [UInt8]) throws(StoreError) -> Bool {
        guard let s = cursor, !outOfOrder else { return false }
        if scansToOne {
            guard key > passed.0 else {
                outOfOrder = true
                return false
            }
            passed.0 = key
            while pending, current < key { try advance(s) }
            guard pending, current == key, let info, try writeRow(s, pk: key, info: info, into: &out, streaming: true)
            else { return false }
            try advance(s)
            return true
        }
        var first = true
        while pending, current <= key {
            if current == key {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                let row = ShiftedRow(base: s, by: 1)
                if let info {
                    guard case .integer(let pk) = row.key(0),
                        try writeRow(row, pk: pk, info: info, into: &out, streaming: true)
                    else { return false }
                } else {
                    writeElement(row, into: &out)
                }
            }
            try advance(s)
        }
        return !outOfOrder
    }

    // MARK: Printing

    /// Appends `entry`'s bytes to `out`, each hole filled with its child's entry (none: nothing,
    /// an empty to-many or collection).
    func emit(_ entry: Entry, into out: inout [UInt8]) {
        var at = entry.start
        for h in holes[entry.holes] {
            out.append(contentsOf: bytes[at..<h.at])
            at = h.at
            let child = children[h.child]
            if let e = child.index.entry(h.key) { child.emit(child.entries[e], into: &out) }
        }
        out.append(contentsOf: bytes[at..<entry.end])
    }
}

/// The keys a child table was asked for, and the entry read for each: a flat array over the keys'
/// range when they are dense (stored keys come from a counter), a dictionary otherwise.
struct KeyIndex {
    /// Not asked for; asked for but not read; else the entry's place.
    private static let notAsked: Int = -2
    private static let unread: Int = -1
    private var base: Int64 = 0
    private var flat: [Int] = []
    private var sparse: [Int64: Int] = [:]
    private var isFlat = true
    /// The distinct keys asked for, and how many of them were read.
    private(set) var asked = 0
    private var readCount = 0

    init(asking keys: [Int64]) {
        guard let low = keys.min(), let high = keys.max() else { return }
        let (span, overflow) = high.subtractingReportingOverflow(low)
        if !overflow, span < Int64(keys.count) * 32 + 65_536 {
            base = low
            flat = Array(repeating: Self.notAsked, count: Int(span) + 1)
            for k in keys where flat[Int(k - low)] == Self.notAsked {
                flat[Int(k - low)] = Self.unread
                asked += 1
            }
        } else {
            isFlat = false
            for k in keys where sparse.updateValue(Self.unread, forKey: k) == nil { asked += 1 }
        }
    }

    /// Whether every key asked for was read.
    var allRead: Bool { readCount == asked }

    /// The keys asked for, each once, rising.
    var askedKeys: [Int64] {
        guard isFlat else { return sparse.keys.sorted() }
        var keys: [Int64] = []
        keys.reserveCapacity(asked)
        for (i, slot) in flat.enumerated() where slot != Self.notAsked { keys.append(base + Int64(i)) }
        return keys
    }

    private func slot(_ key: Int64) -> Int {
        if isFlat {
            let (i, overflow) = key.subtractingReportingOverflow(base)
            return !overflow && i >= 0 && i < flat.count ? flat[Int(i)] : Self.notAsked
        }
        return sparse[key] ?? Self.notAsked
    }

    /// Whether `key` was asked for.
    func asks(_ key: Int64) -> Bool { slot(key) != Self.notAsked }

    /// The place of the entry read for `key`, nil when none was.
    func entry(_ key: Int64) -> Int? {
        let s = slot(key)
        return s >= 0 ? s : nil
    }

    /// Records the entry read for `key`, one that was asked for.
    mutating func read(_ key: Int64, entry: Int) {
        if slot(key) == Self.unread { readCount += 1 }
        if isFlat { flat[Int(key - base)] = entry } else { sparse[key] = entry }
    }
}

extension AttributeType {
    /// Whether a text column of this type reads as a string (`SQLiteStatement.attribute`'s
    /// `.string`), printed quoted.
    fileprivate var printsTextAsString: Bool {
        switch self {
        case .string, .uuid, .uri, .dynamic: true
        default: false
        }
    }
}

/// A number or a boolean read from its column as `SQLiteStatement.attribute` reads it, printed as
/// `StoreRenderer.write` prints that value, without a `Value` in between.
private enum Scalar {
    case integer(Int64)
    case bool(Bool)
    case double(Double)

    /// Column `column` of `row` for an attribute of `type`; nil when it holds something else.
    init?<Row: RowSource>(_ row: Row, _ column: Int, _ type: AttributeType) {
        switch type {
        case .integer16, .integer32, .integer64, .boolean:
            guard case .integer(let n) = row.key(column) else { return nil }
            self = type == .boolean ? .bool(n != 0) : .integer(n)
        case .double, .float:
            guard let d = row.double(column) else { return nil }
            self = .double(d)
        default: return nil
        }
    }

    func write(into out: inout [UInt8]) {
        switch self {
        case .integer(let n): JSONScanner.write(n, into: &out)
        case .bool(let b): out.append(contentsOf: b ? "true".utf8 : "false".utf8)
        case .double(let d): JSONScanner.write(d, into: &out)
        }
    }
}

/// `body`'s outcome, SQLite's errors as the store's (`SQLiteError.storeError`), the store's as they
/// are, any other as an SQLite failure.
func storeErrors<R>(_ body: () throws -> R) throws(StoreError) -> R {
    do { return try body() } catch let e as SQLiteError { throw e.storeError } catch let e as StoreError {
        throw e
    } catch { throw StoreError(.sqlite, "\(error)") }
}
