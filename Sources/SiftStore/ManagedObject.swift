// Managed objects: one row as a class instance (identity, uniquing per context), readable by every
// predicate through `KeyValueReading`. Attributes are held as evaluation `Value`s; relationships
// as links to other managed objects, loaded lazily the first time they are touched (a to-one
// starts as the foreign key read with the row; a to-many as not loaded). An object whose row has
// not been read yet is a fault and reads it on first access. Writes go through the context, which
// records the committed state before the first change (for rollback) and keeps inverses in step.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite
import SiftText

/// Per-entity facts shared by every object of the entity: the resolved model entity, where its
/// properties sit in its table's rows, and its compiled validation patterns.
final class EntityInfo: @unchecked Sendable {
    let entity: ResolvedEntity
    let layout: TableLayout
    /// Per attribute: its column's position in a row of `layout.columns`.
    let attributeColumns: [Int]
    let exactColumns: [Int?]
    /// Per mixed attribute: the positions of its shape, scalar, date and count columns.
    let mixedColumns: [[Int?]?]
    /// Per relationship: the foreign-key column's position (to-one only).
    let foreignKeyColumns: [Int?]
    /// Per relationship: the count column's position (to-manys that allow nil only).
    let countColumns: [Int?]
    /// Whether any relationship has a count column (a save then writes them).
    let hasCountColumns: Bool
    /// Per relationship: the row position of the destination's entity number beside a to-one's
    /// key (Core Data's layout, a destination with sub-entities), and whether there is any (a save
    /// then writes them).
    let entityColumns: [Int?]
    let hasEntityColumns: Bool
    /// Some attribute names a value transformer.
    let hasTransformers: Bool
    let regexes: [RegexPattern?]
    /// The statements a save runs for this entity's rows, made once.
    let insertSQL: String
    let updateSQL: String
    /// The row positions `updateSQL` binds, in order (the key last).
    let updateColumns: [Int]
    /// `insertSQL` prepared, once the store first needs it (only touched with its lock held).
    var insertStatement: SQLiteStatement?
    /// `UPDATE` statements that write only some columns, by the row positions they set (made by
    /// saves, with the store's lock held).
    var partialUpdates: [[Int]: SQLiteStatement] = [:]
    /// Every insert binds every column of the row (no collections, no mixed attributes, no other
    /// entity's columns in the table), so nothing bound for one row can linger into the next.
    let insertBindsEveryColumn: Bool
    /// Per attribute: its name, its type, and whether it holds one value (not a collection).
    let attributeNames: [String]
    let attributeTypes: [AttributeType]
    let isScalar: [Bool]
    /// Per attribute: whether a typed setter stores its value directly (one value, not derived).
    let setsInPlace: [Bool]
    /// A new object's attributes (the model's defaults) and relationships (empty).
    let initialAttributes: [Value]
    let initialLinks: [Link?]
    /// No attribute has a default (every initial value is nil).
    let initialAttributesAreNil: Bool
    /// The interned store and entity names this entity's object IDs carry (set by the store once
    /// it knows its identifier, before any object exists).
    var names = IDNames.Pair(store: 0, entity: 0)
    var name: String { entity.name }
    /// The registered class the entity's objects are made as (nil: `ManagedObject` itself).
    let objectClass: ManagedObject.Type?
    /// A sub-entity's objects are made as another class: a fault of this entity reads its row's
    /// entity number before it is made (Swift cannot change an object's class later).
    let needsConcreteEntity: Bool
    /// A document entity (its one attribute is the document).
    let isDocument: Bool
    /// UUIDs are kept as their 16 bytes (Core Data's layout), not as text.
    let uuidBytes: Bool
    /// The version (`Z_OPT`) a new row is written with: 0 in Sift's layout, 1 in Core Data's.
    let firstVersion: Int64

    /// The position of attribute `key`. Entities have few attributes and callers name them with
    /// the model's own strings, so comparing names (the byte count first) beats hashing the key;
    /// a key the scan misses is looked up in the index, which settles it.
    @inline(__always)
    func attributeNumber(_ key: String) -> Int? {
        let n = key.utf8.count
        for i in attributeNames.indices where attributeNames[i].utf8.count == n && attributeNames[i] == key { return i }
        return entity.attributeIndex[key]
    }

