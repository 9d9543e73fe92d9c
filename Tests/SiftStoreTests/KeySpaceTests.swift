// Keys issued per hierarchy, as Core Data's stores issue them (each root's `Z_MAX`): an object of
// `Author` and one of `Book` may both have key 1. Each test below makes such a pair and checks
// that every path that finds objects by key (the registry, fetches, to-one faults, version
// checks, uniqueness checks, merged saves and deletes, child contexts) keeps them apart. With one
// key per store, as before, every one of these mixed the two objects up.

import Foundation
import Testing

@testable import SiftStore

@Suite struct KeySpaceTests {
    /// Author (name, unique) ←author— Book (title, unique): two roots, one relationship.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Author", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("books", to: "Book", toMany: true, inverse: "author")],
                uniquenessConstraints: [["name"]]),
            EntityDescription(
                "Book", attributes: [AttributeDescription("title", .string)],
                relationships: [RelationshipDescription("author", to: "Author", inverse: "books")],
                uniquenessConstraints: [["title"]]),
        ])
    }

    /// A store on a temporary file whose keys are per root entity, with author "ann" (key 1) and
    /// books "b1" (key 1, by ann) and "b2" (key 2, by ann) saved.
    static func store() throws -> PersistentStore {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keyspace-\(UUID()).sqlite").path
        let store = try PersistentStore(
            model: try model(), location: path, historyTracking: false, keyScope: .hierarchy)
        let c = ManagedObjectContext(store: store)
        let ann = try c.insert("Author")
        try ann.setValue("ann", forKey: "name")
        for title in ["b1", "b2"] {
            let b = try c.insert("Book")
            try b.setValue(title, forKey: "title")
            try b.setValue(ann, forKey: "author")
        }
        try c.save()
        return store
    }

    static func one(_ c: ManagedObjectContext, _ entity: String, _ format: String) throws -> ManagedObject {
        let found = try c.fetch(try FetchRequest(entity, predicate: format))
        try #require(found.count == 1)
        return found[0]
    }

    @Test func rootsIssueTheirOwnKeysAndTheIDsDiffer() throws {
        let store = try Self.store()
        let c = ManagedObjectContext(store: store)
        let ann = try Self.one(c, "Author", "name == 'ann'")
        let b1 = try Self.one(c, "Book", "title == 'b1'")
        #expect(ann.objectID.primaryKey == 1)
        #expect(b1.objectID.primaryKey == 1)
        #expect(ann.objectID != b1.objectID)
        #expect(Set([ann.objectID, b1.objectID]).count == 2)
        #expect(try c.object(with: ann.objectID) === ann)
        #expect(try c.object(with: b1.objectID) === b1)
        #expect(c.registeredObjects.count == 2)
        // A URI names the entity only: its ID lands in the entity's key space.
        #expect(ObjectID(uri: b1.objectID.uriRepresentation) == b1.objectID)
        #expect(ObjectID(uri: ann.objectID.uriRepresentation) != b1.objectID)
    }

    @Test func aToOneFaultFindsTheDestinationsObject() throws {
        let store = try Self.store()
        let c = ManagedObjectContext(store: store)
        // b1 registered first under key 1; the author (also key 1) is then read through b2's link.
        let b1 = try Self.one(c, "Book", "title == 'b1'")
        let b2 = try Self.one(c, "Book", "title == 'b2'")
        let author = try #require(try b2.get("author", as: ManagedObject.self))
        #expect(author !== b1)
        #expect(author.objectID.entityName == "Author")
        #expect(try author.get("name", as: String.self) == "ann")
        #expect(try c.fetch(FetchRequest("Book", predicate: "author.name == 'ann'")).count == 2)
    }

    @Test func newKeysContinueEachHierarchysCounter() throws {
        let store = try Self.store()
        let c = ManagedObjectContext(store: store)
        let bob = try c.insert("Author")
        try bob.setValue("bob", forKey: "name")
        try c.save()
        // Author's counter was at 1 and Book's at 2: each continues its own, in one save too.
        #expect(bob.objectID.primaryKey == 2)
        let b3 = try c.insert("Book")
        try b3.setValue("b3", forKey: "title")
        let cy = try c.insert("Author")
        try cy.setValue("cy", forKey: "name")
        try c.save()
        #expect(b3.objectID.primaryKey == 3)
        #expect(cy.objectID.primaryKey == 3)
        #expect(b3.objectID != cy.objectID)
        let rows = try store.connection.query("SELECT entity, max FROM sift_primary_key ORDER BY entity")
        #expect(rows == [[.text("Author"), .integer(3)], [.text("Book"), .integer(3)]])
    }

    @Test func aVersionCheckReadsEachRowsOwnVersion() throws {
        let store = try Self.store()
        let mine = ManagedObjectContext(store: store)
        let ann = try Self.one(mine, "Author", "name == 'ann'")
        // Another context saves book 1 twice: its version is 2, the author's stays 0.
        let other = ManagedObjectContext(store: store)
        let b1 = try Self.one(other, "Book", "title == 'b1'")
        for t in ["x", "b1"] {
            try b1.setValue(t, forKey: "title")
            try other.save()
        }
        try ann.setValue("anne", forKey: "name")
        try mine.save()  // no conflict: author 1 was not saved since `mine` read it
        #expect(try Self.one(ManagedObjectContext(store: store), "Author", "name == 'anne'").objectID == ann.objectID)
    }

    @Test func aUniquenessCheckSkipsOnlyTheRowsThisSaveChanges() throws {
        let store = try Self.store()
        let c = ManagedObjectContext(store: store)
        let ann = try Self.one(c, "Author", "name == 'ann'")
        try ann.setValue("anne", forKey: "name")  // author 1 changes…
        let copy = try c.insert("Book")
        try copy.setValue("b1", forKey: "title")  // …and stored book 1 has this title
        #expect(throws: StoreError.self) { try c.save() }
        do { try c.save() } catch { #expect(error.kind == .uniqueness) }
    }

    @Test func aMergedDeleteRemovesOnlyThatObject() throws {
        let store = try Self.store()
        let mine = ManagedObjectContext(store: store)
        mine.automaticallyMergesChangesFromParent = true
        let b2 = try Self.one(mine, "Book", "title == 'b2'")
        let other = ManagedObjectContext(store: store)
        try other.delete(try Self.one(other, "Book", "title == 'b1'"))
        try other.save()
        try mine.processPendingChanges()
        #expect(mine.hasGoneObjects)
        // Book 1 is gone; author 1, named by b2's link, is not.
        let author = try #require(try b2.get("author", as: ManagedObject.self))
        #expect(try author.get("name", as: String.self) == "ann")
        #expect(try mine.count(for: FetchRequest("Book")) == 1)
        #expect(try mine.count(for: FetchRequest("Author")) == 1)
    }

    @Test func aDeleteAndAFetchTellTheTwoKey1ObjectsApart() throws {
        let store = try Self.store()
        let c = ManagedObjectContext(store: store)
        let b1 = try Self.one(c, "Book", "title == 'b1'")
        try c.delete(b1)
        // The unsaved delete hides book 1 only.
        #expect(try c.fetch(FetchRequest("Author")).count == 1)
        #expect(try c.fetch(FetchRequest("Book")).count == 1)
        try c.save()
        let fresh = ManagedObjectContext(store: store)
        #expect(try fresh.fetch(FetchRequest("Author")).map { try $0.get("name", as: String.self) } == ["ann"])
        #expect(try fresh.fetch(FetchRequest("Book")).map { try $0.get("title", as: String.self) } == ["b2"])
    }

    @Test func aChildContextKeepsTheTwoApart() throws {
        let store = try Self.store()
        let parent = ManagedObjectContext(store: store)
        let b1 = try Self.one(parent, "Book", "title == 'b1'")
        try parent.delete(b1)
        let child = ManagedObjectContext(parent: parent)
        let ann = try Self.one(child, "Author", "name == 'ann'")
        #expect(ann.objectID.primaryKey == 1)
        // The parent's delete of book 1 does not hide author 1 from the child.
        #expect(!ann.isDeleted)
        #expect(try child.existingObject(with: ann.objectID) === ann)
        #expect(try child.fetch(FetchRequest("Book")).count == 1)
    }
}
