// The managed object context: a scratch pad of inserts, edits and deletes over one store, with
// uniquing (one object per ID), faults, inverse maintenance as soon as one side of a relationship
// changes, and rollback to the committed state. Saving lives in Saving.swift, fetching in
// Fetching.swift; this file holds the object graph.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite

/// A context: objects read from a store and the changes made to them until `save()`.
///
/// ```swift
/// let context = ManagedObjectContext(store: store)
/// let ann = try context.insert("Person")
/// try ann.setValue("Ann", forKey: "name")
/// try context.save()
/// let people = try context.fetch(FetchRequest("Person", predicate: "name BEGINSWITH[c] %@", "a"))
/// ```
///
/// A context, and the objects it hands out, belong to one thread at a time (as in Core Data):
/// the caller's (``ConcurrencyType/confined``, the default), the context's own serial queue
/// (``ConcurrencyType/privateQueue``) or the main actor (``ConcurrencyType/mainQueue``), where
/// ``perform(_:)`` runs work. `ObjectID`s, requests and the results of ID, dictionary and count
/// fetches cross threads; objects do not (`ManagedObject` is not `Sendable`).
public final class ManagedObjectContext: @unchecked Sendable {
    /// The store the context reads from and saves to (a child context's is its root's: the
    /// child reads rows from it but saves into its parent).
    public let store: PersistentStore
    /// The context a child context reads through and saves into (nil for a context on a store).
    ///
    /// ```swift
    /// ManagedObjectContext(parent: main).parent === main   // true
    /// ```
    public let parent: ManagedObjectContext?
    /// `parent != nil`, as a plain flag for the per-row paths (no reference to load).
    let isChild: Bool
    /// Whether this context takes in other contexts' changes as they happen (updated objects
    /// refreshed with their unsaved edits kept, deleted ones gone), on its own queue, posting
    /// objects-did-change. A child takes in its parent's saves and the changes other children
    /// push into the parent. A context on a store (Core Data's view context) takes in every save
    /// of the other contexts on the same `PersistentStore` object; not batch requests
    /// (`mergeChanges(from:)`), not its own saves, not other store objects' or processes' saves
    /// (persistent history). A confined one collects them and takes them in at its next
    /// `processPendingChanges()` (which `save()` runs), never on the saver's thread (Merging.swift).
    /// False by default, as in Core Data. Set it before the context is used from other threads.
    ///
    /// ```swift
    /// let main = ManagedObjectContext(store: store, concurrency: .mainQueue)
    /// main.automaticallyMergesChangesFromParent = true   // background saves show up in main
    /// ```
    public var automaticallyMergesChangesFromParent = false {
        didSet { if !isChild { store.setAutoMerging(self, automaticallyMergesChangesFromParent) } }
    }
    /// The child contexts made on this one (weakly held), told about saves and new permanent IDs.
    /// Made and read from any thread (a child is made wherever its owner runs): behind `childLock`.
    private var childList: [WeakContext] = []
    private let childLock = NSLock()
    /// A confined auto-merging context on a store: the other contexts' saves it has not taken in
    /// yet (the savers run on other threads).
    let siblingSaves = PendingList<ChangeSet>()
    /// The live children, now.
    var children: [ManagedObjectContext] {
        childLock.withLock {
            childList.removeAll { $0.context == nil }
            return childList.compactMap(\.context)
        }
    }
    /// Whether any child was ever made here (a save then tells them).
    var hasChildren: Bool { childLock.withLock { !childList.isEmpty } }
    /// Renames an ancestor's save left for this context (ParentContexts.swift).
    let pendingRekeys = PendingList<(ObjectID.Key, Int64)>()
    func adopt(child: ManagedObjectContext) {
        childLock.withLock {
            childList.removeAll { $0.context == nil }
            childList.append(WeakContext(child))
        }
    }
    /// What a save does with objects changed or deleted in the store since they were read
    /// (`.error` by default: the save throws `.mergeConflict` and writes nothing).
    ///
    /// ```swift
    /// context.mergePolicy = .mergeByPropertyObjectTrump
    /// ```
    public var mergePolicy: MergePolicy = .error
    /// The context's name, recorded with each of its saves in the store's persistent history.
    ///
    /// ```swift
    /// context.name = "import"
    /// ```
    public var name: String?
    /// Who saves (an app, an extension, a tool), recorded with each save in the persistent history
    /// so readers can skip their own transactions.
    ///
    /// ```swift
    /// context.transactionAuthor = "widget"
    /// ```
    public var transactionAuthor: String?
    /// One object per ID. Keyed by the ID's key alone: every registered object belongs to this
    /// context's store, so comparing store identifiers on each lookup would be wasted work.
    // The bookkeeping every insert, change and fetched row touches skips the runtime's
    // exclusivity checks (a context is used from one thread at a time, and a call per access
    // cost more than the work itself).
    @exclusivity(unchecked) var registry = ObjectRegistry()
    /// What the temporary IDs of objects saved since became (for `object(with:)`).
    @exclusivity(unchecked) var temporaryRenames = TemporaryRenames()
    /// Numbers the passes of `matchingObjects` that mark dirty objects (`ManagedObject.dirtyPass`).
    @exclusivity(unchecked) var fetchPasses: UInt64 = 0
    /// The entity `insert` made an object of last: bulk inserts name one entity again and again.
    @exclusivity(unchecked) private var lastInserted: EntityInfo?
    /// Inserted objects in insertion order (their keys are given in this order at save).
    @exclusivity(unchecked) var insertedList: [ManagedObject] = []
    @exclusivity(unchecked) var updatedSet: Set<ManagedObject> = []
    @exclusivity(unchecked) var deletedSet: Set<ManagedObject> = []
    /// Changes since the last objects-did-change notification. Emptied only through
    /// ``takeUnreported()`` or ``forgetUnreported()``, which open a new report round.
    @exclusivity(unchecked) var unreported = ChangeSet()
    /// Counts objects-did-change reports (and forgotten changes): an object changed again after
    /// the report that listed it (its `reportedRound` is older) is listed again in the next.
    @exclusivity(unchecked) var reportRound = 1
    /// The errors of typed reads and writes that could not be made since the last save, oldest
    /// first (TypedAccess.swift): the next `save()` throws them and writes nothing; `rollback()`
    /// and `reset()` forget them with the changes.
    ///
    /// ```swift
    /// _ = gone.salary                  // 0: its row was deleted by another context
    /// context.accessErrors.first?.kind // .objectNotFound
    /// ```
    public internal(set) var accessErrors: [StoreError] = []
    var observers: [UUID: @Sendable (ContextNotification) -> Void] = [:]
    /// The fetched results controllers on this context (and those of its descendants): each
    /// change set that reaches it (its own processed changes, its saves, everything a merge
    /// brings in) with whether its updates count as changed contents, and its resets
    /// (FetchedResults/ResultTaps.swift).
    var resultTaps: [UUID: (ResultTapEvent) -> Void] = [:] {
        didSet { hasResultTaps = !resultTaps.isEmpty }
    }
    @exclusivity(unchecked) var hasResultTaps = false
    /// With controllers: every object changed since the last `processPendingChanges()` (the
    /// objects-did-change notification names an object once until it is saved; a controller must
    /// see each change, an inserted object's edits included).
    @exclusivity(unchecked) var changedForResults: [ObjectID] = []
    nonisolated(unsafe) static var temporaryCounter: Int64 = 0
    /// A number no other temporary ID of the process has (one counter for every context).
    static func nextTemporaryNumber() -> Int64 {
        counterLock.lock()
        defer { counterLock.unlock() }
        temporaryCounter += 1
        return temporaryCounter
    }
    static let counterLock = NSLock()

