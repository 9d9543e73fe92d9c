// The store's differential test: random object graphs (the differential generator's records as
// Record, Address, Geo and Kid objects; its key of every shape as a mixed attribute) and random
// predicates from the same generator; each fetch (with pending inserts, updates, deletes and
// relationship changes, then again after saving; with random sorts, limits and offsets) must
// return exactly the objects, in exactly the order, that evaluating the predicate in memory over
// every live object and sorting in memory gives. The memory side is the oracle; the fetch under
// test runs SQL for what the lowering expresses and memory for the rest and for the objects
// pending changes make dirty.

import Foundation
import SiftEvaluation
import SiftJSON
import SiftStore
import SiftSyntax
import SiftTestSupport
import Testing

@testable import SiftTool

@Suite struct StoreDifferentialTests {
    /// The graphs' model; `joined`: a record's kids as an ordered many-to-many (`Kid.parents`,
    /// ordered too) kept in a join table, instead of an ordered one-to-many; `typed`: the
    /// attributes declared (strings and doubles, where the generator's values are of any kind;
    /// a value of another kind is stored as nil), so that the lowering of declared columns, which
    /// has no row guard of kinds, is compared with memory too; `coreData`: `coreDataModel`.
    static func model(joined: Bool = false, typed: Bool = false, coreData: Bool = false) throws -> ManagedObjectModel {
        if coreData { return try coreDataModel(joined: joined) }
        func text(_ name: String) -> AttributeDescription { AttributeDescription(name, typed ? .string : .dynamic) }
        func number(_ name: String) -> AttributeDescription { AttributeDescription(name, typed ? .double : .dynamic) }
        let (kids, parent) = kidRelationships(joined: joined)
        return try ManagedObjectModel(entities: [
            EntityDescription(
                "Record",
                attributes: [
                    text("name"), text("city"), number("age"), number("score"), AttributeDescription("born", .date),
                    AttributeDescription("tags", typed ? .string : .dynamic, collection: true),
                    // Typed and optional: nil into its arithmetic is memory's error, where SQL computes NULL.
                    AttributeDescription("qty", .integer64),
                    AttributeDescription("mix", .mixed, shapes: MixedShapes(scalar: true, date: true, array: .scalar)),
                ],
                relationships: [RelationshipDescription("address", to: "Address"), kids]),
            EntityDescription(
                "Kid",
                attributes: [AttributeDescription("name", typed ? .string : .dynamic), number("age")],
                relationships: [parent, RelationshipDescription("address", to: "Address")]),
            EntityDescription(
                "Address", attributes: [text("city"), text("zip")],
                relationships: [RelationshipDescription("geo", to: "Geo")]),
            EntityDescription("Geo", attributes: [number("lat")]),
        ])
    }

    /// The graphs' model for stores in Core Data's layout: typed; without what that layout cannot
    /// hold (the `tags` collection, the mixed `mix`); records and kids sub-entities of one abstract
    /// `Person` holding their name, age and address, so that both live in one table told apart by
    /// `Z_ENT` (a to-one into a hierarchy, kids and parents in one table).
    static func coreDataModel(joined: Bool) throws -> ManagedObjectModel {
        let (kids, parent) = kidRelationships(joined: joined)
        return try ManagedObjectModel(entities: [
            EntityDescription(
                "Person", abstract: true,
                attributes: [AttributeDescription("name", .string), AttributeDescription("age", .double)],
                relationships: [RelationshipDescription("address", to: "Address")]),
            EntityDescription(
                "Record", parent: "Person",
                attributes: [
                    AttributeDescription("city", .string), AttributeDescription("score", .double),
                    AttributeDescription("born", .date), AttributeDescription("qty", .integer64),
                ],
                relationships: [kids]),
            EntityDescription("Kid", parent: "Person", relationships: [parent]),
            EntityDescription(
                "Address", attributes: [AttributeDescription("city", .string), AttributeDescription("zip", .string)],
                relationships: [RelationshipDescription("geo", to: "Geo")]),
            EntityDescription("Geo", attributes: [AttributeDescription("lat", .double)]),
        ])
    }

