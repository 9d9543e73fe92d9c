// Parent and child contexts (Core Data's nested contexts): a child reads objects through its
// ancestors (their unsaved changes included) and its save pushes its changes into its parent, as
// if they had been made there, instead of writing to the store. Fetching reuses the pending-changes
// machinery of Fetching.swift: a child's objects for its ancestors' changes count as changed. A push
// is decided and validated (as the parent's save would) before the parent changes; an object an
// ancestor deleted is deleted in the descendants too, unless one of them has unsaved changes to it.
// A context holds one object per ID: a child's insert of an object its parent already holds is
// pushed as an update of the parent's object (`pushHere`, `planPush`).
//
// Every call from a child into an ancestor goes through `nearestAncestor`, `inheritedChanges`,
// `push(into:)` and `childDidPush`; every call from a parent into its children through
// `rekeyTree`, `notifyChildren` and `forgetInDescendants`, which never wait for a child. Those are
// the places to route through a context's queue.

import Foundation
import SiftSQLite

/// Work other threads leave for a context, taken in on the context's own thread, oldest first:
/// the renames (temporary key → primary key) an ancestor's save left (taken in on its queue or by
/// its next push, whichever runs first: a child never pushes an object under a temporary ID its
/// parent has already given up), and the saves a confined auto-merging context has not taken in.
final class PendingList<Element>: @unchecked Sendable {
    private var elements: [Element] = []
    private let lock = NSLock()
    var isEmpty: Bool { lock.withLock { elements.isEmpty } }
    func add(_ more: [Element]) { lock.withLock { elements += more } }
    func take() -> [Element] {
        lock.withLock {
            defer { elements = [] }
            return elements
        }
    }
}

/// A child context as its parent holds it: weakly, so a child goes when its owner drops it.
final class WeakContext {
    weak var context: ManagedObjectContext?
    init(_ c: ManagedObjectContext) { context = c }
}

/// What a push does with the child's updated and deleted objects.
private struct PushPlan {
    var objects: [PushedObject] = []
    /// Objects whose changes are dropped (`.rollback`).
    var dropped: [ManagedObject] = []
    /// Objects gone from the parent (deleted there, or never saved) that leave the child too.
    var gone: [ManagedObject] = []
    /// Objects gone from the parent that the merge policy puts back there, as inserts.
    var reinserted: [ManagedObject] = []
}

/// An object's attributes and links, as a push leaves the parent's object.
private struct ObjectState {
    var attributes: [Value]
    var links: [Link?]
}

/// What a push does with one changed object of the child.
private struct PushedObject {
    let child: ManagedObject
    let parent: ManagedObject
    /// The attributes and relationships whose values go into the parent's object.
    var attributes: [Int]
    var links: [Int]
    /// The parent's object is taken back from a delete there (its changes win).
    var undelete = false
}

extension ManagedObjectContext {
    // MARK: Reading through the ancestors

    /// Runs `body` on the queue of the nearest ancestor that holds an object for `id` (a loaded
    /// one when `loaded`), with that ancestor and its object; nil when no ancestor holds one. A
    /// nil from `body` passes the question on to the ancestors above that one.
    func nearestAncestor<T>(
        holding id: ObjectID, loaded: Bool, _ body: (ManagedObjectContext, ManagedObject) throws(StoreError) -> T?
    ) throws(StoreError) -> T? {
        var p = parent
        while let c = p {
            // Read on the ancestor's queue: its objects may not be read anywhere else.
            let found = try c.onQueue { () throws(StoreError) -> T? in
                guard let a = c.registry[id], !loaded || !a.isFault else { return nil }
                return try body(c, a)
            }
            if let found { return found }
            p = c.parent
        }
        return nil
    }

    /// The nearest ancestor's object for `id` (only a loaded one when `loaded`).
    func ancestorObject(_ id: ObjectID, loaded: Bool) throws(StoreError) -> ManagedObject? {
        try nearestAncestor(holding: id, loaded: loaded) { _, a in a }
    }

