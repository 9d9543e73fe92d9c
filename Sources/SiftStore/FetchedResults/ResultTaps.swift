// The one hook the fetched results controllers need from a context: every change set that
// reaches it — its own processed changes (`processPendingChanges`, which `save()` runs, with
// every edit since the last one, not only objects changed for the first time since a save), its
// did-saves (temporary IDs become permanent), rollbacks and every merge (another context's save, a batch
// result, history, a parent's changes), with all the merged IDs, not only the objects held here.

import Foundation

extension ManagedObjectContext {
    /// Tells every controller on this context of `changes`; `reportsUpdates` says whether the
    /// changed objects count as changed contents (not for a did-save, already told).
    func tapResults(_ changes: ChangeSet, reportsUpdates: Bool) {
        for tap in resultTaps.values { tap(changes, reportsUpdates) }
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

    /// Starts telling `tap` of change sets; returns the key that stops it.
    func addResultTap(_ tap: @escaping (ChangeSet, Bool) -> Void) -> UUID {
        let id = UUID()
        resultTaps[id] = tap
        return id
    }
}
