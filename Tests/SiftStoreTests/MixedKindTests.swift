// A typed entity's `.dynamic` attribute holds values of different kinds from row to row (issue 27):
// every request reading it gives memory's outcome. Strict, memory's error (`cannot order "abc"
// and 30`) for fetches, counts, ID and dictionary fetches and batch requests, with nothing
// changed; lenient, lenient memory's objects. SQL alone would order any text above any number.

import Foundation
import Testing

@testable import SiftStore

@Suite struct MixedKindTests {
    /// Three saved records, ages 40, "abc" and 50; returns the store and the IDs in that order.
    func store() throws -> (PersistentStore, [ObjectID]) {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Record", attributes: [AttributeDescription("age", .dynamic)])
        ])
        let s = try PersistentStore.inMemory(model: model)
        let c = ManagedObjectContext(store: s)
        let objects = try [Value.integer(40), .string("abc"), .integer(50)].map { v in
            let o = try c.insert("Record")
            try o.setValue(v, forKey: "age")
            return o
        }
        try c.save()
        return (s, objects.map(\.objectID))
    }

    func memory(_ p: SiftPredicate, _ s: PersistentStore) throws -> Result<[ObjectID], EvaluationError> {
        let all = try ManagedObjectContext(store: s).fetch(FetchRequest("Record"))
        do throws(EvaluationError) {
            var out: [ObjectID] = []
            for o in all where try p.evaluate(with: o) { out.append(o.objectID) }
            return .success(out)
        } catch { return .failure(error) }
    }

    @Test(arguments: ["age > 30", #"age < "b""#, #"age > 30 AND age != "x""#])
    func everyRequestGivesMemorysOutcome(_ text: String) throws {
        let (s, _) = try store()
        for lenient in [false, true] {
            let p = try SiftPredicate(format: text, arguments: [], options: EvaluationOptions(lenient: lenient))
            let expected = try memory(p, s)
            let c = ManagedObjectContext(store: s)
            var request = FetchRequest("Record")
            request.predicate = p
            switch expected {
            case .success(let ids):
                #expect(lenient, "strict memory raises on \"abc\"")
                #expect(Set(try c.fetch(request).map(\.objectID)) == Set(ids))
                #expect(try c.count(for: request) == ids.count)
                #expect(Set(try c.fetchObjectIDs(request)) == Set(ids))
            case .failure(let e):
                #expect(!lenient)
                for run in [
                    { _ = try c.fetch(request) }, { _ = try c.count(for: request) },
                    { _ = try c.fetchObjectIDs(request) },
                ] {
                    do {
                        try run()
                        Issue.record("\(text): the request answered where memory raises")
                    } catch let error as StoreError {
                        #expect(error.kind == .evaluation && error.message == e.message, "\(error)")
                    }
                }
                var delete = BatchDeleteRequest("Record", predicate: p)
                delete.includesSubentities = true
                #expect(throws: StoreError.self) { try c.execute(delete) }
                #expect(try c.count(for: FetchRequest("Record")) == 3)
            }
        }
    }
}
