// Saving: delete rules first (cascade, nullify, deny, no action), then validation of every inserted
// and updated object (each broken rule collected, as Core Data reports several at once), then
// uniqueness against the other pending objects and the stored rows, then one `BEGIN IMMEDIATE`
// transaction that writes every row. Nothing is written unless everything passes; on failure the
// context keeps its changes. `RowWriter` here is the one place that writes save SQL (batch requests
// and document entities write through it too); the store only runs it.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite

extension ManagedObjectContext {
    /// Validates and writes every change in one transaction: all or nothing.
    ///
    /// ```swift
    /// do { try context.save() } catch where error.kind == .uniqueness { print(error.message) }
    /// ```
    public func save() throws(StoreError) {
        // A typed read or write that failed since the last save fails this one (TypedAccess.swift).
        if !accessErrors.isEmpty { try throwAccessErrors() }
        // A child writes nothing: its changes go into its parent (ParentContexts.swift).
        if let parent { return try push(into: parent) }
        guard try beginSave() != nil else { return }
        // Objects whose save has nothing to write (changed and changed back) still count as updated.
        let inserted = insertedList
        var updated = Array(updatedSet).sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
        var deleted = Array(deletedSet).sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
        // Rows deleted in the store that the merge policy writes again, with the object's values.
        var reinserted: [ManagedObject] = []
        // Updated objects none of whose row's columns changed: their version stays.
        var unwritten = Set<ObjectIdentifier>()
        do {
            try store.writeTransaction { () throws(StoreError) in
                do {
                    // Versions first: a conflict throws (`.error`) or is merged before anything is written.
                    (updated, deleted, reinserted) = try resolveConflicts(updated: updated, deleted: deleted)
                    for o in reinserted { o.snapshot = nil }
                    // A row deleted in the store comes back under a new key: a stale copy of the
                    // old row elsewhere then meets a deleted row, never a row that merely has its
                    // old version number again. An insert given a permanent ID before
                    // (`obtainPermanentIDs`) keeps it.
                    let fresh = inserted + reinserted
                    if !fresh.isEmpty {
                        let keys = try store.allocateKeys(for: fresh.map(\.info))
                        for (n, o) in fresh.enumerated() {
                            o.assignedKey = (o.pendingInsert ? o.objectID.primaryKey : nil) ?? keys[n]
                        }
                    }
                    try checkStoredUniqueness(inserted: inserted, updated: updated)
                    unwritten = try RowWriter(store: store).write(
                        inserted: inserted + reinserted, updated: updated, deleted: deleted)
                    if store.tracksHistory {
                        try recordHistory(inserted: inserted + reinserted, updated: updated, deleted: deleted)
                    }
                } catch let e as SQLiteError {
                    throw e.storeError
                } catch let e as StoreError {
                    throw e
                } catch {
                    throw StoreError(.sqlite, "\(error)")
                }
            }
        } catch {
            // Nothing was written: the objects keep their temporary IDs.
            for o in inserted + reinserted { o.assignedKey = nil }
            throw error
        }
        // Committed: temporary IDs become permanent, the committed state is the current one.
        // Child contexts still hold the temporary IDs: they take the permanent ones too.
        let promoted = !hasChildren ? [] : inserted.filter(\.objectID.isTemporaryID)
        let temporaryKeys = promoted.map(\.objectID.key)
        let saved = committed(
            fresh: inserted + reinserted, updated: updated, deleted: deleted, unwritten: unwritten)
        for o in inserted { o.pendingInsert = false }
        insertedList = []
        updatedSet = []
        deletedSet = []
        post(.didSave(saved))
        if hasChildren { didSaveWithChildren(saved, promoted: zip(temporaryKeys, promoted).map { ($0, $1) }) }
    }

