// Optimistic locking: every row carries a version (`Z_OPT`) that each save of it raises. A save
// compares the version each changed or deleted object was read at with the stored one, inside its
// write transaction, so two contexts can never silently overwrite each other's saved changes; the
// context's merge policy decides what a difference (a conflict) does, per property, as in Core Data.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite

/// What a save does with an object whose row another context or process saved (or deleted) since
/// the object was read: Core Data's merge policies.
///
/// ```swift
/// context.mergePolicy = .mergeByPropertyObjectTrump
/// try context.save()   // this context's changes win property by property; others are kept
/// ```
public enum MergePolicy: Sendable, Hashable, CaseIterable {
    /// The save throws a `.mergeConflict` error listing every conflict and writes nothing (the default).
    ///
    /// ```swift
    /// do { try context.save() } catch where error.kind == .mergeConflict { print(error.conflicts) }
    /// ```
    case error
    /// Per property, this context's changes win; properties it did not change take the stored
    /// values. A row deleted in the store is written again with the object's values, as a new row
    /// (the object gets a new ID, so stale copies of the old row elsewhere still conflict).
    ///
    /// ```swift
    /// // stored: name "orig", price 100 (saved elsewhere); here: name "renamed", price 1 (unchanged)
    /// context.mergePolicy = .mergeByPropertyObjectTrump
    /// try context.save()   // stored: name "renamed", price 100
    /// ```
    case mergeByPropertyObjectTrump
    /// Per property, the stored changes win; properties changed only here keep this context's
    /// values. A row deleted in the store stays deleted (the object leaves the context).
    ///
    /// ```swift
    /// // stored: price 100 (saved elsewhere); here: price 5 and name "renamed"
    /// context.mergePolicy = .mergeByPropertyStoreTrump
    /// try context.save()   // stored: name "renamed", price 100
    /// ```
    case mergeByPropertyStoreTrump
    /// This context's whole object is written over the stored row (every property, changed here
    /// or not). A row deleted in the store is written again, as a new row with a new ID.
    ///
    /// ```swift
    /// context.mergePolicy = .overwrite
    /// try context.save()   // stored: exactly the object's values
    /// ```
    case overwrite
    /// This context's changes to conflicting objects are discarded: they take the stored values
    /// (a row deleted in the store leaves the context, a delete of a changed row is undone). Other
    /// objects save as usual.
    ///
    /// ```swift
    /// context.mergePolicy = .rollback
    /// try context.save()   // conflicting objects now hold the stored values; nothing of theirs written
    /// ```
    case rollback
}

/// One object a save found changed or deleted in the store since it was read.
///
/// ```swift
/// catch where error.kind == .mergeConflict {
///     for c in error.conflicts { print(c.objectID, c.changedKeys, c.snapshot, c.stored ?? [:]) }
/// }
/// ```
public struct MergeConflict: Sendable, Equatable, CustomStringConvertible {
    /// The conflicting object.
    public var objectID: ObjectID
    /// The keys this context changed (empty for a delete).
    public var changedKeys: [String]
    /// Whether this context deleted the object.
    public var isDeleted: Bool
    /// The attribute values the object was read with.
    public var snapshot: [String: Value]
    /// The attribute values stored now; nil when the row was deleted.
    public var stored: [String: Value]?
    /// The version the object was read at and the stored one (nil when the row was deleted).
    public var versions: (read: Int64, stored: Int64?)

    /// Same object, same changes, same snapshot, stored values and versions (`versions` is a
    /// tuple, so equality is spelled out).
    ///
    /// ```swift
    /// error.conflicts == [first, second]
    /// ```
    public static func == (a: MergeConflict, b: MergeConflict) -> Bool {
        a.objectID == b.objectID && a.changedKeys == b.changedKeys && a.isDeleted == b.isDeleted
            && a.snapshot == b.snapshot && a.stored == b.stored && a.versions == b.versions
    }

