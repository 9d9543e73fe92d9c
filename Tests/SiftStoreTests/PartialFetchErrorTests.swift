// A fetch whose predicate is split, part lowered to SQL and the rest judged in memory (a dynamic
// attribute whose values differ in kind, a to-many form SQL cannot express), keeps memory's error
// precedence (issue 27): strict, the store raises memory's error where memory raises on an object,
// and answers where memory answers because an AND stopped before the raising part; lenient, it
// selects lenient memory's objects. Each case is compared with memory on the same objects.

import Foundation
import Testing

@testable import SiftStore

@Suite struct PartialFetchErrorTests {
    /// Records (name, age, kid numbers): ages of two kinds, and kids for the to-many forms.
    static let rows: [(String, Value, [Int])] = [
        ("x", .integer(40), [2]), ("y", .string("abc"), []), ("x", .integer(50), [0, 3]), ("z", .integer(10), [1]),
    ]

    func store() throws -> PersistentStore {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Record", attributes: [AttributeDescription("name", .string), AttributeDescription("age", .dynamic)],
                relationships: [RelationshipDescription("kids", to: "Kid", toMany: true, inverse: "owner")]),
            EntityDescription(
                "Kid", attributes: [AttributeDescription("n", .integer64)],
                relationships: [RelationshipDescription("owner", to: "Record", inverse: "kids")]),
        ])
        let s = try PersistentStore.inMemory(model: model)
        let c = ManagedObjectContext(store: s)
        for (name, age, kids) in Self.rows {
            let o = try c.insert("Record")
            try o.setValue(name, forKey: "name")
            try o.setValue(age, forKey: "age")
            for n in kids {
                let k = try c.insert("Kid")
                try k.setValue(n, forKey: "n")
                try k.setValue(o, forKey: "owner")
            }
        }
        try c.save()
        return s
    }

    /// Memory's outcome on every record, in the store's order.
    func memory(_ p: SiftPredicate, _ s: PersistentStore) throws -> Result<Set<ObjectID>, EvaluationError> {
        // The context stays alive while memory reads the objects' relationships.
        let c = ManagedObjectContext(store: s)
        let all = try c.fetch(FetchRequest("Record"))
        defer { withExtendedLifetime(c) {} }
        do throws(EvaluationError) {
            var out: Set<ObjectID> = []
            for o in all where try p.evaluate(with: o) { out.insert(o.objectID) }
            return .success(out)
        } catch { return .failure(error) }
    }

    static let predicates = [
        // Lowered first part, memory's second: x's ages are numbers, so memory answers.
        #"name == "x" AND age > 30"#,
        // y's "abc" is reached: memory raises.
        #"name == "y" AND age > 30"#,
        // Memory's part first: it raises on y before the lowered part could drop y.
        #"age > 30 AND name == "x""#,
        #"age < "b" AND name != "y""#,
        // A to-many form that stays in memory, before and after the dynamic attribute.
        #"SUBQUERY(kids, $k, $k.n > 0) == kids AND age > 30"#,
        #"name != "y" AND SUBQUERY(kids, $k, $k.n > 0) == kids AND age > 5"#,
        #"age > 5 AND name != "y" AND SUBQUERY(kids, $k, $k.n > 0) == kids"#,
    ]

    @Test(arguments: predicates)
    func splitFetchGivesMemorysOutcome(_ text: String) throws {
        let s = try store()
        for lenient in [false, true] {
            let p = try SiftPredicate(format: text, arguments: [], options: EvaluationOptions(lenient: lenient))
            let c = ManagedObjectContext(store: s)
            var request = FetchRequest("Record")
            request.predicate = p
            // The case exercises the split: something is left to memory.
            #expect(try c.explain(request).residualPredicate != nil, "\(text)")
            // Each request's outcome, in the same form as memory's: the objects, or the error's message.
            let outcomes: [(String, Result<Set<ObjectID>, StoreError>)] = [
                ("fetch", Result { () throws(StoreError) in Set(try c.fetch(request).map(\.objectID)) }),
                ("IDs", Result { () throws(StoreError) in Set(try c.fetchObjectIDs(request)) }),
            ]
            let count = Result { () throws(StoreError) in try c.count(for: request) }
            switch try memory(p, s) {
            case .success(let ids):
                for (what, outcome) in outcomes {
                    #expect(try outcome.get() == ids, "\(text) \(what) lenient: \(lenient)")
                }
                #expect(try count.get() == ids.count, "\(text)")
            case .failure(let e):
                #expect(!lenient, "\(text): lenient memory raised \(e)")
                let messages = outcomes.map { $0.1.map { _ in 0 } } + [count]
                for outcome in messages {
                    guard case .failure(let error) = outcome else {
                        Issue.record("\(text): the store answered where memory raises \(e.message)")
                        continue
                    }
                    #expect(error.kind == .evaluation && error.message == e.message, "\(text): \(error)")
                }
            }
        }
    }

    /// The cases cover both outcomes: some raise strictly, some answer.
    @Test func casesRaiseAndAnswer() throws {
        let s = try store()
        var raised = 0
        for text in Self.predicates {
            let p = try SiftPredicate(format: text, arguments: [], options: EvaluationOptions())
            if case .failure = try memory(p, s) { raised += 1 }
        }
        #expect(raised >= 3 && raised < Self.predicates.count, "\(raised)")
    }
}
