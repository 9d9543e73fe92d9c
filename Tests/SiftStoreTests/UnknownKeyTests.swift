// Unknown keys fail before any row is read (issue 27): in the predicate (also on an empty store,
// behind an AND arm that rejects every row, in a batch delete), through relationships and
// subqueries, in sort keys, properties, group-by keys, aggregates and batch-update keys, each with
// the closest key names and a location in its own text; open and document entities keep memory's
// rule that a missing key is nil. Also `@count.key`, which counts the non-nil values.

import Foundation
import SiftEvaluation
import SiftStoreTestSupport
import SiftSyntax
import Testing

@testable import SiftStore

@Suite struct UnknownKeyTests {
    func empty() throws -> ManagedObjectContext {
        ManagedObjectContext(store: try PersistentStore.inMemory(model: try Fixtures.companyModel()))
    }

    /// The store error `body` throws (recording an issue when it throws none or another kind).
    func failure(_ body: () throws -> Void) -> StoreError? {
        do {
            try body()
            Issue.record("no error")
        } catch let e as StoreError {
            return e
        } catch {
            Issue.record("\(error)")
        }
        return nil
    }

    @Test func misspeltKeyFailsOnAnEmptyStoreWithTheClosestKey() throws {
        let c = try empty()
        let r = try FetchRequest("Person", predicate: "agee > 5")
        for run in [
            { _ = try c.fetch(r) }, { _ = try c.count(for: r) }, { _ = try c.fetchObjectIDs(r) },
            { _ = try c.explain(r) },
            { _ = try c.fetchDictionaries(r) },
        ] as [() throws -> Void] {
            let e = try #require(failure(run))
            #expect(e.kind == .unknownKey && e.id == "unknown-key")
            #expect(e.message == "Person has no key 'agee'; did you mean 'age'?")
            #expect(e.location == SourceLocation(line: 1, column: 1))
        }
    }

    @Test func anEarlierArmThatRejectsEveryRowDoesNotHideTheKey() throws {
        let c = try empty()
        let p = try c.insert("Person")
        try p.setValue("Ann", forKey: "name")
        try p.setValue(40, forKey: "age")
        try c.save()
        let r = try FetchRequest("Person", predicate: "age < 3 AND agee > 5")
        let e = try #require(failure { _ = try c.fetch(r) })
        #expect(e.kind == .unknownKey)
        #expect(e.location == SourceLocation(line: 1, column: 13))
        #expect(e.annotated.hasSuffix("age < 3 AND agee > 5\n            ^~~~"), "\(e.annotated)")
        // A batch delete with it deletes nothing and throws.
        let d = try #require(failure { _ = try c.execute(try BatchDeleteRequest("Person", predicate: "agee > 5")) })
        #expect(d.kind == .unknownKey)
        #expect(try c.count(for: FetchRequest("Person")) == 1)
    }

    @Test func keyPathsAreCheckedPerStepThroughRelationshipsAndSubqueries() throws {
        let c = try empty()
        let cases: [(String, String, Int)] = [
            ("address.cty == 'Oslo'", "Address has no key 'cty'; did you mean 'city'?", 9),
            ("ANY pets.specis == 'cat'", "Pet has no key 'specis'; did you mean 'species'?", 10),
            ("SUBQUERY(pets, $p, $p.legz > 2).@count > 0", "Pet has no key 'legz'; did you mean 'legs'?", 23),
            (
                "projects.@count > 0 AND ANY projects.titel == 'x'",
                "Project has no key 'titel'; did you mean 'title'?", 38
            ),
            ("zzzzzz == 1", "Person has no key 'zzzzzz'", 1),
        ]
        for (predicate, message, column) in cases {
            let e = try #require(failure { _ = try c.fetch(try FetchRequest("Person", predicate: predicate)) })
            #expect(e.message == message, "\(predicate)")
            #expect(e.location?.column == column, "\(predicate): \(e)")
        }
        // Keys that exist, an attribute's own keys, a sub-entity's key on its parent and `$VAR`
        // paths are not the check's to refuse.
        for predicate in [
            "address.city == 'Oslo' AND ANY pets.legs > 2", "SUBQUERY(pets, $p, $p.name == name).@count == 0",
            "pets.@sum.legs > 3", "$x.whatever == nil",
        ] {
            var r = try FetchRequest("Person", predicate: predicate)
            r.variables = ["x": .null]
            #expect(try c.fetch(r).isEmpty, "\(predicate)")
        }
        #expect(try c.fetch(try FetchRequest("Animal", predicate: "species == 'cat'")).isEmpty)
    }

    @Test func sortPropertiesGroupByAndAggregatesPointIntoTheirOwnText() throws {
        let c = try empty()
        var sorted = try FetchRequest("Person", predicate: "age > 1")
        sorted.sortDescriptors = [try SiftSortDescriptor("address.cty")]
        let s = try #require(failure { _ = try c.fetch(sorted) })
        #expect(s.kind == .unknownKey && s.source == "address.cty" && s.location?.column == 9)

        let dictionaries = FetchRequest("Person")
        var properties = dictionaries
        properties.propertiesToFetch = ["name", "salry"]
        let p = try #require(failure { _ = try c.fetchDictionaries(properties) })
        #expect(p.message == "Person has no key 'salry'; did you mean 'salary'?" && p.source == "salry")

        var grouped = dictionaries
        grouped.propertiesToGroupBy = ["nme"]
        let g = try #require(failure { _ = try c.fetchDictionaries(grouped) })
        #expect(g.kind == .unknownKey && g.source == "nme")

        var aggregated = dictionaries
        aggregated.aggregates = [try FetchRequest.Aggregate(parsing: "total=@sum.salry")]
        let a = try #require(failure { _ = try c.fetchDictionaries(aggregated) })
        #expect(a.kind == .unknownKey && a.source == "total=@sum.salry")
        #expect(a.annotated.hasSuffix("total=@sum.salry\n           ^~~~~"), "\(a.annotated)")
    }

