// An element read by its number (`kids[1]`) in a typed store: memory raises past the last element
// (and on a negative number), where SQL's subquery reads NULL, so a predicate that also follows a
// relationship is judged in memory (the row guard has no row alone to hand it). Found by the store
// differential over an ordered many-to-many: `mix == {'Ann'} OR kids[1].address.city ==[n] -1`
// answered no rows where memory raises; typed attributes did the same (`kids[1].age == nil`
// selected a record of one kid). Every request form gives memory's rows or memory's error.

import Foundation
import SiftEvaluation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct ElementIndexTests {
    /// Records with 0, 1 and 3 kids (an ordered to-many, or an ordered many-to-many) and tags.
    static func context(joined: Bool) throws -> ManagedObjectContext {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Record",
                attributes: [
                    AttributeDescription("name", .string), AttributeDescription("tags", .string, collection: true),
                ],
                relationships: [
                    RelationshipDescription(
                        "kids", to: "Kid", toMany: true, ordered: true, inverse: joined ? "parents" : "parent")
                ]),
            EntityDescription(
                "Kid", attributes: [AttributeDescription("age", .integer64)],
                relationships: [
                    joined
                        ? RelationshipDescription("parents", to: "Record", toMany: true, inverse: "kids")
                        : RelationshipDescription("parent", to: "Record", inverse: "kids")
                ]),
        ])
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: model))
        for (name, ages) in [("none", [Int64]()), ("one", [5]), ("three", [9, 4, 7])] {
            let r = try c.insert("Record")
            try r.setValue(name, forKey: "name")
            try r.setValue(ages.map { "t\($0)" }, forKey: "tags")
            for age in ages {
                let k = try c.insert("Kid")
                try k.setValue(age, forKey: "age")
                try r.add(k, to: "kids")
            }
        }
        try c.save()
        return c
    }

    /// Memory's outcome on every record, in the store's order: the names selected, or the error.
    static func memory(_ p: SiftPredicate, _ c: ManagedObjectContext) throws -> Result<Set<String>, EvaluationError> {
        let all = try c.fetch(FetchRequest("Record", sortDescriptors: [try SiftSortDescriptor("name")]))
        do throws(EvaluationError) {
            var names = Set<String>()
            for o in all where try p.evaluate(with: o) {
                names.insert((try? o.get("name", as: String.self)) ?? nil ?? "")
            }
            return .success(names)
        } catch { return .failure(error) }
    }

    @Test(arguments: [false, true]) func everyFormGivesMemorysOutcome(joined: Bool) throws {
        let c = try Self.context(joined: joined)
        var (raised, memoryRaised) = (0, 0)
        for format in [
            "kids[1].age > 3", "kids[1].age == nil", "kids[2].age == 7", "kids[0].age < 6", "kids[-1].age > 0",
            "kids[FIRST].age == nil", "kids[LAST].age == 7", "name == 'one' OR kids[1].age > 3",
            "kids.@count > 1 AND kids[1].age == 4", "tags[1] == 't4'", "NOT (kids[2].age == 7)",
            "name[0] == 'n' OR kids.@count > 5",
        ] {
            let p = try SiftPredicate(format: format, arguments: [])
            let expected = try Self.memory(p, c)
            if case .failure = expected { memoryRaised += 1 }
            let request = FetchRequest("Record", predicate: p)
            let forms: [(String, () throws(StoreError) -> Set<String>)] = [
                (
                    "fetch",
                    { () throws(StoreError) in
                        Set(try c.fetch(request).map { (try? $0.get("name", as: String.self)) ?? nil ?? "" })
                    }
                ),
                ("count", { () throws(StoreError) in Set((0..<(try c.count(for: request))).map(String.init)) }),
            ]
            for (form, run) in forms {
                switch expected {
                case .success(let names):
                    let got = try run()
                    #expect(form == "count" ? got.count == names.count : got == names, "\(form) of \(format)")
                case .failure(let memoryError):
                    do {
                        let got = try run()
                        Issue.record("\(form) of \(format) answered \(got) where memory raises \(memoryError)")
                    } catch {
                        // Memory's error, at the same place (which record raises first may differ).
                        #expect(error.evaluationError?.id == memoryError.id, "\(form) of \(format): \(error)")
                        #expect(error.range == memoryError.range, "\(form) of \(format): \(error)")
                        raised += 1
                    }
                }
            }
        }
        // Nine of the predicates raise in memory (eight on the record without kids or tags, the
        // last on the first name: a string is no collection), each in both forms.
        #expect(memoryRaised == 9)
        #expect(raised == 2 * memoryRaised)
    }
}
