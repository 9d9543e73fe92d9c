// Transient attributes (Core Data's "Transient"): objects hold their values and a change makes
// the object updated, but the store has no column for them, a save writes nothing for them, an
// object read from the store starts at the default, and a fetch request naming one is refused.

import Foundation
import SiftEvaluation
import SiftSQLite
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct TransientAttributeTests {
    /// Note (title, transient draft with a default) ← Memo (transient score, no default).
    func model() throws -> ManagedObjectModel {
        var draft = AttributeDescription("draft", .string, defaultValue: .string("none"))
        draft.isTransient = true
        var score = AttributeDescription("score", .integer32)
        score.isTransient = true
        return try ManagedObjectModel(entities: [
            EntityDescription("Note", attributes: [AttributeDescription("title", .string), draft]),
            EntityDescription("Memo", parent: "Note", attributes: [score]),
        ])
    }

    @Test func aTransientAttributeIsHeldByItsObjectButNeverStored() throws {
        let model = try model()
        #expect(model.resolved["Note"]?.attribute("draft") == nil)
        #expect(model.resolved["Memo"]?.transients.map(\.name) == ["draft", "score"])
        #expect(model.schema.entity(named: "Note")?.attribute(named: "draft") == nil)
        let path = Fixtures.temporaryPath()
        let store = try PersistentStore(model: model, path: path)
        let c = ManagedObjectContext(store: store)
        let note = try c.insert("Note")
        #expect(try note.value(forKey: "draft") == .string("none"))
        try note.setValue("Hi", forKey: "title")
        try note.setValue("scratch", forKey: "draft")
        #expect(try note.value(forKey: "draft") == .string("scratch"))
        let memo = try c.insert("Memo")
        try memo.setValue(5, forKey: "score")
        #expect(throws: StoreError.self) { try memo.setValue("five", forKey: "score") }
        #expect(try memo.value(forKey: "score") == .integer(5))
        try c.save()
        #expect(try note.value(forKey: "draft") == .string("scratch"))

        // A change to it alone makes the object updated; a rollback takes it back to its default.
        try note.setValue("again", forKey: "draft")
        #expect(note.isUpdated && c.hasChanges)
        c.rollback()
        #expect(!note.isUpdated)
        #expect(try note.value(forKey: "draft") == .string("none"))

        // The table has no column for it, and objects read from the store start at the default.
        let columns = try SQLiteConnection(path: path).query("SELECT name FROM pragma_table_info('Note')")
            .map { "\($0[0])" }
        #expect(columns.contains { $0.contains("title") })
        #expect(!columns.contains { $0.contains("draft") || $0.contains("score") }, "\(columns)")
        let other = ManagedObjectContext(store: store)
        let read = try other.fetch(FetchRequest("Note"))
        #expect(read.count == 2)
        for o in read { #expect(try o.value(forKey: "draft") == .string("none")) }
        let readMemo = try #require(try other.fetch(FetchRequest("Memo")).first)
        #expect(try readMemo.value(forKey: "score") == .null)
        // Predicates judge it in memory, on the objects.
        #expect(try SiftPredicate("draft == 'none' AND score == nil").evaluate(with: readMemo))
    }

    /// Core Data's SQLite store cannot fetch on a transient property: Sift says so before reading.
    @Test func aFetchRequestNamingATransientAttributeIsRefused() throws {
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: try model()))
        for (entity, predicate) in [
            ("Note", "draft == 'x'"), ("Note", "score > 1"), ("Memo", "title == 'a' OR draft == nil"),
        ] {
            do {
                _ = try c.fetch(try FetchRequest(entity, predicate: predicate))
                Issue.record("\(entity) \(predicate) was fetched")
            } catch {
                #expect(error.kind == .invalidOperation, "\(error)")
                #expect(error.message.contains("is transient: the store does not hold it"), "\(error)")
            }
        }
    }

    @Test func theModelFileKeepsTransientAndRefusesWhatCannotBeTransient() throws {
        let model = try model()
        let again = try ManagedObjectModel(json: Data(model.jsonString.utf8))
        #expect(again == model)
        #expect(again.entity(named: "Note")?.attributes[1].isTransient == true)
        #expect(!(again.entity(named: "Note")?.attributes[0].isTransient ?? true))
        var indexed = AttributeDescription("x", .string, indexed: true)
        indexed.isTransient = true
        var collection = AttributeDescription("y", .string, collection: true)
        collection.isTransient = true
        for (a, message) in [
            (indexed, "a transient attribute has no column to index"),
            (collection, "a transient attribute holds one value; it cannot be a collection or mixed"),
        ] {
            #expect(throws: ModelError.self) {
                try ManagedObjectModel(entities: [EntityDescription("E", attributes: [a])])
            }
            #expect(ModelResolver.problems(of: a).map(\.message).contains(message))
        }
        var unique = AttributeDescription("z", .string)
        unique.isTransient = true
        do {
            _ = try ManagedObjectModel(entities: [
                EntityDescription("E", attributes: [unique], uniquenessConstraints: [["z"]])
            ])
            Issue.record("accepted")
        } catch {
            #expect(error.message.contains("names 'z', a transient attribute"))
        }
    }
}