    init(_ entity: ResolvedEntity, layout: TableLayout, classes: ObjectClasses, storeLayout: StoreLayout = .sift) {
        self.entity = entity
        uuidBytes = storeLayout.keepsUUIDsAsBytes
        firstVersion = storeLayout.firstVersion
        self.layout = layout
        objectClass = classes.byEntity[entity.name]
        needsConcreteEntity = classes.needsConcreteEntity.contains(entity.name)
        isDocument = entity.document != nil
        attributeColumns = entity.attributes.map { layout.index[$0.column]! }
        exactColumns = entity.attributes.map { $0.exactColumn.map { layout.index[$0]! } }
        mixedColumns = entity.attributes.map { a in
            a.mixed.map { m in
                [m.shapeColumn, m.scalarColumn, m.dateColumn, m.countColumn].map { $0.map { layout.index[$0]! } }
            }
        }
        foreignKeyColumns = entity.relationships.map {
            if case .foreignKey(let c) = $0.storage { return layout.index[c]! }
            return nil
        }
        countColumns = entity.relationships.map { $0.countColumn.map { layout.index[$0]! } }
        hasCountColumns = countColumns.contains { $0 != nil }
        entityColumns = entity.relationships.map { $0.entityColumn.map { layout.index[$0]! } }
        hasEntityColumns = entityColumns.contains { $0 != nil }
        hasTransformers = entity.attributes.contains { $0.description.valueTransformerName != nil }
        attributeNames = entity.attributes.map(\.name)
        attributeTypes = entity.attributes.map(\.type)
        isScalar = entity.attributes.map { !$0.description.isCollection }
        setsInPlace = entity.attributes.map { !$0.description.isCollection && !$0.isDerived }
        initialAttributes = entity.attributes.map { $0.defaultValue ?? .null }
        initialLinks = entity.relationships.map {
            $0.isToMany ? ($0.description.allowsNil ? .nilMany : .many([])) : .one(nil)
        }
        initialAttributesAreNil = initialAttributes.allSatisfy(\.isNull)
        regexes = entity.attributes.map { a in
            a.description.regularExpression.flatMap { try? AttributeValidation.regex($0) }
        }
        let q = PersistentStore.q
        insertSQL =
            "INSERT INTO \(q(layout.table)) (\(layout.columns.map(q).joined(separator: ", "))) VALUES (\(layout.columns.map { _ in "?" }.joined(separator: ", ")))"
        // Z_ENT, Z_OPT and the entity's own columns; order columns (Z_FOK_) belong to the owner
        // of an ordered to-many, which writes them, and a sibling's columns stay NULL. Count
        // columns are written after the links (`RowWriter.writeCounts`), and triggers keep them
        // in step afterwards, so a row write never touches them.
        let own = Set(
            attributeColumns + exactColumns.compactMap { $0 } + foreignKeyColumns.compactMap { $0 }
                + mixedColumns.flatMap { ($0 ?? []).compactMap { $0 } })
        let columns = [1, 2] + layout.columns.indices.filter { own.contains($0) }
        updateColumns = columns + [0]
        let bound = Set(
            [0, 1, 2] + attributeColumns + exactColumns.compactMap { $0 } + foreignKeyColumns.compactMap { $0 })
        insertBindsEveryColumn =
            isScalar.allSatisfy { $0 } && mixedColumns.allSatisfy { $0 == nil }
            && bound == Set(layout.columns.indices)
        updateSQL =
            "UPDATE \(q(layout.table)) SET \(columns.map { "\(q(layout.columns[$0])) = ?" }.joined(separator: ", ")) WHERE \(q(Storage.primaryKey)) = ?"
    }
}

/// A relationship's state in memory.
enum Link {
    /// A to-one read with its row: the destination's primary key, not yet an object.
    case oneKey(Int64?)
    /// A to-one read with its row in Core Data's layout, whose entity column (`Z<n>_<REL>`) names
    /// a sub-entity of the declared destination: the key and that entity's number (32 bits, which
    /// entity numbers never outgrow, keep a link as small as `oneKey`'s).
    case subEntityKey(Int64, entity: Int32)
    case one(ManagedObject?)
    case many([ManagedObject])
    /// A to-many that allows nil and is nil (no objects, and not an empty collection either).
    case nilMany
}

/// The committed state of an object, kept from its first change until save or rollback.
struct Snapshot {
    var attributes: [Value]
    var links: [Link?]
}