    /// A record's ordered kids and their way back: a one-to-many, or (`joined`) an ordered
    /// many-to-many kept in a join table.
    static func kidRelationships(joined: Bool) -> (RelationshipDescription, RelationshipDescription) {
        let kids = RelationshipDescription(
            "kids", to: "Kid", toMany: true, ordered: true, inverse: joined ? "parents" : "parent", deleteRule: .cascade
        )
        let parent =
            joined
            ? RelationshipDescription("parents", to: "Record", toMany: true, ordered: true, inverse: "kids")
            : RelationshipDescription("parent", to: "Record", inverse: "kids")
        return (kids, parent)
    }

    /// A JSON scalar as a dynamic attribute value (booleans as 0/1: dynamic columns keep numbers
    /// and strings; the oracle reads the same objects, so the choice cannot hide a difference).
    static func scalar(_ v: JSONValue) -> Any? {
        switch v {
        case .null: return nil
        case .bool(let b): return b ? 1 : 0
        case .integer(let i): return i
        case .double(let d): return d
        case .string(let s): return s
        default: return nil
        }
    }

    static func field(_ fields: [(String, JSONValue)], _ key: String) -> JSONValue? {
        fields.last { $0.0 == key }?.1
    }

    /// Sets `key` of `o` to `value`, or to nil where a declared type refuses it (a string for a
    /// double): the typed graphs keep what fits (a dynamic attribute takes every scalar).
    static func put(_ value: Any?, _ key: String, of o: ManagedObject) throws {
        do { try o.setValue(value, forKey: key) } catch { try o.setValue(nil, forKey: key) }
    }

    @discardableResult
    static func insertAddress(_ json: JSONValue?, _ c: ManagedObjectContext) throws -> ManagedObject? {
        guard case .object(let f)? = json else { return nil }
        let a = try c.insert("Address")
        try put(field(f, "city").flatMap(scalar), "city", of: a)
        try put(field(f, "zip").flatMap(scalar), "zip", of: a)
        if case .object(let g)? = field(f, "geo") {
            let geo = try c.insert("Geo")
            try put(field(g, "lat").flatMap(scalar), "lat", of: geo)
            try a.setValue(geo, forKey: "geo")
        }
        return a
    }

    static func insertRecord(_ json: JSONValue, _ c: ManagedObjectContext) throws -> ManagedObject {
        let r = try c.insert("Record")
        guard case .object(let f) = json else { return r }
        for k in ["name", "city", "age", "score"] { try put(field(f, k).flatMap(scalar), k, of: r) }
        if case .integer(let q)? = field(f, "qty") { try r.setValue(q, forKey: "qty") }
        if case .object(let d)? = field(f, "born"), case let s? = d.first?.1 {
            switch s {
            case .integer(let i): try r.setValue(Date(timeIntervalSince1970: Double(i)), forKey: "born")
            case .double(let x): try r.setValue(Date(timeIntervalSince1970: x), forKey: "born")
            default: break
            }
        }
        let full = has(c, "tags")
        if full, case .array(let tags)? = field(f, "tags") { try put(tags.map(scalar), "tags", of: r) }
        // `mix`, the generator's key of every shape, as a mixed attribute: every value but an object.
        if full, let mix = field(f, "mix") {
            if case .object = mix, mix.date == nil {} else { try r.setValue(mix.value, forKey: "mix") }
        }
        try r.setValue(try insertAddress(field(f, "address"), c), forKey: "address")
        if case .array(let kids)? = field(f, "kids") {
            for kj in kids {
                let k = try c.insert("Kid")
                if case .object(let kf) = kj {
                    try put(field(kf, "name").flatMap(scalar), "name", of: k)
                    try put(field(kf, "age").flatMap(scalar), "age", of: k)
                    try k.setValue(try insertAddress(field(kf, "address"), c), forKey: "address")
                }
                try r.add(k, to: "kids")
            }
        }
        return r
    }

    /// Whether a record has the attribute `key` in `c`'s model (a Core Data layout's has no `tags`
    /// or `mix`).
    static func has(_ c: ManagedObjectContext, _ key: String) -> Bool {
        c.store.model.entity(named: "Record")?.attributes.contains { $0.name == key } ?? false
    }

