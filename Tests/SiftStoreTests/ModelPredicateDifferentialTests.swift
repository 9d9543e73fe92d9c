// Random predicates drawn from a model instead of from the differential generator's fixed keys:
// every attribute type Core Data has (16/32/64-bit integers, float, double, decimal, string,
// boolean, date, binary, UUID, URI), to-one paths, ANY/ALL/NONE, `@count`, aggregates and
// SUBQUERY over to-manys, nil, two attributes compared (across a to-one too), relationships
// compared with objects (`box == %@`, `%@ IN labels`), under AND/OR/NOT, with constants taken
// from the stored values (so that they match) or moved off them. Each fetch, count and ID fetch
// must give memory's objects or memory's error (strict, or now and then lenient): on Core Data's
// own fixture store (a hierarchy in one table, a to-one into it, an ordered to-many, a
// many-to-many), and on a model of every type, laid out as Sift lays it out and as Core Data
// does; clean, with pending changes, then saved.

import Foundation
import SiftEvaluation
import SiftTestSupport
import Testing

@testable import SiftStore

@Suite struct ModelPredicateDifferentialTests {
    /// Memory's outcome over `objects` and the store's for each request form, compared.
    static func compare(
        _ format: String, _ arguments: [Any?], entity: String, _ c: ManagedObjectContext,
        sortedBy sorts: [SiftSortDescriptor], lenient: Bool = false,
        tally: inout (Int, Int)
    ) throws {
        let p: SiftPredicate
        do {
            p = try SiftPredicate(format: format, arguments: arguments, options: EvaluationOptions(lenient: lenient))
        } catch {
            Issue.record("the generator wrote a predicate that does not parse: \(format) \(arguments): \(error)")
            return
        }
        let objects = try c.fetch(FetchRequest(entity))
        var kept: Set<ObjectID> = []
        var raised: Set<String> = []
        for o in objects {
            do throws(EvaluationError) { if try p.evaluate(with: o) { kept.insert(o.objectID) } } catch {
                raised.insert(error.message)
            }
        }
        let request = FetchRequest(entity, predicate: p)
        let what = "\(lenient ? "lenient " : "")\(entity): \(format) \(arguments) pending \(c.hasChanges)"
        let forms: [(String, () throws(StoreError) -> Set<ObjectID>?)] = [
            ("fetch", { () throws(StoreError) in Set(try c.fetch(request).map(\.objectID)) }),
            ("IDs", { () throws(StoreError) in Set(try c.fetchObjectIDs(request)) }),
            (
                "count",
                { () throws(StoreError) in
                    let n = try c.count(for: request)
                    #expect(n == kept.count, "count of \(what)")
                    return nil
                }
            ),
        ]
        for (form, run) in forms {
            do {
                let got = try run()
                if !raised.isEmpty {
                    Issue.record("\(form) answered for \(what) where memory raises \(raised.sorted())")
                } else if let got, got != kept {
                    let explain = (try? c.explain(request).description) ?? "?"
                    Issue.record(
                        "\(form) disagrees with memory for \(what): expected \(kept.sorted { $0.description < $1.description }) got \(got.sorted { $0.description < $1.description })\n\(explain)"
                    )
                }
            } catch {
                let bare = error.message.replacing(#/^row \d+: /#, with: "")
                let bareRecord = bare.replacing(#/^\w+ \d+: /#, with: "")
                #expect(
                    error.kind == .evaluation && (raised.contains(bare) || raised.contains(bareRecord)),
                    "\(form) for \(what): \(error); memory raises \(raised.sorted())")
            }
        }
        // A page of it: memory judges every object before the page is cut.
        var page = request
        page.fetchLimit = arguments.count % 3
        page.fetchOffset = format.utf8.count % 2
        let size = min(page.fetchLimit!, max(0, kept.count - page.fetchOffset))
        for (form, run) in [
            ("paged fetch", { () throws(StoreError) -> [ObjectID] in try c.fetch(page).map(\.objectID) }),
            ("paged IDs", { () throws(StoreError) -> [ObjectID] in try c.fetchObjectIDs(page) }),
        ] as [(String, () throws(StoreError) -> [ObjectID])] {
            do {
                let got = try run()
                if !raised.isEmpty {
                    Issue.record("\(form) answered for \(what) where memory raises \(raised.sorted())")
                } else {
                    #expect(got.count == size && Set(got).isSubset(of: kept), "\(form) of \(what): \(got)")
                }
            } catch {
                #expect(error.kind == .evaluation && !raised.isEmpty, "\(form) for \(what): \(error)")
            }
        }
        if !c.hasChanges { batchUpdate(p, entity, kept: kept, raised: raised, c, what) }
        if !sorts.isEmpty, raised.isEmpty {
            try compareOrder(objects.filter { kept.contains($0.objectID) }, request, sorts, c, what)
        }
        if raised.isEmpty { tally.0 += 1 } else { tally.1 += 1 }
    }

    /// A batch update that sets an attribute to its own value (the data stays as it is): it
    /// updates memory's matches, or raises memory's error (updating nothing). Only where nothing
    /// is pending: a batch request works on the store, not on the context.
    static func batchUpdate(
        _ p: SiftPredicate, _ entity: String, kept: Set<ObjectID>, raised: Set<String>, _ c: ManagedObjectContext,
        _ what: String
    ) {
        guard let a = ModelPredicates.attributes(of: entity, in: c.store.model).first else { return }
        var update = BatchUpdateRequest(entity, predicate: p)
        update.propertiesToUpdate = [a.name: .expression(a.name)]
        do {
            let result = try c.execute(update)
            if !raised.isEmpty {
                Issue.record("batch update answered for \(what) where memory raises \(raised.sorted())")
            } else {
                #expect(Set(result.objectIDs) == kept, "batch update of \(what)")
            }
        } catch {
            #expect(error.kind == .evaluation && !raised.isEmpty, "batch update of \(what): \(error)")
        }
    }

    /// The matches sorted: memory's order (stable over the key order), or memory's error.
    static func compareOrder(
        _ matches: [ManagedObject], _ request: FetchRequest<ManagedObject>, _ sorts: [SiftSortDescriptor],
        _ c: ManagedObjectContext, _ what: String
    ) throws {
        var sorted = request
        sorted.sortDescriptors = sorts
        let expected: [ObjectID]
        do throws(EvaluationError) {
            expected = try matches.sortedIndices(by: sorts).map { matches[$0].objectID }
        } catch {
            #expect(throws: StoreError.self, "sorted by \(sorts): \(what), memory's sort raises \(error)") {
                _ = try c.fetch(sorted)
            }
            return
        }
        let got = try c.fetch(sorted).map(\.objectID)
        #expect(got == expected, "sorted by \(sorts): \(what)")
    }