/// One object of an entity, registered in one context.
///
/// ```swift
/// let ann = try context.insert("Person")
/// try ann.setValue("Ann", forKey: "name")
/// ann["name"]                                  // .string("Ann")
/// try ann.get("age", as: Int.self)             // nil
/// try SiftPredicate("name BEGINSWITH 'A'").evaluate(with: ann)  // true
/// ```
///
/// Subclass it per entity for typed properties (<doc:TypedObjects>; `sift store codegen` writes the
/// subclasses) and register the subclasses with the model: contexts then make every object of
/// the entity as its class.
///
/// ```swift
/// final class Item: ManagedObject {
///     var name: String? {
///         get { attribute("name") }
///         set { setAttribute(newValue, "name") }
///     }
/// }
/// ```
// Open for the entity classes; every stored property is final, so none of them is reached
// through a class's table of methods (nothing is slower than with a final class).
open class ManagedObject: KeyValueReading, Hashable, CustomStringConvertible {
    /// Temporary until the object's first save, then the permanent ID of its row.
    @exclusivity(unchecked) public internal(set) final var objectID: ObjectID
    @exclusivity(unchecked) final var info: EntityInfo
    // The stored properties skip the runtime's exclusivity checks: a context and its objects are
    // used from one thread at a time and no method holds one property while changing it, and
    // the checks (a call per property access) cost more than reading a row's values.
    /// Not weak (a weak reference allocates a side table per object): the context clears it for
    /// every object it holds when it lets the object go or is itself released, so it never dangles.
    @exclusivity(unchecked) unowned(unsafe) final var context: ManagedObjectContext?
    /// The row has not been read yet: the object is a fault (from `object(with:)`, a fetch with
    /// `fetchBatchSize` or `returnsObjectsAsFaults`, a refresh), and touching a value reads it.
    ///
    /// ```swift
    /// var request = FetchRequest("Item")
    /// request.fetchBatchSize = 2
    /// let items = try context.fetch(request)   // all faults
    /// _ = try items[0].get("name", as: String.self)
    /// items[1].isFault                          // false: read with items[0], in one batch
    /// ```
    @exclusivity(unchecked) public internal(set) final var isFault: Bool
    @exclusivity(unchecked) final var attributes: [Value]
    /// Per relationship; nil when not loaded yet.
    @exclusivity(unchecked) final var links: [Link?]
    /// Transient attributes' values, per `entity.transients`; nil until one is set (each then
    /// reads its default).
    @exclusivity(unchecked) final var transientValues: [Value]?
    @exclusivity(unchecked) final var snapshot: Snapshot?
    /// The row's version counter when it was read.
    @exclusivity(unchecked) final var version: Int64 = 0
    /// The context's report round (its context's `reportRound`) in which this object was
    /// last listed in an objects-did-change, so a change after that report is reported again.
    @exclusivity(unchecked) final var reportedRound = 0
    /// Faults of one fetch with a batch size: touching one reads the rows of all.
    @exclusivity(unchecked) final var batch: FaultBatch?
    /// Inserted in its context and not saved yet (the context's own bookkeeping).
    @exclusivity(unchecked) final var pendingInsert = false
    /// The primary key a save in progress gave this inserted object (nil outside a save).
    @exclusivity(unchecked) final var assignedKey: Int64?
    /// The last fetch pass of its context that judged it dirty (0: none).
    @exclusivity(unchecked) final var dirtyPass: UInt64 = 0
    /// Deleted from the store by another context's save or a batch delete, and merged into its
    /// context: it reports `isDeleted`, and reading or changing it is an error.
    @exclusivity(unchecked) final var isGone = false
    /// Gone because an ancestor of its (child) context deleted it, saved or not.
    @exclusivity(unchecked) final var isGoneAbove = false
    /// The context a merged delete took a gone object from, which keeps the errors of its typed
    /// accesses (TypedAccess.swift). Weak: the gone object no longer keeps its context alive.
    @exclusivity(unchecked) final weak var goneFrom: ManagedObjectContext?

    /// What a context hands the object it makes: only a context can make one.
    public struct Seed {
        let id: ObjectID
        let info: EntityInfo
        unowned(unsafe) let context: ManagedObjectContext
        let fault: Bool
    }

    /// Made by a context (inserts, fetches, faults) as the class registered for the entity; a
    /// subclass keeps this initializer (it declares none of its own).
    public required init(_ seed: Seed) {
        self.objectID = seed.id
        self.info = seed.info
        self.context = seed.context
        self.isFault = seed.fault
        // A fault gets its attributes when its row is read.
        self.attributes = seed.fault ? [] : Array(repeating: .null, count: seed.info.entity.attributes.count)
        self.links = Array(repeating: nil, count: seed.info.entity.relationships.count)
    }

