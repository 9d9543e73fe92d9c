// Derived attributes (Core Data's `derivationExpression`): a save computes them for the objects it
// changes and for the objects whose expression reads those (through inverses), stores them, and
// predicates read them in SQL. Every expected value is the expression evaluated in memory on the
// same objects (the reference), never a number written here; errors are memory's errors.

import Foundation
import SiftEvaluation
import SiftJSON
import SiftStoreTestSupport
import SiftSyntax
import Testing

@testable import SiftStore

@Suite struct DerivedAttributeTests {
    /// Author (name; postCount = posts.@count, totalLikes = posts.@sum.likes, slug =
    /// lowercase:(name)) ←→ Post (title, likes; authorName = author.name).
    static func model(extraPost: [AttributeDescription] = []) throws -> ManagedObjectModel {
        func derived(_ name: String, _ type: AttributeType, _ expression: String) -> AttributeDescription {
            var a = AttributeDescription(name, type)
            a.derivationExpression = expression
            return a
        }
        return try ManagedObjectModel(entities: [
            EntityDescription(
                "Author",
                attributes: [
                    AttributeDescription("name", .string), derived("postCount", .integer64, "posts.@count"),
                    derived("totalLikes", .integer64, "posts.@sum.likes"),
                    derived("slug", .string, "lowercase:(name)"),
                ],
                relationships: [RelationshipDescription("posts", to: "Post", toMany: true, inverse: "author")]),
            EntityDescription(
                "Post",
                attributes: [
                    AttributeDescription("title", .string), AttributeDescription("likes", .integer64),
                    derived("authorName", .string, "author.name"),
                ] + extraPost,
                relationships: [RelationshipDescription("author", to: "Author", inverse: "posts")]),
        ])
    }

    /// Ann with three posts (likes 1, 2, 3) and Bo with none, saved in a file store.
    static func populated(_ path: String) throws -> PersistentStore {
        let store = try PersistentStore(model: try model(), path: path)
        let c = ManagedObjectContext(store: store)
        let ann = try c.insert("Author")
        try ann.setValue("Ann Lee", forKey: "name")
        let bo = try c.insert("Author")
        try bo.setValue("Bo", forKey: "name")
        for i in 1...3 {
            let p = try c.insert("Post")
            try p.setValue("p\(i)", forKey: "title")
            try p.setValue(i, forKey: "likes")
            try p.setValue(ann, forKey: "author")
        }
        try c.save()
        return store
    }

    /// Every derived attribute of every stored object, read from a new context, equals its
    /// expression evaluated in memory on that object.
    static func expectStoredValuesMatchMemory(_ store: PersistentStore) throws {
        let c = ManagedObjectContext(store: store)
        for (entity, derived) in store.model.derivations.derived {
            for o in try c.fetch(FetchRequest(entity)) {
                for d in derived {
                    let a = o.info.entity.attributes[d.index]
                    let expected = try Value(coercing: try d.expression.evaluate(with: .object(o)), for: a)
                    let stored = try #require(o.value(forKey: a.name) as Value?)
                    #expect(stored.isIdentical(to: expected), "\(o.objectID) \(a.name): \(stored) vs \(expected)")
                }
            }
        }
    }

    static func author(_ name: String, in c: ManagedObjectContext) throws -> ManagedObject {
        try #require(try c.fetch(FetchRequest("Author", predicate: try SiftPredicate("name == %@", name))).first)
    }

    @Test func aSaveComputesAndStoresEachDerivedValue() throws {
        let store = try Self.populated(Fixtures.temporaryPath())
        try Self.expectStoredValuesMatchMemory(store)
        let c = ManagedObjectContext(store: store)
        let ann = try Self.author("Ann Lee", in: c)
        #expect(try ann.get("postCount", as: Int.self) == 3)
        #expect(try ann.get("slug", as: String.self) == "ann lee")
        // The values are in the rows: SQL selects on them as memory does.
        for text in ["postCount == 3", "totalLikes > 5", "slug BEGINSWITH 'bo'", "postCount == 0"] {
            let predicate = try SiftPredicate(text)
            var request = FetchRequest("Author", predicate: predicate)
            request.includesPendingChanges = false
            let inSQL = Set(try c.fetch(request).map(\.objectID))
            let inMemory = Set(
                try c.fetch(FetchRequest("Author")).filter { try predicate.evaluate(with: $0) }.map(\.objectID))
            #expect(inSQL == inMemory, "\(text)")
            #expect(!inSQL.isEmpty, "\(text) selects someone")
        }
    }

