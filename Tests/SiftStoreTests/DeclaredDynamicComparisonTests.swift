// A declared attribute compared with a dynamically typed one (`qty == address.lat`, `qty` an
// integer, `lat` dynamic). SQLite gives a column declared INTEGER or REAL numeric affinity and
// converts the other side's numeric-looking text before comparing (`3 IS '3'` is true there), where
// memory never finds a number equal to a string. Found by the store differential over typed
// attributes (seed 1796000062). Every request form gives memory's rows or memory's error.

import Foundation
import SiftEvaluation
import Testing

@testable import SiftStore

@Suite struct DeclaredDynamicComparisonTests {
    /// Records whose declared numbers meet dynamic values of every kind: numeric text, numbers,
    /// nil, and a dynamic value where the declared one is nil.
    static func context() throws -> ManagedObjectContext {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Record",
                attributes: [
                    AttributeDescription("qty", .integer64), AttributeDescription("d", .double),
                    AttributeDescription("flag", .boolean), AttributeDescription("born", .date),
                    AttributeDescription("name", .string), AttributeDescription("dyn", .dynamic),
                ],
                relationships: [RelationshipDescription("address", to: "Address")]),
            EntityDescription("Address", attributes: [AttributeDescription("lat", .dynamic)]),
        ])
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: model))
        let rows: [(Value, Value, Value, Value, Value, Value)] = [
            (.integer(3), .double(3), .bool(true), .string("3"), .string("3"), .string("3")),
            (.integer(1), .double(1), .bool(true), .integer(1), .integer(1), .string("1")),
            (.integer(3), .double(3), .bool(false), .string("3.0"), .string("3.0"), .string("x")),
            (.null, .null, .null, .null, .null, .null),
            (.null, .null, .bool(true), .string("1"), .integer(3), .string("3")),
            (.integer(0), .double(0.5), .bool(false), .string("0.5"), .double(0.5), .string("0.5")),
        ]
        for (qty, d, flag, dyn, lat, name) in rows {
            let r = try c.insert("Record")
            try r.setValue(qty, forKey: "qty")
            try r.setValue(d, forKey: "d")
            try r.setValue(flag, forKey: "flag")
            try r.setValue(dyn, forKey: "dyn")
            try r.setValue(name, forKey: "name")
            if case .integer(let q) = qty {
                try r.setValue(Date(timeIntervalSinceReferenceDate: Double(q)), forKey: "born")
            }
            let a = try c.insert("Address")
            try a.setValue(lat, forKey: "lat")
            try r.setValue(a, forKey: "address")
        }
        try c.save()
        return c
    }

    @Test(arguments: [
        "qty == dyn", "dyn == qty", "qty != dyn", "dyn != qty", "d == dyn", "flag == dyn", "born == dyn",
        "qty == address.lat", "address.lat == qty", "qty != address.lat", "d == address.lat",
        "NOT (qty == address.lat)", "qty IN {dyn, 7}", "name == dyn", "name == address.lat",
        "qty == dyn OR d == address.lat", "qty + 0 == dyn", "qty == dyn + 0", "name == TERNARY(qty == 3, 3, dyn)",
        "qty < dyn", "dyn >= qty", "born < dyn", "born > address.lat", "name < dyn", "d <= address.lat",
        "qty == '3'", "name == 3", "flag == '1'", "born == 3",
    ])
    func everyFormGivesMemorysOutcome(format: String) throws {
        let c = try Self.context()
        let p = try SiftPredicate(format: format, arguments: [])
        let records = try c.fetch(FetchRequest("Record"))
        let expected: Result<Set<ObjectID>, EvaluationError>
        do throws(EvaluationError) {
            var kept = Set<ObjectID>()
            for r in records where try p.evaluate(with: r) { kept.insert(r.objectID) }
            expected = .success(kept)
        } catch { expected = .failure(error) }
        let request = FetchRequest("Record", predicate: p)
        let forms: [(String, () throws(StoreError) -> Set<ObjectID>?)] = [
            ("fetch", { () throws(StoreError) in Set(try c.fetch(request).map(\.objectID)) }),
            ("IDs", { () throws(StoreError) in Set(try c.fetchObjectIDs(request)) }),
            (
                "count",
                { () throws(StoreError) in
                    _ = try c.count(for: request)
                    return nil
                }
            ),
        ]
        for (form, run) in forms {
            switch expected {
            case .success(let ids):
                let got = try run()
                if let got { #expect(got == ids, "\(form) of \(format)") }
                #expect(try c.count(for: request) == ids.count, "\(format)")
            case .failure(let e):
                let error = #expect(throws: StoreError.self, "\(form) of \(format)") { _ = try run() }
                #expect(error?.evaluationError?.id == e.id, "\(form): \(String(describing: error))")
            }
        }
    }
}