    /// Ends `notifications` streams when the context goes.
    var streamFinishers: [UUID: () -> Void] = [:]
    /// Where the context's work runs (Concurrency.swift).
    public let concurrencyType: ConcurrencyType
    /// The serial queue of a `.privateQueue` context.
    let queue: DispatchQueue?
    /// IDs of rows another save or a batch delete removed, merged into this context:
    /// links naming them read as nil (Merging.swift).
    @exclusivity(unchecked) var goneIDs = Set<ObjectID>()
    @exclusivity(unchecked) var hasGoneObjects = false
    /// Records changes for undo and redo when set (nil by default, as on iOS; Undo.swift).
    ///
    /// ```swift
    /// context.undoManager = SiftUndoManager()
    /// ```
    public var undoManager: SiftUndoManager? {
        didSet { undoManager?.context = self }
    }

    /// A context on `store`, with no objects yet, used from the caller's thread (`.confined`), its
    /// own queue (`.privateQueue`) or the main actor (`.mainQueue`).
    ///
    /// ```swift
    /// let context = ManagedObjectContext(store: try PersistentStore.inMemory(model: model))
    /// let background = ManagedObjectContext(store: store, concurrency: .privateQueue)
    /// ```
    public init(store: PersistentStore, concurrency: ConcurrencyType = .confined) {
        self.store = store
        self.parent = nil
        self.isChild = false
        self.concurrencyType = concurrency
        queue = concurrency == .privateQueue ? Self.makeQueue() : nil
        queue?.setSpecific(key: Self.queueOwner, value: ObjectIdentifier(self))
    }

    /// A child context of `parent`: it reads through the parent (its unsaved changes included)
    /// and its `save()` pushes its changes into the parent, which writes them when it saves.
    ///
    /// ```swift
    /// let writer = ManagedObjectContext(store: store)
    /// let main = ManagedObjectContext(parent: writer)
    /// let worker = ManagedObjectContext(parent: main)
    /// let item = try worker.insert("Item")
    /// try worker.save()   // main now holds the insert; nothing is in the store yet
    /// try main.save()     // the writer holds it
    /// try writer.save()   // written to the store
    /// ```
    public init(parent: ManagedObjectContext, concurrency: ConcurrencyType = .confined) {
        self.store = parent.store
        self.parent = parent
        self.isChild = true
        self.concurrencyType = concurrency
        queue = concurrency == .privateQueue ? Self.makeQueue() : nil
        queue?.setSpecific(key: Self.queueOwner, value: ObjectIdentifier(self))
        parent.adopt(child: self)
    }

    deinit {
        for o in registry.values { Self.detach(o) }
        for o in insertedList { Self.detach(o) }
        for finish in streamFinishers.values { finish() }
    }

    /// Cuts an object loose from this context: objects the caller still holds must not point at
    /// a released context, and the strong references between related objects (each side of an
    /// inverse pair holds the other, and snapshots hold the old links) are dropped, or every
    /// graph with an inverse would be a reference cycle that outlives the context.
    static func detach(_ o: ManagedObject) {
        o.context = nil
        o.links = Array(repeating: nil, count: o.links.count)
        o.snapshot = nil
    }

    // MARK: Change sets

