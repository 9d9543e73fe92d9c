// nil into arithmetic over typed attributes (issue 27): memory raises on a nil operand of `+`,
// `abs:` and the like, where SQL computes NULL and would silently drop the row (or keep it, under
// NOT or `== nil`). Every request gives memory's outcome: strict, memory's error for fetches,
// counts, ID and dictionary fetches and batch requests, with nothing changed; lenient, lenient
// memory's objects. With a relationship in the predicate the store judges the arithmetic, and
// memory's functions, in memory.

import Foundation
import Testing

@testable import SiftStore

@Suite struct NilArithmeticTests {
    /// Items a (price 3), b (no price), c (price 10), each owned by one Owner "o"; returns the store.
    func store() throws -> PersistentStore {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Item", attributes: [AttributeDescription("name", .string), AttributeDescription("price", .integer64)],
                relationships: [RelationshipDescription("owner", to: "Owner", inverse: "items")]),
            EntityDescription(
                "Owner", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("items", to: "Item", toMany: true, inverse: "owner")]),
        ])
        let s = try PersistentStore.inMemory(model: model)
        let c = ManagedObjectContext(store: s)
        let owner = try c.insert("Owner")
        try owner.setValue("o", forKey: "name")
        for (name, price) in [("a", Value.integer(3)), ("b", .null), ("c", .integer(10))] {
            let o = try c.insert("Item")
            try o.setValue(Value.string(name), forKey: "name")
            try o.setValue(price, forKey: "price")
            try o.setValue(owner, forKey: "owner")
        }
        try c.save()
        return s
    }

    /// Memory's outcome over every stored item, in the store's order (the context is kept alive
    /// while memory follows `owner`).
    func memory(_ p: SiftPredicate, _ s: PersistentStore) throws -> Result<[ObjectID], EvaluationError> {
        let context = ManagedObjectContext(store: s)
        let all = try context.fetch(FetchRequest("Item"))
        defer { withExtendedLifetime(context) {} }
        do throws(EvaluationError) {
            var out: [ObjectID] = []
            for o in all where try p.evaluate(with: o.evaluationRoot) { out.append(o.objectID) }
            return .success(out)
        } catch { return .failure(error) }
    }

    static let predicates = [
        "price + 1 > 5", "abs(price) > 2", "price * 2 > 5 AND name == 'c'", "name == 'c' AND price * 2 > 5",
        "NOT price + 1 > 5", "price + 1 == nil", "price - 1 != 2", "price / 0 == 0", "-price < -5",
        "price != nil AND price * 2 > 5", "price == nil OR price + 1 > 5",
        "owner.name == 'o' AND price * 2 > 5", "price * 2 > 5 AND owner.name == 'o'",
        "owner.name == 'o' AND -price < 0",
        // Memory's functions (nil raises in them) next to a relationship: judged in memory too.
        "owner.name == 'o' AND log:(price) != 2", "log:(price) != 2 AND owner.name == 'o'",
        "owner.name == nil OR sqrt:(price) > 1",
    ]

    @Test(arguments: predicates)
    func everyRequestGivesMemorysOutcome(_ text: String) throws {
        for lenient in [false, true] {
            let s = try store()
            let p = try SiftPredicate(format: text, arguments: [], options: EvaluationOptions(lenient: lenient))
            let c = ManagedObjectContext(store: s)
            var request = FetchRequest("Item")
            request.predicate = p
            var names = request
            names.propertiesToFetch = ["name"]
            let label = "\(text) lenient: \(lenient)"
            switch try memory(p, s) {
            case .success(let ids):
                let fetched = try c.fetch(request).map(\.objectID)
                #expect(Set(fetched) == Set(ids), "\(label): \(fetched), memory \(ids)")
                #expect(try c.count(for: request) == ids.count, "\(label)")
                #expect(Set(try c.fetchObjectIDs(request)) == Set(ids), "\(label)")
                #expect(try c.fetchDictionaries(names).count == ids.count, "\(label)")
                var update = BatchUpdateRequest("Item", predicate: p)
                // Each name written back unchanged: the delete below selects the same objects.
                update.propertiesToUpdate = ["name": .expression("name")]
                #expect(Set(try c.execute(update).objectIDs) == Set(ids), "\(label)")
                #expect(Set(try c.execute(BatchDeleteRequest("Item", predicate: p)).objectIDs) == Set(ids), "\(label)")
                #expect(try c.count(for: FetchRequest("Item")) == 3 - ids.count, "\(label)")
            case .failure(let e):
                #expect(!lenient, "\(label): lenient memory raised \(e)")
                try expectRaises(e, label, c, request, names, p)
            }
        }
    }

    /// Every request raises memory's error `e`; the batch requests change nothing.
    func expectRaises(
        _ e: EvaluationError, _ label: String, _ c: ManagedObjectContext, _ request: FetchRequest<ManagedObject>,
        _ names: FetchRequest<ManagedObject>, _ p: SiftPredicate
    ) throws {
        var update = BatchUpdateRequest("Item", predicate: p)
        update.propertiesToUpdate = ["name": .constant(.string("z"))]
        let runs: [() throws -> Void] = [
            { _ = try c.fetch(request) }, { _ = try c.count(for: request) }, { _ = try c.fetchObjectIDs(request) },
            { _ = try c.fetchDictionaries(names) }, { _ = try c.execute(update) },
            { _ = try c.execute(BatchDeleteRequest("Item", predicate: p)) },
        ]
        for (i, run) in runs.enumerated() {
            do {
                try run()
                Issue.record("\(label): request \(i) answered where memory raises")
            } catch let error as StoreError {
                // Memory's message, after the row it raised on where SQL's guard found it.
                #expect(
                    error.kind == .evaluation
                        && (error.message == e.message || error.message.hasSuffix(": \(e.message)")),
                    "\(label): request \(i): \(error) / memory: \(e.message)")
            }
        }
        let all = try ManagedObjectContext(store: c.store).fetch(FetchRequest("Item"))
        #expect(Set(try all.map { try $0.get("name", as: String.self) }) == ["a", "b", "c"], "\(label)")
    }

    /// The table of the issue: SQL alone selected c, a and c, and c where memory raises.
    @Test func theIssuesTableRaisesAsMemoryDoes() throws {
        let c = ManagedObjectContext(store: try store())
        for text in ["price + 1 > 5", "abs(price) > 2", "price * 2 > 5 AND name == \"c\""] {
            let error = #expect(throws: StoreError.self, "\(text)") {
                try c.fetch(try FetchRequest("Item", predicate: text))
            }
            #expect(error?.message.hasSuffix("needs numbers, got nil") == true, "\(text): \(String(describing: error))")
        }
    }
}