    /// An object of `info`'s entity, made as the entity's registered class.
    @inline(__always)
    static func make(id: ObjectID, info: EntityInfo, context: ManagedObjectContext, fault: Bool) -> ManagedObject {
        let seed = Seed(id: id, info: info, context: context, fault: fault)
        guard let cls = info.objectClass else { return ManagedObject(seed) }
        return cls.init(seed)
    }

    /// The name of the object's entity.
    public final var entityName: String { info.name }

    /// Identity: two objects are equal only when they are the same instance (one per ID per context).
    public static func == (a: ManagedObject, b: ManagedObject) -> Bool { a === b }
    /// Hashes the instance's identity.
    public final func hash(into h: inout Hasher) { h.combine(ObjectIdentifier(self)) }

    /// `<` and the object ID's description `>`.
    public var description: String { "<\(objectID)>" }

    /// Inserted in its context and not saved yet.
    public var isInserted: Bool { context?.isInserted(self) ?? false }
    /// Changed since it was read or last saved.
    public var isUpdated: Bool { context?.updatedSet.contains(self) ?? false }
    /// Deleted in its context, not saved yet.
    /// (also after another context's save or a batch delete removed its row and this context
    /// merged that change: such an object can no longer be read).
    public var isDeleted: Bool { isGone || (context?.deletedSet.contains(self) ?? false) }
    /// Inserted, updated or deleted.
    public var hasChanges: Bool { isInserted || isUpdated || isDeleted }

    // MARK: Reading

    /// The value of an attribute or relationship (a to-one is `.object(ManagedObject)` or
    /// `.null`; a to-many is a `.set`, or an `.array` when ordered). Loads the row or the
    /// relationship when needed.
    public final func value(forKey key: String) throws -> Value {
        if info.entity.document != nil { return try storeValue(forKey: key) }
        guard
            info.entity.attributeIndex[key] != nil || info.entity.relationshipIndex[key] != nil
                || info.entity.transientIndex[key] != nil
        else {
            if let f = context?.store.model.fetchedProperties[info.name]?[key] { return try fetchedValue(f) }
            if info.entity.isOpen { return .null }
            // The evaluator's own error for a key the type does not have (`unknown-key`).
            throw KeyValueCodingError.unknownKey(key, in: info.name)
        }
        return try storeValue(forKey: key)
    }

    /// `value(forKey:)` with the store's typed error.
    public final func storeValue(forKey key: String) throws(StoreError) -> Value {
        if info.entity.document != nil {
            // A document's keys, as a JSON object answers them (nil when missing or not an object).
            try fire()
            if case .dictionary(let d) = attributes.first ?? .null { return d[key] ?? .null }
            return .null
        }
        if let i = info.entity.attributeIndex[key] {
            try fire()
            if _slowPath(info.hasTransformers), case .object(let t as TransformedValue) = attributes[i],
                let e = t.unreadError(objectID, key)
            {
                throw e
            }
            return attributes[i]
        }
        if let i = info.entity.transientIndex[key] {
            return transientValues?[i] ?? info.entity.transients[i].defaultValue ?? .null
        }
        if let i = info.entity.relationshipIndex[key] {
            switch try link(i) {
            case .one(let o): return o.map { .object($0) } ?? .null
            case .many(let objects):
                let values = objects.map { Value.object($0) }
                return info.entity.relationships[i].description.isOrdered ? .array(values) : .set(values)
            case .nilMany: return .null
            case .oneKey, .subEntityKey: preconditionFailure("link(_:) resolves foreign keys")
            }
        }
        if let f = context?.store.model.fetchedProperties[info.name]?[key] { return try fetchedValue(f) }
        throw StoreError.unknownKey(key, of: self, "entity '\(info.name)' has no attribute or relationship '\(key)'")
    }

    /// A document object's members (key-value coding's dictionary form: `@count`, `==`).
    public var dictionaryValue: [String: Value]? {
        guard info.entity.document != nil, case .dictionary(let d)? = document else { return nil }
        return d
    }

    /// The value for `key`, or nil when the key is unknown or cannot be read.
    public subscript(key: String) -> Value? {
        try? storeValue(forKey: key)
    }