    /// Whether there are unsaved inserts, updates or deletes.
    public var hasChanges: Bool { !insertedList.isEmpty || !updatedSet.isEmpty || !deletedSet.isEmpty }
    /// The objects inserted since the last save, in insertion order.
    public var insertedObjects: [ManagedObject] { insertedList }
    /// The saved objects changed since the last save.
    public var updatedObjects: Set<ManagedObject> { updatedSet }
    /// The saved objects deleted since the last save.
    public var deletedObjects: Set<ManagedObject> { deletedSet }
    /// Every object the context holds (it keeps them until `reset()`, except that a streamed
    /// fetch, ``batches(for:)``, lets go of its unchanged objects that no one else holds).
    public var registeredObjects: [ManagedObject] { Array(registry.values) }

    /// A flag on the object rather than a set: every change asks, and a set costs a hash each time.
    func isInserted(_ o: ManagedObject) -> Bool { o.pendingInsert && o.context === self }

    // MARK: Inserting and resolving

    /// A new object of `entity`, with the model's default values, registered as inserted.
    public func insert(_ entity: String) throws(StoreError) -> ManagedObject {
        let info: EntityInfo
        if let last = lastInserted, last.name == entity {
            info = last
        } else {
            info = try store.info(entity)
            lastInserted = info
        }
        guard !info.entity.description.isAbstract else {
            throw StoreError(.invalidOperation, "entity '\(entity)' is abstract: insert one of its sub-entities")
        }
        let id = ObjectID(info.names, key: .temporary(Self.nextTemporaryNumber()))
        // A fault has nothing to allocate; the new object then takes the entity's initial state.
        let o = ManagedObject.make(id: id, info: info, context: self, fault: true)
        o.isFault = false
        if info.initialAttributesAreNil {
            // An array of its own at once: the entity's, shared, would be copied value by value
            // (through the generic copy of each value) by the first `setValue`.
            var attributes = [Value]()
            attributes.reserveCapacity(info.attributeTypes.count)
            for _ in info.attributeTypes.indices { attributes.append(.null) }
            o.attributes = attributes
        } else {
            o.attributes = info.initialAttributes
        }
        o.links = info.initialLinks
        registry[id] = o
        insertedList.append(o)
        o.pendingInsert = true
        unreported.inserted.append(id)
        o.reportedRound = reportRound
        if undoManager != nil { recordInsert(o) }
        return o
    }

    /// The object with `id`: the registered one, or a fault that reads its row when touched.
    /// The temporary ID of an object saved since gives the saved object (the last 100,000 renames
    /// are remembered). An ID of another store, or a temporary ID of no object of this context,
    /// is `.objectNotFound`.
    ///
    /// ```swift
    /// let temporary = ann.objectID
    /// try context.save()
    /// try context.object(with: temporary) === ann   // true: ann, now under its permanent ID
    /// ```
    public func object(with id: ObjectID) throws(StoreError) -> ManagedObject {
        guard id.names.store == store.names else {
            throw StoreError(.objectNotFound, "\(id) is not an object of this store")
        }
        if let o = registry[id] {
            // A child's object for one an ancestor deleted since is deleted here too.
            return isChild ? try unlessDeletedAbove(o) : o
        }
        guard let pk = id.primaryKey else {
            // A child sees the objects its ancestors inserted and have not saved yet.
            if parent != nil, let a = try ancestorObject(id, loaded: false) {
                return try unlessDeletedAbove(counterpart(of: a))
            }
            if let pk = temporaryRenames.permanent(for: id.key) {
                // Saved since: the object under its permanent ID.
                return try object(with: ObjectID(id.names, key: .permanent(pk)))
            }
            throw StoreError(
                .objectNotFound,
                "\(id) is a temporary ID of no object of this context: none unsaved has it, and none of the last \(TemporaryRenames.limit) saved had it"
            )
        }
        let o = try faultObject(pk: pk, declared: id.entityName)
        return isChild ? try unlessDeletedAbove(o) : o
    }

    /// Like `object(with:)`, but reads the row now: `.objectNotFound` when it does not exist
    /// (or, in a child, when an ancestor deleted it).
    public func existingObject(with id: ObjectID) throws(StoreError) -> ManagedObject {
        let o = try object(with: id)
        if isChild && o.isGone { throw o.detachedError }
        try o.fire()
        return o
    }

    /// The registered object for a primary key, or a fault of the declared entity (its concrete
    /// entity is read with its row).
    /// `concrete`: the declared entity is the row's own (read with it), so no lookup is needed.
    func faultObject(pk: Int64, declared: String, concrete: Bool = false) throws(StoreError) -> ManagedObject {
        let info = try store.info(declared)
        if let o = registry.permanent(pk, info.names.space) { return o }
        let o =
            concrete
            ? ManagedObject.make(id: ObjectID(info.names, key: .permanent(pk)), info: info, context: self, fault: true)
            : newFault(.permanent(pk), info)
        registry.addPermanent(pk, o)
        return o
    }

    /// A fault for `id` (not registered yet), made as the class of its row's entity: when a
    /// sub-entity of `info`'s is made as another class, the row's entity number is read first (a
    /// row that cannot be read keeps `info`, and reading the fault reports why).
    func newFault(_ key: ObjectID.Key, _ info: EntityInfo) -> ManagedObject {
        var info = info
        if info.needsConcreteEntity, case .permanent(let pk) = key, let concrete = try? concreteInfo(pk, info) {
            info = concrete
        }
        return ManagedObject.make(id: ObjectID(info.names, key: key), info: info, context: self, fault: true)
    }

    /// The rows of `sql`, whose one parameter is `key`, read with the store's lock held.
    func lockedRows(_ sql: String, _ key: Int64) throws(StoreError) -> [[SQLValue]] {
        try store.locked { () throws(StoreError) in
            do throws(SQLiteError) { return try store.rows(sql, [.integer(key)]) } catch { throw error.storeError }
        }
    }