    /// Rounds of random predicates over every entity of `c`'s model; then pending changes (values
    /// taken from other objects, or nil), then saved.
    static func run(_ c: ManagedObjectContext, seed: UInt64, rounds: Int, label: String) throws {
        let model = c.store.model
        let entities = model.entities.map(\.name)
        var tally = (0, 0)
        for phase in 0..<3 {
            if phase == 1 { try mutate(c, seed: seed) }
            if phase == 2 { try c.save() }
            let objects = try entities.flatMap { try c.fetch(FetchRequest($0)) }
            var g = ModelPredicates(model: model, objects: objects, seed: seed ^ (UInt64(phase + 1) << 40))
            for _ in 0..<rounds {
                for entity in entities {
                    g.arguments = []
                    let format = g.predicate(entity, depth: 2)
                    let sorts = g.chance(0.4) ? g.sortDescriptors(entity) : []
                    try compare(
                        format, g.arguments, entity: entity, c, sortedBy: sorts, lenient: g.chance(0.2), tally: &tally)
                }
            }
        }
        print(
            "model predicates (\(label)): seed \(seed) (SIFT_MODEL_DIFF_SEED), \(tally.0) agreed, \(tally.1) raised as memory does"
        )
        #expect(tally.0 > rounds * entities.count)
    }