    /// The value for `key` as a Swift type: `Int`, `Int16`, `Int32`, `Int64`, `Double`, `Float`,
    /// `Decimal`, `String`, `Bool`, `Date`, `Data`, `UUID`, `URL`, `ManagedObject`,
    /// `[ManagedObject]`, `Value`, or any `Decodable` type for transformable attributes (the value
    /// transformer's type when the attribute names one). nil when the value is nil; a
    /// `.typeMismatch` error when it is not a `T`.
    ///
    /// ```swift
    /// let age = try person.get("age", as: Int.self)   // Int?
    /// ```
    public final func get<T>(_ key: String, as type: T.Type = T.self) throws(StoreError) -> T? {
        let v = try storeValue(forKey: key)
        if case .null = v { return nil }
        if let r = Self.cast(v, to: T.self) { return r }
        if let decodable = T.self as? any Decodable.Type {
            let data = TransformableCodec.json(v)
            if let r = try? JSONDecoder().decode(decodable, from: data) as? T { return r }
        }
        throw StoreError.typeMismatch(self, key, v, "\(v) is not a \(T.self)")
    }

    static func cast<T>(_ v: Value, to: T.Type) -> T? {
        switch v {
        case .integer(let i):
            if T.self == Int.self { return Int(exactly: i) as? T }
            if T.self == Int64.self { return i as? T }
            if T.self == Int32.self { return Int32(exactly: i) as? T }
            if T.self == Int16.self { return Int16(exactly: i) as? T }
            if T.self == Double.self { return Double(i) as? T }
        case .double(let d):
            if T.self == Double.self { return d as? T }
            if T.self == Float.self { return Float(d) as? T }
        case .decimal(let d): if T.self == Decimal.self { return d as? T }
        case .string(let s):
            if T.self == String.self { return s as? T }
            if T.self == UUID.self { return UUID(uuidString: s) as? T }
            if T.self == URL.self { return URL(string: s) as? T }
        case .bool(let b): if T.self == Bool.self { return b as? T }
        case .date(let d): if T.self == Date.self { return d as? T }
        case .data(let d): if T.self == Data.self { return d as? T }
        case .object(let o):
            if let m = o as? ManagedObject, T.self == ManagedObject.self { return m as? T }
            if let t = o as? TransformedValue, let r = t.object as? T { return r }
        case .array(let a), .set(let a):
            if T.self == [ManagedObject].self {
                let objects = a.compactMap { if case .object(let o) = $0 { o as? ManagedObject } else { nil } }
                if objects.count == a.count { return objects as? T }
            }
        default: break
        }
        if T.self == Value.self { return v as? T }
        return nil
    }

    // MARK: Writing

    /// Sets an attribute (coerced to its type: integers checked against their width, UUID and URL
    /// as strings, any `Encodable` for transformables, or the value transformer's type when the
    /// attribute names one; a value only reflection could read is a `.typeMismatch` error) or a
    /// relationship (a `ManagedObject` or nil for a to-one; an array or set of them for a
    /// to-many). Inverses are updated at once.
    ///
    /// ```swift
    /// try pet.setValue(ann, forKey: "owner")   // ann's "pets" now holds pet
    /// ```
    public final func setValue(_ value: Any?, forKey key: String) throws(StoreError) {
        guard let context else { throw detachedError }
        try context.set(value, forKey: key, of: self)
    }

    // Typed forms of `setValue(_:forKey:)` for the common attribute values: the same result as
    // passing the value as `Any?`, without finding its dynamic type first (a bulk insert sets
    // every attribute of every object through here).

    /// Sets an attribute to a string (see `setValue(_:forKey:)` for coercion and errors).
    ///
    /// ```swift
    /// try ann.setValue("Ann", forKey: "name")
    /// ```
    public final func setValue(_ value: String, forKey key: String) throws(StoreError) {
        try setTyped(.string(value), value, forKey: key) { $0 == .string }
    }

    /// Sets an attribute to an integer (checked against the attribute's width; see
    /// `setValue(_:forKey:)`).
    ///
    /// ```swift
    /// try ann.setValue(42, forKey: "age")
    /// ```
    public final func setValue(_ value: Int, forKey key: String) throws(StoreError) {
        try setTyped(.integer(Int64(value)), value, forKey: key) { $0.integerRange?.contains(Int64(value)) ?? false }
    }