    /// The entity of the stored row `pk` of `info`'s table.
    private func concreteInfo(_ pk: Int64, _ info: EntityInfo) throws(StoreError) -> EntityInfo? {
        let q = PersistentStore.q
        let rows = try lockedRows(
            "SELECT \(q(Storage.entityColumn)) FROM \(q(info.layout.table)) WHERE \(q(Storage.primaryKey)) = ?", pk)
        guard case .integer(let ent)? = rows.first?.first else { return nil }
        return store.infoByNumber[ent]
    }

    /// The object for a row read by a query (`Z_PK`, `Z_ENT`, then the layout's columns).
    func materialize(row: [SQLValue]) throws(StoreError) -> ManagedObject {
        try materialize(RowValues(values: row))
    }

    /// The object for the current row of a query, read column by column (`Z_PK`, `Z_ENT`, then
    /// the layout's columns); a registered object that is not a fault reads nothing more.
    func materialize<Row: RowSource>(_ row: Row) throws(StoreError) -> ManagedObject {
        guard case .integer(let pk) = row.key(0), case .integer(let ent) = row.key(1),
            let info = store.infoByNumber[ent]
        else {
            throw StoreError(.sqlite, "a row without a key or entity number")
        }
        if let o = registry.permanent(pk, info.names.space) {
            if o.isFault { try fill(o, info: info, row) }
            return o
        }
        let o = ManagedObject.make(
            id: ObjectID(info.names, key: .permanent(pk)), info: info, context: self, fault: true)
        try fill(o, info: info, row)
        registry.addPermanent(pk, o)
        return o
    }

    /// Reads a fault's row.
    func fulfill(_ o: ManagedObject) throws(StoreError) {
        if isChild {
            // A child reads an object through its ancestors when one of them holds it.
            if try inheritState(o) { return }
            if o.objectID.isTemporaryID {
                throw StoreError(.objectNotFound, "\(o.objectID) is no longer in the parent context")
            }
        }
        guard let pk = o.objectID.primaryKey else {
            o.isFault = false
            return
        }
        let layout = o.info.layout
        let rows: [[SQLValue]]
        do {
            rows = try store.locked { () throws(StoreError) in
                do throws(SQLiteError) {
                    return try store.rows(
                        "SELECT \(layout.columns.map(PersistentStore.q).joined(separator: ", ")) FROM \(PersistentStore.q(layout.table)) WHERE \(PersistentStore.q(Storage.primaryKey)) = ?",
                        [.integer(pk)])
                } catch { throw error.storeError }
            }
        }
        guard let row = rows.first, case .integer(let ent) = row[1], let info = store.infoByNumber[ent] else {
            throw StoreError(.objectNotFound, "\(o.objectID) no longer exists in the store")
        }
        try fill(o, info: info, RowValues(values: row))
    }

    /// Fills a fault from its row (the concrete entity may be a sub-entity of the one guessed).
    func fill<Row: RowSource>(_ o: ManagedObject, info: EntityInfo, _ row: Row) throws(StoreError) {
        // A child takes an ancestor's current state (unsaved edits included) over the stored row.
        if _slowPath(isChild), try inheritState(o) { return }
        if o.info !== info {
            o.info = info
            o.objectID = ObjectID(info.names, key: o.objectID.key)
            o.links = Array(repeating: nil, count: info.entity.relationships.count)
        }
        let types = info.attributeTypes
        let columns = info.attributeColumns
        var attributes = [Value]()
        attributes.reserveCapacity(types.count)
        let isDocument = info.entity.document != nil
        // The per-attribute facts come from the info's arrays of plain values: taking each
        // attribute (a class) out of the entity would be a retain and a release per value read.
        for i in 0..<types.count {
            if !isDocument && !info.isScalar[i] {
                // A collection: its values are rows of its table.
                if case .null = row.column(columns[i]) {
                    attributes.append(.null)
                    continue
                }
                attributes.append(try loadCollection(o.objectID.primaryKey!, info.entity.attributes[i]))
                continue
            }
            attributes.append(try Self.storedValue(row, attribute: i, of: info, id: o.objectID))
        }
        o.attributes = attributes
        for (i, c) in info.foreignKeyColumns.enumerated() {
            guard let c else { continue }
            if case .integer(let k) = row.key(c) { o.links[i] = .oneKey(k) } else { o.links[i] = .oneKey(nil) }
        }
        if info.hasEntityColumns { readEntityColumns(o, info, row) }
        if info.hasCountColumns {
            // A NULL count is a nil to-many: nothing to load. Otherwise the objects load when touched.
            for (i, c) in info.countColumns.enumerated() {
                guard let c else { continue }
                if case .null = row.key(c) {
                    o.links[i] = .nilMany
                } else if case .nilMany? = o.links[i] {
                    o.links[i] = nil
                }
            }
        }
        if case .integer(let v) = row.key(2) { o.version = v }
        o.isFault = false
    }

    /// Core Data's layout: a to-one whose row names (`Z<n>_<REL>`) a sub-entity of the declared
    /// destination keeps its number, so the destination's fault is of that entity.
    private func readEntityColumns<Row: RowSource>(_ o: ManagedObject, _ info: EntityInfo, _ row: Row) {
        for (i, c) in info.entityColumns.enumerated() {
            guard let c, case .oneKey(let k?)? = o.links[i], case .integer(let n) = row.key(c),
                let sub = store.infoByNumber[n], sub.name != info.entity.relationships[i].destination,
                let entity = Int32(exactly: n)
            else { continue }
            o.links[i] = .subEntityKey(k, entity: entity)
        }
    }

