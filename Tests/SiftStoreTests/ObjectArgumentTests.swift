// Managed objects as `%@` arguments: every form Core Data users write (`manager == %@`,
// `manager != %@`, `manager IN %@`, `ANY reports == %@`, `%@ IN reports`, `SELF == %@`) must give
// from a fetch (SQL for stored rows, memory for pending ones) exactly what evaluating the predicate
// in memory over every live object gives: with pending inserts, updates and deletes, an unsaved
// argument, a deleted one, the same object from another context, and again after saving; the same
// for count(for:), batch updates and fetched results controllers.

import Foundation
import SiftEvaluation
import SiftSyntax
import Testing

@testable import SiftStore

@Suite struct ObjectArgumentTests {
    /// People with a manager, and its inverse, the reports.
    static func model() throws -> ManagedObjectModel {
        let person = EntityDescription(
            "Person",
            attributes: [AttributeDescription("name", .string), AttributeDescription("level", .integer64)],
            relationships: [
                RelationshipDescription("manager", to: "Person", inverse: "reports"),
                RelationshipDescription("reports", to: "Person", toMany: true, inverse: "manager"),
            ])
        return try ManagedObjectModel(entities: [person])
    }

    /// People by name; `managers` maps a name to its manager's name.
    func people(_ c: ManagedObjectContext, _ managers: [(String, String?)]) throws -> [String: ManagedObject] {
        var byName: [String: ManagedObject] = [:]
        for (name, _) in managers {
            let p = try c.insert("Person")
            try p.setValue(name, forKey: "name")
            byName[name] = p
        }
        for (name, manager) in managers { try byName[name]!.setValue(manager.map { byName[$0]! }, forKey: "manager") }
        return byName
    }

    func names(_ objects: [ManagedObject]) throws -> [String] {
        try objects.map { try $0.get("name", as: String.self) ?? "" }.sorted()
    }

    /// The names a fetch returns, checked against memory's answer over every live person and
    /// against count(for:); returns them.
    @discardableResult
    func check(_ c: ManagedObjectContext, _ format: String, _ argument: Any?) throws -> [String] {
        let request = try FetchRequest("Person", predicate: format, argument)
        let everyone = try c.fetch(FetchRequest("Person"))
        let oracle = try names(everyone.filter { try request.predicate!.evaluate(with: $0) })
        let fetched = try names(c.fetch(request))
        #expect(fetched == oracle, "\(format)")
        #expect(try c.count(for: request) == oracle.count, "\(format)")
        return fetched
    }

    /// Every form with `argument`.
    func checkAll(_ c: ManagedObjectContext, _ argument: ManagedObject, _ other: ManagedObject) throws {
        for format in [
            "manager == %@", "manager != %@", "%@ == manager", "ANY reports == %@", "%@ IN reports",
            "NONE reports == %@", "SELF == %@", "SELF != %@", "manager == %@ OR name == 'eve'",
            "NOT (manager == %@) AND name != 'eve'",
        ] {
            try check(c, format, argument)
        }
        try check(c, "manager IN %@", [argument, other])
        try check(c, "NOT (manager IN %@)", [argument, other])
        try check(c, "manager.manager == %@", argument)
    }