    @Test func aChangeReachesTheValuesThatReadItThroughInverses() throws {
        let store = try Self.populated(Fixtures.temporaryPath())
        // A post's likes change; its author is not touched, yet totalLikes follows.
        let c = ManagedObjectContext(store: store)
        let post = try #require(try c.fetch(FetchRequest("Post", predicate: try SiftPredicate("title == 'p2'"))).first)
        try post.setValue(20, forKey: "likes")
        try c.save()
        try Self.expectStoredValuesMatchMemory(store)
        // The author is renamed: every post's authorName follows (a to-many inverse).
        let c2 = ManagedObjectContext(store: store)
        try Self.author("Ann Lee", in: c2).setValue("Ann Smith", forKey: "name")
        try c2.save()
        try Self.expectStoredValuesMatchMemory(store)
        let names = try ManagedObjectContext(store: store).fetch(FetchRequest("Post")).map {
            try $0.get("authorName", as: String.self)
        }
        #expect(names == ["Ann Smith", "Ann Smith", "Ann Smith"])
        // A post moves to Bo, another is deleted: both authors' counts follow.
        let c3 = ManagedObjectContext(store: store)
        let posts = try c3.fetch(FetchRequest("Post", sortDescriptors: [try SiftSortDescriptor("title")]))
        try posts[0].setValue(try Self.author("Bo", in: c3), forKey: "author")
        try c3.delete(posts[1])
        try c3.save()
        try Self.expectStoredValuesMatchMemory(store)
        let c4 = ManagedObjectContext(store: store)
        #expect(try Self.author("Bo", in: c4).get("postCount", as: Int.self) == 1)
        #expect(try Self.author("Ann Smith", in: c4).get("postCount", as: Int.self) == 1)
    }

    @Test func anApplicationCannotSetADerivedValue() throws {
        let store = try PersistentStore.inMemory(model: try Self.model())
        let c = ManagedObjectContext(store: store)
        let a = try c.insert("Author")
        let error = try #require(throws: StoreError.self) { try a.setValue(7, forKey: "postCount") }
        #expect(error.kind == .invalidOperation)
        #expect(error.message.contains("derived from posts.@count"))
        // A batch update cannot set one either.
        var request = BatchUpdateRequest("Author")
        request.propertiesToUpdate = ["postCount": .constant(.integer(1))]
        let batch = try #require(throws: StoreError.self) { try c.execute(request) }
        #expect(batch.kind == .invalidOperation)
    }

    @Test func batchRequestsKeepDerivedValues() throws {
        let store = try Self.populated(Fixtures.temporaryPath())
        let c = ManagedObjectContext(store: store)
        // Raising every post's likes by 10 changes Ann's total, though no author is updated.
        var request = BatchUpdateRequest("Post")
        request.propertiesToUpdate = ["likes": .expression("likes + 10")]
        let update = try c.execute(request)
        #expect(update.objectIDs.count == 3)
        try Self.expectStoredValuesMatchMemory(store)
        // Deleting two posts (nullify) brings Ann's count and total down.
        _ = try c.execute(BatchDeleteRequest("Post", predicate: try SiftPredicate("likes < 13")))
        try Self.expectStoredValuesMatchMemory(store)
        #expect(try Self.author("Ann Lee", in: ManagedObjectContext(store: store)).get("postCount", as: Int.self) == 1)
    }

    @Test func memorysErrorIsTheSavesError() throws {
        // The square root of a string raises in memory; the save raises the same, writing nothing.
        var root = AttributeDescription("root", .double)
        root.derivationExpression = "sqrt:(title)"
        let store = try PersistentStore.inMemory(model: try Self.model(extraPost: [root]))
        let c = ManagedObjectContext(store: store)
        let p = try c.insert("Post")
        try p.setValue("nine", forKey: "title")
        let expression = try #require(store.model.derivations.derived["Post"]?.first { $0.text == "sqrt:(title)" })
        let memory = try #require(throws: EvaluationError.self) { try expression.expression.evaluate(with: .object(p)) }
        let saved = try #require(throws: StoreError.self) { try c.save() }
        #expect(saved.message.contains(memory.message), "\(saved.message) vs \(memory.message)")
        #expect(try ManagedObjectContext(store: store).count(for: FetchRequest("Post")) == 0)
    }