    /// Random changes left pending: attribute edits, inserts, deletes, and changes to related
    /// objects that stored records reach (a kid's address, a moved kid, a removed address).
    static func mutate(
        _ live: inout [ManagedObject], _ c: ManagedObjectContext, _ g: inout DiffGenerator, joined: Bool = false
    ) throws {
        for _ in 0..<g.int(1...6) {
            guard !live.isEmpty else { return }
            let r = live[g.int(0...(live.count - 1))]
            switch g.int(0...7) {
            case 0: try put(scalar(g.string()), "name", of: r)
            case 1:
                try put(scalar(g.number()), "age", of: r)
                try r.setValue(g.chance(0.5) ? nil : Int64(g.int(-2...12)), forKey: "qty")
            case 2: live.append(try insertRecord(g.record(full: false), c))
            case 3:
                try c.delete(r)
                live.removeAll { $0 === r }
            case 4:
                let kids = try r.get("kids", as: [ManagedObject].self) ?? []
                if let k = kids.first, let a = try k.get("address", as: ManagedObject.self) {
                    try put(scalar(g.string()), "city", of: a)
                } else if let a = try r.get("address", as: ManagedObject.self) {
                    try put(scalar(g.string()), "city", of: a)
                }
            case 5:
                let other = live[g.int(0...(live.count - 1))]
                if let k = (try r.get("kids", as: [ManagedObject].self))?.last {
                    // Moved to another record; in a many-to-many, put first in another record's kids.
                    if joined {
                        let theirs = try other.get("kids", as: [ManagedObject].self) ?? []
                        try other.setValue([k] + theirs.filter { $0 !== k }, forKey: "kids")
                    } else {
                        try k.setValue(other, forKey: "parent")
                    }
                }
            case 6: try r.setValue(nil, forKey: "address")
            default:
                if let a = try r.get("address", as: ManagedObject.self),
                    let geo = try a.get("geo", as: ManagedObject.self)
                {
                    try put(scalar(g.number()), "lat", of: geo)
                } else if has(c, "tags") {
                    try put(["x", 1].map { Optional($0 as Any) }, "tags", of: r)
                }
            }
        }
    }

    enum Outcome { case agreed, raised, sortRaised, unknownKey }

    /// A key the model does not have fails before any row is read (issue 27), also where memory
    /// never reached it on these objects (or raised first on something else): the key named must
    /// really be missing from the entity named.
    static func isMissingKey(_ error: StoreError, in model: ManagedObjectModel) -> Bool {
        let parts = error.message.split(separator: "'", omittingEmptySubsequences: false)
        guard error.kind == .unknownKey, parts.count > 2,
            let entity = model.entity(named: String(parts[0].dropLast(" has no key ".count)))
        else { return false }
        let names = entity.attributes.map(\.name) + entity.relationships.map(\.name)
        return !names.contains(String(parts[1]))
    }