    /// Some attributes set to another object's value of the same key, or to nil (where optional);
    /// some relationships moved, cleared, added to or taken from.
    static func mutate(_ c: ManagedObjectContext, seed: UInt64) throws {
        var rng = SplitMix64(seed: seed ^ 0xC0FFEE)
        let model = c.store.model
        let objects = try model.entities.filter { !$0.isAbstract }.flatMap { try c.fetch(FetchRequest($0.name)) }
        guard objects.count > 1 else { return }
        for _ in 0..<max(2, objects.count / 3) {
            let o = objects[Int.random(in: 0..<objects.count, using: &rng)]
            let other = objects[Int.random(in: 0..<objects.count, using: &rng)]
            let relationships = ModelPredicates.relationships(of: o.objectID.entityName, in: model)
            if let r = relationships.randomElement(using: &rng), Bool.random(using: &rng) {
                // A relationship changed: a to-one moved or cleared, a member added or removed.
                let targets = objects.filter {
                    $0.objectID.entityName == r.destination
                        || model.entity(named: $0.objectID.entityName)?.parent == r.destination
                }
                let target = targets.randomElement(using: &rng)
                do {
                    if !r.isToMany {
                        try o.setValue(Bool.random(using: &rng) ? nil : target, forKey: r.name)
                    } else if let members = try o.get(r.name, as: [ManagedObject].self), let m = members.first,
                        Bool.random(using: &rng)
                    {
                        try o.remove(m, from: r.name)
                    } else if let target {
                        try o.add(target, to: r.name)
                    }
                } catch {}
                continue
            }
            let attributes = ModelPredicates.attributes(of: o.objectID.entityName, in: model)
            guard let a = attributes.randomElement(using: &rng) else { continue }
            let value = Bool.random(using: &rng) && a.isOptional ? nil : other[a.name]
            do { try o.setValue(value.flatMap { ModelPredicates.swift($0) }, forKey: a.name) } catch {}
        }
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["SIFT_MODEL_DIFF_SEED"].flatMap(UInt64.init) ?? 20_261_128
    }
    static var rounds: Int { ProcessInfo.processInfo.environment["SIFT_MODEL_DIFF_ROUNDS"].flatMap(Int.init) ?? 40 }

    @Test func coreDataFixtureAgreesWithMemory() throws {
        let (_, c) = try CoreDataStoreTests.open(try CoreDataStoreTests.fixture())
        try Self.run(c, seed: Self.seed, rounds: Self.rounds, label: "Core Data fixture")
    }

    /// Item (every type) —box→ Box, —parts→ Part (ordered, inverse item), labels ⇄ Label.items
    /// (many-to-many), next ⇄ previous (a to-one to its own entity).
    static func everyTypeModel() throws -> ManagedObjectModel {
        let types: [AttributeType] = [
            .integer16, .integer32, .integer64, .double, .float, .decimal, .string, .boolean, .date, .binary, .uuid,
            .uri,
        ]
        return try ManagedObjectModel(entities: [
            EntityDescription(
                "Item", attributes: types.map { AttributeDescription("\($0.rawValue)Value", $0) },
                relationships: [
                    RelationshipDescription("box", to: "Box", inverse: "items"),
                    RelationshipDescription("parts", to: "Part", toMany: true, ordered: true, inverse: "item"),
                    RelationshipDescription("labels", to: "Label", toMany: true, inverse: "items"),
                    RelationshipDescription("next", to: "Item", inverse: "previous"),
                    RelationshipDescription("previous", to: "Item", inverse: "next"),
                ]),
            EntityDescription(
                "Label", attributes: [AttributeDescription("text", .string), AttributeDescription("rank", .integer16)],
                relationships: [RelationshipDescription("items", to: "Item", toMany: true, inverse: "labels")]),
            EntityDescription(
                "Box",
                attributes: [AttributeDescription("name", .string), AttributeDescription("capacity", .integer32)],
                relationships: [RelationshipDescription("items", to: "Item", toMany: true, inverse: "box")]),
            EntityDescription(
                "Part", attributes: [AttributeDescription("label", .string), AttributeDescription("weight", .double)],
                relationships: [RelationshipDescription("item", to: "Item", inverse: "parts")]),
        ])
    }

