// Typed managed objects: subclasses registered per entity, made by the context wherever it makes
// an object (insert, fetch, faults, relationship targets, object(with:), child contexts), typed
// properties of every attribute type and relationship kind, typed fetch requests, inheritance
// following the entity hierarchy, undo, registration errors, and what a typed read or write does
// when it cannot be fulfilled (the default, the error kept for the next save, `throwing`).

import Foundation
import Testing

@testable import SiftStore

// The classes a user (or `sift store codegen`) writes for `TypedObjectTests.model`.

class TPerson: ManagedObject {
    var name: String? {
        get { attribute("name") }
        set { setAttribute(newValue, "name") }
    }
}

class TEmployee: TPerson {
    var salary: Double {
        get { attribute("salary", default: 0) }
        set { setAttribute(newValue, "salary") }
    }
    var team: TTeam? {
        get { toOne("team") }
        set { setToOne(newValue, "team") }
    }
    var boss: TManager? {
        get { toOne("boss") }
        set { setToOne(newValue, "boss") }
    }
}

final class TManager: TEmployee {
    var reports: Set<TEmployee> {
        get { toMany("reports") }
        set { setToMany(newValue, "reports") }
    }
}

final class TTeam: ManagedObject {
    var title: String {
        get { attribute("title", default: "untitled") }
        set { setAttribute(newValue, "title") }
    }
    var members: Set<TEmployee> {
        get { toMany("members") }
        set { setToMany(newValue, "members") }
    }
    /// Declared as an Employee: a manager's row must still come back as a TManager.
    var lead: TEmployee? {
        get { toOne("lead") }
        set { setToOne(newValue, "lead") }
    }
    var steps: [TStep] {
        get { orderedToMany("steps") }
        set { setOrderedToMany(newValue, "steps") }
    }
}

final class TStep: ManagedObject {
    var label: String? {
        get { attribute("label") }
        set { setAttribute(newValue, "label") }
    }
}

/// Every attribute type, optional and not.
final class TSample: ManagedObject {
    var i16: Int16 {
        get { attribute("i16", default: 0) }
        set { setAttribute(newValue, "i16") }
    }
    var i32: Int32? {
        get { attribute("i32") }
        set { setAttribute(newValue, "i32") }
    }
    var i64: Int64 {
        get { attribute("i64", default: 7) }
        set { setAttribute(newValue, "i64") }
    }
    var int: Int? {
        get { attribute("i64") }
        set { setAttribute(newValue, "i64") }
    }
    var double: Double? {
        get { attribute("double") }
        set { setAttribute(newValue, "double") }
    }
    var float: Float {
        get { attribute("float", default: 0) }
        set { setAttribute(newValue, "float") }
    }
    var decimal: Decimal? {
        get { attribute("decimal") }
        set { setAttribute(newValue, "decimal") }
    }
    var string: String? {
        get { attribute("string") }
        set { setAttribute(newValue, "string") }
    }
    var flag: Bool {
        get { attribute("flag", default: false) }
        set { setAttribute(newValue, "flag") }
    }
    var date: Date? {
        get { attribute("date") }
        set { setAttribute(newValue, "date") }
    }
    var data: Data? {
        get { attribute("data") }
        set { setAttribute(newValue, "data") }
    }
    var uuid: UUID? {
        get { attribute("uuid") }
        set { setAttribute(newValue, "uuid") }
    }
    var url: URL? {
        get { attribute("url") }
        set { setAttribute(newValue, "url") }
    }
    var tags: [String]? {
        get { attribute("tags") }
        set { setAttribute(newValue, "tags") }
    }
    var dynamic: Value? {
        get { attribute("dynamic") }
        set { setAttribute(newValue, "dynamic") }
    }
    var point: TPoint? {
        get { transformable("point") }
        set { setTransformable(newValue, "point") }
    }
}

struct TPoint: Codable, Equatable {
    var x: Int
    var y: Int
}

@Suite struct TypedObjectTests {
    static let classes: [ManagedObject.Type] = [
        TPerson.self, TEmployee.self, TManager.self, TTeam.self, TStep.self, TSample.self,
    ]

