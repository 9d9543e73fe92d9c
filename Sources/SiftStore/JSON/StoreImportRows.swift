// `sift store import`'s rows without managed objects. Making an object per JSON object and
// setting its values through the context was most of the import's time, for objects nobody reads:
// here each record becomes rows (attribute values coerced by the same `Value(coercing:for:)`,
// links as row positions) that `RowWriter` writes with the same statements a save uses, an
// ordered to-many's positions written with the rows instead of by an update afterwards. A batch is
// checked as a save checks it (attribute rules, relationship counts, uniqueness among the batch and
// against the stored rows) before a key is taken or a row written. Whatever is wrong, the record
// (while converting) or the batch (at its end) goes through the object path (BulkImport.swift)
// instead, which reports it with the words and positions it always has: the two paths share their
// errors by construction. Models the rows cannot express (sub-entities, abstract or document
// entities, transformers, join tables, count columns, registered classes) keep the object path.

import Foundation
import SiftEvaluation
import SiftJSON
import SiftSQL
import SiftSQLite

/// One new row of the streaming import: its entity, attribute values and links.
struct ImportRow {
    let info: EntityInfo
    var attributes: [Value]
    /// Per relationship: the linked row's position in the batch (to-one) or the number of rows
    /// linked (to-many); -1 for a to-one without destination.
    var links: [Int]
    /// The order columns this row holds a position in (it is a member of an ordered to-many).
    var orders: [(column: Int, position: Int64)] = []
    let origin: StoreImporter.Origin
}

/// What the rows of one entity need from its relationships, worked out once.
struct RowPlan {
    let info: EntityInfo
    /// Per relationship: the destination entity, the inverse's position in the destination (nil
    /// without inverse), whether the inverse is to-many, and the order column the link writes
    /// (a to-many's in the member row; a to-one's whose inverse is an ordered to-many in this row).
    let links: [(destination: String, inverse: Int?, inverseIsToMany: Bool, orderColumn: Int?)]
    /// The rows' initial links: -1 for a to-one, 0 for a to-many.
    let initialLinks: [Int]
}

/// The rows of the current batch, and where its records start in the input (the object path
/// reads them again from there: no record is kept once its rows are made).
struct ImportRows {
    var plans: [String: RowPlan]
    var rows: [ImportRow] = []
    /// The input before the batch's first record, and that record's number.
    var start: (stream: RecordStream, record: Int)?
    /// The number of records the rows were made of.
    var records = 0

    /// The plans of every entity of `store`, or nil when one needs the object path.
    static func plans(_ store: PersistentStore) -> [String: RowPlan]? {
        // Derived values are computed from objects (Derivations.swift).
        guard store.model.derivations.isEmpty else { return nil }
        var plans: [String: RowPlan] = [:]
        for (name, info) in store.infos {
            let e = info.entity
            guard !info.isDocument, !e.description.isAbstract, e.family == [name], e.root == name,
                info.objectClass == nil, !info.hasCountColumns,
                !e.attributes.contains(where: { $0.type == .transformable })
            else { return nil }
            var links: [(String, Int?, Bool, Int?)] = []
            for rel in e.relationships {
                guard let d = store.infos[rel.destination] else { return nil }
                let inverse = rel.inverse.flatMap { d.entity.relationshipIndex[$0] }
                if rel.inverse != nil, inverse == nil { return nil }
                let inv = inverse.map { d.entity.relationships[$0] }
                var order: Int?
                switch rel.storage {
                case .foreignKey:
                    // The inverse, if any, holds this row; an ordered one gives it position 0.
                    if let inv, inv.isToMany {
                        guard case .inverseForeignKey(_, _, let o) = inv.storage else { return nil }
                        order = o.map { info.layout.index[$0]! }
                    }
                case .inverseForeignKey(_, _, let o):
                    guard let inv, !inv.isToMany else { return nil }
                    order = o.map { d.layout.index[$0]! }
                case .joinTable:
                    return nil
                }
                links.append((rel.destination, inverse, inv?.isToMany ?? false, order))
            }
            plans[name] = RowPlan(
                info: info, links: links, initialLinks: e.relationships.map { $0.isToMany ? 0 : -1 })
        }
        return plans
    }
}