    /// After the commit: new rows' objects take their permanent IDs, updated ones their new
    /// versions (unless nothing of them was written), deleted ones leave. The did-save's changes.
    private func committed(
        fresh: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject], unwritten: Set<ObjectIdentifier>
    ) -> ChangeSet {
        var saved = ChangeSet()
        saved.inserted.reserveCapacity(fresh.count)
        registry.reservePermanent(fresh.count, fresh.first?.info.names.space ?? 0)
        for o in fresh {
            registry[o.objectID] = nil
            let pk = o.assignedKey!
            temporaryRenames.add(o.objectID.key, pk)
            o.assignedKey = nil
            o.objectID = ObjectID(o.info.names, key: .permanent(pk))
            o.version = o.info.firstVersion
            registry.addPermanent(pk, o)
            saved.inserted.append(o.objectID)
        }
        let reportsKeys = !observers.isEmpty
        for o in updated {
            if reportsKeys { saved.updatedKeys[o.objectID] = changedKeys(of: o) }
            o.snapshot = nil
            if !unwritten.contains(ObjectIdentifier(o)) { o.version += 1 }
            saved.updated.append(o.objectID)
        }
        for o in deleted {
            registry[o.objectID] = nil
            Self.detach(o)
            saved.deleted.append(o.objectID)
        }
        return saved
    }

    /// The start of every save: delete rules, the will-save notification and validation. The
    /// changes to save, or nil when there are none.
    func beginSave() throws(StoreError) -> ChangeSet? {
        try processPendingChanges()
        guard hasChanges else { return nil }
        let changes = ChangeSet(
            inserted: insertedList.map(\.objectID), updated: updatedSet.map(\.objectID),
            deleted: deletedSet.map(\.objectID))
        post(.willSave(changes))
        // Derived attributes (Derivations.swift): computed before they are validated.
        if !store.model.derivations.isEmpty { try deriveChangedValues() }
        try validate()
        return changes
    }

    /// The derived values of this save's objects and of the objects whose expressions read them.
    private func deriveChangedValues() throws(StoreError) {
        try deriveValues(
            from: insertedList + updatedSet.sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) },
            deleted: deletedSet
        ) {
            (o, i, v) throws(StoreError) in
            try willChange(o)
            o.attributes[i] = v
        }
    }

    // MARK: Delete rules

    /// Applies the delete rules of every deleted object, until no rule deletes anything more.
    func propagateDeletes() throws(StoreError) {
        var done = Set<ObjectIdentifier>()
        var queue = Array(deletedSet)
        var denied: [StoreError.Failure] = []
        while let o = queue.popLast() {
            guard done.insert(ObjectIdentifier(o)).inserted else { continue }
            for (i, rel) in o.info.entity.relationships.enumerated() {
                let targets: [ManagedObject]
                switch try o.link(i) {
                case .one(let t): targets = t.map { [$0] } ?? []
                case .many(let m): targets = m
                case .oneKey, .subEntityKey, .nilMany: targets = []
                }
                switch rel.description.deleteRule {
                case .deny:
                    let alive = targets.filter { !deletedSet.contains($0) }
                    if !alive.isEmpty {
                        denied.append(
                            StoreError.Failure(
                                "\(o.objectID) cannot be deleted: its relationship '\(rel.name)' still holds \(alive.map(\.objectID.description).joined(separator: ", ")) (delete rule deny)",
                                objectID: o.objectID, entity: o.info.name, keys: [rel.name], constraint: .deleteDeny,
                                relatedObjectIDs: alive.map(\.objectID)))
                    }
                case .cascade:
                    for t in targets where !deletedSet.contains(t) {
                        try delete(t)
                        if deletedSet.contains(t) { queue.append(t) }
                    }
                case .nullify:
                    if let inverse = rel.inverse {
                        for t in targets where !deletedSet.contains(t) { try unlink(o, from: t, inverse: inverse) }
                    }
                case .noAction:
                    break
                }
            }
        }
        if !denied.isEmpty { throw StoreError(.deleteDenied, failures: denied) }
    }

    // MARK: Validation

    func validate() throws(StoreError) {
        let objects = insertedList + updatedSet.sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
        try validate(objects, others: [], deleted: deletedSet)
    }

    /// Validates `objects` as this context's save does: each object's rules (relationships
    /// judged against `deleted`), then uniqueness among them and `others`, pending objects that
    /// are not validated themselves (collisions among `others` alone are not reported). A child's
    /// push validates the parent's objects it changes this way, before the parent changes.
    func validate(_ objects: [ManagedObject], others: [ManagedObject], deleted: Set<ManagedObject>)
        throws(StoreError)
    {
        var failures: [StoreError.Failure] = []
        for o in objects {
            let e = o.info.entity
            if let d = e.description.document {
                let document = o.attributes.first ?? .null
                if let p = d.problem(document) {
                    failures.append(
                        .init(
                            "\(o.objectID) \(p)", objectID: o.objectID, entity: o.info.name, value: document,
                            constraint: .type))
                }
                continue
            }
            guard e.hasRules else { continue }
            for (i, a) in e.attributes.enumerated() where a.hasRules {
                if let p = AttributeValidation.problem(o.attributes[i], a, regex: o.info.regexes[i]) {
                    failures.append(Self.failure(o, a.name, o.attributes[i], p))
                }
            }
            for (i, rel) in e.relationships.enumerated() {
                if let p = try countProblem(o, i, rel, deleted: deleted) { failures.append(p) }
            }
        }
        failures += pendingUniquenessFailures(others + objects, reportingFrom: others.count)
        if !failures.isEmpty {
            let kind: StoreError.Kind =
                failures.allSatisfy { $0.constraint == .uniqueness } ? .uniqueness : .validation
            throw StoreError(kind, failures: failures)
        }
    }

    /// The failure of `o`'s `key` holding `value` that broke `problem`'s rule, worded
    /// `Person (temporary 1) 'age': -1 is below the minimum 0`.
    static func failure(_ o: ManagedObject, _ key: String, _ value: Value, _ problem: AttributeValidation.Problem)
        -> StoreError.Failure
    {
        StoreError.Failure(
            "\(o.objectID) '\(key)': \(problem.message)", objectID: o.objectID, entity: o.info.name, keys: [key],
            value: value, constraint: problem.constraint)
    }

    /// The count bound (to-many) or requirement (to-one) that relationship `i` of `o` breaks,
    /// with the objects in `deleted` gone.
    private func countProblem(
        _ o: ManagedObject, _ i: Int, _ rel: ResolvedRelationship, deleted: Set<ManagedObject>
    ) throws(StoreError) -> StoreError.Failure? {
        let d = rel.description
        if rel.isToMany {
            guard d.minCount > 0 || d.maxCount > 0 else { return nil }
            let n = try o.many(i).filter { !deleted.contains($0) }.count
            if d.minCount > 0, n < d.minCount {
                return Self.failure(
                    o, rel.name, .integer(Int64(n)), ("\(n) objects, fewer than the minimum \(d.minCount)", .minCount))
            }
            if d.maxCount > 0, n > d.maxCount {
                return Self.failure(
                    o, rel.name, .integer(Int64(n)), ("\(n) objects, more than the maximum \(d.maxCount)", .maxCount))
            }
        } else if !d.isOptional {
            let t = try o.one(i)
            if t == nil || deleted.contains(t!) { return Self.failure(o, rel.name, .null, ("is required", .required)) }
        }
        return nil
    }

    /// Constraint values of `o` for constraint `c` as they are stored (nil when one is nil: nils
    /// never collide).
    static func constraintKey(_ o: ManagedObject, _ c: [Int]) -> [SQLValue]? {
        var key: [SQLValue] = []
        for i in c {
            let v = ColumnCodec.encode(o.attributes[i], o.info.entity.attributes[i].type)
            if case .null = v { return nil }
            key.append(v)
        }
        return key
    }

    /// Collisions among the pending objects themselves, reported for the objects from position
    /// `first` on (each against the ones before it).
    func pendingUniquenessFailures(_ objects: [ManagedObject], reportingFrom first: Int = 0) -> [StoreError.Failure] {
        var failures: [StoreError.Failure] = []
        var seen: [String: [[SQLValue]: ManagedObject]] = [:]
        for (n, o) in objects.enumerated() {
            for c in o.info.entity.constraints {
                guard let key = Self.constraintKey(o, c) else { continue }
                let scope =
                    o.info.entity.root + ":" + c.map { o.info.entity.attributes[$0].name }.joined(separator: ",")
                if let other = seen[scope]?[key] {
                    guard n >= first else { continue }
                    failures.append(
                        Self.uniquenessFailure(
                            o, c, other.objectID,
                            "\(o.objectID) and \(other.objectID) have the same \(Self.describe(c, o)) (uniqueness constraint [\(c.map { o.info.entity.attributes[$0].name }.joined(separator: ", "))])"
                        ))
                } else {
                    seen[scope, default: [:]][key] = o
                }
            }
        }
        return failures
    }

    static func describe(_ c: [Int], _ o: ManagedObject) -> String {
        c.map { "\(o.info.entity.attributes[$0].name) \(o.attributes[$0])" }.joined(separator: ", ")
    }

    /// `o` colliding with `other` on constraint `c`: the constraint's keys, and its value (the
    /// values, as an array, for a constraint of several attributes).
    static func uniquenessFailure(_ o: ManagedObject, _ c: [Int], _ other: ObjectID, _ message: String)
        -> StoreError.Failure
    {
        StoreError.Failure(
            message, objectID: o.objectID, entity: o.info.name, keys: c.map { o.info.entity.attributes[$0].name },
            value: c.count == 1 ? o.attributes[c[0]] : .array(c.map { o.attributes[$0] }), constraint: .uniqueness,
            relatedObjectIDs: [other])
    }

    /// Collisions with stored rows that this save does not change (inside the write transaction,
    /// so no other writer can slip in between the check and the write).
    func checkStoredUniqueness(inserted: [ManagedObject], updated: [ManagedObject]) throws(StoreError) {
        let changing = Set(updated.map(\.objectID) + deletedSet.map(\.objectID))
        var failures: [StoreError.Failure] = []
        for o in [inserted, updated].joined() {
            for c in o.info.entity.constraints {
                guard let key = Self.constraintKey(o, c) else { continue }
                let e = o.info.entity
                let q = PersistentStore.q
                var family: [Int64] = []
                for name in try store.info(e.root).entity.family { family.append(try store.info(name).entity.number) }
                let tests = c.map { "\(q(e.attributes[$0].column)) = ?" }.joined(separator: " AND ")
                let sql =
                    "SELECT \(q(Storage.primaryKey)) FROM \(q(e.table)) WHERE \(tests) AND \(q(Storage.entityColumn)) IN (\(family.map { _ in "?" }.joined(separator: ", ")))"
                let rows: [[SQLValue]]
                do throws(SQLiteError) { rows = try store.rows(sql, key + family.map { .integer($0) }) } catch {
                    throw error.storeError
                }
                for row in rows {
                    guard case .integer(let pk) = row[0] else { continue }
                    let stored = ObjectID(o.info.names, key: .permanent(pk))
                    guard !changing.contains(stored), stored != o.objectID else { continue }
                    failures.append(
                        Self.uniquenessFailure(
                            o, c, stored,
                            "\(o.objectID) has the same \(Self.describe(c, o)) as the stored \(stored) (uniqueness constraint [\(c.map { e.attributes[$0].name }.joined(separator: ", "))])"
                        ))
                }
            }
        }
        if !failures.isEmpty { throw StoreError(.uniqueness, failures: failures) }
    }
}