    /// Sets an attribute to a 64-bit integer (see `setValue(_:forKey:)`).
    ///
    /// ```swift
    /// try ann.setValue(Int64(42), forKey: "age")
    /// ```
    public final func setValue(_ value: Int64, forKey key: String) throws(StoreError) {
        try setTyped(.integer(value), value, forKey: key) { $0.integerRange?.contains(value) ?? false }
    }

    /// Sets an attribute to a double (see `setValue(_:forKey:)`).
    ///
    /// ```swift
    /// try ann.setValue(5200.0, forKey: "salary")
    /// ```
    public final func setValue(_ value: Double, forKey key: String) throws(StoreError) {
        try setTyped(.double(value), value, forKey: key) { $0 == .double }
    }

    /// Sets an attribute to a boolean (see `setValue(_:forKey:)`).
    ///
    /// ```swift
    /// try ann.setValue(true, forKey: "active")
    /// ```
    public final func setValue(_ value: Bool, forKey key: String) throws(StoreError) {
        try setTyped(.bool(value), value, forKey: key) { $0 == .boolean }
    }

    /// An attribute whose type `storesAsIs` says takes `value` unchanged (what coercion would
    /// give); another attribute coerces it; anything else (a relationship, an unknown key) goes
    /// the general way with `original`, so errors read exactly as they do there.
    // `original` is generic, not `Any`: it is boxed only on the rare path that needs it.
    @inline(__always)
    private final func setTyped<T>(
        _ value: Value, _ original: T, forKey key: String,
        storesAsIs: (AttributeType) -> Bool
    ) throws(StoreError) {
        guard let context else { throw detachedError }
        guard let i = info.attributeNumber(key) else {
            try context.set(original, forKey: key, of: self)
            return
        }
        if info.setsInPlace[i], storesAsIs(info.attributeTypes[i]) {
            // An object inserted in its context passes both: it is never in the deleted set (a
            // delete takes it out of the context) and has no committed state to record.
            if !pendingInsert {
                try context.checkOwned(self)
                if context.undoManager != nil { try context.recordAttribute(self, i) }
                try context.willChange(self)
            } else {
                if context.undoManager != nil { try context.recordAttribute(self, i) }
                if reportedRound != context.reportRound { context.noteInsertedChanged(self) }
                if context.hasResultTaps { context.changedForResults.append(objectID) }
            }
            attributes[i] = value
        } else {
            try context.setAttribute(value, i, forKey: key, of: self)
        }
    }

    /// Adds `object` to the to-many relationship `key` (kept in order when ordered).
    public final func add(_ object: ManagedObject, to key: String) throws(StoreError) {
        guard let context else { throw detachedError }
        if context.undoManager != nil, let i = info.entity.relationshipIndex[key] {
            try context.checkOwned(self)
            try context.recordRelationship(self, i, adding: [object])
        }
        try context.add(object, to: key, of: self)
    }

    /// Removes `object` from the to-many relationship `key`.
    public final func remove(_ object: ManagedObject, from key: String) throws(StoreError) {
        guard let context else { throw detachedError }
        if context.undoManager != nil, let i = info.entity.relationshipIndex[key] {
            try context.checkOwned(self)
            try context.recordRelationship(self, i)
        }
        try context.remove(object, from: key, of: self)
    }

    /// The attributes and relationships changed since the object was read or saved, with their
    /// new values (relationships as their object IDs).
    public var changedValues: [String: Value] {
        guard let snapshot else { return [:] }
        var out: [String: Value] = [:]
        for (i, a) in info.entity.attributes.enumerated() where !attributes[i].isIdentical(to: snapshot.attributes[i]) {
            out[a.name] = attributes[i]
        }
        for (i, r) in info.entity.relationships.enumerated() where !Link.same(links[i], snapshot.links[i]) {
            out[r.name] = (try? storeValue(forKey: r.name)) ?? .null
        }
        return out
    }

    // MARK: Faults

    /// Reads the row when the object is a fault.
    final func fire() throws(StoreError) {
        guard isFault else { return }
        guard let context else { throw detachedError }
        if let batch { try context.fulfillBatch(batch) }
        if isFault { try context.fulfill(self) }
    }

    /// Why an object without a context cannot be read.
    var detachedError: StoreError {
        guard isGone else { return StoreError(.invalidOperation, "\(objectID) no longer belongs to a context") }
        return isGoneAbove
            ? ManagedObjectContext.deletedAboveError(objectID)
            : StoreError(
                .objectNotFound,
                "\(objectID) was deleted from the store (a merged save or batch delete); it cannot be read")
    }