    /// Memory's outcome is an error: every form of the fetch must raise an evaluation error with
    /// the message memory gives for one of the objects it raises on (which one the store meets
    /// first depends on its row order).
    static func expectRaises(
        _ messages: Set<String>, _ request: FetchRequest<ManagedObject>, _ c: ManagedObjectContext, _ what: String
    ) {
        // The store names the row ("row 7: …") where memory's error has no object to name; a key
        // the entity lacks is `unknown-key` before any row is read (memory says the same words).
        func sameError(_ error: StoreError) -> Bool {
            switch error.kind {
            case .evaluation:
                let bare = error.message.replacing(#/^row \d+: /#, with: "")
                return messages.contains(bare)
            case .unknownKey: return isMissingKey(error, in: c.store.model)
            default: return false
            }
        }
        func check(_ form: String, _ run: () throws(StoreError) -> Int) {
            do {
                let n = try run()
                Issue.record(
                    "\(form) answered \(n) for \(what) (limit \(String(describing: request.fetchLimit)), offset \(request.fetchOffset), sorted by \(request.sortDescriptors)) where memory raises \(messages.sorted())"
                )
            } catch {
                #expect(sameError(error), "\(form) for \(what): \(error.message); memory raises \(messages.sorted())")
            }
        }
        check("fetch") { () throws(StoreError) in try c.fetch(request).count }
        check("count") { () throws(StoreError) in try c.count(for: request) }
        check("ID fetch") { () throws(StoreError) in try c.fetchObjectIDs(request).count }
    }

    /// One fetch against the oracle (strict or, sometimes, lenient): memory's rows, or memory's error.
    static func check(
        _ p: GenPred, _ live: [ManagedObject], _ c: ManagedObjectContext, _ g: inout DiffGenerator,
        insertionOrder: [ObjectIdentifier: Int]
    ) throws -> Outcome {
        let (text, args) = p.text
        let syntax = try PredicateSyntax.parse(text, literals: args.map(\.literal))
        let lenient = g.chance(0.25)
        let predicate = SiftPredicate(syntax, source: text, options: EvaluationOptions(lenient: lenient))
        let variables = p.variables
        var expected: [ManagedObject] = []
        var raised: Set<String> = []
        for o in live {
            do throws(EvaluationError) {
                if try predicate.evaluate(with: o, variables: variables.mapValues(\.value)) { expected.append(o) }
            } catch { raised.insert(error.message) }
        }
        var request = FetchRequest("Record", predicate: predicate)
        request.variables = variables.mapValues(\.literal)
        if g.chance(0.5) {
            let keys = ["name", "age", "address.city", "born", "score", "city", "address.geo.lat"]
            request.sortDescriptors = try (0..<g.int(1...2)).map { _ in
                try SiftSortDescriptor(
                    g.pick(keys), ascending: g.chance(0.5),
                    options: g.pick([[], [], .caseInsensitive, [.caseInsensitive, .diacriticInsensitive]]))
            }
        }
        if g.chance(0.3) { request.fetchLimit = g.int(0...5) }
        if g.chance(0.3) { request.fetchOffset = g.int(0...5) }
        let what = "\(lenient ? "lenient " : "")\(text) \(args) vars \(variables) pending \(c.hasChanges)"
        if !raised.isEmpty {
            guard !lenient else {
                Issue.record("lenient memory raised \(raised.sorted()) for \(what)")
                return .raised
            }
            expectRaises(raised, request, c, what)
            return .raised
        }
        // The oracle's order: primary key (inserted objects after, in insertion order), then the
        // sort descriptors, stably; then offset and limit.
        func tiebreak(_ o: ManagedObject) -> (Int64, Int) {
            if let pk = o.objectID.primaryKey { return (pk, 0) }
            return (Int64.max, insertionOrder[ObjectIdentifier(o)] ?? 0)
        }
        expected.sort { tiebreak($0) < tiebreak($1) }
        if !request.sortDescriptors.isEmpty {
            do throws(EvaluationError) {
                expected = try expected.sortedIndices(by: request.sortDescriptors).map { expected[$0] }
            } catch {
                // Memory's sort raises on the matching objects: so must the fetch (not the count).
                do {
                    let rows = try c.fetch(request)
                    Issue.record("fetch answered \(rows.count) rows for \(what) where memory's sort raises: \(error)")
                } catch { #expect(error.kind == .evaluation, "\(what): \(error)") }
                return .sortRaised
            }
        }
        let start = min(request.fetchOffset, expected.count)
        let end = request.fetchLimit.map { min(expected.count, start + $0) } ?? expected.count
        expected = Array(expected[start..<end])

        let fetched: [ManagedObject]
        do { fetched = try c.fetch(request) } catch {
            guard error.kind == .unknownKey else { throw error }
            #expect(isMissingKey(error, in: c.store.model), "\(text): \(error)")
            return .unknownKey
        }
        let same = fetched.count == expected.count && zip(fetched, expected).allSatisfy { $0 === $1 }
        if !same {
            let explain = (try? c.explain(request).description) ?? "?"
            Issue.record(
                """
                fetch disagrees with memory for \(text) \(args) vars \(variables)
                sort \(request.sortDescriptors) limit \(String(describing: request.fetchLimit)) offset \(request.fetchOffset)
                pending changes: \(c.hasChanges)
                expected \(expected.map(\.objectID)) got \(fetched.map(\.objectID))
                \(explain)
                """)
        }
        let n = try c.count(for: request)
        #expect(n == expected.count, "count for \(text)")
        let ids = try c.fetchObjectIDs(request)
        #expect(ids == expected.map(\.objectID), "IDs for \(text)")
        return .agreed
    }

    /// The same for a document entity: the generator's datasets (records that are objects of
    /// every shape, or values) as documents, pending replacements, inserts and deletes, then saved;
    /// the oracle evaluates and sorts the documents themselves.
    @Test func documentFetchesAgreeWithMemory() throws {
        let seed = ProcessInfo.processInfo.environment["SIFT_STORE_DIFF_SEED"].flatMap(UInt64.init) ?? 20_261_125
        let rounds = ProcessInfo.processInfo.environment["SIFT_STORE_DIFF_ROUNDS"].flatMap(Int.init) ?? 60
        var g = DiffGenerator(seed: seed)
        var agreed = 0
        var sortRaised = 0
        var raisedAgreed = 0
        for _ in 0..<rounds {
            let records = g.dataset(count: g.int(3...14))
            // Spare documents for the pending changes, of the dataset's kind (objects or values),
            // declared with the rest so that saving them is valid.
            let spares = (0..<6).map { _ in g.selfRecords ? g.selfRecord() : g.record(full: false) }
            let model = try ManagedObjectModel(entities: [
                EntityDescription("Record", document: DocumentInference.describe(records + spares))
            ])
            let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: model))
            var live: [ManagedObject] = []
            for r in records {
                let o = try c.insert("Record")
                try o.setDocument(r.value)
                live.append(o)
            }
            try c.save()
            for phase in 0..<3 {
                if phase == 1 {
                    for spare in spares {
                        switch g.int(0...2) {
                        case 0: try live[g.int(0...(live.count - 1))].setDocument(spare.value)
                        case 1:
                            let o = try c.insert("Record")
                            try o.setDocument(spare.value)
                            live.append(o)
                        default:
                            guard live.count > 1 else { continue }
                            try c.delete(live.remove(at: g.int(0...(live.count - 1))))
                        }
                    }
                }
                if phase == 2 { try c.save() }
                let order = Dictionary(
                    uniqueKeysWithValues: c.insertedObjects.enumerated().map { (ObjectIdentifier($1), $0) })
                for _ in 0..<20 {
                    let p = g.predicate(depth: 2)
                    let (text, args) = p.text
                    let syntax = try PredicateSyntax.parse(text, literals: args.map(\.literal))
                    let predicate = SiftPredicate(syntax, source: text)
                    let variables = p.variables
                    var expected: [ManagedObject] = []
                    var request = FetchRequest("Record", predicate: predicate)
                    request.variables = variables.mapValues(\.literal)
                    var raised: Set<String> = []
                    for o in live {
                        do throws(EvaluationError) {
                            let document = o.document ?? .null
                            if try predicate.evaluate(with: document, variables: variables.mapValues(\.value)) {
                                expected.append(o)
                            }
                        } catch { raised.insert(error.message) }
                    }
                    if !raised.isEmpty {
                        // Memory raises on an object: the fetch's outcome is memory's error too.
                        Self.expectRaises(raised, request, c, "\(text) \(args) pending \(c.hasChanges)")
                        raisedAgreed += 1
                        continue
                    }
                    if g.chance(0.4) {
                        request.sortDescriptors = [
                            try SiftSortDescriptor(
                                g.pick(["name", "age", "address.city", "SELF"]), ascending: g.chance(0.5))
                        ]
                    }
                    if g.chance(0.3) { request.fetchLimit = g.int(0...5) }
                    func tiebreak(_ o: ManagedObject) -> (Int64, Int) {
                        if let pk = o.objectID.primaryKey { return (pk, 0) }
                        return (Int64.max, order[ObjectIdentifier(o)] ?? 0)
                    }
                    expected.sort { tiebreak($0) < tiebreak($1) }
                    if !request.sortDescriptors.isEmpty {
                        do {
                            expected = try expected.map { $0.document ?? .null }.sortedIndices(
                                by: request.sortDescriptors
                            ).map { expected[$0] }
                        } catch {
                            // Memory's sort raises on the matching documents: so must the fetch.
                            do {
                                let rows = try c.fetch(request)
                                Issue.record("fetch answered \(rows.count) rows for \(text) where memory's sort raises")
                            } catch { #expect(error.kind == .evaluation, "\(text): \(error)") }
                            sortRaised += 1
                            continue
                        }
                    }
                    if let limit = request.fetchLimit { expected = Array(expected.prefix(limit)) }
                    let fetched: [ManagedObject]
                    do { fetched = try c.fetch(request) } catch {
                        Issue.record("fetch failed for \(text) \(args) where memory answers: \(error)")
                        continue
                    }
                    if fetched.count != expected.count || !zip(fetched, expected).allSatisfy({ $0 === $1 }) {
                        Issue.record(
                            """
                            document fetch disagrees with memory for \(text) \(args) vars \(variables) sort \(request.sortDescriptors)
                            pending changes: \(c.hasChanges); expected \(expected.map(\.objectID)) got \(fetched.map(\.objectID))
                            \((try? c.explain(request).description) ?? "?")
                            """)
                    }
                    #expect(try c.count(for: request) == expected.count, "count for \(text)")
                    agreed += 1
                }
            }
        }
        print(
            "store differential (documents): seed \(seed), \(rounds) datasets, \(agreed) fetches compared, \(raisedAgreed) raised as memory does, \(sortRaised) where memory's sort raised"
        )
        #expect(agreed > rounds * 20)
        #expect(raisedAgreed > 0)
    }

    @Test func fetchesAgreeWithMemory() throws {
        try Self.fetchesAgree(defaultSeed: 20_261_123, defaultRounds: 60, joined: false)
    }

    /// The same over kids kept in a join table, both sides ordered (`kids[FIRST]` reads the
    /// join table's order).
    @Test func fetchesOverAnOrderedManyToManyAgreeWithMemory() throws {
        try Self.fetchesAgree(defaultSeed: 20_261_128, defaultRounds: 25, joined: true)
    }

    /// The same over declared attributes (strings and doubles).
    @Test func fetchesOverTypedAttributesAgreeWithMemory() throws {
        try Self.fetchesAgree(defaultSeed: 20_261_129, defaultRounds: 25, joined: false, typed: true)
    }

    /// The same on stores laid out as Core Data lays them out (`Z`-named tables and columns,
    /// `Z_ENT`, `Z_FOK_` orders, Core Data's join table), over `coreDataModel`'s entity hierarchy;
    /// kids in a one-to-many, then in an ordered many-to-many.
    @Test(arguments: [false, true])
    func fetchesOnTheCoreDataLayoutAgreeWithMemory(joined: Bool) throws {
        try Self.fetchesAgree(
            defaultSeed: joined ? 20_261_131 : 20_261_130, defaultRounds: 15, joined: joined, coreData: true)
    }

    static func fetchesAgree(
        defaultSeed: UInt64, defaultRounds: Int, joined: Bool, typed: Bool = false, coreData: Bool = false
    ) throws {
        let seed = ProcessInfo.processInfo.environment["SIFT_STORE_DIFF_SEED"].flatMap(UInt64.init) ?? defaultSeed
        let rounds = ProcessInfo.processInfo.environment["SIFT_STORE_DIFF_ROUNDS"].flatMap(Int.init) ?? defaultRounds
        var g = DiffGenerator(seed: seed)
        let model = try Self.model(joined: joined, typed: typed, coreData: coreData)
        var (agreed, raised, sortRaised, unknownKey, raisedOnQty) = (0, 0, 0, 0, 0)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-diff-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for round in 0..<rounds {
            let store =
                coreData
                ? try PersistentStore(
                    coreDataStoreAt: folder.appendingPathComponent("\(round).sqlite"), model: model, create: true)
                : try PersistentStore.inMemory(model: model)
            let c = ManagedObjectContext(store: store)
            var live = try g.dataset(count: g.int(3...14)).map { try Self.insertRecord($0, c) }
            try c.save()
            for phase in 0..<3 {
                // 0: clean; 1: pending changes; 2: the same changes saved.
                if phase == 1 { try Self.mutate(&live, c, &g, joined: joined) }
                if phase == 2 { try c.save() }
                let order = Dictionary(
                    uniqueKeysWithValues: c.insertedObjects.enumerated().map { (ObjectIdentifier($1), $0) })
                for _ in 0..<20 {
                    let p = g.predicate(depth: 2)
                    switch try Self.check(p, live, c, &g, insertionOrder: order) {
                    case .agreed: agreed += 1
                    case .raised:
                        raised += 1
                        // Mostly nil into arithmetic on the typed `qty`.
                        if p.text.0.contains("qty") { raisedOnQty += 1 }
                    case .sortRaised: sortRaised += 1
                    case .unknownKey: unknownKey += 1
                    }
                }
            }
        }
        print(
            "store differential\(coreData ? " (Core Data layout)" : "")\(joined ? " (kids in a join table)" : "")\(typed ? " (typed)" : ""): seed \(seed) (SIFT_STORE_DIFF_SEED), \(rounds) graphs, \(agreed) fetches compared, \(raised) raised as memory does (\(raisedOnQty) reading the typed qty), \(sortRaised) where memory's sort raised, \(unknownKey) unknown keys"
        )
        #expect(agreed > rounds * 30)
        #expect(raised > 0)
    }
}