    /// The value of attribute `i` (not a collection) of `info`'s entity in `row`: a document's
    /// exact form, a value transformer's value, a decimal from its exact text, else the column's.
    static func storedValue<Row: RowSource>(
        _ row: Row, attribute i: Int, of info: EntityInfo, id: @autoclosure () -> ObjectID
    )
        throws(StoreError) -> Value
    {
        let column = info.attributeColumns[i]
        let type = info.attributeTypes[i]
        if info.isDocument {
            // A document's exact form (its one attribute).
            guard case .blob(let bytes) = row.column(column) else { return .null }
            do throws(ValueCodecError) { return try ValueCodec.decode(bytes) } catch {
                throw StoreError(.sqlite, "\(id()): its stored document is unreadable (\(error))")
            }
        }
        if type == .transformable, let name = info.entity.attributes[i].description.valueTransformerName {
            // The value transformer's bytes, turned back into its value.
            return try AttributeTransformers.read(row.column(column), name, of: id(), key: info.attributeNames[i])
        }
        if let x = info.exactColumns[i] { return ColumnCodec.decode(row.column(column), type, exact: row.column(x)) }
        return row.attribute(column, type)
    }

    func loadCollection(_ owner: Int64, _ a: ResolvedAttribute) throws(StoreError) -> Value {
        let rows = try store.locked { () throws(StoreError) in
            do throws(SQLiteError) {
                return try store.rows(
                    "SELECT \(PersistentStore.q(Storage.value)) FROM \(PersistentStore.q(a.valueTable!)) WHERE \(PersistentStore.q(Storage.owner)) = ? ORDER BY \(PersistentStore.q(Storage.order))",
                    [.integer(owner)])
            } catch { throw error.storeError }
        }
        return .array(rows.map { ColumnCodec.decode($0[0], a.type) })
    }

    /// The stored objects of to-many relationship `i` of `o`.
    func loadToMany(_ o: ManagedObject, _ i: Int) throws(StoreError) -> [ManagedObject] {
        guard let pk = o.objectID.primaryKey else { return [] }
        let rel = o.info.entity.relationships[i]
        let destination = try store.info(rel.destination)
        let q = PersistentStore.q
        let sql: String
        switch rel.storage {
        case .inverseForeignKey(let table, let column, let order):
            let orderBy = order.map { "\(q($0)), " } ?? ""
            sql =
                "SELECT \(q(Storage.primaryKey)), \(q(Storage.entityColumn)) FROM \(q(table)) WHERE \(q(column)) = ? ORDER BY \(orderBy)\(q(Storage.primaryKey))"
        case .joinTable(let table, let source, let dest, let order):
            let orderBy = order.map { "j.\(q($0)), " } ?? ""
            sql =
                "SELECT r.\(q(Storage.primaryKey)), r.\(q(Storage.entityColumn)) FROM \(q(table)) AS j JOIN \(q(destination.layout.table)) AS r ON r.\(q(Storage.primaryKey)) = j.\(q(dest)) WHERE j.\(q(source)) = ? ORDER BY \(orderBy)j.rowid"
        case .foreignKey:
            preconditionFailure("a to-one relationship is not loaded as a to-many")
        }
        let rows = try lockedRows(sql, pk)
        var out: [ManagedObject] = []
        out.reserveCapacity(rows.count)
        for row in rows {
            guard case .integer(let k) = row[0], case .integer(let ent) = row[1], let info = store.infoByNumber[ent]
            else { continue }
            let member = try faultObject(pk: k, declared: info.name, concrete: true)
            if member.isFault, member.info !== info {
                member.info = info
                member.objectID = ObjectID(info.names, key: member.objectID.key)
                member.links = Array(repeating: nil, count: info.entity.relationships.count)
            }
            out.append(member)
        }
        return out
    }

    // MARK: Changing

    /// Records the committed state before the first change of a saved object.
    func willChange(_ o: ManagedObject) throws(StoreError) {
        if hasResultTaps { changedForResults.append(o.objectID) }
        guard !isInserted(o) else {
            if o.reportedRound != reportRound { noteInsertedChanged(o) }
            return
        }
        guard deletedSet.isEmpty || !deletedSet.contains(o) else {
            throw StoreError(.invalidOperation, "\(o.objectID) is deleted")
        }
        try o.fire()
        if o.snapshot == nil {
            o.snapshot = Snapshot(attributes: o.attributes, links: o.links)
        }
        // Listed once per report: the first change, and the first after each objects-did-change.
        if updatedSet.insert(o).inserted || o.reportedRound != reportRound {
            o.reportedRound = reportRound
            unreported.updated.append(o.objectID)
        }
    }

    /// An inserted object listed (as inserted) in an earlier objects-did-change changed: the
    /// next report lists it as updated.
    func noteInsertedChanged(_ o: ManagedObject) {
        o.reportedRound = reportRound
        unreported.updated.append(o.objectID)
    }

    /// The changes since the last report, handed out; a new report round begins.
    func takeUnreported() -> ChangeSet {
        let changes = unreported
        forgetUnreported()
        return changes
    }

    /// Drops the changes not reported yet (a rollback or reset took them back); a new round begins.
    func forgetUnreported() {
        unreported = ChangeSet()
        reportRound += 1
    }

    func checkOwned(_ o: ManagedObject) throws(StoreError) {
        guard o.context === self else {
            if o.isGone { throw o.detachedError }
            throw StoreError(.invalidOperation, "\(o.objectID) belongs to another context")
        }
        guard deletedSet.isEmpty || !deletedSet.contains(o) else {
            throw StoreError(.invalidOperation, "\(o.objectID) is deleted")
        }
    }

