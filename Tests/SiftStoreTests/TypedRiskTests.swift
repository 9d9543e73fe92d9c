// Predicates over declared attributes where memory raises and SQL would have answered, found by
// the store differential over typed attributes: a SUBQUERY compared whole (`== nil`, `== 'Ann'`,
// `== {1}`) whose predicate memory evaluates on every element, though the answer does not read
// them (`$k.name > 1.5` over a string: memory cannot order them), and nil into arithmetic next to
// a relationship in a predicate that also compares a key of several shapes (whose risk used to
// hide the arithmetic's). Each request form gives memory's rows or memory's error.

import Foundation
import SiftEvaluation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct TypedRiskTests {
    /// A record with a string-named kid, a mixed key, no address and no `qty`.
    static func context() throws -> ManagedObjectContext {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Record",
                attributes: [
                    AttributeDescription("name", .string), AttributeDescription("qty", .integer64),
                    AttributeDescription("mix", .mixed, shapes: MixedShapes(scalar: true, array: .scalar)),
                ],
                relationships: [
                    RelationshipDescription("kids", to: "Kid", toMany: true, ordered: true, inverse: "parent"),
                    RelationshipDescription("address", to: "Address"),
                ]),
            EntityDescription(
                "Kid", attributes: [AttributeDescription("name", .string), AttributeDescription("age", .double)],
                relationships: [RelationshipDescription("parent", to: "Record", inverse: "kids")]),
            EntityDescription("Address", attributes: [AttributeDescription("lat", .double)]),
        ])
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: model))
        let r = try c.insert("Record")
        try r.setValue("Ann", forKey: "name")
        try r.setValue("x", forKey: "mix")
        let k = try c.insert("Kid")
        try k.setValue("Bo", forKey: "name")
        try k.setValue(3.0, forKey: "age")
        try r.add(k, to: "kids")
        try c.save()
        return c
    }

    @Test(arguments: [
        "SUBQUERY(kids, $k, $k.name > 1.5) == nil", "SUBQUERY(kids, $k, $k.name > 1.5) != nil",
        "SUBQUERY(kids, $k, $k.name > 1.5) == 'Ann'", "SUBQUERY(kids, $k, $k.name > 1.5) == {1}",
        "mix == 'q' OR (kids.@max.age + address.lat) < 10", "mix == 'q' OR (qty / 2) >= kids.@sum.age",
    ])
    func memoryRaisesAndTheStoreSaysSo(format: String) throws {
        let c = try Self.context()
        let p = try SiftPredicate(format: format, arguments: [])
        let records = try c.fetch(FetchRequest("Record"))
        let memoryError = try #require(throws: EvaluationError.self) {
            _ = try records.filter { try p.evaluate(with: $0) }
        }
        let request = FetchRequest("Record", predicate: p)
        let forms: [(String, () throws(StoreError) -> Int)] = [
            ("fetch", { () throws(StoreError) in try c.fetch(request).count }),
            ("count", { () throws(StoreError) in try c.count(for: request) }),
            ("IDs", { () throws(StoreError) in try c.fetchObjectIDs(request).count }),
        ]
        for (form, run) in forms {
            let error = #expect(throws: StoreError.self, "\(form)") { _ = try run() }
            #expect(error?.evaluationError?.id == memoryError.id, "\(form): \(String(describing: error))")
            #expect(error?.range == memoryError.range, "\(form)")
        }
    }

    /// A TERNARY of a number and a string is of no one kind: SQLite orders text above numbers,
    /// where memory does not, so the comparison is memory's (here next to a relationship, so the
    /// predicate is judged in memory). Found over kids in a join table with typed attributes.
    @Test(arguments: [
        "TERNARY(name == 'zz', kids.@avg.age, name) > FALSE", "TERNARY(name == 'zz', kids.@avg.age, name) > 2",
    ])
    func aTernaryOfTwoKindsIsMemorys(format: String) throws {
        let c = try Self.context()
        let p = try SiftPredicate(format: format, arguments: [])
        let records = try c.fetch(FetchRequest("Record"))
        let request = FetchRequest("Record", predicate: p)
        do {
            let expected = try records.filter { try p.evaluate(with: $0) }.map(\.objectID)
            #expect(try c.fetch(request).map(\.objectID) == expected)
            #expect(try c.count(for: request) == expected.count)
        } catch let memoryError as EvaluationError {
            let error = #expect(throws: StoreError.self) { _ = try c.fetch(request) }
            #expect(error?.evaluationError?.id == memoryError.id, "\(String(describing: error))")
        }
    }
}
