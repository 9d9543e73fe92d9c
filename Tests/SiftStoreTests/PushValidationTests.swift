// A child's save validates what it pushes as the parent's save would (issue 29): a uniqueness
// constraint against the parent's other pending objects, a required to-one whose target the
// parent deleted, a to-many whose merged members pass its maximum. A failing push throws the
// error the parent's save would, naming the object and the key, and leaves both contexts as
// they were.

import Foundation
import Testing

@testable import SiftStore

@Suite struct PushValidationTests {
    /// Tags with a unique name and at most two notes; notes that need a tag.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Tag", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("notes", to: "Note", toMany: true, inverse: "tag", maxCount: 2)
                ],
                uniquenessConstraints: [["name"]]),
            EntityDescription(
                "Note", attributes: [AttributeDescription("text", .string)],
                relationships: [RelationshipDescription("tag", to: "Tag", inverse: "notes", optional: false)]),
        ])
    }

    func tag(_ c: ManagedObjectContext, _ name: String) throws -> ManagedObject {
        let t = try c.insert("Tag")
        try t.setValue(name, forKey: "name")
        return t
    }

    func note(_ c: ManagedObjectContext, _ text: String, on t: ManagedObject) throws -> ManagedObject {
        let n = try c.insert("Note")
        try n.setValue(text, forKey: "text")
        try n.setValue(t, forKey: "tag")
        return n
    }

    /// The error `c.save()` throws (it must throw).
    func failure(saving c: ManagedObjectContext) -> StoreError? {
        do { try c.save() } catch { return error }
        Issue.record("the push went through")
        return nil
    }

    @Test func anInsertCollidingWithTheParentsPendingInsert() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let parent = ManagedObjectContext(store: s)
        let child = ManagedObjectContext(parent: parent)
        let mine = try tag(parent, "a")
        let theirs = try tag(child, "a")
        // The child alone sees nothing wrong: its own save checks only its own objects.
        let e = try #require(failure(saving: child))
        #expect(e.kind == .uniqueness && e.message.contains("\(theirs.objectID)") && e.message.contains("name"))
        #expect(e.message.contains("\(mine.objectID)"))
        // Neither context changed: the parent holds one insert, the child still its own.
        #expect(parent.insertedObjects == [mine] && theirs.isInserted && child.hasChanges)
        #expect(throws: StoreError.self) { try parent.existingObject(with: theirs.objectID) }
        // Renamed, the push goes through and the parent saves both.
        try theirs.setValue("b", forKey: "name")
        try child.save()
        try parent.save()
        #expect(try ManagedObjectContext(store: s).count(for: FetchRequest("Tag")) == 2)
    }

    @Test func anEditCollidingWithTheParentsPendingEdit() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let parent = ManagedObjectContext(store: s)
        let x = try tag(parent, "x")
        let y = try tag(parent, "y")
        try parent.save()
        let child = ManagedObjectContext(parent: parent)
        let cy = try child.existingObject(with: y.objectID)
        try x.setValue("z", forKey: "name")  // pending in the parent
        try cy.setValue("z", forKey: "name")
        let e = try #require(failure(saving: child))
        #expect(e.kind == .uniqueness && e.message.contains("\(y.objectID)") && e.message.contains("name"))
        #expect(try y.get("name", as: String.self) == "y" && !y.isUpdated)
        #expect(try cy.get("name", as: String.self) == "z" && cy.isUpdated)
    }

    @Test func aRequiredTargetTheParentDeleted() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let setup = ManagedObjectContext(store: s)
        let n0 = try note(setup, "hello", on: try tag(setup, "t"))
        try setup.save()
        // The parent holds the tag only; the child reads the note from the store.
        let parent = ManagedObjectContext(store: s)
        let t = try #require(
            try n0.get("tag", as: ManagedObject.self).map { try parent.existingObject(with: $0.objectID) })
        let child = ManagedObjectContext(parent: parent)
        let cn = try child.existingObject(with: n0.objectID)
        try cn.setValue("edited", forKey: "text")
        try parent.delete(t)
        // In the child's view the note still has its tag; in the parent's it would have none.
        let e = try #require(failure(saving: child))
        #expect(
            e.kind == .validation && e.message.contains("\(n0.objectID)") && e.message.contains("'tag': is required"))
        // The parent still has only its delete; the child keeps its edit.
        let n = try parent.existingObject(with: n0.objectID)
        #expect(t.isDeleted && !n.isUpdated && parent.updatedObjects.isEmpty)
        #expect(try n.get("text", as: String.self) == "hello")
        #expect(try cn.isUpdated && cn.get("text", as: String.self) == "edited")
        // Once the parent takes its delete back, the same push goes through.
        parent.rollback()
        try child.save()
        #expect(try n.get("text", as: String.self) == "edited" && n.isUpdated)
    }

    @Test func membersMergedPastTheMaximum() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let parent = ManagedObjectContext(store: s)
        let t = try tag(parent, "t")
        _ = try note(parent, "one", on: t)
        try parent.save()
        let child = ManagedObjectContext(parent: parent)
        child.mergePolicy = .mergeByPropertyObjectTrump
        let ct = try child.existingObject(with: t.objectID)
        #expect(try ct.get("notes", as: [ManagedObject].self)?.count == 1)
        _ = try note(parent, "two", on: t)  // the parent's tag has two notes now
        let three = try note(child, "three", on: ct)  // two in the child's view too
        // Merged member by member, the tag would hold three.
        let e = try #require(failure(saving: child))
        #expect(e.kind == .validation && e.message.contains("\(t.objectID)") && e.message.contains("'notes'"))
        #expect(try t.get("notes", as: [ManagedObject].self)?.count == 2 && parent.insertedObjects.count == 1)
        #expect(three.isInserted && ct.isUpdated)
        #expect(throws: StoreError.self) { try parent.existingObject(with: three.objectID) }
    }
}