    func set(_ value: Any?, forKey key: String, of o: ManagedObject) throws(StoreError) {
        let e = o.info.entity
        if let i = o.info.attributeNumber(key) {
            let v: Value
            do throws(CoercionError) { v = try Value(storing: value, for: e.attributes[i]) } catch {
                throw StoreError(.typeMismatch, "\(o.objectID) '\(key)': \(error.message)")
            }
            try setAttribute(v, i, forKey: key, of: o)
            return
        }
        if let i = e.transientIndex[key] {
            try setTransient(value, i, forKey: key, of: o)
            return
        }
        try checkOwned(o)
        if store.model.fetchedProperties[e.name]?[key] != nil {
            throw StoreError(.invalidOperation, "\(o.objectID) '\(key)' is a fetched property: it is read, not set")
        }
        guard let i = e.relationshipIndex[key] else {
            throw StoreError.unknownKey(key, of: o, "entity '\(e.name)' has no attribute or relationship '\(key)'")
        }
        if undoManager != nil { try recordRelationship(o, i, adding: Self.objects(in: value)) }
        let rel = e.relationships[i]
        if rel.isToMany {
            let targets: [ManagedObject]
            switch value {
            case nil: targets = []
            case let v as Value where v.isNull: targets = []
            case let a as [ManagedObject]: targets = a
            case let s as Set<ManagedObject>: targets = Array(s)
            default:
                throw StoreError.typeMismatch(o, key, value, "a to-many relationship takes an array or set of objects")
            }
            let current = try o.many(i)
            for t in current where !targets.contains(where: { $0 === t }) { try remove(t, from: key, of: o) }
            for t in targets where !(try o.many(i)).contains(where: { $0 === t }) { try add(t, to: key, of: o) }
            if rel.description.isOrdered {
                // Adopt the caller's order.
                try willChange(o)
                o.links[i] = .many(
                    targets.reduce(into: [ManagedObject]()) { acc, t in
                        if !acc.contains(where: { $0 === t }) { acc.append(t) }
                    })
            }
            if rel.description.allowsNil {
                // nil and an empty collection are different values here; the loops above leave
                // an empty relationship in whichever state it was.
                let isNil: Bool
                switch value {
                case nil: isNil = true
                case let v as Value: isNil = v.isNull
                default: isNil = false
                }
                let wasNil: Bool
                if case .nilMany = try o.link(i) { wasNil = true } else { wasNil = false }
                if isNil != wasNil {
                    try willChange(o)
                    o.links[i] = isNil ? .nilMany : .many([])
                }
            }
            return
        }
        let target: ManagedObject?
        switch value {
        case nil: target = nil
        case let m as ManagedObject: target = m
        case let v as Value where v.isNull: target = nil
        default: throw StoreError.typeMismatch(o, key, value, "a to-one relationship takes an object or nil")
        }
        try setToOne(target, i, of: o)
    }

    /// Sets attribute `i` (named `key`) of `o` to `v`, coerced to the attribute's type.
    func setAttribute(_ v: Value, _ i: Int, forKey key: String, of o: ManagedObject) throws(StoreError) {
        try checkOwned(o)
        let a = o.info.entity.attributes[i]
        if let derivation = a.description.derivationExpression {
            throw StoreError(
                .invalidOperation,
                "\(o.objectID) '\(key)' is derived from \(derivation): each save computes it, it cannot be set")
        }
        let coerced: Value
        do throws(CoercionError) { coerced = try Value(coercing: v, into: a) } catch {
            throw StoreError.typeMismatch(o, key, v, error.message)
        }
        if undoManager != nil { try recordAttribute(o, i) }
        try willChange(o)
        o.attributes[i] = coerced
    }

    /// Sets transient attribute `i` of `o`, coerced to its type: the object is updated (or stays
    /// inserted), and its stored attributes are untouched.
    func setTransient(_ value: Any?, _ i: Int, forKey key: String, of o: ManagedObject) throws(StoreError) {
        try checkOwned(o)
        let a = o.info.entity.transients[i]
        let v: Value
        do throws(CoercionError) { v = try Value(coercing: try Value(storing: value, for: a), for: a) } catch {
            throw StoreError(.typeMismatch, "\(o.objectID) '\(key)': \(error.message)")
        }
        try willChange(o)
        if o.transientValues == nil { o.transientValues = o.info.entity.transients.map { $0.defaultValue ?? .null } }
        o.transientValues![i] = v
    }

    /// Checks that `t` may be a destination of relationship `rel`.
    func checkDestination(_ t: ManagedObject, _ rel: ResolvedRelationship, of o: ManagedObject) throws(StoreError) {
        try checkOwned(t)
        let family = try store.info(rel.destination).entity.family
        guard family.contains(t.info.name) else {
            throw StoreError.typeMismatch(o, rel.name, .object(t), "\(t.objectID) is not a \(rel.destination)")
        }
    }

    func setToOne(_ target: ManagedObject?, _ i: Int, of o: ManagedObject) throws(StoreError) {
        let rel = o.info.entity.relationships[i]
        if let target { try checkDestination(target, rel, of: o) }
        let old = try o.one(i)
        if old === target { return }
        try willChange(o)
        o.links[i] = .one(target)
        guard let inverseName = rel.inverse else { return }
        if let old { try unlink(o, from: old, inverse: inverseName) }
        if let target { try link(o, into: target, inverse: inverseName) }
    }