    @Test func storedAndPendingObjectsAgreeWithMemory() throws {
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: Self.model()))
        let p = try people(
            c, [("ann", nil), ("bob", "ann"), ("cleo", "ann"), ("dan", "bob"), ("eve", nil), ("finn", "dan")])
        try c.save()
        #expect(try check(c, "manager == %@", p["ann"]) == ["bob", "cleo"])
        #expect(try check(c, "%@ IN reports", p["dan"]) == ["bob"])
        #expect(try check(c, "manager IN %@", [p["ann"]!, p["dan"]!]) == ["bob", "cleo", "finn"])
        #expect(try check(c, "manager != %@", p["ann"]) == ["ann", "dan", "eve", "finn"])
        for name in ["ann", "bob", "dan", "eve"] { try checkAll(c, p[name]!, p["cleo"]!) }

        // Pending: an update, an unsaved manager with an unsaved report, a deleted manager.
        try p["dan"]!.setValue(p["ann"]!, forKey: "manager")
        let gus = try c.insert("Person")
        try gus.setValue("gus", forKey: "name")
        try gus.setValue(p["ann"]!, forKey: "manager")
        let hal = try c.insert("Person")
        try hal.setValue("hal", forKey: "name")
        try hal.setValue(gus, forKey: "manager")
        try c.delete(p["bob"]!)
        #expect(try check(c, "manager == %@", p["ann"]) == ["cleo", "dan", "gus"])
        #expect(try check(c, "manager == %@", gus) == ["hal"])
        #expect(try check(c, "manager == %@", p["bob"]).isEmpty)
        for o in [p["ann"]!, gus, hal, p["bob"]!, p["dan"]!] { try checkAll(c, o, gus) }

        try c.save()
        #expect(!gus.objectID.isTemporaryID)
        #expect(try check(c, "manager == %@", gus) == ["hal"])
        for o in [p["ann"]!, gus, hal, p["dan"]!] { try checkAll(c, o, gus) }
    }

    @Test func anObjectOfAnotherContextIsTheSameObject() throws {
        let store = try PersistentStore.inMemory(model: Self.model())
        let c = ManagedObjectContext(store: store)
        let p = try people(c, [("ann", nil), ("bob", "ann"), ("cleo", "bob")])
        try c.save()
        let other = ManagedObjectContext(store: store)
        let ann = try other.object(with: p["ann"]!.objectID)
        #expect(try check(c, "manager == %@", ann) == ["bob"])
        #expect(try check(c, "SELF == %@", ann) == ["ann"])
    }

    @Test func nilStaysNilAndTheArrayMayMixObjectsWithNil() throws {
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: Self.model()))
        let p = try people(c, [("ann", nil), ("bob", "ann"), ("cleo", nil)])
        try c.save()
        #expect(try check(c, "manager == %@", nil) == ["ann", "cleo"])
        // A list mixing objects and nil goes to memory, where nil is in no list.
        #expect(try check(c, "manager IN %@", [p["ann"]!, nil] as [Any?]) == ["bob"])
        #expect(try check(c, "name == %@", p["ann"]).isEmpty)
    }

    @Test func storedObjectsAreComparedInSQLWithTheirKeyBound() throws {
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: Self.model()))
        let p = try people(c, [("ann", nil), ("bob", "ann"), ("cleo", "bob")])
        try c.save()
        let key = "\(p["ann"]!.objectID.primaryKey!)"
        for format in [
            "manager == %@", "manager != %@", "%@ == manager", "manager IN %@", "NOT (manager IN %@)",
            "ANY reports == %@", "NONE reports == %@", "ALL reports != %@", "ANY reports IN %@",
        ] {
            let argument: Any = format.contains("IN") ? [p["ann"]!] : p["ann"]!
            let plan = try c.explain(try FetchRequest("Person", predicate: format, argument))
            #expect(plan.residualPredicate == nil, "\(format)")
            #expect(plan.bindings.contains(key), "\(format): \(plan.sql) \(plan.bindings)")
            #expect(!plan.sql.contains("sift://"), "\(format)")
        }
        // An unsaved object has no row: no stored row matches it, and SQL needs no parameter for it.
        let dan = try c.insert("Person")
        let plan = try c.explain(try FetchRequest("Person", predicate: "manager == %@", dan))
        #expect(plan.residualPredicate == nil && plan.bindings.isEmpty)
    }

    @Test func thePrintedPredicateShowsTheObjectsID() throws {
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: Self.model()))
        let ann = try c.insert("Person")
        let unsaved = try FetchRequest("Person", predicate: "manager == %@", ann)
        #expect(unsaved.predicate?.description == "manager == <\(ann.objectID.uriRepresentation.absoluteString)>")
        try c.save()
        let saved = try FetchRequest("Person", predicate: "manager IN %@", [ann])
        #expect(saved.predicate?.description == "manager IN {<\(ann.objectID.uriRepresentation.absoluteString)>}")
        #expect(ann.objectID.uriRepresentation.absoluteString.hasSuffix("/Person/p\(ann.objectID.primaryKey!)"))
    }

    @Test func batchUpdatesAndControllersSelectTheSameObjects() throws {
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: Self.model()))
        let p = try people(c, [("ann", nil), ("bob", "ann"), ("cleo", "ann"), ("dan", "bob")])
        try c.save()
        var update = BatchUpdateRequest(
            "Person", predicate: try SiftPredicate(format: "manager == %@", arguments: [p["ann"]!]))
        update.propertiesToUpdate = ["level": BatchUpdateRequest.NewValue.constant(.integer(2))]
        let result = try c.execute(update)
        #expect(Set(result.objectIDs) == [p["bob"]!.objectID, p["cleo"]!.objectID])

        var request = try FetchRequest("Person", predicate: "ANY reports == %@", p["dan"]!)
        request.sortDescriptors = [try SiftSortDescriptor("name")]
        let controller = try FetchedResultsController(fetchRequest: request, context: c)
        try controller.performFetch()
        #expect(try names(controller.fetchedObjects) == ["bob"])
        try p["cleo"]!.setValue([p["dan"]!], forKey: "reports")
        try c.processPendingChanges()
        #expect(try names(controller.fetchedObjects) == ["cleo"])
    }
}