    /// This context's object for another context's object of the same store: the registered one,
    /// or a fault that reads its state through the ancestors (or the store).
    func counterpart(of other: ManagedObject) -> ManagedObject {
        if let o = registry[other.objectID] { return o }
        let o =
            other.isFault
            ? newFault(other.objectID.key, other.info)
            : ManagedObject.make(id: other.objectID, info: other.info, context: self, fault: true)
        registry[other.objectID] = o
        return o
    }

    /// Takes `o`'s state from the nearest ancestor that has it loaded; false when none has. The
    /// state of an object that ancestor deleted is taken too (a fetch then leaves it out; a
    /// child's `object(with:)` asks `isDeletedAbove` first).
    /// Kept out of line: the row-reading paths that call it in a child are every context's.
    @inline(never)
    func inheritState(_ o: ManagedObject) throws(StoreError) -> Bool {
        try nearestAncestor(holding: o.objectID, loaded: true) { _, a in
            copyState(of: a, into: o)
            return true
        } ?? false
    }

    /// Whether an ancestor deleted the object for `id` (unsaved) and none below it holds the
    /// object with changes of its own (a clean copy, as a fetch leaves one, hides nothing).
    func isDeletedAbove(_ id: ObjectID) throws(StoreError) -> Bool {
        try nearestAncestor(holding: id, loaded: true) { c, a in
            if c.deletedSet.contains(a) { return true }
            return a.pendingInsert || c.updatedSet.contains(a) ? false : nil
        } ?? false
    }

    /// What reading an object an ancestor deleted is.
    static func deletedAboveError(_ id: ObjectID) -> StoreError {
        StoreError(.objectNotFound, "\(id) was deleted in a parent context; it cannot be read")
    }

    /// Gives `o` the current state of `a` (another context's object with the same ID).
    func copyState(of a: ManagedObject, into o: ManagedObject) {
        if o.info !== a.info {
            o.info = a.info
            o.objectID = ObjectID(a.info.names, key: o.objectID.key)
        }
        o.attributes = a.attributes
        o.links = a.links.map { localLink($0) }
        o.version = a.version
        o.isFault = false
        o.batch = nil
    }

    /// A link of another context's object as a link between this context's objects (saved
    /// to-one targets stay keys, read when touched).
    func localLink(_ l: Link?) -> Link? {
        switch l {
        case .one(let t?)?:
            if let pk = t.objectID.primaryKey, registry.permanent(pk, t.objectID.names.space) == nil {
                return .oneKey(pk)
            }
            return .one(counterpart(of: t))
        case .many(let members)?: return .many(members.map { counterpart(of: $0) })
        default: return l
        }
    }

    /// This context's objects for its ancestors' inserted, updated and deleted objects, and the
    /// IDs of the objects deleted there (gone from this context's view). Such an object this
    /// context holds without changes of its own takes the ancestors' current state first, so a
    /// fetch answers as saving into the parents and fetching there would.
    func inheritedChanges() throws(StoreError) -> (changed: [ManagedObject], deleted: Set<ObjectID>) {
        var changed: [ManagedObject] = []
        var deleted = Set<ObjectID>()
        var seen = Set<ObjectID>()
        func take(_ a: ManagedObject) throws(StoreError) {
            let o = counterpart(of: a)
            guard seen.insert(a.objectID).inserted else { return }
            changed.append(o)
            if !o.isFault, o.snapshot == nil, !o.pendingInsert { _ = try inheritState(o) }
        }
        var p = parent
        while let c = p {
            // Each ancestor's change lists are read on its own queue.
            try c.onQueue { () throws(StoreError) in
                for a in c.insertedList { try take(a) }
                for a in c.updatedSet { try take(a) }
                for a in c.deletedSet {
                    try take(a)
                    deleted.insert(a.objectID)
                }
            }
            p = c.parent
        }
        return (changed, deleted)
    }

    // MARK: Saving into the parent

    /// The order of the keys a save gives objects: saved ones by primary key, then unsaved ones
    /// in insertion order (the order of their temporary numbers, which a process hands out
    /// increasing, across a stack of contexts too).
    static func keyOrder(_ o: ManagedObject) -> (Int64, Int64) {
        switch o.objectID.key {
        case .permanent(let pk): return (pk, 0)
        case .temporary(let n): return (Int64.max, n)
        }
    }