/// Writes rows for one save or batch request, inside its transaction: the one place save SQL is made.
struct RowWriter {
    let store: PersistentStore
    let q = PersistentStore.q
    /// Statements this writer prepared: collection tables' inserts (`collectionStatement`) and
    /// multi-row inserts (`statement(_:rows:)`).
    private let statements = Statements()

    /// Statements a writer prepared, kept while it writes.
    private final class Statements {
        var byTable: [String: SQLiteStatement] = [:]
        var byText: [String: SQLiteStatement] = [:]
    }

    /// The row's key: its permanent one, or the one this save gave an inserted object.
    /// The key a row is written under: the one this save gave it (an insert, or a row written
    /// again under a new key), else its ID's.
    func key(_ o: ManagedObject) -> Int64? { o.assignedKey ?? o.objectID.primaryKey }

    /// Hands `put` the value of every column of `o`'s row that the object decides (its table's
    /// other columns are NULL), by position in the table's column order; a scalar attribute's
    /// value goes to `putAttribute` with its type instead, still to be encoded, where it lies in
    /// the object's array (a `Value` copied out is a call to copy and another to destroy).
    @inline(__always)
    func columns<E: Error>(
        _ o: ManagedObject, version: Int64, _ put: (Int, SQLValue) throws(E) -> Void,
        putAttribute: (Int, UnsafePointer<Value>, AttributeType) throws(E) -> Void
    ) throws(E) {
        let info = o.info
        try attributeColumns(info, key: key(o)!, version: version, o.attributes, put, putAttribute: putAttribute)
        if info.isDocument { return }
        for (i, c) in info.foreignKeyColumns.enumerated() {
            guard let c else { continue }
            switch o.links[i] {
            case .one(let t)?: try put(c, t.flatMap { key($0) }.map { .integer($0) } ?? .null)
            case let l?: try put(c, l.unloadedKey.flatMap { $0 }.map { .integer($0) } ?? .null)
            default: try put(c, .null)
            }
        }
    }

