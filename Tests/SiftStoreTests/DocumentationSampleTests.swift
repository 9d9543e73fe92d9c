// swift-format-ignore-file
// (Its documentation samples are checked line for line against the articles, so it keeps their layout.)
// The Swift samples of SiftStore's DocC catalog, each copied verbatim from its article and run,
// with the results its comments state asserted; one test checks that every sample block of the
// catalog still appears in this file, so an article cannot drift from the code it shows. (The
// command-line article's samples are shell commands, which the CLI tests cover.)

import Foundation
import Testing
import SiftTestSupport
import SiftEvaluation
import SiftStore
import SiftStoreTestSupport

final class Shelf: ManagedObject {
    var label: String? {
        get { attribute("label") }
        set { setAttribute(newValue, "label") }
    }
    var books: Set<Book> {
        get { toMany("books") }
        set { setToMany(newValue, "books") }
    }
}

class Book: ManagedObject {
    var title: String? {
        get { attribute("title") }
        set { setAttribute(newValue, "title") }
    }
    var pages: Int64 {
        get { attribute("pages", default: 0) }
        set { setAttribute(newValue, "pages") }
    }
    var shelf: Shelf? {
        get { toOne("shelf") }
        set { setToOne(newValue, "shelf") }
    }
}

final class Atlas: Book {}

@Suite struct DocumentationSampleTests {
    @Test func persistenceSamplesAreTested() throws { try expectArticleSamplesTested("Persistence.md", of: "SiftStore") }

    @Test func typedObjectsSamplesAreTested() throws { try expectArticleSamplesTested("TypedObjects.md", of: "SiftStore") }