    /// One line: the object, what this context did, and what the store holds.
    public var description: String {
        let mine = isDeleted ? "deleted here" : "changed here: \(changedKeys.joined(separator: ", "))"
        func show(_ d: [String: Value]) -> String {
            "{" + d.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        }
        let theirs =
            stored.map { "stored version \(versions.stored ?? 0) \(show($0))" } ?? "deleted in the store"
        return "\(objectID) (\(mine)) was read at version \(versions.read) \(show(snapshot)), \(theirs)"
    }
}

/// A row as a save finds it inside its transaction.
struct StoredRow {
    var version: Int64
    var attributes: [Value]
    var links: [Link?]
}

extension ManagedObjectContext {
    /// The stored versions of the rows of `objects` (a row that no longer exists has none),
    /// inside the transaction: one query per table and up to 512 keys, the key list padded to a
    /// power of two so a few statements serve every save. By ID: keys repeat across the tables of
    /// a store whose keys are per hierarchy (a table is one hierarchy, so one key space).
    func storedVersions(_ objects: [ManagedObject]) throws(StoreError) -> [ObjectID: Int64] {
        var byTable: [String: (names: IDNames.Pair, keys: [Int64])] = [:]
        for o in objects {
            if let pk = o.objectID.primaryKey {
                byTable[o.info.layout.table, default: (o.info.names, [])].keys.append(pk)
            }
        }
        let q = PersistentStore.q
        var out: [ObjectID: Int64] = [:]
        out.reserveCapacity(objects.count)
        for (table, (names, keys)) in byTable {
            var start = 0
            while start < keys.count {
                var chunk = Array(keys[start..<min(start + 512, keys.count)])
                start += chunk.count
                var size = 1
                while size < chunk.count { size *= 2 }
                chunk += Array(repeating: chunk[0], count: size - chunk.count)
                let sql =
                    "SELECT \(q(Storage.primaryKey)), \(q(Storage.versionColumn)) FROM \(q(table)) WHERE \(q(Storage.primaryKey)) IN (\(chunk.map { _ in "?" }.joined(separator: ", ")))"
                do throws(SQLiteError) {
                    // Read in place: keys and versions are integers, no row arrays needed.
                    let statement = try store.statement(sql)
                    for (n, k) in chunk.enumerated() { try statement.bind(int64: k, at: n + 1) }
                    while try statement.step() {
                        out[ObjectID(names, key: .permanent(statement.int64(0)))] = statement.int64(1)
                    }
                    try statement.reset()
                } catch { throw error.storeError }
            }
        }
        return out
    }

    /// The whole stored row of `o` (read by a scratch context), nil when it no longer exists.
    func storedRow(_ o: ManagedObject) throws(StoreError) -> StoredRow? {
        let scratch = ManagedObjectContext(store: store)
        let s = try scratch.object(with: o.objectID)
        do { try s.fire() } catch  where error.kind == .objectNotFound { return nil }
        // To-manys load again when touched (a nil one stays nil); to-ones are keys.
        let links = s.links.map { (l) -> Link? in
            switch l {
            case .many?: return nil
            default: return l
            }
        }
        return StoredRow(version: s.version, attributes: s.attributes, links: links)
    }

    /// The to-one key a link names (nil: no object; unknown for an unloaded or to-many link).
    static func toOneKey(_ l: Link?) -> Int64?? {
        switch l {
        case .one(let t)?: return .some(t?.objectID.primaryKey)
        case let l?: return l.unloadedKey
        default: return nil
        }
    }