    func add(_ t: ManagedObject, to key: String, of o: ManagedObject) throws(StoreError) {
        try checkOwned(o)
        guard let i = o.info.entity.relationshipIndex[key], o.info.entity.relationships[i].isToMany else {
            throw StoreError.unknownKey(key, of: o, "entity '\(o.info.name)' has no to-many relationship '\(key)'")
        }
        let rel = o.info.entity.relationships[i]
        try checkDestination(t, rel, of: o)
        var members = try o.many(i)
        if members.contains(where: { $0 === t }) { return }
        try willChange(o)
        members.append(t)
        o.links[i] = .many(members)
        if let inverseName = rel.inverse { try link(o, into: t, inverse: inverseName) }
    }

    func remove(_ t: ManagedObject, from key: String, of o: ManagedObject) throws(StoreError) {
        try checkOwned(o)
        guard let i = o.info.entity.relationshipIndex[key], o.info.entity.relationships[i].isToMany else {
            throw StoreError.unknownKey(key, of: o, "entity '\(o.info.name)' has no to-many relationship '\(key)'")
        }
        let rel = o.info.entity.relationships[i]
        var members = try o.many(i)
        guard let at = members.firstIndex(where: { $0 === t }) else { return }
        try willChange(o)
        members.remove(at: at)
        o.links[i] = .many(members)
        if let inverseName = rel.inverse { try unlink(o, from: t, inverse: inverseName) }
    }

    /// Makes `t`'s inverse relationship include `o` (the other side of a change to `o`).
    func link(_ o: ManagedObject, into t: ManagedObject, inverse: String) throws(StoreError) {
        guard let j = t.info.entity.relationshipIndex[inverse] else { return }
        let inv = t.info.entity.relationships[j]
        if inv.isToMany {
            // Callers change one side only when it really changes (a new to-one target, an object
            // not yet in the to-many), and the two sides always agree, so `o` is not among
            // `t`'s members: no scan. The list is taken out of the object before appending so the
            // append does not copy it (adding n objects to one owner stays linear).
            try willChange(t)
            var members = try t.many(j)
            t.links[j] = nil
            members.append(o)
            t.links[j] = .many(members)
        } else {
            let previous = try t.one(j)
            if previous === o { return }
            try willChange(t)
            t.links[j] = .one(o)
            // `t` leaves its previous owner: take it out of that side too.
            if let previous, let back = inv.inverse, let k = previous.info.entity.relationshipIndex[back] {
                try detach(t, from: previous, k)
            }
        }
    }

    /// Removes `o` from `t`'s inverse relationship.
    func unlink(_ o: ManagedObject, from t: ManagedObject, inverse: String) throws(StoreError) {
        guard let j = t.info.entity.relationshipIndex[inverse] else { return }
        try detach(o, from: t, j)
    }

    func detach(_ o: ManagedObject, from t: ManagedObject, _ j: Int) throws(StoreError) {
        if deletedSet.contains(t) { return }
        if t.info.entity.relationships[j].isToMany {
            var members = try t.many(j)
            guard let at = members.firstIndex(where: { $0 === o }) else { return }
            try willChange(t)
            members.remove(at: at)
            t.links[j] = .many(members)
        } else {
            guard try t.one(j) === o else { return }
            try willChange(t)
            t.links[j] = .one(nil)
        }
    }

    /// Marks `o` deleted; delete rules run at save (or `processPendingChanges()`).
    public func delete(_ o: ManagedObject) throws(StoreError) {
        guard o.context === self else {
            throw StoreError(.invalidOperation, "\(o.objectID) belongs to another context")
        }
        if deletedSet.contains(o) { return }
        if undoManager != nil { try recordDelete(o) }
        if isInserted(o) {
            // Never saved: it simply leaves, after its links are undone.
            try detachAll(o)
            o.pendingInsert = false
            insertedList.removeAll { $0 === o }
            registry[o.objectID] = nil
            unreported.deleted.append(o.objectID)
            Self.detach(o)
            if hasChildren { forgetInDescendants(o.objectID) }
            return
        }
        try o.fire()
        if o.snapshot == nil { o.snapshot = Snapshot(attributes: o.attributes, links: o.links) }
        updatedSet.remove(o)
        deletedSet.insert(o)
        unreported.deleted.append(o.objectID)
        // The children's objects for it are deleted too (ParentContexts.swift).
        if hasChildren { forgetInDescendants(o.objectID) }
    }

    /// Takes an inserted object out of every inverse relationship.
    func detachAll(_ o: ManagedObject) throws(StoreError) {
        for (i, rel) in o.info.entity.relationships.enumerated() {
            guard let inverse = rel.inverse else { continue }
            if rel.isToMany {
                for t in try o.many(i) { try unlink(o, from: t, inverse: inverse) }
            } else if let t = try o.one(i) {
                try unlink(o, from: t, inverse: inverse)
            }
        }
    }

    // MARK: Undoing

    /// Discards every unsaved change: inserted objects leave, updated and deleted ones return to
    /// their committed state.
    public func rollback() {
        let reverted = isChild ? updatedSet.union(deletedSet).map(\.objectID) : []
        defer { meetDeletesAbove(reverted) }
        // Controllers judge the objects again once they are back (FetchedResults/ResultTaps.swift).
        let undone = hasResultTaps ? pendingChangeSet() : nil
        defer { if let undone { tapRolledBack(undone) } }
        for o in insertedList {
            registry[o.objectID] = nil
            Self.detach(o)
        }
        for o in updatedSet.union(deletedSet) {
            if let s = o.snapshot {
                o.attributes = s.attributes
                o.links = s.links
            }
            o.transientValues = nil
            o.snapshot = nil
        }
        for o in insertedList { o.pendingInsert = false }
        insertedList = []
        updatedSet = []
        deletedSet = []
        forgetUnreported()
        accessErrors = []
        undoManager?.removeAllActions()
    }