    /// A child's save: its inserts, edits (changed properties only) and deletes go into `parent`
    /// as if made there; nothing is written to the store. Conflicts with changes the parent took
    /// in since this context read an object follow this context's merge policy.
    func push(into parent: ManagedObjectContext) throws(StoreError) {
        // On the parent's queue: the parent's objects change, and nothing else may touch them.
        try parent.onQueue { () throws(StoreError) in try pushHere(into: parent) }
    }

    private func pushHere(into parent: ManagedObjectContext) throws(StoreError) {
        // The parent may have taken permanent IDs from a save this context has not heard of yet.
        catchUpRekeys()
        guard let changes = try beginSave() else { return }
        let updated = updatedSet.sorted { Self.keyOrder($0) < Self.keyOrder($1) }
        let deleted = deletedSet.sorted { Self.keyOrder($0) < Self.keyOrder($1) }
        // One object per ID: an insert whose ID the parent already holds (another child's push
        // put the object back there) is an update of the parent's object, never a second one.
        var held: [ManagedObject] = []
        var fresh: [ManagedObject] = []
        for o in insertedList {
            if parent.registry[o.objectID] != nil { held.append(o) } else { fresh.append(o) }
        }
        // Everything is decided, and validated, before the parent changes: a conflict under
        // `.error` or a broken rule leaves both contexts as they were.
        let decided = try planPush(updated + deleted + held, into: parent)
        let (plans, dropped, gone) = (decided.objects, decided.dropped, decided.gone)
        // An object put back after its row went gets a new ID, as a save writes a row deleted in
        // the store again under a new key: a stale copy of the old row still meets a deleted row.
        var renamed: [(ManagedObject, ObjectID)] = []
        for o in decided.reinserted where !o.objectID.isTemporaryID {
            renamed.append((o, o.objectID))
            rename(o, ObjectID(o.info.names, key: .temporary(Self.nextTemporaryNumber())))
        }
        let inserted = fresh + decided.reinserted
        let made = makeInserts(inserted, in: parent)
        let applied = plans.filter { !deletedSet.contains($0.child) }
        let removed = plans.filter { deletedSet.contains($0.child) && !parent.deletedSet.contains($0.parent) }
        do {
            let states = try applied.map { (plan) throws(StoreError) in try mergedState(plan, into: parent) }
            try validatePush(made, zip(applied, states).map { ($0, $1) }, deleting: removed.map(\.parent), parent)
            for p in made {
                parent.insertedList.append(p)
                p.pendingInsert = true
                parent.unreported.inserted.append(p.objectID)
            }
            for (plan, state) in zip(applied, states) { try apply(plan, state, into: parent) }
        } catch {
            for p in made {
                parent.registry[p.objectID] = nil
                Self.detach(p)
            }
            for (o, id) in renamed { rename(o, id) }
            throw error
        }
        for plan in removed { try parent.delete(plan.parent) }
        finishPush(inserted: inserted + held, plans: plans, dropped: dropped, gone: gone)
        var saved = changes
        let updates = held.map(\.objectID)
        saved.inserted.removeAll { updates.contains($0) }
        saved.updated += updates
        let unpushed = Set((dropped + gone).map(\.objectID) + renamed.map(\.1))
        saved.updated.removeAll { unpushed.contains($0) }
        saved.deleted.removeAll { unpushed.contains($0) }
        saved.inserted += renamed.map(\.0.objectID)
        post(.didSave(saved))
        parent.childDidPush(saved, from: self)
        notifyChildren(saved)
    }

    /// Gives this context's object `o` another ID.
    private func rename(_ o: ManagedObject, _ id: ObjectID) {
        registry[o.objectID] = nil
        o.objectID = id
        registry[id] = o
    }

