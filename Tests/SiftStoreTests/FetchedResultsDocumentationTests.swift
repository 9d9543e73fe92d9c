// swift-format-ignore-file
// (Its documentation samples are checked line for line against the article, so it keeps their layout.)
// The Swift samples of the FetchedResults article, each copied verbatim and run, with the results
// its comments state asserted; one test checks that every sample block of the article appears in
// this file, so the article cannot drift from the code it shows.

import Foundation
import Testing
import SiftTestSupport
import SiftEvaluation
import SiftStore

final class ItemList: FetchedResultsControllerDelegate {
    var rows: [[String]] = []
    var redrawn: [ResultIndexPath] = []

    func controller(
        _ controller: FetchedResultsController, didChangeSection name: String, atSectionIndex index: Int,
        for type: FetchedResultsChangeType
    ) {
        if type == .insert { rows.insert([], at: index) }
    }

    func controller(
        _ controller: FetchedResultsController, didChange object: ManagedObject, at indexPath: ResultIndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: ResultIndexPath?
    ) {
        if type == .update { redrawn.append(newIndexPath!) }
    }

    func controllerDidChangeContent(_ controller: FetchedResultsController) {
        // A table view would animate the changes; this list reads the new rows.
        rows = controller.sections.map { section in section.objects.map { (try? $0.get("name", as: String.self)) ?? "" } }
    }
}

@Suite struct FetchedResultsDocumentationTests {
    @Test func samplesAreTested() throws { try expectArticleSamplesTested("FetchedResults.md", of: "SiftStore") }

    /// A context on a store of items (name, category, price): apple and pear (fruit), leek
    /// (vegetable), and a free sample left out by the predicate; apple's ID.
    static func itemContext() throws -> (ManagedObjectContext, ObjectID) {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Item", attributes: [AttributeDescription("name", .string),
                                                   AttributeDescription("category", .string),
                                                   AttributeDescription("price", .integer64)]),
        ])
        let context = ManagedObjectContext(store: try PersistentStore.inMemory(model: model))
        var ids: [String: ObjectID] = [:]
        for (name, category, price) in [("apple", "fruit", 1), ("pear", "fruit", 4), ("leek", "vegetable", 2), ("sample", "fruit", 0)] {
            let o = try context.insert("Item")
            try o.setValue(name, forKey: "name")
            try o.setValue(category, forKey: "category")
            try o.setValue(price, forKey: "price")
            ids[name] = o.objectID
        }
        try context.save()
        let apple = try #require(try context.fetch(try FetchRequest("Item", predicate: "name == 'apple'")).first)
        return (context, apple.objectID)
    }

    @Test func aListScreen() throws {
        let (context, appleID) = try Self.itemContext()
        var request = try FetchRequest("Item", predicate: "price > %@", 0)
        request.sortDescriptors = [try SiftSortDescriptor("category"), try SiftSortDescriptor("name")]
        let controller = try FetchedResultsController(
            fetchRequest: request, context: context, sectionNameKeyPath: "category")
        try controller.performFetch()
        // controller.sections.map(\.name) == ["fruit", "vegetable"]
        // controller.sectionIndexTitles == ["F", "V"]
        let first = controller.object(at: ResultIndexPath(item: 0, section: 0))
        // controller.indexPath(forObject: first) == ResultIndexPath(item: 0, section: 0)
        #expect(controller.sections.map(\.name) == ["fruit", "vegetable"])
        #expect(controller.sectionIndexTitles == ["F", "V"])
        #expect(controller.indexPath(forObject: first) == ResultIndexPath(item: 0, section: 0))
        #expect(first.objectID == appleID)

        let list = ItemList()
        controller.delegate = list
        try context.object(with: appleID).setValue(2, forKey: "price")   // stays in place
        try context.processPendingChanges()
        // list.redrawn == [ResultIndexPath(item: 0, section: 0)]: one update, no move
        #expect(list.redrawn == [ResultIndexPath(item: 0, section: 0)])
        #expect(list.rows == [["apple", "pear"], ["leek"]])
    }

    @Test func snapshots() async throws {
        let (context, appleID) = try Self.itemContext()
        let request = try FetchRequest("Item", predicate: "price > %@", 0, sortedBy: ["category", "name"])
        let controller = try FetchedResultsController(
            fetchRequest: request, context: context, sectionNameKeyPath: "category")
        try controller.performFetch()

        var snapshots = controller.snapshots.makeAsyncIterator()
        let initial = await snapshots.next()!
        // initial.sectionIdentifiers == ["fruit", "vegetable"]
        try context.object(with: appleID).setValue(3, forKey: "price")
        try context.processPendingChanges()
        let next = await snapshots.next()!
        // next.itemIdentifiers == initial.itemIdentifiers
        // next.reloadedItemIdentifiers == [appleID]
        #expect(initial.sectionIdentifiers == ["fruit", "vegetable"])
        #expect(next.itemIdentifiers == initial.itemIdentifiers)
        #expect(next.reloadedItemIdentifiers == [appleID])
        #expect(initial.itemIdentifiers.count == 3)
    }
}

extension FetchRequest where Object == ManagedObject {
    /// A request with a format predicate, sorted ascending by `keys`.
    init(_ entity: String, predicate: String, _ argument: Any, sortedBy keys: [String]) throws {
        try self.init(entity, predicate: predicate, argument)
        sortDescriptors = try keys.map { try SiftSortDescriptor($0) }
    }
}

// The samples of the article's sections on child contexts and streaming.
extension FetchedResultsDocumentationTests {
    @Test func onAChildContext() throws {
        let (context, appleID) = try Self.itemContext()
        let request = try FetchRequest("Item", predicate: "price > %@", 0, sortedBy: ["category", "name"])
        let editor = ManagedObjectContext(parent: context)
        let edited = try FetchedResultsController(fetchRequest: request, context: editor, sectionNameKeyPath: "category")
        try edited.performFetch()
        try context.object(with: appleID).setValue(0, forKey: "price")   // in the parent, unsaved
        try context.processPendingChanges()
        // edited.fetchedObjects.count == 2: the child's results follow the parent's edit
        #expect(edited.fetchedObjects.count == 2)
        #expect(!edited.fetchedObjects.contains { $0.objectID == appleID })
        #expect(try context.fetch(request).count == 2 && ManagedObjectContext(parent: context).fetch(request).count == 2)
        let before = edited.fetchedObjects
        editor.reset()
        // edited.fetchedObjects.count == 2, other objects: the reset fetched again
        #expect(edited.fetchedObjects.count == 2)
        #expect(edited.fetchedObjects.map(\.objectID) == before.map(\.objectID))
        #expect(!zip(edited.fetchedObjects, before).contains { $0 === $1 })
    }

    @Test func streaming() async throws {
        let (context, _) = try Self.itemContext()
        var items = FetchRequest("Item")
        items.fetchBatchSize = 2
        var streamed = AsynchronousFetchRequest(items)
        let updates = streamed.progressUpdates()
        var names: [String] = []
        for try await batch in context.batches(for: streamed) {
            // Each batch is read, handed over, and let go of when the loop moves on.
            names += try batch.map { try $0.get("name", as: String.self) ?? "" }
        }
        // names.count == 4
        var steps: [String] = []
        for try await step in updates { steps.append("\(step.completed)/\(step.total!)") }
        // steps == ["0/4", "2/4", "4/4"]
        #expect(names.count == 4 && Set(names) == ["apple", "pear", "leek", "sample"])
        #expect(steps == ["0/4", "2/4", "4/4"])
    }
}