    /// Forgets every object (changes included); objects handed out before are detached, and the
    /// fetched results controllers on the context fetch again.
    public func reset() {
        let reverted = isChild ? updatedSet.union(deletedSet).map(\.objectID) : []
        defer { meetDeletesAbove(reverted) }
        for o in registry.values { Self.detach(o) }
        registry = ObjectRegistry()
        goneIDs = []
        hasGoneObjects = false
        undoManager?.removeAllActions()
        for o in insertedList {
            Self.detach(o)
            o.pendingInsert = false
        }
        insertedList = []
        updatedSet = []
        deletedSet = []
        forgetUnreported()
        accessErrors = []
        if hasResultTaps { tapReset() }
    }

    /// Re-reads `o` from the store. With `mergeChanges` false its unsaved changes are dropped and
    /// it becomes a fault; with true the stored values are read and its unsaved changes applied
    /// on top (changed attributes keep the new values).
    public func refresh(_ o: ManagedObject, mergeChanges: Bool) throws(StoreError) {
        try refreshObject(o, mergeChanges: mergeChanges)
        // Controllers judge it again at once (a merge tells them of all its objects together).
        if hasResultTaps, o.context === self { tapResults(ChangeSet(updated: [o.objectID]), reportsUpdates: true) }
    }

    /// `refresh(_:mergeChanges:)` without telling the controllers.
    func refreshObject(_ o: ManagedObject, mergeChanges: Bool) throws(StoreError) {
        guard o.context === self, !isInserted(o) else { return }
        if !mergeChanges || o.snapshot == nil {
            if let s = o.snapshot, !mergeChanges {
                o.attributes = s.attributes
                o.links = s.links
            }
            o.snapshot = nil
            updatedSet.remove(o)
            deletedSet.remove(o)
            o.isFault = true
            o.links = Array(repeating: nil, count: o.links.count)
            return
        }
        let snapshot = o.snapshot!
        let changedAttributes = o.info.entity.attributes.indices.filter {
            !o.attributes[$0].isIdentical(to: snapshot.attributes[$0])
        }
        let changedLinks = o.links.indices.filter { !Link.same(o.links[$0], snapshot.links[$0]) }
        let mine = o.attributes
        let myLinks = o.links
        try fulfill(o)
        o.snapshot = Snapshot(attributes: o.attributes, links: o.links)
        for i in changedAttributes { o.attributes[i] = mine[i] }
        for i in changedLinks { o.links[i] = myLinks[i] }
    }
}

/// A row `fill` reads an object from: the current row of a query, or a row read before.
protocol RowSource {
    /// Column `i` with its own storage class.
    func column(_ i: Int) -> SQLValue
    /// Column `i` when only an integer is of use (keys, entity numbers, versions): `.null` for
    /// any other storage class.
    func key(_ i: Int) -> SQLValue
    /// Column `i` as a value of attribute type `type` (a non-decimal, non-collection attribute).
    func attribute(_ i: Int, _ type: AttributeType) -> Value
    /// Column `i`'s UTF-8 bytes when it holds text and the row can lend them (valid until the
    /// row is read again), nil otherwise (`attribute` then reads it).
    func textBytes(_ i: Int) -> UnsafeBufferPointer<UInt8>?
    /// Column `i` when it holds a double, nil otherwise.
    func double(_ i: Int) -> Double?
    /// Whether column `i` is NULL.
    func isNull(_ i: Int) -> Bool
}

extension RowSource {
    func key(_ i: Int) -> SQLValue { if case .integer(let k) = column(i) { .integer(k) } else { .null } }
    func attribute(_ i: Int, _ type: AttributeType) -> Value { ColumnCodec.decode(column(i), type) }
    func textBytes(_ i: Int) -> UnsafeBufferPointer<UInt8>? { nil }
    func double(_ i: Int) -> Double? { if case .double(let d) = column(i) { d } else { nil } }
    func isNull(_ i: Int) -> Bool { if case .null = column(i) { true } else { false } }
}

/// A row already read into values, from `offset` on.
struct RowValues: RowSource {
    let values: [SQLValue]
    var offset = 0
    func column(_ i: Int) -> SQLValue { values[i + offset] }
}

// The current row of a statement, read by the type each column is expected to hold: the common
// storage classes become values directly (the same values `ColumnCodec.decode` gives) without
// a `SQLValue` in between; anything else goes through `decode`.
extension SQLiteStatement: RowSource {
    func key(_ i: Int) -> SQLValue {
        let v = value(i)
        return v.storageClass == .integer ? .integer(v.int64) : .null
    }

    func double(_ i: Int) -> Double? {
        let v = value(i)
        return v.storageClass == .double ? v.double : nil
    }

    func isNull(_ i: Int) -> Bool { value(i).storageClass == .null }

    func attribute(_ i: Int, _ type: AttributeType) -> Value {
        let v = value(i)
        switch (type, v.storageClass) {
        case (_, .null): return .null
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer), (.dynamic, .integer):
            return .integer(v.int64)
        case (.double, .double), (.float, .double), (.dynamic, .double): return .double(v.double)
        case (.string, .text), (.uuid, .text), (.uri, .text), (.dynamic, .text): return .string(v.text)
        case (.boolean, .integer): return .bool(v.int64 != 0)
        case (.date, .double): return .date(Date(timeIntervalSinceReferenceDate: v.double))
        default: return ColumnCodec.decode(column(i), type)
        }
    }
}

extension PersistentStore {
    /// The shared facts of an entity.
    func info(_ name: String) throws(StoreError) -> EntityInfo {
        guard let i = infos[name] else { throw StoreError(.unknownEntity, "the model has no entity '\(name)'") }
        return i
    }
}
