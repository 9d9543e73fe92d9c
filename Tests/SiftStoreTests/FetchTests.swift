// Fetch requests beyond the differential test: the SQL/memory split and `explain`, sub-entities,
// sorting through to-one relationships with a residual, limits with pending changes, every
// result type with pending changes (dictionaries, distinct, group-by with aggregates, counts),
// batched faults and prefetching, and batch update / delete with their rules.

import Foundation
import SiftEvaluation
import SiftStoreTestSupport
import SiftSyntax
import Testing

@testable import SiftStore

@Suite struct FetchTests {
    /// Six people in three cities, with pets; saved.
    func populated() throws -> ManagedObjectContext {
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: try Fixtures.companyModel()))
        var cities: [String: ManagedObject] = [:]
        for city in ["Oslo", "São Paulo", "Zürich"] {
            let a = try c.insert("Address")
            try a.setValue(city, forKey: "city")
            cities[city] = a
        }
        let people: [(String, Int?, String?, Double)] = [
            ("Ann", 41, "Oslo", 10), ("bob", 17, "São Paulo", 20), ("Émile", nil, "Zürich", 30),
            ("Dan", 66, nil, 40), ("eve", 30, "Oslo", 50), ("Fay", 30, "São Paulo", 60),
        ]
        for (name, age, city, salary) in people {
            let p = try c.insert("Person")
            try p.setValue(name, forKey: "name")
            try p.setValue(age, forKey: "age")
            try p.setValue(salary, forKey: "salary")
            try p.setValue(city.flatMap { cities[$0] }, forKey: "address")
            if let age, age > 20 {
                let pet = try c.insert("Pet")
                try pet.setValue("\(name)'s pet", forKey: "name")
                try pet.setValue(age % 2 == 0 ? 4 : 2, forKey: "legs")
                try pet.setValue(p, forKey: "owner")
            }
        }
        try c.save()
        return c
    }

    func names(_ objects: [ManagedObject]) throws -> [String] {
        try objects.map { try $0.get("name", as: String.self) ?? "?" }
    }

    @Test func residualIsEvaluatedInMemoryAndSortingStaysCorrect() throws {
        let c = try populated()
        var r = try FetchRequest("Person", predicate: "age >= 18 AND FUNCTION(name, 'length') > 2")
        var registry = FunctionRegistry()
        registry.register("length") { target, _ in
            guard case .string(let s) = target else { return .null }
            return .integer(Int64(s.count))
        }
        r.predicate = try SiftPredicate(
            format: "age >= 18 AND FUNCTION(name, 'length') > 2", arguments: [],
            options: EvaluationOptions(functions: registry))
        r.sortDescriptors = [
            try SiftSortDescriptor("address.city", options: .caseInsensitive),
            try SiftSortDescriptor("name", ascending: false),
        ]
        r.fetchLimit = 3
        let e = try c.explain(r)
        #expect(e.residualPredicate == #"FUNCTION(name, "length") > 2"#)
        #expect(e.sql.contains("WHERE"))
        #expect(!e.queryPlan.isEmpty)
        // Adults with names longer than 2: Ann (Oslo), eve (Oslo), Fay (São Paulo), Dan (nil city).
        #expect(try names(c.fetch(r)) == ["Dan", "eve", "Ann"])
        r.fetchOffset = 2
        #expect(try names(c.fetch(r)) == ["Ann", "Fay"])
        #expect(try c.count(for: r) == 2)
    }

    @Test func subEntitiesAndAbstractParents() throws {
        let c = try populated()
        #expect(try c.count(for: FetchRequest("Animal")) == 4)
        #expect(try c.count(for: FetchRequest("Pet")) == 4)
        var own = FetchRequest("Animal")
        own.includesSubentities = false
        #expect(try c.count(for: own) == 0)
        let pets = try c.fetch(try FetchRequest("Animal", predicate: "legs == 4"))
        #expect(pets.allSatisfy { $0.entityName == "Pet" } && pets.count == 3)  // Dan (66), eve and Fay (30)
    }

    @Test func pendingChangesTakePartInEveryResultType() throws {
        let c = try populated()
        let fay = try #require(try c.fetch(try FetchRequest("Person", predicate: "name == 'Fay'")).first)
        try fay.setValue(12, forKey: "age")  // no longer an adult
        let gus = try c.insert("Person")
        try gus.setValue("Gus", forKey: "name")
        try gus.setValue(50, forKey: "age")
        try gus.setValue(70.0, forKey: "salary")
        let ann = try #require(try c.fetch(try FetchRequest("Person", predicate: "name == 'Ann'")).first)
        try c.delete(ann)
        // A change to a related object: eve's city (Oslo, shared with Ann) becomes Bergen.
        let oslo = try #require(try c.fetch(try FetchRequest("Address", predicate: "city == 'Oslo'")).first)
        try oslo.setValue("Bergen", forKey: "city")

        var adults = try FetchRequest("Person", predicate: "age >= 18")
        adults.sortDescriptors = [try SiftSortDescriptor("salary", ascending: false)]
        #expect(try names(c.fetch(adults)) == ["Gus", "eve", "Dan"])
        #expect(try c.count(for: adults) == 3)
        #expect(try c.fetchObjectIDs(adults) == [gus.objectID] + (try c.fetch(adults)).dropFirst().map(\.objectID))
        #expect(try c.count(for: try FetchRequest("Person", predicate: "address.city == 'Bergen'")) == 1)
        #expect(try c.count(for: try FetchRequest("Person", predicate: "address.city == 'Oslo'")) == 0)

        var sums = try FetchRequest("Person", predicate: "age != nil")
        sums.propertiesToGroupBy = ["address.city"]
        sums.aggregates = [
            try FetchRequest.Aggregate(parsing: "n=@count"), try FetchRequest.Aggregate(parsing: "total=@sum.salary"),
            try FetchRequest.Aggregate(parsing: "oldest=@max.age"),
        ]
        sums.sortDescriptors = [try SiftSortDescriptor("address.city")]
        let groups = try c.fetchDictionaries(sums)
        // Sorted by city: nil (Dan, Gus), Bergen (eve), São Paulo (bob, Fay).
        #expect(groups.map { $0["address.city"] ?? .null } == [.null, .string("Bergen"), .string("São Paulo")])
        #expect(groups.map { $0["n"] } == [.integer(2), .integer(1), .integer(2)])
        #expect(groups[0]["total"].map { $0.isEqual(to: .double(110)) } == true)
        #expect(groups[2]["oldest"].map { $0.isEqual(to: .integer(17)) } == true)

        var cities = FetchRequest("Person")
        cities.propertiesToFetch = ["address.city"]
        cities.returnsDistinctResults = true
        #expect(try c.fetchDictionaries(cities).count == 4)  // Bergen, São Paulo, Zürich, nil

        // Ignoring pending changes gives the stored answer.
        adults.includesPendingChanges = false
        #expect(try c.count(for: adults) == 4)
        try c.save()
        adults.includesPendingChanges = true
        #expect(try names(ManagedObjectContext(store: c.store).fetch(adults)) == ["Gus", "eve", "Dan"])
    }

    @Test func batchedFaultsAndPrefetching() throws {
        let c = try populated()
        let fresh = ManagedObjectContext(store: c.store)
        var r = FetchRequest("Person")
        r.fetchBatchSize = 2
        let people = try fresh.fetch(r)
        #expect(people.count == 6)
        #expect(people.allSatisfy { $0.isFault })
        _ = try people[2].get("name", as: String.self)
        #expect(!people[2].isFault && !people[3].isFault)  // its batch
        #expect(people[0].isFault && people[4].isFault)
        let other = ManagedObjectContext(store: c.store)
        var p = FetchRequest("Person")
        p.relationshipKeyPathsForPrefetching = ["address", "pets"]
        let withPets = try other.fetch(p)
        let addresses = other.registeredObjects.filter { $0.entityName == "Address" }
        #expect(addresses.count == 3 && addresses.allSatisfy { !$0.isFault })
        #expect(withPets.allSatisfy { $0.links[$0.info.entity.relationshipIndex["pets"]!] != nil })
        // The prefetched collections are the ones a lazy load reads.
        let lazy = ManagedObjectContext(store: c.store)
        for o in withPets {
            let prefetched = try (o.get("pets", as: [ManagedObject].self) ?? []).map(\.objectID)
            let loaded = try (lazy.object(with: o.objectID).get("pets", as: [ManagedObject].self) ?? []).map(\.objectID)
            #expect(prefetched == loaded)
        }
        #expect(withPets.map { ($0["pets"]?.collectionElements?.count ?? -1) }.reduce(0, +) == 4)
    }

    @Test func batchUpdateWithExpressionsAndRules() throws {
        let c = try populated()
        var raise = try BatchUpdateRequest("Person", predicate: "address.city BEGINSWITH[cd] 'sao'")
        raise.propertiesToUpdate = ["salary": .expression("salary * 1.5"), "age": .constant(.integer(99))]
        let result = try c.execute(raise)
        #expect(result.count == 2 && !result.deleted)
        let fresh = ManagedObjectContext(store: c.store)
        let paid = try fresh.fetch(try FetchRequest("Person", predicate: "age == 99"))
        #expect(Set(try paid.map { try $0.get("salary", as: Double.self) ?? 0 }) == [30, 90])
        // The context that holds the objects sees the change after merging.
        let bob = try #require(try c.fetch(try FetchRequest("Person", predicate: "name == 'bob'")).first)
        #expect(try bob.get("age", as: Int.self) == 17)
        try c.mergeChanges(from: result)
        #expect(try bob.get("age", as: Int.self) == 99)
        // A value that breaks a rule refuses the whole batch.
        var bad = BatchUpdateRequest("Person")
        bad.propertiesToUpdate = ["age": .constant(.integer(500))]
        #expect(throws: StoreError.self) { try c.execute(bad) }
        #expect(
            try ManagedObjectContext(store: c.store).count(for: try FetchRequest("Person", predicate: "age == 500"))
                == 0)
        var dup = BatchUpdateRequest("Person")
        dup.propertiesToUpdate = ["email": .constant(.string("same@x.org"))]
        do {
            _ = try c.execute(dup)
            Issue.record("duplicate emails written")
        } catch { #expect(error.kind == .uniqueness) }
        #expect(
            try ManagedObjectContext(store: c.store).count(for: try FetchRequest("Person", predicate: "email != nil"))
                == 0)
    }

    @Test func batchDeleteHonoursDeleteRules() throws {
        let c = try populated()
        // Deny: an address with residents cannot go; nothing is deleted.
        do {
            _ = try c.execute(try BatchDeleteRequest("Address", predicate: "city == 'Oslo'"))
            Issue.record("deny ignored")
        } catch {
            #expect(error.kind == .deleteDenied)
        }
        #expect(try ManagedObjectContext(store: c.store).count(for: FetchRequest("Address")) == 3)
        // Cascade: people aged 30 take their pets with them; nullify: their addresses lose them.
        let result = try c.execute(try BatchDeleteRequest("Person", predicate: "age == 30"))
        #expect(result.objectIDs.filter { $0.entityName == "Person" }.count == 2)
        #expect(result.objectIDs.filter { $0.entityName == "Pet" }.count == 2)
        let fresh = ManagedObjectContext(store: c.store)
        #expect(try fresh.count(for: FetchRequest("Person")) == 4)
        #expect(try fresh.count(for: FetchRequest("Pet")) == 2)
        #expect(try fresh.count(for: try FetchRequest("Address", predicate: "residents.@count == 0")) == 0)
        try c.mergeChanges(from: result)
        #expect(try c.count(for: FetchRequest("Person")) == 4)
    }
}