    /// The parent's new objects for this context's inserts (and the objects it puts back),
    /// registered there with this context's values; not yet among the parent's inserts.
    private func makeInserts(_ inserted: [ManagedObject], in parent: ManagedObjectContext) -> [ManagedObject] {
        var made: [ManagedObject] = []
        for o in inserted {
            let p = ManagedObject.make(id: o.objectID, info: o.info, context: parent, fault: true)
            p.isFault = false
            p.attributes = o.attributes
            parent.registry[o.objectID] = p
            made.append(p)
        }
        // Links once every new object is registered: one new object may name another.
        for (o, p) in zip(inserted, made) { p.links = o.links.map { parent.localLink($0) } }
        return made
    }

    /// Validates what the push leaves in the parent as the parent's save would (the same
    /// validation): the new objects, and each changed object as a stand-in holding its merged
    /// values, with the objects the push deletes counted as deleted; uniqueness also against the
    /// parent's other pending objects. Nothing of the parent changes.
    private func validatePush(
        _ made: [ManagedObject], _ applied: [(PushedObject, ObjectState)], deleting: [ManagedObject],
        _ parent: ManagedObjectContext
    ) throws(StoreError) {
        var standIns: [ManagedObject] = []
        var replaced = Set(deleting.map(ObjectIdentifier.init))
        var deleted = parent.deletedSet.union(deleting)
        for (plan, state) in applied where !plan.attributes.isEmpty || !plan.links.isEmpty || plan.undelete {
            let p = plan.parent
            let v = ManagedObject.make(id: p.objectID, info: p.info, context: parent, fault: true)
            v.isFault = false
            v.attributes = state.attributes
            v.links = state.links
            standIns.append(v)
            replaced.insert(ObjectIdentifier(p))
            if plan.undelete { deleted.remove(p) }
        }
        let pending = parent.insertedList + parent.updatedSet.sorted { Self.keyOrder($0) < Self.keyOrder($1) }
        try parent.validate(
            made + standIns, others: pending.filter { !replaced.contains(ObjectIdentifier($0)) }, deleted: deleted)
    }

    /// What goes into the parent for each updated or deleted object, by the merge policy. An
    /// insert of this context's whose ID the parent holds counts as an update that changed all
    /// its properties (an insert's changes are all its values), read with its own values: every
    /// property the parent's object holds otherwise is a change above.
    private func planPush(_ objects: [ManagedObject], into parent: ManagedObjectContext) throws(StoreError)
        -> PushPlan
    {
        var out = PushPlan()
        var conflicts: [MergeConflict] = []
        for o in objects {
            let isDelete = deletedSet.contains(o)
            let p: ManagedObject
            do {
                p = try parent.object(with: o.objectID)
                try p.fire()
            } catch  where error.kind == .objectNotFound {
                // An insert of the parent's that it dropped since, or a row deleted in the store.
                if isDelete { continue }
                switch mergePolicy {
                case .error: conflicts.append(conflict(o, isDelete: false, above: nil))
                case .mergeByPropertyObjectTrump, .overwrite: out.reinserted.append(o)
                case .mergeByPropertyStoreTrump, .rollback: out.gone.append(o)
                }
                continue
            }
            let (attributes, links) = changedHere(o)
            var plan = PushedObject(child: o, parent: p, attributes: attributes, links: links)
            let deletedAbove = parent.deletedSet.contains(p)
            let theirs = deletedAbove ? nil : changedAbove(o, p)
            if deletedAbove && isDelete { continue }  // deleted on both sides: nothing to push
            guard deletedAbove || !(theirs!.attributes.isEmpty && theirs!.links.isEmpty) else {
                out.objects.append(plan)
                continue
            }
            switch mergePolicy {
            case .error:
                conflicts.append(conflict(o, isDelete: isDelete, above: deletedAbove ? nil : p))
            case .rollback:
                // Deleted above: the object leaves this context too.
                if deletedAbove { out.gone.append(o) } else { out.dropped.append(o) }
            case .mergeByPropertyStoreTrump where deletedAbove:
                out.gone.append(o)
            case .mergeByPropertyStoreTrump:
                plan.attributes.removeAll { theirs!.attributes.contains($0) }
                plan.links.removeAll { theirs!.links.contains($0) }
                out.objects.append(plan)
            case .overwrite, .mergeByPropertyObjectTrump:
                if mergePolicy == .overwrite || deletedAbove {
                    plan.attributes = Array(o.attributes.indices)
                    plan.links = o.links.indices.filter { o.links[$0] != nil }
                }
                plan.undelete = deletedAbove
                out.objects.append(plan)
            }
        }
        if !conflicts.isEmpty {
            var e = StoreError(
                .mergeConflict, "\(conflicts[0]); nothing was saved into the parent context",
                failures: conflicts.map { "\($0); nothing was saved into the parent context" })
            e.conflicts = conflicts
            throw e
        }
        return out
    }