extension StoreImporter {
    /// Adds the rows record `n` becomes to the batch; a record they cannot express (a key of no
    /// property, a value of the wrong type) is added by the object path, which reports it.
    mutating func addRows(_ record: JSONValue, number n: Int, entity: String) throws(JSONImportError) {
        let start = rows!.rows.count
        var converted = false
        if case .object(let members) = record, record.date == nil {
            do throws(Problem) {
                _ = try row(entity, members, Origin(record: n))
                converted = true
            } catch {}
        }
        guard converted else {
            rows!.rows.removeSubrange(start...)
            // The object path reports the record's problem as it always has, before the batch's.
            try add(record, number: n, entity: entity)
            // It found none: the batch so far, then the record as objects.
            pending.removeAll()
            try writeRows()
            try add(record, number: n, entity: entity)
            try saveBatch()
            return
        }
        rows!.records += 1
    }

    /// Appends the row of an object of `entity` made of a JSON object's members, and the rows of
    /// its nested objects after it (the order the object path makes them in); returns its position.
    private mutating func row(_ entity: String, _ members: [(String, JSONValue)], _ origin: Origin)
        throws(Problem) -> Int
    {
        guard let plan = rows!.plans[entity] else { throw Problem(path: "", message: "") }
        let info = plan.info
        let me = rows!.rows.count
        rows!.rows.append(
            ImportRow(info: info, attributes: info.initialAttributes, links: plan.initialLinks, origin: origin))
        let unique = Self.repeatsAKey(members) ? JSONValue.uniqueMembers(members) : members
        noteKeys(entity, unique)
        for (key, json) in unique {
            if let i = info.attributeNumber(key) {
                let a = info.entity.attributes[i]
                let v = try attributeValue(json, a.description, keyPath: "")
                do throws(CoercionError) {
                    rows!.rows[me].attributes[i] = try Value(coercing: v, into: a)
                } catch {
                    throw Problem(path: "", message: error.message)
                }
            } else if let r = info.entity.relationshipIndex[key] {
                if case .null = json { continue }
                let link = plan.links[r]
                if info.entity.relationships[r].isToMany {
                    guard case .array(let items) = json else { throw Problem(path: "", message: "") }
                    for (n, item) in items.enumerated() {
                        guard case .object(let m) = item, item.date == nil else { throw Problem(path: "", message: "") }
                        let child = try row(
                            link.destination, m, Origin(record: origin.record, parent: me, key: key, index: n))
                        if let j = link.inverse { rows!.rows[child].links[j] = me }
                        if let c = link.orderColumn { rows!.rows[child].orders.append((c, Int64(n))) }
                    }
                    rows!.rows[me].links[r] = items.count
                } else {
                    guard case .object(let m) = json, json.date == nil else { throw Problem(path: "", message: "") }
                    let child = try row(link.destination, m, Origin(record: origin.record, parent: me, key: key))
                    rows!.rows[me].links[r] = child
                    if let j = link.inverse { rows!.rows[child].links[j] = link.inverseIsToMany ? 1 : me }
                    if let c = link.orderColumn { rows!.rows[me].orders.append((c, 0)) }
                }
            } else {
                throw Problem(path: "", message: "")
            }
        }
        return me
    }

    /// Checks and writes the batch's rows inside the import's transaction; a batch that breaks a
    /// rule goes through the object path, which reports it.
    mutating func writeRows() throws(JSONImportError) {
        guard let batch = rows else { return }
        rows!.rows.removeAll(keepingCapacity: true)
        rows!.records = 0
        rows!.start = nil
        guard !batch.rows.isEmpty, let start = batch.start else { return }
        let store = context.store
        var written = false
        do throws(StoreError) {
            guard Self.passes(batch.rows), try Self.unique(batch.rows, store) else { throw StoreError(.validation, "") }
            try store.writeTransaction { () throws(StoreError) in
                do throws(SQLiteError) {
                    let keys = try store.allocateKeys(for: batch.rows.map(\.info))
                    written = true
                    try write(batch.rows, keys: keys)
                    noteStored(batch.rows, keys)
                    rowsWritten += batch.rows.count
                } catch {
                    throw error.storeError
                }
            }
        } catch {
            // SQLite refused a write: the import's transaction rolls back with its message.
            if written { throw JSONImportError(lines: error.failures.map { JSONImportError.errorLine($0.message) }) }
            // A rule is broken: the object path names the records as a save names them.
            var replay = start.stream
            let entity = batch.rows[0].info.name
            for n in start.record..<start.record + batch.records {
                guard let record = try Self.next(&replay) else { break }
                try add(record, number: n, entity: entity)
            }
            try saveBatch()
        }
    }

