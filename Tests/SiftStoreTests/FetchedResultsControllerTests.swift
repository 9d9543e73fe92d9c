// The fetched results controller's contract, case by case: its errors, sections and lookups, and
// the exactness Core Data's controller misses (an update in place is an update, an object
// entering or leaving the predicate is an insert or a delete, a change of section is one move),
// changes from merges, batch requests and history, a predicate that raises, and the snapshots.

import Foundation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct FetchedResultsControllerTests {
    /// A store with `items` (name, category, price) saved, and a context on it.
    static func setUp(_ items: [(String, String, Int)], path: String? = nil) throws -> ManagedObjectContext {
        let model = try ResultsFixtures.model()
        let store =
            try path.map { try PersistentStore(model: model, path: $0, historyTracking: true) }
            ?? PersistentStore.inMemory(model: model)
        let context = ManagedObjectContext(store: store)
        for (name, category, price) in items {
            let o = try context.insert("Item")
            try o.setValue(name, forKey: "name")
            try o.setValue(category, forKey: "category")
            try o.setValue(price, forKey: "price")
        }
        try context.save()
        return context
    }

    static func request(_ predicate: String? = nil, _ sort: [String] = ["category", "price"]) throws -> FetchRequest<
        ManagedObject
    > {
        var r = try predicate.map { try FetchRequest("Item", predicate: $0) } ?? FetchRequest("Item")
        r.sortDescriptors = try sort.map { try SiftSortDescriptor($0) }
        return r
    }

    static func item(_ context: ManagedObjectContext, _ name: String) throws -> ManagedObject {
        try #require(try context.fetch(try FetchRequest("Item", predicate: "name == %@", name)).first)
    }

    /// Expects `recorder`'s changes to take `before` to a fresh fetch's results.
    static func expectExact(
        _ recorder: ChangeRecorder, _ before: ResultsFixtures.Sections, _ c: FetchedResultsController,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let (after, why) = recorder.applied(to: before)
        let fresh = try ResultsFixtures.freshSections(c)
        #expect(after != nil, "\(why)", sourceLocation: sourceLocation)
        if let after { #expect(ResultsFixtures.same(after, fresh), sourceLocation: sourceLocation) }
        #expect(ResultsFixtures.same(ResultsFixtures.current(c), fresh), sourceLocation: sourceLocation)
    }

    @Test func anUnsortedRequestIsAnError() throws {
        let context = try Self.setUp([])
        #expect(throws: StoreError.self) {
            try FetchedResultsController(fetchRequest: FetchRequest("Item"), context: context)
        }
        do {
            _ = try FetchedResultsController(fetchRequest: FetchRequest("Item"), context: context)
        } catch {
            #expect(error.kind == .invalidOperation)
            #expect(error.message.contains("sorted"))
        }
    }

    @Test func sectionsThatDoNotGroupAreAnError() throws {
        let context = try Self.setUp([("a", "x", 1), ("b", "y", 2), ("c", "x", 3)])
        let c = try FetchedResultsController(
            fetchRequest: try Self.request(nil, ["name"]), context: context, sectionNameKeyPath: "category")
        do {
            try c.performFetch()
            Issue.record("sections x, y, x fetched without an error")
        } catch {
            #expect(error.kind == .invalidOperation)
            #expect(error.message.contains("does not group"))
        }
    }

    @Test func sectionsAndLookups() throws {
        let context = try Self.setUp([("a", "fruit", 3), ("b", "bread", 1), ("c", "fruit", 1), ("d", "apple", 9)])
        let c = try FetchedResultsController(
            fetchRequest: try Self.request(), context: context, sectionNameKeyPath: "category")
        try c.performFetch()
        #expect(c.sections.map(\.name) == ["apple", "bread", "fruit"])
        #expect(c.sections.map(\.numberOfObjects) == [1, 1, 2])
        #expect(c.sections.map(\.indexTitle) == ["A", "B", "F"])
        #expect(c.sectionIndexTitles == ["A", "B", "F"])
        #expect(try c.fetchedObjects.map { try $0.get("name", as: String.self) } == ["d", "b", "c", "a"])
        let first = c.object(at: ResultIndexPath(item: 1, section: 2))
        #expect(try first.get("name", as: String.self) == "a")
        #expect(c.indexPath(forObject: first) == ResultIndexPath(item: 1, section: 2))
        #expect(c.indexPath(forObject: try context.insert("Item")) == nil)
    }

    @Test func aChangeInPlaceIsAnUpdate() throws {
        let context = try Self.setUp([("a", "x", 1), ("b", "x", 5), ("c", "x", 9)])
        let c = try FetchedResultsController(fetchRequest: try Self.request(), context: context)
        let recorder = ChangeRecorder()
        c.delegate = recorder
        try c.performFetch()
        let before = ResultsFixtures.current(c)
        let b = try Self.item(context, "b")
        try b.setValue(2.5, forKey: "weight")  // not a sort key
        try b.setValue(6, forKey: "price")  // a sort key, still between a and c
        try context.processPendingChanges()
        #expect(recorder.objects.map(\.type) == [.update])
        #expect(recorder.objects.first?.old == ResultIndexPath(item: 1, section: 0))
        #expect(recorder.objects.first?.new == ResultIndexPath(item: 1, section: 0))
        try Self.expectExact(recorder, before, c)
        // Saving takes nothing more in: the change was told already.
        recorder.clear()
        try context.save()
        #expect(recorder.objects.isEmpty)
        #expect(recorder.batches == 1)
    }

    @Test func enteringAndLeavingThePredicateIsAnInsertAndADelete() throws {
        let context = try Self.setUp([("a", "x", 1), ("b", "x", 50)])
        let c = try FetchedResultsController(fetchRequest: try Self.request("price > 10"), context: context)
        let recorder = ChangeRecorder()
        c.delegate = recorder
        try c.performFetch()
        // Another context changes an object this one never loaded: it now matches.
        let other = ManagedObjectContext(store: context.store)
        try Self.item(other, "a").setValue(20, forKey: "price")
        var before = ResultsFixtures.current(c)
        let token = other.observe { note in
            if case .didSave(let s) = note { try? context.mergeChanges(fromContextDidSave: s) }
        }
        try other.save()
        #expect(recorder.objects.map(\.type) == [.insert])
        try Self.expectExact(recorder, before, c)
        // And leaves again.
        recorder.clear()
        before = ResultsFixtures.current(c)
        try Self.item(other, "a").setValue(5, forKey: "price")
        try other.save()
        #expect(recorder.objects.map(\.type) == [.delete])
        try Self.expectExact(recorder, before, c)
        token.cancel()
    }

    @Test func aChangeOfSectionIsOneMove() throws {
        let context = try Self.setUp([("a", "x", 1), ("b", "x", 2), ("c", "y", 3)])
        let c = try FetchedResultsController(
            fetchRequest: try Self.request(), context: context, sectionNameKeyPath: "category")
        let recorder = ChangeRecorder()
        c.delegate = recorder
        try c.performFetch()
        var before = ResultsFixtures.current(c)
        try Self.item(context, "a").setValue("y", forKey: "category")
        try context.processPendingChanges()
        #expect(recorder.objects.map(\.type) == [.move])
        #expect(recorder.sections.isEmpty)
        try Self.expectExact(recorder, before, c)
        // The last one of x leaves: the section goes; z comes.
        recorder.clear()
        before = ResultsFixtures.current(c)
        try Self.item(context, "b").setValue("z", forKey: "category")
        try context.processPendingChanges()
        #expect(recorder.objects.map(\.type) == [.move])
        #expect(recorder.sections.map(\.type).sorted { $0.rawValue < $1.rawValue } == [.delete, .insert])
        try Self.expectExact(recorder, before, c)
        #expect(c.sections.map(\.name) == ["y", "z"])
    }

    @Test func batchRequestsOnceMergedAndHistory() throws {
        let path = Fixtures.temporaryPath()
        let context = try Self.setUp([("a", "x", 1), ("b", "x", 2), ("c", "x", 3)], path: path)
        let c = try FetchedResultsController(fetchRequest: try Self.request("price < 10"), context: context)
        let recorder = ChangeRecorder()
        c.delegate = recorder
        try c.performFetch()
        var before = ResultsFixtures.current(c)
        var raise = try BatchUpdateRequest("Item", predicate: "name == 'a'")
        raise.propertiesToUpdate = ["price": .expression("price + 5")]
        let result = try context.execute(raise)
        #expect(recorder.objects.isEmpty)  // not merged yet
        try context.mergeChanges(from: result)
        #expect(recorder.objects.map(\.type) == [.move])
        try Self.expectExact(recorder, before, c)
        // Another store object on the same file (another process's view) saves; history brings it.
        let token = try context.store.history(after: nil).last?.token
        let elsewhere = ManagedObjectContext(store: try PersistentStore(path: path, historyTracking: true))
        try Self.item(elsewhere, "b").setValue(100, forKey: "price")
        let d = try elsewhere.insert("Item")
        try d.setValue("d", forKey: "name")
        try d.setValue(0, forKey: "price")
        try elsewhere.save()
        recorder.clear()
        before = ResultsFixtures.current(c)
        try context.mergeChanges(fromHistory: try context.store.history(after: token))
        #expect(recorder.objects.map(\.type).sorted { $0.rawValue < $1.rawValue } == [.delete, .insert])
        try Self.expectExact(recorder, before, c)
    }

    @Test func aPredicateThatRaisesIsToldAndTheResultsKept() throws {
        // MATCHES raises on a pattern that does not compile: here the pattern is each item's name.
        let context = try Self.setUp([("a.*", "abc", 1), ("b.*", "bcd", 2)])
        let c = try FetchedResultsController(fetchRequest: try Self.request("category MATCHES name"), context: context)
        let recorder = ChangeRecorder()
        c.delegate = recorder
        try c.performFetch()
        let kept = ResultsFixtures.current(c)
        #expect(kept.first?.objects.count == 2)
        let b = try Self.item(context, "b.*")
        try b.setValue("[", forKey: "name")
        try Self.item(context, "a.*").setValue("x.*", forKey: "name")
        try context.processPendingChanges()
        #expect(recorder.failures.count == 1)
        #expect(recorder.failures.first?.kind == .evaluation)
        #expect(c.lastError?.kind == .evaluation)
        #expect(recorder.objects.isEmpty)
        #expect(ResultsFixtures.same(ResultsFixtures.current(c), kept))
        // Fixed, the next change takes in both objects of the failed change (a no longer matches).
        try b.setValue("b.*", forKey: "name")
        try context.processPendingChanges()
        #expect(c.lastError == nil)
        #expect(recorder.objects.map(\.type).sorted { $0.rawValue < $1.rawValue } == [.delete, .update])
        try Self.expectExact(recorder, kept, c)
    }

    @Test func aRollbackIsTakenIn() throws {
        let context = try Self.setUp([("a", "x", 1), ("b", "x", 5), ("c", "x", 9)])
        let c = try FetchedResultsController(fetchRequest: try Self.request("price < 8"), context: context)
        let recorder = ChangeRecorder()
        c.delegate = recorder
        try c.performFetch()
        let kept = ResultsFixtures.current(c)
        try Self.item(context, "a").setValue(7, forKey: "price")
        try context.delete(try Self.item(context, "b"))
        let d = try context.insert("Item")
        try d.setValue(2, forKey: "price")
        try context.processPendingChanges()
        #expect(c.fetchedObjects.count == 2)
        recorder.clear()
        let before = ResultsFixtures.current(c)
        context.rollback()
        try Self.expectExact(recorder, before, c)
        #expect(ResultsFixtures.same(ResultsFixtures.current(c), kept))
    }

    @Test func snapshotsMarkChangedContents() async throws {
        let context = try Self.setUp([("a", "x", 1), ("b", "y", 2)])
        let c = try FetchedResultsController(
            fetchRequest: try Self.request(), context: context, sectionNameKeyPath: "category")
        try c.performFetch()
        var stream = c.snapshots.makeAsyncIterator()
        let first = try #require(await stream.next())
        #expect(first.sectionIdentifiers == ["x", "y"])
        #expect(first.reloadedItemIdentifiers.isEmpty)
        let a = try Self.item(context, "a")
        try a.setValue(3.0, forKey: "weight")
        try context.processPendingChanges()
        let second = try #require(await stream.next())
        #expect(second.itemIdentifiers == first.itemIdentifiers)
        #expect(second.reloadedItemIdentifiers == [a.objectID])
        #expect(second.itemIdentifiers(inSection: "x") == [a.objectID])
    }
}