    /// The properties this context changed in `o`: those that differ from its snapshot; all of an
    /// insert's (its loaded relationships).
    private func changedHere(_ o: ManagedObject) -> (attributes: [Int], links: [Int]) {
        guard let s = o.snapshot else {
            return (Array(o.attributes.indices), o.links.indices.filter { o.links[$0] != nil })
        }
        let attributes = o.attributes.indices.filter { !o.attributes[$0].isIdentical(to: s.attributes[$0]) }
        return (attributes, o.links.indices.filter { !Link.same(o.links[$0], s.links[$0]) })
    }

    /// The properties of the parent's object `p` that differ from the state `o` was read with
    /// (an insert's own values).
    private func changedAbove(_ o: ManagedObject, _ p: ManagedObject) -> (attributes: [Int], links: [Int]) {
        let s = o.snapshot ?? Snapshot(attributes: o.attributes, links: o.links)
        let attributes = s.attributes.indices.filter { !p.attributes[$0].isIdentical(to: s.attributes[$0]) }
        let links = s.links.indices.filter { i in
            guard let mine = Self.linkKeys(s.links[i]), let theirs = Self.linkKeys(p.links[i]) else { return false }
            return mine != theirs
        }
        return (attributes, links)
    }

    /// The keys of the objects a link names (nil when it is not loaded), for comparing links of
    /// two contexts; a nil to-many is told apart from an empty one.
    static func linkKeys(_ l: Link?) -> Set<ObjectID.Key>?? {
        switch l {
        case nil: return nil
        case .oneKey(let k)?: return .some(k.map { [.permanent($0)] } ?? [])
        case .subEntityKey(let k, _)?: return .some([.permanent(k)])
        case .one(let t)?: return .some(t.map { [$0.objectID.key] } ?? [])
        case .many(let m)?: return .some(Set(m.map(\.objectID.key)))
        case .nilMany?: return .some(nil)
        }
    }

    private func conflict(_ o: ManagedObject, isDelete: Bool, above p: ManagedObject?) -> MergeConflict {
        let names = o.info.attributeNames
        func values(_ a: [Value]) -> [String: Value] { Dictionary(uniqueKeysWithValues: zip(names, a)) }
        return MergeConflict(
            objectID: o.objectID, changedKeys: isDelete ? [] : o.changedValues.keys.sorted(), isDeleted: isDelete,
            snapshot: values(o.snapshot?.attributes ?? o.attributes), stored: p.map { values($0.attributes) },
            versions: (o.version, p?.version))
    }

    /// The attributes and links of the parent's object for `plan` once the plan's changes are in.
    private func mergedState(_ plan: PushedObject, into parent: ManagedObjectContext) throws(StoreError)
        -> ObjectState
    {
        let (o, p) = (plan.child, plan.parent)
        var state = ObjectState(attributes: p.attributes, links: p.links)
        for i in plan.attributes { state.attributes[i] = o.attributes[i] }
        for i in plan.links {
            let before = o.snapshot?.links[i]
            switch (o.links[i], before) {
            case (.many(let now)?, .many(let was)?) where !o.info.entity.relationships[i].description.isOrdered:
                // Members added and removed here; the parent's own changes to the list stay.
                var members = try p.many(i)
                let removed = Set(was.filter { m in !now.contains { $0 === m } }.map(\.objectID.key))
                members.removeAll { removed.contains($0.objectID.key) }
                let present = Set(members.map(\.objectID.key))
                for m in now where !was.contains(where: { $0 === m }) && !present.contains(m.objectID.key) {
                    members.append(parent.counterpart(of: m))
                }
                state.links[i] = .many(members)
            default:
                state.links[i] = parent.localLink(o.links[i])
            }
        }
        if plan.undelete { Self.prune(&state.links, parent.deletedSet) }
        return state
    }