    /// `columns` without the relationships: the key, entity number and version, and the columns
    /// of `attributes` (an object's, or a row's that no object holds).
    @inline(__always)
    private func attributeColumns<E: Error>(
        _ info: EntityInfo, key: Int64, version: Int64, _ attributes: [Value], _ put: (Int, SQLValue) throws(E) -> Void,
        putAttribute: (Int, UnsafePointer<Value>, AttributeType) throws(E) -> Void
    ) throws(E) {
        try put(0, .integer(key))
        try put(1, .integer(info.entity.number))
        try put(2, .integer(version))
        let types = info.attributeTypes
        if info.entity.document != nil {
            // A document's exact form; its layout is written after the row (`writeDocument`).
            try put(info.attributeColumns[0], .blob(ValueCodec.encode(attributes.first ?? .null)))
            return
        }
        try attributes.withUnsafeBufferPointer { (attributes) throws(E) in
            for i in types.indices {
                if !info.isScalar[i] {
                    if case .array(let xs) = attributes[i] {
                        try put(info.attributeColumns[i], .integer(Int64(xs.count)))
                    }
                    continue
                }
                if info.uuidBytes, types[i] == .uuid {
                    try put(info.attributeColumns[i], ColumnCodec.uuidBytes(attributes[i]))
                    continue
                }
                try putAttribute(info.attributeColumns[i], attributes.baseAddress! + i, types[i])
                if let x = info.exactColumns[i] { try put(x, ColumnCodec.exactText(attributes[i])) }
                if let m = info.mixedColumns[i] {
                    // The shape and value cells of a mixed attribute; the others stay NULL.
                    var cells = [SQLValue](repeating: .null, count: info.layout.columns.count)
                    MixedCodec.cells(attributes[i], m, into: &cells)
                    for c in m.compactMap({ $0 }) {
                        if case .null = cells[c] { continue }
                        try put(c, cells[c])
                    }
                }
            }
        }
    }

    /// The row of `o` in its table's column order.
    func row(_ o: ManagedObject, version: Int64) -> [SQLValue] {
        var row = [SQLValue](repeating: .null, count: o.info.layout.columns.count)
        columns(
            o, version: version, { c, v in row[c] = v },
            putAttribute: { c, v, t in row[c] = ColumnCodec.encode(v.pointee, t) })
        return row
    }

    func insert(_ o: ManagedObject) throws(SQLiteError) {
        try insertRow(o.info, key: key(o)!, o.attributes) { (_, put) throws(SQLiteError) in
            for (i, c) in o.info.foreignKeyColumns.enumerated() {
                guard let c else { continue }
                switch o.links[i] {
                case .one(let t)?: try put(c, t.flatMap { key($0) })
                case let l?: try put(c, l.unloadedKey.flatMap { $0 })
                default: try put(c, nil)
                }
            }
        }
        try writeDocument(o, replacing: false)
    }