    /// Relationship `i`, loaded.
    final func link(_ i: Int) throws(StoreError) -> Link {
        if let l = links[i] {
            if let pk = l.unloadedKey {
                guard let context else { throw detachedError }
                // In a child, an object an ancestor deleted (its delete rules not run yet) is gone;
                // the link keeps its key, as the ancestor may take its delete back.
                var deletedAbove = false
                let o = try pk.flatMap { (k) throws(StoreError) -> ManagedObject? in
                    // The row's entity when the holder's row named it (Core Data's layout).
                    let destination =
                        if case .subEntityKey(_, let n) = l, let sub = context.store.infoByNumber[Int64(n)] {
                            sub.name
                        } else {
                            info.entity.relationships[i].destination
                        }
                    if context.hasGoneObjects,
                        context.goneIDs.contains(
                            ObjectID(try context.store.info(destination).names, key: .permanent(k)))
                    {
                        return nil
                    }
                    let o = try context.faultObject(pk: k, declared: destination)
                    if context.isChild, o.isFault { deletedAbove = try context.unlessDeletedAbove(o).isGone }
                    return deletedAbove ? nil : o
                }
                if !deletedAbove { links[i] = .one(o) }
                return .one(o)
            }
            if let context, context.hasGoneObjects { return withoutGone(i, l) }
            return l
        }
        try fire()
        if let l = links[i], l.unloadedKey != nil { return try link(i) }
        if let l = links[i] { return l }
        guard let context else { throw detachedError }
        let loaded = try context.loadToMany(self, i)
        links[i] = .many(loaded)
        return .many(loaded)
    }

    /// Link `l` (relationship `i`) without the objects merged away as deleted, which it keeps
    /// from then on: pruned when next read, so merging a delete costs nothing per holder.
    private final func withoutGone(_ i: Int, _ l: Link) -> Link {
        switch l {
        case .one(let o?) where o.isGone:
            links[i] = .one(nil)
            return .one(nil)
        case .many(let m) where m.contains(where: \.isGone):
            let kept = Link.many(m.filter { !$0.isGone })
            links[i] = kept
            return kept
        default: return l
        }
    }

    /// The objects of to-many relationship `i` (loaded).
    final func many(_ i: Int) throws(StoreError) -> [ManagedObject] {
        if case .many(let m) = try link(i) { return m }
        return []
    }

    /// The object of to-one relationship `i` (loaded).
    final func one(_ i: Int) throws(StoreError) -> ManagedObject? {
        if case .one(let o) = try link(i) { return o }
        return nil
    }
}

extension Link {
    /// The destination's key of a to-one not made an object yet (`.some(nil)`: no destination);
    /// nil for any other link.
    var unloadedKey: Int64?? {
        switch self {
        case .oneKey(let k): .some(k)
        case .subEntityKey(let k, _): .some(k)
        default: nil
        }
    }

    static func same(_ a: Link?, _ b: Link?) -> Bool {
        let keyOfA = a?.unloadedKey
        let keyOfB = b?.unloadedKey
        if let x = keyOfA, let y = keyOfB { return x == y }
        if let k = keyOfA, case .one(let x)? = b { return x?.objectID.primaryKey == k }
        if let k = keyOfB, case .one(let x)? = a { return x?.objectID.primaryKey == k }
        switch (a, b) {
        case (nil, nil): return true
        case (.one(let x)?, .one(let y)?): return x === y
        case (.many(let x)?, .many(let y)?): return x.count == y.count && zip(x, y).allSatisfy { $0 === $1 }
        case (.nilMany?, .nilMany?): return true
        default: return false
        }
    }
}

extension Value {
    /// Same kind and same value (unlike `isEqual`, 1 and 1.0 or "é" and "e\u{301}" differ), for
    /// change tracking.
    func isIdentical(to other: Value) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.decimal(let a), .decimal(let b)): return a == b
        case (.string(let a), .string(let b)): return a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case (.date(let a), .date(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.array(let a), .array(let b)), (.set(let a), .set(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1) }
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && a.allSatisfy { k, v in b[k].map { v.isIdentical(to: $0) } ?? false }
        case (.object(let a as TransformedValue), .object(let b as TransformedValue)):
            // A value transformer's values: the same when the transformer made the same bytes.
            return a.transformerName == b.transformerName && a.data == b.data
        default: return false
        }
    }
}