    /// Links without the objects in `deleted`. An object a push takes back from the parent's
    /// delete comes back alone: what the parent's delete rules did to other objects (cascaded
    /// deletes, nullified inverses) stays, and its own links no longer name the objects deleted.
    static func prune(_ links: inout [Link?], _ deleted: Set<ManagedObject>) {
        guard !deleted.isEmpty else { return }
        for i in links.indices {
            switch links[i] {
            case .many(let m)? where m.contains(where: deleted.contains):
                links[i] = .many(m.filter { !deleted.contains($0) })
            case .one(let t?)? where deleted.contains(t): links[i] = .one(nil)
            default: break
            }
        }
    }

    /// Puts one object's changes (its merged state) into the parent's object, as an edit made there.
    private func apply(_ plan: PushedObject, _ state: ObjectState, into parent: ManagedObjectContext)
        throws(StoreError)
    {
        let p = plan.parent
        if plan.undelete { parent.deletedSet.remove(p) }
        guard !plan.attributes.isEmpty || !plan.links.isEmpty || plan.undelete else { return }
        try parent.willChange(p)
        for i in plan.attributes { p.attributes[i] = state.attributes[i] }
        // Taken back from a delete: every link, pruned (`prune`); else the ones the plan changes.
        for i in plan.undelete ? Array(p.links.indices) : plan.links { p.links[i] = state.links[i] }
    }

    /// This context after a push: its objects hold what the parent holds and nothing is pending.
    private func finishPush(
        inserted: [ManagedObject], plans: [PushedObject], dropped: [ManagedObject], gone: [ManagedObject]
    ) {
        for o in inserted {
            o.pendingInsert = false
            o.snapshot = nil
        }
        for plan in plans where !deletedSet.contains(plan.child) {
            plan.child.snapshot = nil
            copyState(of: plan.parent, into: plan.child)
        }
        for o in dropped {
            o.snapshot = nil
            if let p = parent?.registry[o.objectID] { copyState(of: p, into: o) }
        }
        // A delete the policy rolled back (`dropped`) stays, with the parent's state.
        let kept = Set(dropped.map(ObjectIdentifier.init))
        for o in Array(deletedSet) + gone where !kept.contains(ObjectIdentifier(o)) {
            registry[o.objectID] = nil
            Self.detach(o)
        }
        insertedList = []
        updatedSet = []
        deletedSet = []
    }

    // MARK: Telling the children

    /// Another child pushed changes into this context: the other children that merge
    /// automatically take them in.
    func childDidPush(_ changes: ChangeSet, from child: ManagedObjectContext) {
        notifyChildren(changes, except: child)
    }

    /// After a save to the store: objects of the descendants that still carry the inserted
    /// objects' temporary IDs take the permanent ones, then the children that merge
    /// automatically take the saved changes in.
    func didSaveWithChildren(_ saved: ChangeSet, promoted: [(ObjectID.Key, ManagedObject)]) {
        rekeyTree(promoted.compactMap { key, o in o.objectID.primaryKey.map { (key, $0) } })
        if !saved.inserted.isEmpty {
            for child in children { child.enqueue { child.takeAncestorInserts(saved.inserted) } }
        }
        notifyChildren(saved)
    }

    /// Renames objects with temporary keys to their permanent ones here and in every descendant
    /// (each on its own queue, later; a push from a child catches up first, `catchUpRekeys`).
    func rekeyTree(_ keys: [(ObjectID.Key, Int64)]) {
        guard !keys.isEmpty else { return }
        rekeyHere(keys)
        for child in children {
            child.pendingRekeys.add(keys)
            child.enqueue { child.catchUpRekeys() }
        }
    }

    /// Takes in the renames an ancestor's save left for this context, if any are still waiting.
    func catchUpRekeys() { rekeyTree(pendingRekeys.take()) }

