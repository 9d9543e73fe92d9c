// `sift store query` printing stored rows directly: the lines `StoreRenderer.render` prints for
// fetched objects, written from the rows without managed objects, `JSONValue` trees or a `String`
// per line. The fetch's own lowered SQL picks the root rows; every table the printed graph needs
// (to-one and to-many destinations, collection values) is then read once, keyed by the keys the
// level above collected, and each row's JSON is written into its table's buffer with a hole where
// each child's JSON goes; the lines are put together from the buffers at the end. Everything is
// read before a byte is printed, so an error prints nothing, as on the object path. The request
// takes the object path instead (nothing printed here) when memory judges part of it (a residual,
// a sort SQL cannot make, pending changes) or the graph is not a tree of plain entities (an entity
// reached again below itself, sub-entities, a to-one stored on the other side).

import Foundation
import SiftEvaluation
import SiftJSON
import SiftSQL
import SiftSQLite

extension ManagedObjectContext {
    /// Writes the objects `request` matches as `renderer` prints them, one line each, to `sink`
    /// (in blocks of about 1 MB), read straight from the stored rows. Returns false, having
    /// printed nothing, when the request needs the object path (`fetch` then `render`).
    ///
    /// ```swift
    /// let printed = try context.printStoredRows(FetchRequest("Record"), renderer: renderer) {
    ///     FileHandle.standardOutput.write(Data($0))
    /// }
    /// ```
    package func printStoredRows(
        _ request: FetchRequest<ManagedObject>, renderer: StoreRenderer, into sink: ([UInt8]) -> Void
    ) throws(StoreError) -> Bool {
        let plan = try makePlan(request)
        guard plan.residual == nil, request.sortDescriptors.isEmpty || plan.sqlSort != nil, plan.family.count == 1,
            try dirtyObjects(request, plan) == nil,
            let root = try PrintedTable.entity(plan.info, renderer: renderer, skipping: nil, path: [], store: store)
        else { return false }
        let q = try query(plan, request, columns: plan.info.layout.columns, limited: true)
        guard try read(root, sql: q.sql, bindings: q.bindings, owners: false, offset: 0) else { return false }
        var out: [UInt8] = []
        out.reserveCapacity(1 << 20)
        for entry in root.entries {
            root.emit(entry, into: &out)
            out.append(0x0A)
            if out.count >= 1 << 20 {
                sink(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        if !out.isEmpty { sink(out) }
        return true
    }

    /// Reads `table`'s rows with `sql`, then its children's with the keys its rows named. False
    /// when a row is not one `table` prints (a sub-entity's) or a to-one names no row.
    private func read(_ table: PrintedTable, sql: String, bindings: [SQLValue], owners: Bool, offset: Int)
        throws(StoreError) -> Bool
    {
        let printable = try store.locked { () throws(StoreError) -> Bool in
            do {
                let s = try store.statement(sql)
                try s.bind(bindings)
                defer { try? s.reset() }
                while try s.step() {
                    guard try table.add(ShiftedRow(base: s, by: offset), owner: owners ? s.key(0) : nil) else {
                        return false
                    }
                }
                table.close()
                return true
            } catch let e as SQLiteError { throw e.storeError } catch let e as StoreError { throw e } catch {
                throw StoreError(.sqlite, "\(error)")
            }
        }
        guard printable else { return false }
        for child in table.children {
            var text: [UInt8] = [UInt8(ascii: "[")]
            for (n, key) in child.keys.enumerated() {
                if n > 0 { text.append(UInt8(ascii: ",")) }
                JSONScanner.write(key, into: &text)
            }
            text.append(UInt8(ascii: "]"))
            let list: SQLValue = .text(String(decoding: text, as: UTF8.self))
            switch child.reached {
            case .toOne(let layout):
                guard try read(child, sql: Self.rowsSQL(layout), bindings: [list], owners: false, offset: 0),
                    child.keys.allSatisfy({ child.byKey[$0] != nil })
                else { return false }
            case .toMany(let sql), .values(let sql):
                guard try read(child, sql: sql, bindings: [list], owners: true, offset: 1) else { return false }
            case .root:
                return false
            }
        }
        return true
    }
}

/// A row of a statement whose columns of interest start at `by`.
private struct ShiftedRow<Base: RowSource>: RowSource {
    let base: Base
    let by: Int
    func column(_ i: Int) -> SQLValue { base.column(i + by) }
    func key(_ i: Int) -> SQLValue { base.key(i + by) }
    func attribute(_ i: Int, _ type: AttributeType) -> Value { base.attribute(i + by, type) }
}

/// One table of the printed graph (an entity's rows, or a collection attribute's values): the JSON
/// of its rows, with holes where its children's JSON goes.
private final class PrintedTable {
    /// How the rows are reached from the table above.
    enum Reached {
        case root
        /// By the keys of a to-one's foreign key.
        case toOne(TableLayout)
        /// By owner, with the SQL reading the destination rows (the owner's key first).
        case toMany(String)
        /// A collection attribute's values by owner (the owner's key first).
        case values(String)
    }

    /// What one property of a row prints.
    enum Step {
        case attribute(name: [UInt8], index: Int)
        case collection(name: [UInt8], column: Int, child: Int)
        case toOne(name: [UInt8], column: Int, child: Int)
        case toMany(name: [UInt8], countColumn: Int?, child: Int)
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
    var children: [PrintedTable] = []
    // Unchecked: every row appends to these, and nothing reads one while another writes it (the
    // dynamic checks cost a tenth of the printing).
    /// The keys the table above asked for.
    @exclusivity(unchecked) var keys: [Int64] = []
    @exclusivity(unchecked) var bytes: [UInt8] = []
    @exclusivity(unchecked) var holes: [Hole] = []
    /// The root's entries in query order.
    @exclusivity(unchecked) var entries: [Entry] = []
    /// A child's entries by key (a to-one's) or by owner (a to-many's, a collection's).
    @exclusivity(unchecked) var byKey: [Int64: Entry] = [:]
    @exclusivity(unchecked) private var owner: Int64?
    @exclusivity(unchecked) private var open: Entry?

    private init(
        reached: Reached, info: EntityInfo?, valueType: AttributeType, renderer: StoreRenderer, steps: [Step]
    ) {
        self.reached = reached
        self.info = info
        self.valueType = valueType
        self.renderer = renderer
        self.steps = steps
    }

    /// The table printing `info`'s objects, reached as `reached`, and its children; nil when the
    /// graph below it is not a tree of plain entities.
    static func entity(
        _ info: EntityInfo, renderer: StoreRenderer, skipping: String?, path: Set<String>, store: PersistentStore,
        reached: Reached = .root
    ) throws(StoreError) -> PrintedTable? {
        guard info.entity.family.count == 1 else { return nil }
        if info.isDocument {
            return PrintedTable(reached: reached, info: info, valueType: .transformable, renderer: renderer, steps: [])
        }
        var steps: [Step] = []
        var children: [PrintedTable] = []
        let path = path.union([info.name])
        for p in renderer.properties(of: info.name) where p.name != skipping {
            var name: [UInt8] = []
            JSONScanner.writeQuoted(p.name, into: &name)
            name.append(UInt8(ascii: ":"))
            switch p {
            case .attribute(let a):
                guard let i = info.entity.attributeIndex[a] else { return nil }
                if info.isScalar[i] {
                    steps.append(.attribute(name: name, index: i))
                    continue
                }
                let attribute = info.entity.attributes[i]
                guard let table = attribute.valueTable else { return nil }
                let q = PersistentStore.q
                let sql =
                    "SELECT \(q(Storage.owner)), \(q(Storage.value)) FROM \(q(table)) WHERE \(q(Storage.owner)) IN (SELECT value FROM json_each(?)) ORDER BY \(q(Storage.owner)), \(q(Storage.order))"
                steps.append(.collection(name: name, column: info.attributeColumns[i], child: children.count))
                children.append(
                    PrintedTable(
                        reached: .values(sql), info: nil, valueType: attribute.type, renderer: renderer, steps: []))
            case .relationship(let r):
                guard let i = info.entity.relationshipIndex[r.name], !path.contains(r.destination) else { return nil }
                let destination = try store.info(r.destination)
                let rel = info.entity.relationships[i]
                let reachedBy: Reached
                if r.isToMany {
                    guard let sql = ManagedObjectContext.toManySQL(rel, destination.layout) else { return nil }
                    reachedBy = .toMany(sql)
                    steps.append(.toMany(name: name, countColumn: info.countColumns[i], child: children.count))
                } else {
                    guard let column = info.foreignKeyColumns[i] else { return nil }
                    reachedBy = .toOne(destination.layout)
                    steps.append(.toOne(name: name, column: column, child: children.count))
                }
                guard
                    let child = try entity(
                        destination, renderer: renderer, skipping: r.inverse, path: path, store: store,
                        reached: reachedBy)
                else { return nil }
                children.append(child)
            }
        }
        let table = PrintedTable(
            reached: reached, info: info, valueType: .transformable, renderer: renderer, steps: steps)
        table.children = children
        return table
    }

    // MARK: Reading

    /// Adds a row (of `owner`'s elements when the table is read by owner). False when the row is
    /// not one this table prints.
    func add<Row: RowSource>(_ row: Row, owner: SQLValue?) throws(StoreError) -> Bool {
        let start = bytes.count
        if let owner {
            guard case .integer(let o) = owner else { return false }
            if o == self.owner {
                bytes.append(UInt8(ascii: ","))
            } else {
                close()
                self.owner = o
                open = Entry(start: bytes.count, end: bytes.count, holes: holes.count..<holes.count)
            }
        }
        guard let info else {
            renderer.write(ColumnCodec.decode(row.column(0), valueType), into: &bytes)
            return true
        }
        guard case .integer(let pk) = row.key(0), case .integer(let ent) = row.key(1), ent == info.entity.number else {
            return false
        }
        let firstHole = holes.count
        if info.isDocument {
            let document = try ManagedObjectContext.storedValue(
                row, attribute: 0, of: info, id: ObjectID(info.names, key: .permanent(pk)))
            renderer.write(renderer.json(document: document, of: info.name), into: &bytes)
        } else {
            try writeObject(row, pk: pk, info: info)
        }
        if owner == nil {
            let entry = Entry(start: start, end: bytes.count, holes: firstHole..<holes.count)
            if case .root = reached { entries.append(entry) } else { byKey[pk] = entry }
        }
        return true
    }

    /// Ends the entry of the owner being read.
    func close() {
        guard var entry = open, let owner else { return }
        entry.end = bytes.count
        entry.holes = entry.holes.lowerBound..<holes.count
        byKey[owner] = entry
        open = nil
    }

    /// One object's JSON, as `StoreRenderer.render` prints it.
    private func writeObject<Row: RowSource>(_ row: Row, pk: Int64, info: EntityInfo) throws(StoreError) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        func member(_ name: [UInt8], _ then: StaticString = "") {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            bytes.append(contentsOf: name)
            bytes.append(contentsOf: UnsafeBufferPointer(start: then.utf8Start, count: then.utf8CodeUnitCount))
        }
        func hole(_ child: Int, _ key: Int64) {
            holes.append(Hole(at: bytes.count, child: child, key: key))
            children[child].keys.append(key)
        }
        let printsNils = renderer.printsNils
        for step in steps {
            switch step {
            case .attribute(let name, let i):
                let v = try ManagedObjectContext.storedValue(
                    row, attribute: i, of: info, id: ObjectID(info.names, key: .permanent(pk)))
                if v.isNull && !printsNils { continue }
                member(name)
                renderer.write(v, into: &bytes)
            case .collection(let name, let column, let child):
                if case .null = row.column(column) {
                    if printsNils { member(name, "null") }
                    continue
                }
                member(name, "[")
                hole(child, pk)
                bytes.append(UInt8(ascii: "]"))
            case .toOne(let name, let column, let child):
                if case .integer(let key) = row.key(column) {
                    member(name)
                    hole(child, key)
                } else if printsNils {
                    member(name, "null")
                }
            case .toMany(let name, let countColumn, let child):
                if let countColumn, case .null = row.key(countColumn) {
                    if printsNils { member(name, "null") }
                    continue
                }
                member(name, "[")
                hole(child, pk)
                bytes.append(UInt8(ascii: "]"))
            }
        }
        bytes.append(UInt8(ascii: "}"))
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
            if let e = child.byKey[h.key] { child.emit(e, into: &out) }
        }
        out.append(contentsOf: bytes[at..<entry.end])
    }
}
