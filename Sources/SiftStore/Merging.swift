// Merging changes made elsewhere into a context: another context's did-save (Core Data's
// `mergeChanges(fromContextDidSave:)`, or automatically with `automaticallyMergesChangesFromParent`)
// and batch requests. Work is in proportion to the merged IDs, not to the objects the context
// holds: updated objects become faults (or are re-read with their unsaved edits on top), deleted
// ones are marked gone, and links that still name a gone object drop it when next read
// (`ManagedObject.link`), so no holder is visited at merge time. An ancestor's unsaved delete
// reaches a child's objects the same way (`forgetDeletedAbove`).

import Foundation

extension ManagedObjectContext {
    /// Brings this context up to date with a save made by another context on the same store
    /// (the change set of its `.didSave` notification). Registered objects that were updated read
    /// their new values when next touched, and those with unsaved changes here keep them on top
    /// of the stored values (their next save does not conflict with the merged save). Deleted
    /// objects report `isDeleted` and can no longer be read — except objects with unsaved edits
    /// here, which stay, so that their next save meets the deletion as a merge conflict rather
    /// than losing the edits. Inserted objects need nothing: fetches find them in the store.
    ///
    /// Call it where the context's work runs (inside `perform` for a queue context).
    ///
    /// ```swift
    /// let token = background.observe { note in
    ///     guard case .didSave(let changes) = note else { return }
    ///     Task { try await main.perform { try main.mergeChanges(fromContextDidSave: changes) } }
    /// }
    /// ```
    public func mergeChanges(fromContextDidSave changes: ChangeSet) throws(StoreError) {
        let merged = try merge(changes, skippingFailures: false)
        if !merged.isEmpty { post(.objectsDidChange(merged)) }
    }

    /// Applies `changes` to the registered objects (the one merge every path uses: another
    /// context's save, a batch result, history, a parent's changes) and returns what changed here.
    /// With `skippingFailures` an object that cannot be read again is left as it is.
    func merge(_ changes: ChangeSet, skippingFailures: Bool) throws(StoreError) -> ChangeSet {
        var merged = ChangeSet()
        for id in changes.deleted where id.names.store == store.names {
            if forgetDeleted(id) { merged.deleted.append(id) }
        }
        for id in changes.updated where id.names.store == store.names {
            guard let o = registry[id], !o.isFault || o.snapshot != nil else { continue }
            do { try refreshObject(o, mergeChanges: true) } catch  where skippingFailures { continue }
            merged.updated.append(id)
            if let keys = changes.updatedKeys[id] { merged.updatedKeys[id] = keys }
        }
        // Controllers judge every merged ID, held here or not: a row saved elsewhere may now match.
        if !resultTaps.isEmpty { tapResults(changes, reportsUpdates: true) }
        return merged
    }

    /// Another context on the store saved and this one merges automatically: the save is taken
    /// in on this context's queue (later, unless the saver runs there), as a child takes in its
    /// parent's saves, its own auto-merging children hearing of it. A confined context may be in
    /// use on another thread right now, so it only collects the save here; its own thread takes
    /// it in at its next `processPendingChanges()`.
    func takeSiblingSave(_ saved: ChangeSet) {
        guard concurrencyType != .confined else { return siblingSaves.add([saved]) }
        enqueue { [weak self] in self?.mergeFromParent(saved) }
    }

    /// Takes in the saves `takeSiblingSave` collected for a confined context, oldest first.
    func takeCollectedSaves() {
        for saved in siblingSaves.take() { mergeFromParent(saved) }
    }

    /// Marks the object with `id` deleted from the store. Returns whether a registered object
    /// left the context (an object with unsaved edits stays, see `mergeChanges`).
    @discardableResult
    func forgetDeleted(_ id: ObjectID) -> Bool {
        if !id.isTemporaryID {
            goneIDs.insert(id)
            hasGoneObjects = true
        }
        guard let o = registry[id] else { return false }
        if updatedSet.contains(o) { return false }
        registry[id] = nil
        deletedSet.remove(o)
        markGone(o)
        return true
    }

    /// An ancestor deleted the object with `id` (unsaved): this context's object for it is
    /// deleted too, as a merged delete from the store leaves one — unless it has unsaved changes
    /// here, whose push then meets the delete as a conflict. The descendants that see the object
    /// through this context follow. It runs on this context's queue some time after the delete
    /// and asks no ancestor (a queued task that waited for an ancestor's queue could wait for
    /// ever on an ancestor waiting for this context): a delete taken back in between (rollback,
    /// undo) still leaves the object deleted here, and `object(with:)` reads it again.
    func forgetDeletedAbove(_ id: ObjectID) {
        if let o = registry[id] {
            if updatedSet.contains(o) || deletedSet.contains(o) { return }
            markGone(o, above: true)
        }
        forgetInDescendants(id)
    }

    /// `o` (out of the registry) as a deleted object: `isDeleted`, and reading it is an error;
    /// links that name it drop it when next read. `above`: an ancestor deleted it (taken out of
    /// the registry here).
    func markGone(_ o: ManagedObject, above: Bool = false) {
        if above {
            registry[o.objectID] = nil
            o.isGoneAbove = true
        }
        Self.detach(o)
        o.goneFrom = self
        o.isGone = true
        o.isFault = true
        o.batch = nil
        hasGoneObjects = true
    }

    /// The names of the attributes and relationships of `o` that differ from its committed
    /// state (empty for an object without one).
    func changedKeys(of o: ManagedObject) -> [String] {
        guard let snapshot = o.snapshot else { return [] }
        var keys: [String] = []
        let e = o.info.entity
        for i in e.attributes.indices where !o.attributes[i].isIdentical(to: snapshot.attributes[i]) {
            keys.append(e.attributes[i].name)
        }
        for i in e.relationships.indices where !Link.same(o.links[i], snapshot.links[i]) {
            keys.append(e.relationships[i].name)
        }
        return keys
    }
}