    /// Inserts `rows` under `keys` (one each), with their foreign keys (every one, NULL for none)
    /// and order positions: each entity's rows together, several to a statement
    /// (`RowWriter.insertRows`), in batch order within their table, so the keys and rowids are
    /// those of writing the rows one by one.
    private func write(_ rows: [ImportRow], keys: [Int64]) throws(SQLiteError) {
        let writer = RowWriter(store: context.store)
        // Few entities: a search of the groups beats hashing every row's entity.
        var groups: [(info: EntityInfo, rows: [Int])] = []
        for n in rows.indices {
            if let g = groups.firstIndex(where: { $0.info === rows[n].info }) {
                groups[g].rows.append(n)
            } else {
                groups.append((rows[n].info, [n]))
            }
        }
        try rows.withUnsafeBufferPointer { (rows) throws(SQLiteError) in
            for (info, members) in groups {
                try writer.insertRows(
                    info, count: members.count, key: { keys[members[$0]] },
                    attributes: { rows[members[$0]].attributes }
                ) { (r, put) throws(SQLiteError) in
                    let n = members[r]
                    for o in rows[n].orders { try put(o.column, o.position) }
                    for (i, c) in info.foreignKeyColumns.enumerated() {
                        guard let c else { continue }
                        let link = rows[n].links[i]
                        try put(c, link < 0 ? nil : keys[link])
                    }
                }
            }
        }
    }

    /// Whether every row keeps its attributes' rules and its relationships' counts (what
    /// `validate` checks of an inserted object).
    private static func passes(_ rows: [ImportRow]) -> Bool {
        for row in rows where row.info.entity.hasRules {
            let e = row.info.entity
            for (i, a) in e.attributes.enumerated() where a.hasRules {
                if AttributeValidation.problem(row.attributes[i], a, regex: row.info.regexes[i]) != nil { return false }
            }
            for (i, rel) in e.relationships.enumerated() {
                let d = rel.description
                if rel.isToMany {
                    let n = row.links[i]
                    if (d.minCount > 0 && n < d.minCount) || (d.maxCount > 0 && n > d.maxCount) { return false }
                } else if !d.isOptional, row.links[i] < 0 {
                    return false
                }
            }
        }
        return true
    }

    /// Whether no two rows, and no row and a stored row, have the same values for one of their
    /// entity's uniqueness constraints (nil values never collide).
    private static func unique(_ rows: [ImportRow], _ store: PersistentStore) throws(StoreError) -> Bool {
        var seen: [String: Set<[SQLValue]>] = [:]
        let q = PersistentStore.q
        for row in rows {
            let e = row.info.entity
            for c in e.constraints {
                var key: [SQLValue] = []
                for i in c { key.append(ColumnCodec.encode(row.attributes[i], e.attributes[i].type)) }
                if key.contains(where: { if case .null = $0 { true } else { false } }) { continue }
                let tests = c.map { "\(q(e.attributes[$0].column)) = ?" }.joined(separator: " AND ")
                guard seen[e.name + ":" + tests, default: []].insert(key).inserted else { return false }
                // The entity has no sub-entities (`plans`): its table holds only its rows.
                do throws(SQLiteError) {
                    if try !store.rows("SELECT 1 FROM \(q(e.table)) WHERE \(tests) LIMIT 1", key).isEmpty {
                        return false
                    }
                } catch {
                    throw error.storeError
                }
            }
        }
        return true
    }

    /// Remembers the written rows an object of a later batch may collide with (`storedOrigins`),
    /// as `notePending` does for objects.
    private mutating func noteStored(_ rows: [ImportRow], _ keys: [Int64]) {
        for (n, row) in rows.enumerated() where !row.info.entity.constraints.isEmpty {
            let id = ObjectID(row.info.names, key: .permanent(keys[n]))
            storedOrigins[id.description] = (row.origin.record, path(of: row.origin) { rows[$0].origin })
        }
    }
}
