// A fetch with a limit or an offset whose predicate memory raises on for an object past the
// page (`(age + 4) >= -2`, one record's `age` nil): memory judges every object before the page
// is cut, so every form raises memory's error, however few rows SQL would have needed (the
// statement's row guard raises only on the rows it reaches, and a LIMIT stops it early). Found by
// the store differential on Core Data's layout (seed 1796100001); Sift's layout did the same.

import Foundation
import SiftEvaluation
import Testing

@testable import SiftStore

@Suite struct LimitedFetchErrorTests {
    /// Five saved records; the fourth has no age.
    static func context(coreData: Bool) throws -> ManagedObjectContext {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Record", attributes: [AttributeDescription("age", .double), AttributeDescription("name", .string)])
        ])
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("limited-\(UUID()).sqlite")
        let store =
            coreData
            ? try PersistentStore(coreDataStoreAt: url, model: model, create: true)
            : try PersistentStore(model: model, path: url.path)
        let c = ManagedObjectContext(store: store)
        for (i, age) in [Optional(1.0), 2, 3, nil, 5].enumerated() {
            let r = try c.insert("Record")
            try r.setValue(age, forKey: "age")
            try r.setValue("r\(i)", forKey: "name")
        }
        try c.save()
        return c
    }

    @Test(arguments: [false, true], [(0, 0), (1, 0), (2, 1), (nil, 2)] as [(Int?, Int)])
    func everyFormRaisesWhereMemoryDoes(coreData: Bool, page: (limit: Int?, offset: Int)) async throws {
        let c = try Self.context(coreData: coreData)
        let p = try SiftPredicate(format: "(age + 4) >= -2", arguments: [])
        let memoryError = try #require(throws: EvaluationError.self) {
            _ = try c.fetch(FetchRequest("Record")).filter { try p.evaluate(with: $0) }
        }
        var request = FetchRequest("Record", predicate: p)
        request.fetchLimit = page.limit
        request.fetchOffset = page.offset
        let what =
            "\(coreData ? "Core Data" : "Sift") layout, limit \(String(describing: page.limit)) offset \(page.offset)"
        let forms: [(String, () throws(StoreError) -> Int)] = [
            ("fetch", { () throws(StoreError) in try c.fetch(request).count }),
            ("IDs", { () throws(StoreError) in try c.fetchObjectIDs(request).count }),
            ("count", { () throws(StoreError) in try c.count(for: request) }),
            ("dictionaries", { () throws(StoreError) in try c.fetchDictionaries(request).count }),
        ]
        for (form, run) in forms {
            let error = #expect(throws: StoreError.self, "\(form), \(what)") { _ = try run() }
            #expect(error?.evaluationError?.id == memoryError.id, "\(form), \(what): \(String(describing: error))")
        }
        await #expect(throws: StoreError.self, "async fetch, \(what)") {
            _ = try await c.fetch(AsynchronousFetchRequest(request))
        }
        // Explaining the request runs nothing.
        #expect(try c.explain(request).sql.contains("LIMIT"))
    }

    /// Where memory raises on no object (the record without an age is left out first), the page
    /// is memory's.
    @Test(arguments: [false, true])
    func aPageWithoutErrorsIsMemorysPage(coreData: Bool) throws {
        let c = try Self.context(coreData: coreData)
        let all = try c.fetch(FetchRequest("Record"))
        let safe = try SiftPredicate(format: "name != 'r3' AND (age + 4) >= 6", arguments: [])
        let expected = try all.filter { try safe.evaluate(with: $0) }.map(\.objectID)
        #expect(expected.count == 3)
        var request = FetchRequest("Record", predicate: safe)
        request.fetchLimit = 2
        request.fetchOffset = 1
        #expect(try c.fetch(request).map(\.objectID) == Array(expected[1...2]))
        #expect(try c.fetchObjectIDs(request) == Array(expected[1...2]))
        #expect(try c.count(for: request) == 2)
    }
}