    @Test func typedObjects() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Shelf", attributes: [AttributeDescription("label", .string)],
                              relationships: [RelationshipDescription("books", to: "Book", toMany: true, inverse: "shelf")]),
            EntityDescription("Book", attributes: [AttributeDescription("title", .string),
                                                   AttributeDescription("pages", .integer64)],
                              relationships: [RelationshipDescription("shelf", to: "Shelf", inverse: "books")]),
            EntityDescription("Atlas", parent: "Book"),
        ], classes: [Shelf.self, Book.self, Atlas.self])
        let context = ManagedObjectContext(store: try PersistentStore.inMemory(model: model))

        let shelf = try context.insert(Shelf.self)
        shelf.label = "maps"
        let atlas = try context.insert(Atlas.self)
        atlas.title = "World"
        atlas.pages = 320
        atlas.shelf = shelf
        try context.save()

        let books = try context.fetch(FetchRequest(Book.self, predicate: "pages > %@", 100))
        // books.first is the atlas: an Atlas, shelved on "maps"
        #expect(books.count == 1 && books.first is Atlas && books.first?.shelf?.label == "maps")
        #expect(shelf.books == [atlas])

        let other = ManagedObjectContext(store: context.store)
        try other.delete(try other.existingObject(with: atlas.objectID))
        try other.save()

        let stale = ManagedObjectContext(store: context.store)
        let fault = try stale.object(with: atlas.objectID) as? Atlas   // not read yet
        let pagesRead = fault?.pages                   // 0: its row is gone
        let kept = stale.accessErrors.first?.kind      // .objectNotFound, thrown by the next save
        let pages = try? fault?.throwing { $0.pages }  // nil: `throwing` threw it here
        #expect(pagesRead == 0 && kept == .objectNotFound && pages == nil)
        #expect(throws: StoreError.self) { try stale.save() }
    }

    @Test func contextsAndThreadsSamplesAreTested() throws {
        try expectArticleSamplesTested("ContextsAndThreads.md", of: "SiftStore")
    }

    /// A store with one entity, Item (name, price).
    static func itemStore(historyTracking: Bool = false) throws -> PersistentStore {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Item", attributes: [AttributeDescription("name", .string),
                                                   AttributeDescription("price", .integer64)]),
        ])
        return try PersistentStore.inMemory(model: model, historyTracking: historyTracking)
    }

    /// The item store holding one saved item of price `price`, and its ID.
    static func storeWithItem(price: Int) throws -> (PersistentStore, ObjectID) {
        let store = try itemStore()
        let setup = ManagedObjectContext(store: store)
        let saved = try setup.insert("Item")
        try saved.setValue(price, forKey: "price")
        try setup.save()
        return (store, saved.objectID)
    }

    @Test func theStack() async throws {
        let store = try Self.itemStore()
        let writer = ManagedObjectContext(store: store, concurrency: .privateQueue)
        let main = ManagedObjectContext(parent: writer, concurrency: .mainQueue)
        let worker = ManagedObjectContext(parent: main, concurrency: .privateQueue)

        let id = try await worker.perform {
            let item = try worker.insert("Item")
            try item.setValue("imported", forKey: "name")
            try worker.obtainPermanentIDs(for: [item])
            try worker.save()                              // into main: nothing is written yet
            return item.objectID
        }
        try await main.perform { try main.save() }         // into the writer
        try await writer.perform { try writer.save() }     // one transaction in the store
        let name = try await main.perform { try main.object(with: id).get("name", as: String.self) }
        // name == "imported"
        #expect(name == "imported")
        #expect(try ManagedObjectContext(store: store).existingObject(with: id).get("name", as: String.self) == "imported")
    }

    @Test func mergingAnotherContextsSaves() async throws {
        let (store, id) = try Self.storeWithItem(price: 1)
        let main = ManagedObjectContext(store: store, concurrency: .mainQueue)
        let background = ManagedObjectContext(store: store, concurrency: .privateQueue)
        _ = try await main.perform { try main.existingObject(with: id).get("price", as: Int.self) }

        let token = background.observe { note in
            guard case .didSave(let changes) = note else { return }
            Task { try await main.perform { try main.mergeChanges(fromContextDidSave: changes) } }
        }
        try await background.perform {
            try background.object(with: id).setValue(2, forKey: "price")
            try background.save()
        }
        // The merge runs on the main queue after the save: wait for it (two seconds at most).
        var price: Int?
        for _ in 0..<200 {
            price = try await main.perform { try main.object(with: id).get("price", as: Int.self) }
            if price == 2 { break }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(price == 2)
        token.cancel()
    }

    @Test func mergingAutomatically() async throws {
        let (store, id) = try Self.storeWithItem(price: 1)
        // The view context holds the object (price 1) when the import saves: the merge refreshes it.
let view = ManagedObjectContext(store: store, concurrency: .mainQueue)
view.automaticallyMergesChangesFromParent = true
let before = try await view.perform { try view.object(with: id).get("price", as: Int.self) }   // 1
let importer = ManagedObjectContext(store: store, concurrency: .privateQueue)
try await importer.perform {
    try importer.object(with: id).setValue(3, forKey: "price")
    try importer.save()                            // view takes it in on the main queue
}
let after = try await view.perform { try view.object(with: id).get("price", as: Int.self) }   // 3
        #expect(before == 1 && after == 3)
    }

    @Test func mergingHistory() throws {
        let store = try Self.itemStore(historyTracking: true)
        let context = ManagedObjectContext(store: store)
        let other = ManagedObjectContext(store: store)
        let item = try other.insert("Item")
        try other.save()
        let held = try context.existingObject(with: item.objectID)
        var lastToken: HistoryToken? = try store.history(after: nil).last?.token
        try item.setValue("elsewhere", forKey: "name")
        try other.save()

        let news = try store.history(after: lastToken)
        try context.mergeChanges(fromHistory: news)
        lastToken = news.last?.token ?? lastToken
        #expect(news.count == 1 && lastToken == news.last?.token)
        #expect(try held.get("name", as: String.self) == "elsewhere")
    }

    @Test func undo() throws {
        let context = ManagedObjectContext(store: try Self.itemStore())
        context.undoManager = SiftUndoManager()
        let note = try context.insert("Item")
        try note.setValue("draft", forKey: "name")
        try context.processPendingChanges()        // one group: the insert and its name
        try note.setValue("final", forKey: "name")
        try context.undo()                         // the name is "draft" again
        try context.redo()                         // and "final"
        #expect(try note.get("name", as: String.self) == "final")
        try context.undo()
        #expect(try note.get("name", as: String.self) == "draft")
    }

    @Test func asynchronousFetch() async throws {
        let store = try Self.itemStore()
        let context = ManagedObjectContext(store: store)
        for name in ["pen", "ink", "nib"] { try context.insert("Item").setValue(name, forKey: "name") }
        try context.save()
        let expected = try context.fetch(FetchRequest("Item")).map(\.objectID)
        let background = ManagedObjectContext(store: store, concurrency: .privateQueue)

        let progress = Progress(totalUnitCount: 0)
        let request = AsynchronousFetchRequest(FetchRequest("Item"), progress: progress)
        let items = try await context.fetch(request)         // every item, as fetch(_:) gives them
        // progress.completedUnitCount == progress.totalUnitCount == items.count
        let names = try await background.fetch(request) { items in
            try items.map { try $0.value(forKey: "name") }    // runs on background's queue
        }
        progress.cancel()                                    // a fetch still running would stop here
        #expect(items.map(\.objectID) == expected)
        #expect(progress.completedUnitCount == progress.totalUnitCount && progress.totalUnitCount == 3)
        #expect(names == [.string("pen"), .string("ink"), .string("nib")])
        await #expect(throws: CancellationError.self) { _ = try await context.fetch(request) }
    }

    @Test func persistence() throws {
        let path = Fixtures.temporaryPath("company.sqlite")
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Employee",
                attributes: [AttributeDescription("name", .string, optional: false),
                             AttributeDescription("salary", .double, minValue: 0),
                             AttributeDescription("email", .string, regularExpression: "[^@ ]+@[^@ ]+")],
                relationships: [RelationshipDescription("team", to: "Team", inverse: "members")],
                uniquenessConstraints: [["email"]]),
            EntityDescription("Team",
                attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("members", to: "Employee", toMany: true,
                                                        inverse: "team", deleteRule: .cascade)]),
        ])
        let store = try PersistentStore(model: model, path: path)
        let context = ManagedObjectContext(store: store)

        let rnd = try context.insert("Team")
        try rnd.setValue("R&D", forKey: "name")
        let ann = try context.insert("Employee")
        try ann.setValue("Ann", forKey: "name")
        try ann.setValue(5200.0, forKey: "salary")
        try ann.setValue(rnd, forKey: "team")           // rnd's "members" now holds ann
        try context.save()                               // validated, then one transaction

        var request = try FetchRequest("Employee", predicate: "team.name ==[c] %@ AND salary > %@", "r&d", 5000)
        request.sortDescriptors = [try SiftSortDescriptor("name", options: .caseInsensitive)]
        let people = try context.fetch(request)          // [ann]
        let salary = try people[0].get("salary", as: Double.self)   // 5200.0

        var raise = try BatchUpdateRequest("Employee", predicate: "team.name == 'R&D'")
        raise.propertiesToUpdate = ["salary": .expression("salary * 1.1")]
        let result = try context.execute(raise)          // result.count == 1, no objects loaded
        try context.mergeChanges(from: result)           // ann's salary is now 5720.0

        #expect(try rnd.get("members", as: [ManagedObject].self) == [ann])
        #expect(people == [ann])
        #expect(salary == 5200.0)
        #expect(result.count == 1)
        #expect(try ann.get("salary", as: Double.self) == 5200.0 * 1.1)
        // The saved state is in the file: a second store on the same path fetches the same row.
        let reopened = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        #expect(try reopened.count(for: FetchRequest("Employee", predicate: "salary > 5700")) == 1)
    }
}