    @Test func aValueOfTheWrongTypeIsAValidationFailure() throws {
        var bad = AttributeDescription("badCount", .integer64)
        bad.derivationExpression = "title"
        let store = try PersistentStore.inMemory(model: try Self.model(extraPost: [bad]))
        let c = ManagedObjectContext(store: store)
        let p = try c.insert("Post")
        try p.setValue("not a number", forKey: "title")
        let error = try #require(throws: StoreError.self) { try c.save() }
        #expect(error.kind == .validation)
        #expect(error.failures.first?.keys == ["badCount"])
    }

    @Test func modelsWithBrokenDerivationsAreRefused() throws {
        func attempt(_ expression: String, inverse: String? = "author", transient: Bool = false) -> ModelError? {
            var d = AttributeDescription("d", .integer64)
            d.derivationExpression = expression
            d.isTransient = transient
            do {
                _ = try ManagedObjectModel(entities: [
                    EntityDescription(
                        "Author", attributes: [AttributeDescription("name", .string), d],
                        relationships: [RelationshipDescription("posts", to: "Post", toMany: true, inverse: inverse)]),
                    EntityDescription(
                        "Post", attributes: [AttributeDescription("likes", .integer64)],
                        relationships: inverse == nil
                            ? [] : [RelationshipDescription("author", to: "Author", inverse: "posts")]),
                ])
                return nil
            } catch { return error }
        }
        #expect(attempt("posts.@count") == nil)
        #expect(attempt("posts.@sum.lykes")?.description.contains("has no key 'lykes'; did you mean 'likes'?") == true)
        #expect(attempt("posts.@count +")?.description.contains("invalid derivation expression at 1:") == true)
        #expect(attempt("posts.@count", inverse: nil)?.description.contains("which has no inverse") == true)
        #expect(attempt("posts.@count", transient: true)?.description.contains("cannot be transient") == true)
    }

    @Test func aModelFileKeepsTheExpression() throws {
        let model = try Self.model()
        let again = try ManagedObjectModel(json: Data(model.jsonString.utf8))
        #expect(again == model)
        #expect(model.jsonString.contains(#""derivationExpression" : "posts.@count""#))
        let text = #"""
            {"entities": [{"name": "A", "attributes": [
              {"name": "n", "type": "string"},
              {"name": "d", "type": "integer64", "derivationExpression": "n +"}]}]}
            """#
        let error = try #require(throws: ModelError.self) { try ManagedObjectModel(json: Data(text.utf8)) }
        #expect(error.description.contains("derivationExpression"), "\(error)")
    }

    @Test func xcodeModelsMapDerivedAttributes() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let body = """
            <entity name="Author" representedClassName="Author" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="postCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="posts.@count" usesScalarValueType="YES"/>
                <relationship name="posts" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Post" inverseName="author" inverseEntity="Post"/>
            </entity>
            <entity name="Post" representedClassName="Post" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
                <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="posts" inverseEntity="Author"/>
            </entity>
            """
        let model = try ManagedObjectModel(contentsOf: try folder.bare("Blog", xcodeContents(body)))
        #expect(model.warnings.isEmpty, "\(model.warnings)")
        #expect(
            model.entity(named: "Author")?.attributes.first { $0.name == "postCount" }?.derivationExpression
                == "posts.@count")
        let missing = body.replacingOccurrences(of: #" derivationExpression="posts.@count""#, with: "")
        let error = try #require(throws: ModelError.self) {
            try ManagedObjectModel(contentsOf: try folder.bare("Broken", xcodeContents(missing)))
        }
        #expect(error.description.contains("needs a derivationExpression"), "\(error)")
    }

    @Test func anImportComputesDerivedValues() throws {
        let store = try PersistentStore.inMemory(model: try Self.model())
        let text = #"{"name": "Cy", "posts": [{"title": "a", "likes": 4}, {"title": "b", "likes": 5}]}"# + "\n"
        var stream = RecordStream(MappedInput(copying: Array(text.utf8)), name: "<test>")
        var importer = StoreImporter(context: ManagedObjectContext(store: store))
        _ = try importer.run(&stream, entity: "Author", batchSize: 10)
        #expect(importer.rowsWritten == 0)
        try Self.expectStoredValuesMatchMemory(store)
        #expect(try Self.author("Cy", in: ManagedObjectContext(store: store)).get("totalLikes", as: Int.self) == 9)
    }
}