    /// Finds the changed and deleted objects whose rows were saved or deleted since they were read
    /// and applies the merge policy (inside the save's transaction). Returns the objects still to
    /// update and delete, and those whose deleted rows are written again.
    func resolveConflicts(updated: [ManagedObject], deleted: [ManagedObject]) throws(StoreError) -> (
        updated: [ManagedObject], deleted: [ManagedObject], reinserted: [ManagedObject]
    ) {
        var conflicts: [(o: ManagedObject, stored: StoredRow?)] = []
        let versions = try storedVersions(deleted + updated)
        for o in deleted + updated {
            guard !o.objectID.isTemporaryID, versions[o.objectID] != o.version else { continue }
            conflicts.append((o, try storedRow(o)))
        }
        if conflicts.isEmpty { return (updated, deleted, []) }
        if mergePolicy == .error {
            let list = conflicts.map { describeConflict($0.o, $0.stored) }
            var e = StoreError(
                .mergeConflict,
                "\(list[0]); nothing was saved", failures: list.map { "\($0); nothing was saved" })
            e.conflicts = list
            throw e
        }
        var dropped = Set<ObjectIdentifier>()
        var reinserted: [ManagedObject] = []
        for (o, stored) in conflicts {
            let isDelete = deletedSet.contains(o)
            guard let stored else {
                if isDelete { continue }  // already gone: the delete completes
                switch mergePolicy {
                case .mergeByPropertyObjectTrump, .overwrite:
                    reinserted.append(o)
                default:
                    registry[o.objectID] = nil
                    Self.detach(o)
                }
                updatedSet.remove(o)
                dropped.insert(ObjectIdentifier(o))
                continue
            }
            if mergePolicy == .rollback {
                adopt(stored, into: o)
                deletedSet.remove(o)
                updatedSet.remove(o)
                dropped.insert(ObjectIdentifier(o))
                continue
            }
            if !isDelete { merge(stored, into: o) }
            o.version = stored.version
        }
        // Controllers judge them again after the save: some leave the context unannounced.
        if hasResultTaps { changedForResults += conflicts.map(\.o.objectID) }
        return (
            updated.filter { !dropped.contains(ObjectIdentifier($0)) },
            deleted.filter { !dropped.contains(ObjectIdentifier($0)) }, reinserted
        )
    }

    /// Rebases `o` on the stored row by the policy: the snapshot becomes the stored state, so a
    /// save writes exactly the properties whose merged value differs from the store's.
    func merge(_ stored: StoredRow, into o: ManagedObject) {
        let snapshot = o.snapshot ?? Snapshot(attributes: o.attributes, links: o.links)
        for i in o.attributes.indices {
            let mine = !o.attributes[i].isIdentical(to: snapshot.attributes[i])
            let theirs = !stored.attributes[i].isIdentical(to: snapshot.attributes[i])
            switch mergePolicy {
            case .mergeByPropertyObjectTrump where !mine, .mergeByPropertyStoreTrump where theirs || !mine:
                o.attributes[i] = stored.attributes[i]
            default: break
            }
        }
        var links = o.links
        for i in o.links.indices {
            guard let theirs = Self.toOneKey(stored.links[i]), let before = Self.toOneKey(snapshot.links[i]) else {
                continue
            }
            let mine = Self.toOneKey(o.links[i]).map { $0 != before } ?? false
            switch mergePolicy {
            case .mergeByPropertyObjectTrump where !mine, .mergeByPropertyStoreTrump where theirs != before || !mine:
                o.links[i] = .oneKey(theirs)
            default: break
            }
            links[i] = .oneKey(theirs)
        }
        o.snapshot = Snapshot(attributes: stored.attributes, links: links)
    }

    /// Replaces `o`'s state with the stored row (its changes discarded).
    func adopt(_ stored: StoredRow, into o: ManagedObject) {
        o.attributes = stored.attributes
        o.links = stored.links
        o.snapshot = nil
        o.version = stored.version
    }

    func describeConflict(_ o: ManagedObject, _ stored: StoredRow?) -> MergeConflict {
        let names = o.info.attributeNames
        let snapshot = o.snapshot?.attributes ?? o.attributes
        func values(_ a: [Value]) -> [String: Value] {
            Dictionary(uniqueKeysWithValues: zip(names, a))
        }
        let isDelete = deletedSet.contains(o)
        return MergeConflict(
            objectID: o.objectID, changedKeys: isDelete ? [] : o.changedValues.keys.sorted(), isDeleted: isDelete,
            snapshot: values(snapshot), stored: stored.map { values($0.attributes) },
            versions: (o.version, stored?.version))
    }
}