    static func entities() -> [EntityDescription] {
        [
            EntityDescription(
                "Person", abstract: true, attributes: [AttributeDescription("name", .string)], className: "TPerson"),
            EntityDescription(
                "Employee", parent: "Person", attributes: [AttributeDescription("salary", .double)],
                relationships: [
                    RelationshipDescription("team", to: "Team", inverse: "members"),
                    RelationshipDescription("boss", to: "Manager", inverse: "reports"),
                ], className: "TEmployee"),
            EntityDescription(
                "Manager", parent: "Employee",
                relationships: [RelationshipDescription("reports", to: "Employee", toMany: true, inverse: "boss")],
                className: "TManager"),
            EntityDescription(
                "Team", attributes: [AttributeDescription("title", .string)],
                relationships: [
                    RelationshipDescription("members", to: "Employee", toMany: true, inverse: "team"),
                    RelationshipDescription("lead", to: "Employee"),
                    RelationshipDescription("steps", to: "Step", toMany: true, ordered: true),
                ], className: "TTeam"),
            EntityDescription("Step", attributes: [AttributeDescription("label", .string)], className: "TStep"),
            EntityDescription(
                "Sample",
                attributes: [
                    AttributeDescription("i16", .integer16, optional: false),
                    AttributeDescription("i32", .integer32), AttributeDescription("i64", .integer64),
                    AttributeDescription("double", .double), AttributeDescription("float", .float),
                    AttributeDescription("decimal", .decimal), AttributeDescription("string", .string),
                    AttributeDescription("flag", .boolean), AttributeDescription("date", .date),
                    AttributeDescription("data", .binary), AttributeDescription("uuid", .uuid),
                    AttributeDescription("url", .uri), AttributeDescription("tags", .string, collection: true),
                    AttributeDescription("dynamic", .dynamic), AttributeDescription("point", .transformable),
                ], className: "TSample"),
        ]
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: entities(), classes: classes)
    }

    static func store() throws -> PersistentStore { try PersistentStore.inMemory(model: try model()) }

    /// A saved team "core" led by manager Ann (salary 9000) with reports Bob (5000) and Cy (4000).
    static func seeded() throws -> PersistentStore {
        let s = try store()
        let c = ManagedObjectContext(store: s)
        let team = try c.insert(TTeam.self)
        team.title = "core"
        let ann = try c.insert(TManager.self)
        ann.name = "Ann"
        ann.salary = 9000
        ann.team = team
        team.lead = ann
        for (name, salary) in [("Bob", 5000.0), ("Cy", 4000.0)] {
            let e = try c.insert(TEmployee.self)
            e.name = name
            e.salary = salary
            e.team = team
            e.boss = ann
        }
        try c.save()
        return s
    }

    @Test func insertsAndFetchesAreInstancesOfTheRegisteredClasses() throws {
        let s = try Self.seeded()
        let c = ManagedObjectContext(store: s)
        let people = try c.fetch(FetchRequest(TEmployee.self, sortDescriptors: [try SiftSortDescriptor("name")]))
        #expect(people.map { $0.name ?? "" } == ["Ann", "Bob", "Cy"])
        #expect(people.map { $0 is TManager } == [true, false, false])
        #expect(people.map(\.salary) == [9000, 5000, 4000])
        // The abstract root's request returns the same objects (uniquing), as their own classes.
        let everyone = try c.fetch(FetchRequest(TPerson.self))
        #expect(Set(everyone.map(ObjectIdentifier.init)) == Set(people.map(ObjectIdentifier.init)))
        let rich = try c.fetch(FetchRequest(TEmployee.self, predicate: "salary > %@", 4500))
        #expect(Set(rich.compactMap(\.name)) == ["Ann", "Bob"])
        // The string API makes the same classes.
        let untyped = try c.fetch(FetchRequest("Team"))
        #expect(untyped.count == 1 && untyped[0] is TTeam)
        #expect(try c.insert("Step") is TStep)
    }

    @Test func relationshipTargetsAndFaultsAreMadeAsTheRowsClass() throws {
        let s = try Self.seeded()
        let c = ManagedObjectContext(store: s)
        let team = try #require(try c.fetch(FetchRequest(TTeam.self)).first)
        // `lead` is declared as an Employee; the row is a Manager's, and the fault knows it.
        let lead = try #require(team.lead)
        #expect(lead is TManager && lead.isFault)
        #expect(lead.name == "Ann")
        let manager = try #require(lead as? TManager)
        #expect(Set(manager.reports.compactMap(\.name)) == ["Bob", "Cy"])
        #expect(manager.reports.allSatisfy { $0.boss === manager && $0.team === team })
        #expect(team.members.count == 3)
        // object(with:) in a fresh context, for an ID of each class.
        let fresh = ManagedObjectContext(store: s)
        #expect(try fresh.object(with: manager.objectID) is TManager)
        #expect(try fresh.object(with: team.objectID) is TTeam)
    }

    @Test func everyAttributeTypeReadsAndWritesTyped() throws {
        let s = try Self.store()
        let c = ManagedObjectContext(store: s)
        let x = try c.insert(TSample.self)
        // Unset: optional properties are nil, the others their default.
        #expect(x.i16 == 0 && x.i32 == nil && x.i64 == 7 && x.double == nil && x.float == 0 && !x.flag)
        #expect(x.tags == nil && x.point == nil && x.dynamic == nil)
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let uuid = UUID()
        x.i16 = -3
        x.i32 = 70_000
        x.int = 1 << 40
        x.double = 2.5
        x.float = 1.5
        x.decimal = Decimal(string: "12.34")
        x.string = "héllo"
        x.flag = true
        x.date = date
        x.data = Data([1, 2, 3])
        x.uuid = uuid
        x.url = URL(string: "https://example.com/a")
        x.tags = ["a", "b"]
        x.dynamic = .integer(5)
        x.point = TPoint(x: 1, y: 2)
        try c.save()
        let reader = ManagedObjectContext(store: s)
        let y = try #require(try reader.fetch(FetchRequest(TSample.self)).first)
        #expect(y.i16 == -3 && y.i32 == 70_000 && y.i64 == 1 << 40 && y.int == 1 << 40)
        #expect(y.double == 2.5 && y.float == 1.5 && y.decimal == Decimal(string: "12.34"))
        #expect(y.string == "héllo" && y.flag && y.date == date && y.data == Data([1, 2, 3]))
        #expect(y.uuid == uuid && y.url == URL(string: "https://example.com/a") && y.tags == ["a", "b"])
        #expect(y.dynamic == .integer(5) && y.point == TPoint(x: 1, y: 2))
        y.string = nil
        y.i32 = nil
        #expect(y.string == nil && y.i32 == nil && reader.accessErrors.isEmpty && reader.hasChanges)
    }

    @Test func orderedToManyKeepsTheOrderGiven() throws {
        let s = try Self.store()
        let c = ManagedObjectContext(store: s)
        let team = try c.insert(TTeam.self)
        #expect(team.title == "untitled" && team.steps.isEmpty)
        let steps = try ["c", "a", "b"].map { (label: String) throws -> TStep in
            let step = try c.insert(TStep.self)
            step.label = label
            return step
        }
        team.steps = steps
        team.steps = [steps[1], steps[0], steps[2]]
        try c.save()
        let reader = ManagedObjectContext(store: s)
        let back = try #require(try reader.fetch(FetchRequest(TTeam.self)).first)
        #expect(back.steps.map { $0.label ?? "" } == ["a", "c", "b"])
    }

    @Test func childContextsMakeTheSameClasses() throws {
        let s = try Self.seeded()
        let parent = ManagedObjectContext(store: s)
        let team = try #require(try parent.fetch(FetchRequest(TTeam.self)).first)
        let child = ManagedObjectContext(parent: parent)
        let childTeam = try #require(try child.object(with: team.objectID) as? TTeam)
        let dee = try child.insert(TManager.self)
        dee.name = "Dee"
        dee.team = childTeam
        #expect(childTeam.members.contains(dee))
        try child.save()
        // The parent's object for the child's insert is a TManager too.
        let pushed = try #require(parent.insertedObjects.first as? TManager)
        #expect(pushed.name == "Dee" && pushed.team === team)
        try parent.save()
        let fresh = ManagedObjectContext(store: s)
        let managers = try fresh.fetch(FetchRequest(TManager.self)).compactMap(\.name)
        #expect(Set(managers) == ["Ann", "Dee"])
    }

    @Test func typedWritesUndo() throws {
        let s = try Self.seeded()
        let c = ManagedObjectContext(store: s)
        let u = SiftUndoManager()
        c.undoManager = u
        let bob = try #require(try c.fetch(FetchRequest(TEmployee.self, predicate: "name == 'Bob'")).first)
        bob.salary = 6000
        try c.processPendingChanges()
        bob.team = nil
        try c.processPendingChanges()
        try u.undo()
        #expect(bob.team?.title == "core" && bob.salary == 6000)
        try u.undo()
        #expect(bob.salary == 5000 && bob.team?.title == "core")
    }

    @Test func aReadOfARowAnotherContextDeletedReturnsTheDefaultAndFailsTheNextSave() throws {
        let s = try Self.seeded()
        let c = ManagedObjectContext(store: s)
        let ids = try c.fetchObjectIDs(FetchRequest(TEmployee.self, predicate: "name == 'Bob'"))
        let bob = try #require(try c.object(with: ids[0]) as? TEmployee)
        #expect(bob.isFault)
        let other = ManagedObjectContext(store: s)
        try other.delete(try other.existingObject(with: ids[0]))
        try other.save()
        #expect(bob.salary == 0 && bob.name == nil)
        #expect(c.accessErrors.map(\.kind) == [.objectNotFound, .objectNotFound])
        #expect(throws: StoreError.self) { try bob.throwing { $0.salary } }
        let team = try #require(try c.fetch(FetchRequest(TTeam.self)).first)
        team.title = "renamed"
        let error = try #require(throws: StoreError.self) { try c.save() }
        #expect(error.kind == .objectNotFound && error.failures.count == 2)
        // The save wrote nothing; the errors were reported once, so the next save goes through.
        #expect(try ManagedObjectContext(store: s).fetch(FetchRequest(TTeam.self)).first?.title == "core")
        #expect(c.accessErrors.isEmpty)
        try c.save()
        #expect(try ManagedObjectContext(store: s).fetch(FetchRequest(TTeam.self)).first?.title == "renamed")
    }

    @Test func aReadOfAnObjectDeletedInTheParentIsKeptForTheChildsSave() throws {
        let s = try Self.seeded()
        let parent = ManagedObjectContext(store: s)
        let bob = try #require(try parent.fetch(FetchRequest(TEmployee.self, predicate: "name == 'Bob'")).first)
        try parent.delete(bob)
        let child = ManagedObjectContext(parent: parent)
        let childBob = try child.object(with: bob.objectID)
        let typed = try #require(childBob as? TEmployee)
        #expect(typed.salary == 0 && typed.name == nil)
        #expect(!child.accessErrors.isEmpty)
        #expect(throws: StoreError.self) { try typed.throwing { $0.name } }
        #expect(throws: StoreError.self) { try child.save() }
        #expect(child.accessErrors.isEmpty)
    }

    @Test func aWriteThatCannotBeMadeChangesNothingAndFailsTheNextSave() throws {
        let s = try Self.seeded()
        let c = ManagedObjectContext(store: s)
        let bob = try #require(try c.fetch(FetchRequest(TEmployee.self, predicate: "name == 'Bob'")).first)
        try c.delete(bob)
        bob.salary = 1
        #expect(c.accessErrors.map(\.kind) == [.invalidOperation])
        #expect(throws: StoreError.self) { try c.save() }
        #expect(try ManagedObjectContext(store: s).count(for: FetchRequest(TEmployee.self)) == 3)
        // An object of another context.
        let other = ManagedObjectContext(store: s)
        let strangers = try other.fetch(FetchRequest(TTeam.self))
        let cy = try #require(try c.fetch(FetchRequest(TEmployee.self, predicate: "name == 'Cy'")).first)
        cy.team = strangers[0]
        #expect(cy.team?.title == "core" && cy.team?.context === c)
        let caught = try #require(throws: StoreError.self) { try cy.throwing { $0.team = strangers[0] } }
        #expect(caught.kind == c.accessErrors.first?.kind)
        #expect(throws: StoreError.self) { try c.save() }
        c.rollback()
        #expect(c.accessErrors.isEmpty)
    }

    @Test func anObjectWhoseContextIsGoneReportsOnlyThroughThrowing() throws {
        let s = try Self.seeded()
        var kept: TTeam?
        do {
            let c = ManagedObjectContext(store: s)
            kept = try c.fetch(FetchRequest(TTeam.self)).first
        }
        let team = try #require(kept)
        // Its values stay readable; its relationships went with the context, and no save is left
        // to fail, so only `throwing` reports what cannot be done.
        #expect(team.title == "core" && team.members.isEmpty)
        team.title = "renamed"
        #expect(team.title == "core")
        let error = try #require(throws: StoreError.self) { try team.throwing { $0.title = "renamed" } }
        #expect(error.kind == .invalidOperation)
        #expect(throws: StoreError.self) { try team.throwing { $0.members } }
    }

    /// The model error registering `classes` gives, if any.
    static func message(_ classes: [ManagedObject.Type]) -> String? {
        do {
            _ = try ManagedObjectModel(entities: Self.entities(), classes: classes)
            return nil
        } catch { return error.message }
    }

    @Test func registrationIsChecked() throws {
        enum Stray { final class Nobody: ManagedObject {} }
        enum Twin { final class TStep: ManagedObject {} }
        enum Wrong { final class TManager: ManagedObject {} }
        #expect(Self.message([Stray.Nobody.self])?.contains("serves no entity") == true)
        #expect(Self.message([TStep.self, Twin.TStep.self])?.contains("entity 'Step' has two classes") == true)
        #expect(Self.message([TEmployee.self, Wrong.TManager.self])?.contains("must be a subclass of") == true)
        // TManager inherits from TEmployee, which may not serve the unrelated Team entity.
        let misplaced = Self.entities().map { e -> EntityDescription in
            var e = e
            if e.name == "Team" { e.className = "TEmployee" }
            if e.name == "Employee" { e.className = "Clerk" }
            return e
        }
        do {
            _ = try ManagedObjectModel(entities: misplaced, classes: [TEmployee.self, TManager.self])
            Issue.record("a class inheriting across the hierarchy was accepted")
        } catch {
            #expect(error.message.contains("not an ancestor"))
        }
        // The same class twice is one registration.
        #expect(Self.message([TStep.self, TStep.self]) == nil)
    }

    @Test func unregisteredClassesAreTypeMismatches() throws {
        // TStep serves entity Step once a model registers it (the name a typed request asks for
        // is process-wide, whichever test ran first); a model without the class makes plain objects.
        _ = try ManagedObjectModel(entities: Self.entities(), classes: [TStep.self])
        let plain = try ManagedObjectModel(entities: Self.entities())
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: plain))
        _ = try c.insert("Step")
        #expect(c.insertedObjects.count == 1 && !(c.insertedObjects[0] is TStep))
        let inserted = try #require(throws: StoreError.self) { try c.insert(TStep.self) }
        #expect(inserted.kind == .typeMismatch && c.insertedObjects.count == 1)
        let fetched = try #require(throws: StoreError.self) { try c.fetch(FetchRequest(TStep.self)) }
        #expect(fetched.kind == .typeMismatch)
    }

    @Test func classNamesAreInTheModelFileButNotInItsVersionHash() throws {
        let typed = try Self.model()
        var entities = Self.entities()
        for i in entities.indices { entities[i].className = nil }
        let plain = try ManagedObjectModel(entities: entities)
        #expect(typed.versionHash == plain.versionHash)
        #expect(typed.jsonString.contains("\"className\" : \"TManager\""))
        let reread = try ManagedObjectModel(json: Data(typed.jsonString.utf8), classes: Self.classes)
        #expect(reread.entity(named: "Manager")?.className == "TManager")
    }
}