/// The value transformer sample's types (Persistence.md, "Value transformers"), in a namespace of
/// their own; TransformerTests uses them too.
enum TransformerSample {
    /// A color: not Codable; predicates read its components through KeyValueCoding.
    final class Color: KeyValueCoding {
        let red, green, blue, alpha: Double
        init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
            (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
        }
        func value(forKey key: String) throws -> Value {
            switch key {
            case "red": .double(red)
            case "green": .double(green)
            case "blue": .double(blue)
            case "alpha": .double(alpha)
            default: throw KeyValueCodingError.unknownKey(key, in: "Color")
            }
        }
    }

    /// A color as its four components (0 to 1), 8 bytes each, and back.
    struct ColorTransformer: AttributeTransformer {
        func transformedValue(_ color: Color) throws(TransformerError) -> Data {
            let components = [color.red, color.green, color.blue, color.alpha]
            guard components.allSatisfy({ (0...1).contains($0) }) else {
                throw TransformerError(.transform, "components run from 0 to 1: \(components)")
            }
            var data = Data()
            for c in components { withUnsafeBytes(of: c.bitPattern.littleEndian) { data.append(contentsOf: $0) } }
            return data
        }
        func reverseTransformedValue(_ data: Data) throws(TransformerError) -> Color {
            guard data.count == 32 else { throw TransformerError(.reverse, "a color is 32 bytes, not \(data.count)") }
            let c = (0..<4).map { i in
                Double(bitPattern: UInt64(littleEndian: data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self) }))
            }
            return Color(red: c[0], green: c[1], blue: c[2], alpha: c[3])
        }
    }
}

extension DocumentationSampleTests {
    typealias Color = TransformerSample.Color
    typealias ColorTransformer = TransformerSample.ColorTransformer

    @Test func valueTransformers() throws {
        let path = Fixtures.temporaryPath("cars.sqlite")
        AttributeTransformers.setValueTransformer(ColorTransformer(), forName: "ColorTransformer")
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Car", attributes: [
                AttributeDescription("name", .string),
                AttributeDescription("color", .transformable, valueTransformerName: "ColorTransformer"),
            ]),
        ])
        let context = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        let car = try context.insert("Car")
        try car.setValue("roadster", forKey: "name")
        try car.setValue(Color(red: 0.9, green: 0.1, blue: 0.1), forKey: "color")   // 32 bytes, made now
        try context.save()

        let reread = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        let reds = try reread.fetch(try FetchRequest("Car", predicate: "color.red > 0.5"))   // [roadster]
        let color = try reds[0].get("color", as: Color.self)   // a Color again: red 0.9, alpha 1
        // try car.setValue("red", forKey: "color") fails: type-mismatch, a String is not a Color

        #expect(reds.count == 1)
        #expect(try reds[0].get("name", as: String.self) == "roadster")
        #expect(color?.red == 0.9 && color?.green == 0.1 && color?.alpha == 1)
        #expect { try car.setValue("red", forKey: "color") } throws: { error in
            (error as? StoreError)?.kind == .typeMismatch && "\(error)".contains("a String is not a Color")
        }
        #expect(try reread.count(for: FetchRequest("Car", predicate: "color.blue > 0.5")) == 0)
    }
}
