// The one hook the fetched results controllers need from a context: every change set that
// reaches it — its own processed changes (`processPendingChanges`, which `save()` runs, with
// every edit since the last one, not only objects changed for the first time since a save), its
// did-saves (temporary IDs become permanent), rollbacks, refreshes, resets and every merge
// (another context's save, a batch result, history, a parent's changes), with all the merged
// IDs, not only the objects held here. A controller on a child context also taps each ancestor:
// an ancestor's unsaved changes reach the child as a fetch there would see them.

import Foundation

/// What a context tells its controllers.
enum ResultTapEvent {
    /// Objects that changed; `reportsUpdates`: whether they count as changed contents (not for a
    /// did-save, told as the changes were made).
    case changes(ChangeSet, reportsUpdates: Bool)
    /// The context forgot every object (`reset()`).
    case reset
}

extension ManagedObjectContext {
    /// Tells every controller on this context of `changes`; `reportsUpdates` says whether the
    /// changed objects count as changed contents (not for a did-save, already told).
    func tapResults(_ changes: ChangeSet, reportsUpdates: Bool) {
        for tap in resultTaps.values { tap(.changes(changes, reportsUpdates: reportsUpdates)) }
    }

    /// Tells the controllers of a `reset()`.
    func tapReset() {
        for tap in resultTaps.values { tap(.reset) }
    }

    /// Tells the controllers of the changes `processPendingChanges()` reports, with every
    /// object edited since its last call.
    func tapEdits(_ changes: ChangeSet) {
        guard hasResultTaps else { return }
        var all = changes
        all.updated += changedForResults
        changedForResults = []
        if !all.isEmpty { tapResults(all, reportsUpdates: true) }
    }

    /// Tells the controllers of a did-save, with the objects its conflicts changed or dropped
    /// (not all of which the did-save names); the changes were told as they were made.
    func tapSaved(_ saved: ChangeSet) {
        var all = saved
        all.updated += changedForResults
        changedForResults = []
        tapResults(all, reportsUpdates: false)
    }

    /// The unsaved changes as IDs, edits since the last report included.
    func pendingChangeSet() -> ChangeSet {
        ChangeSet(
            inserted: insertedList.map(\.objectID), updated: updatedSet.map(\.objectID) + changedForResults,
            deleted: deletedSet.map(\.objectID))
    }

    /// Tells the controllers of a rollback: `undone` names the objects it took back.
    func tapRolledBack(_ undone: ChangeSet) {
        changedForResults = []
        tapResults(undone, reportsUpdates: true)
    }

    /// Starts telling `tap` of what happens here; returns the key that stops it.
    func addResultTap(_ tap: @escaping (ResultTapEvent) -> Void) -> UUID {
        let id = UUID()
        resultTaps[id] = tap
        return id
    }

    // MARK: Controllers on a child context

    /// Taps every ancestor for a controller on this (child) context: the ancestors' changes, as
    /// they report them, reach this context on its own queue (`takeAncestorChanges`). Returns the
    /// taps, for `removeAncestorTaps`.
    func tapAncestors() -> [(ManagedObjectContext, UUID)] {
        var taps: [(ManagedObjectContext, UUID)] = []
        var p = parent
        while let a = p {
            let id = a.performAndWait { () -> UUID in
                a.addResultTap { [weak self] event in
                    // An ancestor's reset leaves the child's objects as they are. Of a did-save,
                    // the updated and deleted objects now (a conflict may have dropped one or
                    // written it again under a new key); its inserts once the child has their
                    // permanent IDs (`didSaveWithChildren`).
                    guard case .changes(let changes, let updates) = event, let child = self else { return }
                    var told = changes
                    if !updates { told.inserted = [] }
                    guard !told.isEmpty else { return }
                    let sent = told
                    child.enqueue { child.takeAncestorChanges(sent, reportsUpdates: updates) }
                }
            }
            taps.append((a, id))
            p = a.parent
        }
        return taps
    }

    /// Stops the taps `tapAncestors` made (each on its ancestor's queue, later).
    static func removeAncestorTaps(_ taps: [(ManagedObjectContext, UUID)]) {
        for (a, id) in taps { a.enqueue { a.resultTaps[id] = nil } }
    }

    /// An ancestor reported `changes` (unsaved edits, a rollback, a merge): the copies this
    /// context holds of those objects without changes of its own become faults, which read the
    /// ancestors' current state (or the store's) when next touched, as a fetch here would take
    /// it; then the controllers judge the objects again.
    func takeAncestorChanges(_ changes: ChangeSet, reportsUpdates: Bool) {
        guard hasResultTaps else { return }
        catchUpRekeys()
        var told: [ObjectID] = []
        for id in changes.inserted + changes.updated + changes.deleted where id.names.store == store.names {
            if let o = registry[id], !o.isFault, !o.pendingInsert, o.snapshot == nil, !o.isGone {
                o.isFault = true
                o.links = Array(repeating: nil, count: o.links.count)
                o.batch = nil
            }
            told.append(id)
        }
        // As updates: an object an ancestor deleted is found deleted when judged; one it took
        // back from a delete (a rollback) is read again.
        if !told.isEmpty { tapResults(ChangeSet(updated: told), reportsUpdates: reportsUpdates) }
    }

    /// An ancestor saved `inserted` (after this context took their permanent IDs): the
    /// controllers here and below place them (an insert of the ancestor's, or a row its save
    /// wrote again under a new key).
    func takeAncestorInserts(_ inserted: [ObjectID]) {
        if hasResultTaps {
            catchUpRekeys()
            tapResults(ChangeSet(updated: inserted), reportsUpdates: false)
        }
        for child in children { child.enqueue { child.takeAncestorInserts(inserted) } }
    }
}