    @Test func batchUpdateKeysAndExpressionsAreChecked() throws {
        let c = try empty()
        var bad = try BatchUpdateRequest("Person", predicate: "TRUEPREDICATE")
        bad.propertiesToUpdate = ["salry": .constant(.integer(1))]
        let k = try #require(failure { _ = try c.execute(bad) })
        #expect(k.kind == .unknownKey && k.message.hasSuffix("; did you mean 'salary'?"), "\(k)")
        bad.propertiesToUpdate = ["salary": .expression("salry * 2")]
        let x = try #require(failure { _ = try c.execute(bad) })
        #expect(x.kind == .unknownKey && x.source == "salry * 2" && x.location?.column == 1)
    }

    @Test func anExpressionThatRaisesNamesTheObjectAndItsText() throws {
        let c = try empty()
        let p = try c.insert("Person")
        try p.setValue("Ann", forKey: "name")
        try c.save()
        var update = try BatchUpdateRequest("Person", predicate: "TRUEPREDICATE")
        update.propertiesToUpdate = ["age": .expression("age + 1")]
        let e = try #require(failure { _ = try c.execute(update) })
        #expect(e.kind == .evaluation)
        #expect(e.message == "\(p.objectID): + needs numbers, got nil in 'age + 1'", "\(e)")
        #expect(e.source == "age + 1" && e.location != nil)
        // A sort key (sorted in memory) and a property that raise name the object too.
        var sorted = FetchRequest("Person")
        sorted.sortDescriptors = [try SiftSortDescriptor("name + 1")]
        let s = try #require(failure { _ = try c.fetch(sorted) })
        #expect(s.message.hasPrefix("\(p.objectID): + needs numbers") && s.source == "name + 1", "\(s)")
        var properties = FetchRequest("Person")
        properties.propertiesToFetch = ["age * 2"]
        let d = try #require(failure { _ = try c.fetchDictionaries(properties) })
        #expect(d.message == "\(p.objectID): * needs numbers, got nil in 'age * 2'", "\(d)")
    }

    @Test func openAndDocumentEntitiesReadNilForAMissingKey() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Doc", attributes: [AttributeDescription("n", .integer64)], open: true)
        ])
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: model))
        let d = try c.insert("Doc")
        try d.setValue(1, forKey: "n")
        try c.save()
        var r = try FetchRequest("Doc", predicate: "nosuchkey == nil AND n == 1")
        r.sortDescriptors = [try SiftSortDescriptor("other")]
        #expect(try c.fetch(r).count == 1)
        let documents = ManagedObjectContext(
            store: try PersistentStore.inMemory(model: try DocumentEntityTests.model()))
        let o = try documents.insert("Person")
        try o.setDocument(.dictionary(["name": .string("Ann")]))
        try documents.save()
        #expect(try documents.fetch(try FetchRequest("Person", predicate: "nosuchkey == nil")).count == 1)
    }

    @Test func countOfAKeyCountsItsNonNilValuesOnEveryPath() throws {
        let c = try empty()
        for (name, salary) in [("Ann", 10.0), ("Bob", nil), ("Cy", 30.0)] as [(String, Double?)] {
            let p = try c.insert("Person")
            try p.setValue(name, forKey: "name")
            try p.setValue(salary, forKey: "salary")
        }
        let parsed = try FetchRequest.Aggregate(parsing: "n=@count.salary")
        #expect(parsed.function == .count && parsed.keyPath == "salary")
        var r = FetchRequest("Person")
        r.aggregates = [parsed]
        /// Memory's count: the objects the fetch returns whose salary is not nil.
        func memory() throws -> Int64 {
            Int64(try c.fetch(FetchRequest("Person")).filter { !(try $0.storeValue(forKey: "salary")).isNull }.count)
        }
        // Pending (nothing saved yet), saved, then saved with pending changes on top.
        #expect(try c.fetchDictionaries(r) == [["n": .integer(try memory())]] && (try memory()) == 2)
        try c.save()
        #expect(try c.fetchDictionaries(r) == [["n": .integer(2)]])
        let more = try c.insert("Person")
        try more.setValue("Di", forKey: "name")
        try more.setValue(5.0, forKey: "salary")
        #expect(try c.fetchDictionaries(r) == [["n": .integer(try memory())]] && (try memory()) == 3)
        var grouped = r
        grouped.propertiesToGroupBy = ["name"]
        let rows = try c.fetchDictionaries(grouped)
        #expect(rows.first { $0["name"] == .string("Bob") }?["n"] == .integer(0))
        #expect(rows.first { $0["name"] == .string("Ann") }?["n"] == .integer(1))
    }
}