    /// Inserts one row and its collections: an object's (`insert(_:)`), with its entity, key and
    /// attribute values. `links` hands the integer columns the row's relationships decide (every
    /// foreign key, nil for NULL, and order columns), by position, to the `put` it is given (with
    /// the row's number, 0, as `insertRows` numbers its rows).
    @inline(__always)
    func insertRow(
        _ info: EntityInfo, key pk: Int64, _ attributes: [Value],
        links: (Int, (Int, Int64?) throws(SQLiteError) -> Void) throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
        // Bound column by column into the entity's own statement: no row array, and no lookup of
        // the statement by its text for every object.
        let s = try store.insertStatement(info)
        // Left over from the previous row, a column this row does not bind would keep its value.
        if !info.insertBindsEveryColumn { s.clearBindings() }
        try bindRow(info, key: pk, attributes, to: s, from: 1, row: 0, links: links)
        while try s.step() {}
        try s.reset()
        try writeCollections(info, key: pk, attributes, replacing: nil)
    }

    /// Inserts `count` rows of `info`'s entity that no object holds (`sift store import`'s rows,
    /// StoreImportRows.swift: attribute values coerced and validated), row `n` under `key(n)`, then
    /// the elements of their collections, several rows to a statement (`rowsPerStatement`): each
    /// run of a statement costs SQLite nearly as much again as a small row it writes (the
    /// benchmark's 500,000 rows in C: 1.72 s one to a statement, 1.03 s 32 to one). Rows and elements
    /// go in the order given, so keys and rowids are those of inserting them one by one. `links`
    /// hands row `n`'s foreign keys and order columns to `put`, as `insertRow`'s does.
    func insertRows(
        _ info: EntityInfo, count: Int, key: (Int) -> Int64, attributes: (Int) -> [Value],
        links: (Int, (Int, Int64?) throws(SQLiteError) -> Void) throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
        let width = info.layout.columns.count
        var n = 0
        while n < count {
            let k = Self.rowsPerStatement(count - n, width: width)
            let s = try k == 1 ? store.insertStatement(info) : statement(info.insertSQL, rows: k)
            if !info.insertBindsEveryColumn { s.clearBindings() }
            for r in n..<n + k {
                try bindRow(info, key: key(r), attributes(r), to: s, from: 1 + (r - n) * width, row: r, links: links)
            }
            while try s.step() {}
            try s.reset()
            n += k
        }
        let e = info.entity
        guard e.hasCollections else { return }
        for (i, a) in e.attributes.enumerated() {
            guard let t = a.valueTable ?? a.mixed?.valueTable else { continue }
            var elements: [(owner: Int64, order: Int64, value: SQLValue)] = []
            for r in 0..<count {
                guard case .array(let xs) = attributes(r)[i] else { continue }
                for (n, x) in xs.enumerated() {
                    elements.append(
                        (key(r), Int64(n), a.mixed.map { MixedCodec.element(x, $0) } ?? ColumnCodec.encode(x, a.type)))
                }
            }
            try insert(elements, into: t)
        }
    }

    /// Binds the columns of row number `row` to `s`'s parameters from `first` on (a multi-row
    /// statement's rows follow one another, a table's width apart).
    @inline(__always)
    private func bindRow(
        _ info: EntityInfo, key pk: Int64, _ attributes: [Value], to s: SQLiteStatement, from first: Int, row: Int,
        links: (Int, (Int, Int64?) throws(SQLiteError) -> Void) throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
        try attributeColumns(
            info, key: pk, version: info.firstVersion, attributes,
            { (c, v) throws(SQLiteError) in
                // Keys, entity numbers and versions: the integer bind without the general switch.
                if case .integer(let k) = v {
                    try s.bind(int64: k, at: c + first)
                } else {
                    try s.bind(v, at: c + first)
                }
            },
            putAttribute: { (c, v, t) throws(SQLiteError) in try ColumnCodec.bind(v, t, to: s, at: c + first) })
        if !info.isDocument {
            try links(row) { (c, v) throws(SQLiteError) in
                if let v { try s.bind(int64: v, at: c + first) } else { try s.bind(.null, at: c + first) }
            }
        }
    }

    /// Parameters one statement may have in any SQLite build (`SQLITE_MAX_VARIABLE_NUMBER`'s
    /// default before 3.32; later builds allow 32,766).
    static let variableLimit = 999

    /// How many of `remaining` rows of `width` columns the next insert statement writes: a power
    /// of two, at most 64 and within `variableLimit`, so that an import prepares at most seven
    /// statements per table whatever its batches' sizes (the last of a table's rows in a batch
    /// go in smaller statements, down to the one-row statement).
    ///
    /// ```swift
    /// RowWriter.rowsPerStatement(100, width: 10)  // 64
    /// RowWriter.rowsPerStatement(100, width: 20)  // 32 (49 rows would need 980 parameters)
    /// RowWriter.rowsPerStatement(5, width: 10)    // 4
    /// ```
    static func rowsPerStatement(_ remaining: Int, width: Int) -> Int {
        let most = min(remaining, 64, max(1, variableLimit / max(1, width)))
        return 1 << (Int.bitWidth - 1 - most.leadingZeroBitCount)
    }

