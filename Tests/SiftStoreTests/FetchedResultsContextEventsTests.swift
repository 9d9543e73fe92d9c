// A controller follows what happens to its context as a whole: `reset()` (the controller fetches
// again: every old object a delete, every new one an insert, the snapshot marking the IDs kept as
// reloaded), `refresh(_:mergeChanges:)` at once, and on a child context an ancestor's unsaved
// delete, its rollback and its save of an insert.

import Foundation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct FetchedResultsContextEventsTests {
    /// A context on a store of items "a" (price 1), "b" (2), "c" (3); a controller over the
    /// items with price > 0 by name, in `context` or a child of it.
    static func setUp(child: Bool = false) throws -> (ManagedObjectContext, FetchedResultsController, ChangeRecorder) {
        let context = ManagedObjectContext(store: try PersistentStore.inMemory(model: try ResultsFixtures.model()))
        for (i, name) in ["a", "b", "c"].enumerated() {
            let o = try context.insert("Item")
            try o.setValue(name, forKey: "name")
            try o.setValue(i + 1, forKey: "price")
        }
        try context.save()
        var request = try FetchRequest("Item", predicate: "price > 0")
        request.sortDescriptors = [try SiftSortDescriptor("name")]
        let on = child ? ManagedObjectContext(parent: context) : context
        let c = try FetchedResultsController(fetchRequest: request, context: on)
        let recorder = ChangeRecorder()
        c.delegate = recorder
        try c.performFetch()
        return (context, c, recorder)
    }

    static func names(_ c: FetchedResultsController) -> [String] {
        c.fetchedObjects.map { (try? $0.get("name", as: String.self)) ?? "" }
    }

    @Test func aResetFetchesAgain() async throws {
        let (context, c, recorder) = try Self.setUp()
        var snapshots = c.snapshots.makeAsyncIterator()
        let initial = try #require(await snapshots.next())
        let old = c.fetchedObjects
        try context.object(with: old[0].objectID).setValue(0, forKey: "price")  // unsaved: dropped by the reset
        let d = try context.insert("Item")
        try d.setValue("d", forKey: "name")
        try d.setValue(4, forKey: "price")
        try context.processPendingChanges()
        #expect(Self.names(c) == ["b", "c", "d"])
        recorder.clear()
        context.reset()
        #expect(Self.names(c) == ["a", "b", "c"])
        #expect(!c.fetchedObjects.contains { o in old.contains { $0 === o } })
        #expect(recorder.rounds.count == 1)
        #expect(recorder.objects.filter { $0.type == .delete }.count == 3)
        #expect(recorder.objects.filter { $0.type == .insert }.count == 3)
        #expect(recorder.objects.allSatisfy { $0.type == .delete || $0.type == .insert })
        _ = try #require(await snapshots.next())  // the insert of d
        let afterReset = try #require(await snapshots.next())
        #expect(afterReset.itemIdentifiers == initial.itemIdentifiers)
        #expect(afterReset.reloadedItemIdentifiers == Set(old[1...].map(\.objectID)))
    }

    @Test func aRefreshIsTakenInAtOnce() throws {
        let (context, c, recorder) = try Self.setUp()
        let a = c.fetchedObjects[0]
        try a.setValue(0, forKey: "price")
        try context.processPendingChanges()
        #expect(Self.names(c) == ["b", "c"])
        recorder.clear()
        try context.refresh(a, mergeChanges: false)  // the edit is dropped: a matches again
        #expect(Self.names(c) == ["a", "b", "c"])
        #expect(recorder.objects.map(\.type) == [.insert] && recorder.objects.first?.object === a)
    }

    @Test func aChildsControllerFollowsItsParent() throws {
        let (parent, c, recorder) = try Self.setUp(child: true)
        let child = c.context
        let b = try parent.object(with: c.fetchedObjects[1].objectID)
        try parent.delete(b)  // unsaved, in the parent
        try parent.processPendingChanges()
        #expect(Self.names(c) == ["a", "c"])
        parent.rollback()
        #expect(Self.names(c) == ["a", "b", "c"])
        let e = try parent.insert("Item")
        try e.setValue("e", forKey: "name")
        try e.setValue(5, forKey: "price")
        try parent.processPendingChanges()
        #expect(Self.names(c) == ["a", "b", "c", "e"])
        try parent.save()  // e takes its permanent ID in the child too
        let shown = try #require(c.fetchedObjects.last)
        #expect(!shown.objectID.isTemporaryID && shown.objectID == e.objectID)
        #expect(c.fetchedObjects.map(\.objectID) == (try child.fetch(c.fetchRequest)).map(\.objectID))
        #expect(recorder.failures.isEmpty)
    }
}