    /// Objects of `everyTypeModel` with values near each other (and nil), saved.
    static func populate(_ c: ManagedObjectContext, seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        func maybe<T>(_ v: T) -> T? { Int.random(in: 0..<5, using: &rng) == 0 ? nil : v }
        let names = ["Ann", "ann", "Émile", "emile", "", "x*y", "b"]
        let boxes = try (0..<3).map { i -> ManagedObject in
            let b = try c.insert("Box")
            try b.setValue(maybe(names[i]), forKey: "name")
            try b.setValue(maybe(Int32(i)), forKey: "capacity")
            return b
        }
        let labels = try (0..<4).map { i -> ManagedObject in
            let l = try c.insert("Label")
            try l.setValue(maybe(names[(i + 3) % names.count]), forKey: "text")
            try l.setValue(maybe(Int16(i - 1)), forKey: "rank")
            return l
        }
        var previous: ManagedObject?
        for i in 0..<9 {
            let o = try c.insert("Item")
            for (k, l) in labels.enumerated() where (i + k) % 3 == 0 { try o.add(l, to: "labels") }
            if i % 2 == 1 { try o.setValue(previous, forKey: "previous") }
            previous = o
            let n = Int.random(in: -2...2, using: &rng)
            try o.setValue(maybe(Int16(n)), forKey: "integer16Value")
            try o.setValue(maybe(Int32(n * 1000)), forKey: "integer32Value")
            try o.setValue(maybe(Int64(n) << 40), forKey: "integer64Value")
            try o.setValue(maybe(Double(n) / 4), forKey: "doubleValue")
            try o.setValue(maybe(Float(n) * 1.5), forKey: "floatValue")
            try o.setValue(maybe(Decimal(string: "\(n).25")!), forKey: "decimalValue")
            try o.setValue(maybe(names[(i + n + 7) % names.count]), forKey: "stringValue")
            try o.setValue(maybe(n > 0), forKey: "booleanValue")
            try o.setValue(maybe(Date(timeIntervalSinceReferenceDate: Double(n) * 1000)), forKey: "dateValue")
            try o.setValue(maybe(Data([UInt8(n + 2)])), forKey: "binaryValue")
            try o.setValue(
                maybe(
                    UUID(
                        uuidString: n > 0
                            ? "00112233-4455-6677-8899-AABBCCDDEEFF" : "00000000-0000-0000-0000-00000000000\(n + 2)")!),
                forKey: "uuidValue")
            try o.setValue(
                maybe(URL(string: "https://example.com/\(names[(i + 2) % names.count])")!), forKey: "uriValue")
            try o.setValue(maybe(boxes[i % 3]), forKey: "box")
            for k in 0..<(i % 3) {
                let p = try c.insert("Part")
                try p.setValue(maybe("p\(k)\(names[(i + k) % names.count])"), forKey: "label")
                try p.setValue(maybe(Double(k) - Double(n)), forKey: "weight")
                try p.setValue(o, forKey: "item")
            }
        }
        try c.save()
    }

    @Test(arguments: [false, true])
    func everyTypeAgreesWithMemory(coreData: Bool) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("every-type-\(UUID()).sqlite")
        defer { try? FileManager.default.removeItem(at: url) }
        let model = try Self.everyTypeModel()
        let store =
            coreData
            ? try PersistentStore(coreDataStoreAt: url, model: model, create: true)
            : try PersistentStore(model: model, path: url.path)
        let c = ManagedObjectContext(store: store)
        try Self.populate(c, seed: Self.seed)
        try Self.run(
            c, seed: Self.seed, rounds: Self.rounds, label: coreData ? "every type, Core Data layout" : "every type")
    }
}