    /// Inserts collection elements (owner's key, place, encoded value) into table `t`, in order,
    /// several to a statement.
    private func insert(_ elements: [(owner: Int64, order: Int64, value: SQLValue)], into t: String)
        throws(SQLiteError)
    {
        var n = 0
        while n < elements.count {
            let k = Self.rowsPerStatement(elements.count - n, width: 3)
            let single = try collectionStatement(t)
            let s = try k == 1 ? single : statement(single.sql, rows: k)
            for r in n..<n + k {
                let at = (r - n) * 3
                try s.bind(int64: elements[r].owner, at: at + 1)
                try s.bind(int64: elements[r].order, at: at + 2)
                try s.bind(elements[r].value, at: at + 3)
            }
            while try s.step() {}
            try s.reset()
            n += k
        }
    }

    /// The statement inserting `rows` rows with `single`'s `INSERT … VALUES (…)` (one row),
    /// its value list repeated; made once per writer.
    private func statement(_ single: String, rows: Int) throws(SQLiteError) -> SQLiteStatement {
        let key = "\(rows) \(single)"
        if let s = statements.byText[key] { return s }
        guard let values = single.range(of: " VALUES ") else { return try store.statement(single) }
        let tuple = String(single[values.upperBound...])
        let sql = String(single[..<values.upperBound]) + Array(repeating: tuple, count: rows).joined(separator: ", ")
        let s = try store.statement(sql)
        statements.byText[key] = s
        return s
    }