    /// Renames this context's objects with temporary keys to their permanent ones. The
    /// controllers place the renamed objects again (the key breaks ties of the sort).
    func rekeyHere(_ keys: [(ObjectID.Key, Int64)]) {
        var renamed: [ObjectID] = []
        for (key, pk) in keys {
            temporaryRenames.add(key, pk)
            // Temporary keys: one key space.
            guard let o = registry[key, 0] else { continue }
            registry[key, 0] = nil
            o.objectID = ObjectID(o.info.names, key: .permanent(pk))
            registry.addPermanent(pk, o)
            if hasResultTaps { renamed.append(o.objectID) }
        }
        if !renamed.isEmpty { tapResults(ChangeSet(updated: renamed), reportsUpdates: false) }
    }

    func notifyChildren(_ changes: ChangeSet, except: ManagedObjectContext? = nil) {
        for child in children {
            guard child !== except, child.automaticallyMergesChangesFromParent else { continue }
            child.enqueue { child.mergeFromParent(changes) }
        }
    }

    /// Takes in changes the parent just took in: updated objects this context holds read their
    /// new state through the parent (unsaved edits here stay on top), deleted ones leave.
    func mergeFromParent(_ changes: ChangeSet) {
        // Run on this context's queue with no caller to tell: an object that cannot be read
        // again is left as it is.
        guard let merged = try? merge(changes, skippingFailures: true), !merged.isEmpty else { return }
        post(.objectsDidChange(merged))
        notifyChildren(merged)
    }

    // MARK: Objects deleted above

    /// This context deleted the object with `id` (a saved one marked deleted, an insert
    /// dropped): each child's object for it becomes deleted too, on the child's queue
    /// (`forgetDeletedAbove`).
    func forgetInDescendants(_ id: ObjectID) {
        for child in children { child.enqueue { child.forgetDeletedAbove(id) } }
    }

    /// After a rollback or reset of a child: objects whose unsaved changes here hid an ancestor's
    /// delete (from this context and those below it) now meet it.
    func meetDeletesAbove(_ ids: [ObjectID]) {
        for id in ids where (try? isDeletedAbove(id)) == true { forgetDeletedAbove(id) }
    }

    /// A child's `object(with:)` for `o`: `o` itself, or, when it has no unsaved changes here and
    /// the nearest ancestor holding the object deleted it, `o` marked deleted (as
    /// `forgetDeletedAbove` leaves it).
    func unlessDeletedAbove(_ o: ManagedObject) throws(StoreError) -> ManagedObject {
        if o.pendingInsert || updatedSet.contains(o) || deletedSet.contains(o) { return o }
        guard try isDeletedAbove(o.objectID) else { return o }
        markGone(o, above: true)
        return o
    }

    // MARK: Permanent IDs

    /// Gives `objects` (inserted in this context or an ancestor, not saved yet) their permanent
    /// IDs now: store keys are taken, every context of the stack renames the objects, and the
    /// save that writes them uses these keys. Objects with permanent IDs are left as they are.
    ///
    /// ```swift
    /// let item = try context.insert("Item")
    /// try context.obtainPermanentIDs(for: [item])
    /// item.objectID.isTemporaryID   // false, and the save stores the row under this key
    /// ```
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws(StoreError) {
        var temporary: [ManagedObject] = []
        for o in objects where o.objectID.isTemporaryID {
            guard o.context === self else {
                throw StoreError(.invalidOperation, "\(o.objectID) belongs to another context")
            }
            if !temporary.contains(where: { $0 === o }) { temporary.append(o) }
        }
        guard !temporary.isEmpty else { return }
        let permanent = try store.writeTransaction { () throws(StoreError) in
            do throws(SQLiteError) { return try store.allocateKeys(for: temporary.map(\.info)) } catch {
                throw error.storeError
            }
        }
        var root = self
        while let p = root.parent { root = p }
        let keys = temporary.enumerated().map { ($1.objectID.key, permanent[$0]) }
        // This context's own objects are renamed before the call returns (the others on their queues).
        rekeyHere(keys)
        try root.onQueue { () throws(StoreError) in root.rekeyTree(keys) }
    }
}
