// Fetched properties (Core Data's `<fetchedProperty>`): reading the key runs the property's fetch
// with `$FETCH_SOURCE` bound to the object, pending changes included; each expected answer is the
// property's predicate evaluated in memory over every object of the fetched entity.

import Foundation
import SiftEvaluation
import SiftStoreTestSupport
import SiftSyntax
import Testing

@testable import SiftStore

@Suite struct FetchedPropertyTests {
    static let popular = "author == $FETCH_SOURCE AND likes > 10"

    /// Author (name; fetched `popular`) ←→ Post (title, likes); Editor is a sub-entity of Author.
    static func model() throws -> ManagedObjectModel {
        var author = EntityDescription(
            "Author", attributes: [AttributeDescription("name", .string)],
            relationships: [RelationshipDescription("posts", to: "Post", toMany: true, inverse: "author")])
        author.fetchedProperties = [FetchedPropertyDescription("popular", entity: "Post", predicate: popular)]
        return try ManagedObjectModel(entities: [
            author,
            EntityDescription("Editor", parent: "Author", attributes: [AttributeDescription("desk", .string)]),
            EntityDescription(
                "Post",
                attributes: [AttributeDescription("title", .string), AttributeDescription("likes", .integer64)],
                relationships: [RelationshipDescription("author", to: "Author", inverse: "posts")]),
        ])
    }

    /// The posts memory selects for `author`: the predicate over every post, `$FETCH_SOURCE` bound.
    static func inMemory(_ author: ManagedObject, _ c: ManagedObjectContext) throws -> Set<ObjectID> {
        let predicate = try SiftPredicate(popular)
        let source = Value.object(author)
        return Set(
            try c.fetch(FetchRequest("Post")).filter {
                try predicate.evaluate(with: .object($0), variables: ["FETCH_SOURCE": source])
            }.map(\.objectID))
    }

    static func ids(_ v: Value) -> Set<ObjectID> {
        guard case .array(let items) = v else { return [] }
        return Set(items.compactMap { if case .object(let o as ManagedObject) = $0 { o.objectID } else { nil } })
    }

    @Test func readingTheKeyFetchesWhatMemorySelects() throws {
        let store = try PersistentStore(model: try Self.model(), path: Fixtures.temporaryPath())
        let c = ManagedObjectContext(store: store)
        let ann = try c.insert("Author")
        let ed = try c.insert("Editor")
        for (i, likes) in [3, 12, 40, 11].enumerated() {
            let p = try c.insert("Post")
            try p.setValue("p\(i)", forKey: "title")
            try p.setValue(likes, forKey: "likes")
            try p.setValue(i < 3 ? ann : ed, forKey: "author")
        }
        // Pending changes count: nothing is saved yet.
        for a in [ann, ed] { #expect(Self.ids(try a.value(forKey: "popular")) == (try Self.inMemory(a, c))) }
        try c.save()
        let c2 = ManagedObjectContext(store: store)
        for a in try c2.fetch(FetchRequest("Author")) {
            let found = Self.ids(try a.value(forKey: "popular"))
            #expect(found == (try Self.inMemory(a, c2)))
            #expect(!found.isEmpty)
        }
        // Each read fetches again: a change shows at once.
        let first = try #require(try c2.fetch(FetchRequest("Post", predicate: try SiftPredicate("likes == 3"))).first)
        try first.setValue(99, forKey: "likes")
        let owner = try #require(try first.get("author", as: ManagedObject.self))
        #expect(Self.ids(try owner.value(forKey: "popular")).contains(first.objectID))
        #expect(try owner.get("popular", as: [ManagedObject].self)?.count == 3)
        // Predicates evaluated in memory read it too.
        #expect(try SiftPredicate("popular.@count == 3").evaluate(with: owner))
    }

    @Test func aFetchedPropertyIsNeitherSetNorFetchedOn() throws {
        let store = try PersistentStore.inMemory(model: try Self.model())
        let c = ManagedObjectContext(store: store)
        let ann = try c.insert("Author")
        let set = try #require(throws: StoreError.self) { try ann.setValue([], forKey: "popular") }
        #expect(set.kind == .invalidOperation)
        let fetch = try #require(throws: StoreError.self) {
            try c.fetch(FetchRequest("Author", predicate: try SiftPredicate("popular.@count > 0")))
        }
        #expect(fetch.kind == .invalidOperation)
        #expect(fetch.message.contains("is a fetched property"))
    }

    @Test func brokenFetchedPropertiesAreRefused() throws {
        func attempt(_ f: FetchedPropertyDescription) -> ModelError? {
            var a = EntityDescription("A", attributes: [AttributeDescription("n", .string)])
            a.fetchedProperties = [f]
            do {
                _ = try ManagedObjectModel(entities: [
                    a, EntityDescription("B", attributes: [AttributeDescription("x", .string)]),
                ])
                return nil
            } catch { return error }
        }
        #expect(attempt(.init("f", entity: "B", predicate: "x == $FETCH_SOURCE.n")) == nil)
        #expect(
            attempt(.init("n", entity: "B", predicate: "x == 'a'"))?.description.contains("two properties named 'n'")
                == true)
        #expect(attempt(.init("f", entity: "C", predicate: "x == 'a'"))?.description.contains("no entity 'C'") == true)
        #expect(
            attempt(.init("f", entity: "B", predicate: "x =="))?.description.contains("invalid predicate at 1:") == true
        )
        #expect(attempt(.init("f", entity: "B", predicate: "y == 1"))?.description.contains("has no key 'y'") == true)
    }

    @Test func modelFilesAndXcodeModelsKeepThem() throws {
        let model = try Self.model()
        let again = try ManagedObjectModel(json: Data(model.jsonString.utf8))
        #expect(again == model)
        #expect(model.jsonString.contains(#""fetchedProperties""#))
        // They do not change what the store holds, so not the version hash either.
        var plain = model.entities
        plain[0].fetchedProperties = []
        #expect(try ManagedObjectModel(entities: plain).versionHash == model.versionHash)
        let bad =
            #"{"entities": [{"name": "A", "fetchedProperties": [{"name": "f", "entity": "A", "predicat": "TRUEPREDICATE"}]}]}"#
        let error = try #require(throws: ModelError.self) { try ManagedObjectModel(json: Data(bad.utf8)) }
        #expect(error.description.contains("unknown key 'predicat'"), "\(error)")

        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let body = """
            <entity name="Author" representedClassName="Author" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="posts" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Post" inverseName="author" inverseEntity="Post"/>
                <fetchedProperty name="popular" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Post" predicateString="author == $FETCH_SOURCE AND likes &gt; 10"/>
                </fetchedProperty>
            </entity>
            <entity name="Post" representedClassName="Post" syncable="YES">
                <attribute name="likes" optional="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="posts" inverseEntity="Author"/>
            </entity>
            """
        let xcode = try ManagedObjectModel(contentsOf: try folder.bare("Blog", xcodeContents(body)))
        #expect(xcode.warnings.isEmpty, "\(xcode.warnings)")
        #expect(
            xcode.entity(named: "Author")?.fetchedProperties == [
                FetchedPropertyDescription("popular", entity: "Post", predicate: Self.popular)
            ])
    }
}