    /// Writes a save's rows: deletes, inserts, updates, then links and counts. Returns the updated
    /// objects whose rows were not written (`update`).
    func write(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]) throws(SQLiteError)
        -> Set<ObjectIdentifier>
    {
        var unwritten = Set<ObjectIdentifier>()
        for o in deleted { try delete(o) }
        for o in inserted { try insert(o) }
        for o in updated where try !update(o) { unwritten.insert(ObjectIdentifier(o)) }
        try writeRelationships(of: [inserted, updated].joined())
        return unwritten
    }

    /// What the rows of `objects` hold of their relationships beyond their own columns, once
    /// every row of the change is written: join-table rows and order columns, count columns, and
    /// the entity numbers beside to-ones into hierarchies (a batch delete's nullified rows too).
    func writeRelationships<S: Sequence<ManagedObject>>(of objects: S) throws(SQLiteError) {
        for o in objects { try writeLinks(o) }
        for o in objects where o.info.hasCountColumns { try writeCounts(o) }
        for o in objects where o.info.hasEntityColumns { try writeEntityColumns(o) }
    }

    /// Core Data's layout: each to-one into a hierarchy keeps the destination's entity number
    /// beside its key (`Z<n>_<REL>`), copied here from the destination's row once every row of
    /// the save is written (a link not loaded is a key only, and the row knows its entity).
    private func writeEntityColumns(_ o: ManagedObject) throws(SQLiteError) {
        guard let pk = key(o) else { return }
        let e = o.info.entity
        for rel in e.relationships {
            guard let column = rel.entityColumn, case .foreignKey(let fk) = rel.storage,
                let destination = store.model.resolved[rel.destination]
            else { continue }
            try store.run(
                "UPDATE \(q(e.table)) SET \(q(column)) = (SELECT d.\(q(Storage.entityColumn)) FROM \(q(destination.table)) d WHERE d.\(q(Storage.primaryKey)) = \(q(e.table)).\(q(fk))) WHERE \(q(Storage.primaryKey)) = ?",
                [.integer(pk)])
        }
    }

    /// Writes the columns of the properties `o` changed since its snapshot and raises the row's
    /// version (the save checked it first); every column when there is no snapshot. A row none
    /// of whose own columns changed (only to-manys, which live in other rows and join tables, or
    /// values changed and changed back) is not written and keeps its version: returns false.
    @discardableResult
    func update(_ o: ManagedObject) throws(SQLiteError) -> Bool {
        let r = row(o, version: o.version + 1)
        let info = o.info
        guard let s = o.snapshot, info.entity.document == nil else {
            try store.run(info.updateSQL, info.updateColumns.map { r[$0] })
            try writeRest(o)
            return true
        }
        var columns = [2]
        for i in info.attributeTypes.indices where !o.attributes[i].isIdentical(to: s.attributes[i]) {
            columns += storedColumns(ofAttribute: i, info)
        }
        for (i, c) in info.foreignKeyColumns.enumerated() {
            if let c, !Link.same(o.links[i], s.links[i]) { columns.append(c) }
        }
        try writeRest(o)
        guard columns.count > 1 else { return false }
        // Transformable values go with every write of the row: one read in an earlier stored form
        // is written in the current one (the version check makes the unchanged value the stored one).
        for i in info.attributeTypes.indices where info.attributeTypes[i] == .transformable {
            if !columns.contains(info.attributeColumns[i]) { columns += storedColumns(ofAttribute: i, info) }
        }
        // Prepared once per set of columns and kept by the entity: no lookup by the statement's
        // text, and no array of bindings, for every object.
        let statement: SQLiteStatement
        if let known = info.partialUpdates[columns] {
            statement = known
        } else {
            let sets = columns.map { "\(q(info.layout.columns[$0])) = ?" }.joined(separator: ", ")
            statement = try store.statement(
                "UPDATE \(q(info.layout.table)) SET \(sets) WHERE \(q(Storage.primaryKey)) = ?")
            info.partialUpdates[columns] = statement
        }
        for (n, c) in columns.enumerated() { try statement.bind(r[c], at: n + 1) }
        try statement.bind(r[0], at: columns.count + 1)
        while try statement.step() {}
        try statement.reset()
        return true
    }

    /// The columns that hold attribute `i` of `info`'s entity.
    private func storedColumns(ofAttribute i: Int, _ info: EntityInfo) -> [Int] {
        [info.attributeColumns[i]] + [info.exactColumns[i]].compactMap { $0 }
            + (info.mixedColumns[i] ?? []).compactMap { $0 }
    }

    /// An updated object's collection and document rows.
    private func writeRest(_ o: ManagedObject) throws(SQLiteError) {
        try writeCollections(o, all: false)
        try writeDocument(o, replacing: true)
    }

    func delete(_ o: ManagedObject) throws(SQLiteError) {
        guard let pk = o.objectID.primaryKey else { return }
        let e = o.info.entity
        try store.run("DELETE FROM \(q(e.table)) WHERE \(q(Storage.primaryKey)) = ?", [.integer(pk)])
        if let layout = e.document { try deleteDocumentRows(layout, pk) }
        for a in e.attributes {
            if let t = a.valueTable ?? a.mixed?.valueTable {
                try store.run("DELETE FROM \(q(t)) WHERE \(q(Storage.owner)) = ?", [.integer(pk)])
            }
        }
        // Join-table rows on either side go with the object.
        for (table, columns) in store.joinTables(of: e.name) {
            for c in columns { try store.run("DELETE FROM \(q(table)) WHERE \(q(c)) = ?", [.integer(pk)]) }
        }
    }

    /// Child rows of collection attributes (all of them for an insert; changed ones otherwise).
    func writeCollections(_ o: ManagedObject, all: Bool) throws(SQLiteError) {
        guard o.info.entity.hasCollections else { return }
        try writeCollections(o.info, key: key(o)!, o.attributes, replacing: all ? nil : o.snapshot?.attributes ?? [])
    }

    /// Child rows of the collection attributes of a row keyed `pk`: all of them for a new row
    /// (`replacing` nil); otherwise those that differ from `replacing`'s values (every one when
    /// it is empty: no snapshot), after deleting the old ones.
    private func writeCollections(_ info: EntityInfo, key pk: Int64, _ attributes: [Value], replacing: [Value]?)
        throws(SQLiteError)
    {
        let e = info.entity
        guard e.hasCollections else { return }
        for (i, a) in e.attributes.enumerated() {
            guard let t = a.valueTable ?? a.mixed?.valueTable else { continue }
            if let before = replacing {
                if before.indices.contains(i), before[i].isIdentical(to: attributes[i]) { continue }
                try store.run("DELETE FROM \(q(t)) WHERE \(q(Storage.owner)) = ?", [.integer(pk)])
            }
            guard case .array(let xs) = attributes[i], !xs.isEmpty else { continue }
            try insert(
                xs.enumerated().map { (n, x) in
                    (pk, Int64(n), a.mixed.map { MixedCodec.element(x, $0) } ?? ColumnCodec.encode(x, a.type))
                }, into: t)
        }
    }

    /// The statement inserting an element into collection table `t`, prepared once per writer.
    private func collectionStatement(_ t: String) throws(SQLiteError) -> SQLiteStatement {
        if let s = statements.byTable[t] { return s }
        let s = try store.statement(
            "INSERT INTO \(q(t)) (\(q(Storage.owner)), \(q(Storage.order)), \(q(Storage.value))) VALUES (?, ?, ?)")
        statements.byTable[t] = s
        return s
    }

    /// The count columns of `o`'s to-manys that allow nil: NULL for nil, otherwise counted from
    /// the rows that hold the links, after every row of the save is written (an object's members
    /// may be written before or after it, and another context may have added some since this
    /// one read them).
    func writeCounts(_ o: ManagedObject) throws(SQLiteError) {
        let e = o.info.entity
        let pk = key(o)!
        for (i, rel) in e.relationships.enumerated() {
            guard let c = rel.countColumn else { continue }
            let set = "UPDATE \(q(e.table)) SET \(q(c)) = "
            let row = " WHERE \(q(Storage.primaryKey)) = ?"
            if case .nilMany? = o.links[i] {
                try store.run(set + "NULL" + row, [.integer(pk)])
                continue
            }
            let count: String
            switch rel.storage {
            case .inverseForeignKey(let table, let column, _), .joinTable(let table, let column, _, _):
                count = "(SELECT count(*) FROM \(q(table)) WHERE \(q(column)) = ?)"
            case .foreignKey:
                continue
            }
            try store.run(set + count + row, [.integer(pk), .integer(pk)])
        }
    }

    /// Join-table rows and order columns of the to-many relationships `o` changed. Pairs are
    /// added and removed one by one (and only when missing or present), so the two sides of a
    /// many-to-many may both write the same change.
    func writeLinks(_ o: ManagedObject) throws(SQLiteError) {
        let e = o.info.entity
        guard e.hasToMany else { return }
        let pk = key(o)!
        for (i, rel) in e.relationships.enumerated() where rel.isToMany {
            guard case .many(let members)? = o.links[i] else { continue }
            var before: [ManagedObject] = []
            if let s = o.snapshot {
                if Link.same(s.links[i], o.links[i]) { continue }
                if case .many(let m)? = s.links[i] { before = m }
            }
            switch rel.storage {
            case .joinTable(let table, let source, let dest, let order?) where rel.inverse != nil:
                // One ordered side of a many-to-many: the pairs as an unordered side writes them
                // (the other side may write the same change), then this side's order in each
                // pair's row; the other side keeps its own order column.
                try writePairs(table, source, dest, pk, members, before)
                try writePositions(
                    "UPDATE \(q(table)) SET \(q(order)) = ? WHERE \(q(source)) = ? AND \(q(dest)) = ?", owner: pk,
                    members)
            case .joinTable(let table, let source, let dest, let order?):
                // Ordered (no inverse, so only this side writes): the whole list again.
                try store.run("DELETE FROM \(q(table)) WHERE \(q(source)) = ?", [.integer(pk)])
                for (n, m) in members.enumerated() {
                    guard let mk = key(m) else { continue }
                    try store.run(
                        "INSERT INTO \(q(table)) (\(q(source)), \(q(dest)), \(q(order))) VALUES (?, ?, ?)",
                        [.integer(pk), .integer(mk), .integer(Int64(n))])
                }
            case .joinTable(let table, let source, let dest, nil):
                try writePairs(table, source, dest, pk, members, before)
            case .inverseForeignKey(let table, _, let order?):
                try writePositions(
                    "UPDATE \(q(table)) SET \(q(order)) = ? WHERE \(q(Storage.primaryKey)) = ?", owner: nil, members)
            case .inverseForeignKey, .foreignKey:
                break
            }
        }
    }
}

extension RowWriter {
    /// Each member's position in an ordered to-many, written by `sql` with one prepared statement:
    /// `?` the position, then the owner's key (`owner`, when given), then the member's key.
    fileprivate func writePositions(_ sql: String, owner: Int64?, _ members: [ManagedObject]) throws(SQLiteError) {
        guard !members.isEmpty else { return }
        let s = try store.statement(sql)
        for (n, m) in members.enumerated() {
            guard let mk = key(m) else { continue }
            try s.bind(int64: Int64(n), at: 1)
            if let owner { try s.bind(int64: owner, at: 2) }
            try s.bind(int64: mk, at: owner == nil ? 2 : 3)
            while try s.step() {}
            try s.reset()
        }
    }

    /// The pairs of a many-to-many side whose members went from `before` to `members`: each new
    /// pair inserted unless present, each gone one deleted (either side may write a change).
    fileprivate func writePairs(
        _ table: String, _ source: String, _ dest: String, _ pk: Int64, _ members: [ManagedObject],
        _ before: [ManagedObject]
    ) throws(SQLiteError) {
        for m in members where !before.contains(where: { $0 === m }) {
            guard let mk = key(m) else { continue }
            try store.run(
                "INSERT INTO \(q(table)) (\(q(source)), \(q(dest))) SELECT ?, ? WHERE NOT EXISTS (SELECT 1 FROM \(q(table)) WHERE \(q(source)) = ? AND \(q(dest)) = ?)",
                [.integer(pk), .integer(mk), .integer(pk), .integer(mk)])
        }
        for m in before where !members.contains(where: { $0 === m }) {
            guard let mk = key(m) else { continue }
            try store.run(
                "DELETE FROM \(q(table)) WHERE \(q(source)) = ? AND \(q(dest)) = ?", [.integer(pk), .integer(mk)])
        }
    }
}

extension PersistentStore {
    /// Join tables an entity's rows appear in, with the columns that hold its keys.
    func joinTables(of entity: String) -> [(String, [String])] {
        var out: [String: Set<String>] = [:]
        for (name, info) in infos {
            for rel in info.entity.relationships {
                guard case .joinTable(let t, let s, let d, _) = rel.storage else { continue }
                let family = infos[entity]!.entity
                // This entity (or an ancestor) is the source, or the destination.
                if info.entity.family.contains(entity) || name == entity { out[t, default: []].insert(s) }
                if (try? self.info(rel.destination))?.entity.family.contains(family.name) == true {
                    out[t, default: []].insert(d)
                }
            }
        }
        return out.map { ($0.key, Array($0.value).sorted()) }.sorted { $0.0 < $1.0 }
    }
}
