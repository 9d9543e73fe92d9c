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

/// Random predicates over one model, with `%@` arguments in order of appearance.
struct ModelPredicates {
    let model: ManagedObjectModel
    /// Per entity and attribute, the non-nil values the objects hold.
    let samples: [String: [String: [Value]]]
    /// The objects by entity (sub-entities' under their own names), for object arguments.
    let objects: [String: [ManagedObject]]
    var rng: SplitMix64
    var arguments: [Any?] = []

    init(model: ManagedObjectModel, objects: [ManagedObject], seed: UInt64) {
        self.model = model
        var samples: [String: [String: [Value]]] = [:]
        for o in objects {
            for a in Self.attributes(of: o.objectID.entityName, in: model) {
                if let v = o[a.name], v != .null {
                    samples[o.objectID.entityName, default: [:]][a.name, default: []].append(v)
                }
            }
        }
        self.samples = samples
        self.objects = Dictionary(grouping: objects) { $0.objectID.entityName }
        self.rng = SplitMix64(seed: seed)
    }

    /// The entity's attributes and relationships, inherited ones included.
    static func attributes(of entity: String, in model: ManagedObjectModel) -> [AttributeDescription] {
        guard let e = model.entity(named: entity) else { return [] }
        return (e.parent.map { attributes(of: $0, in: model) } ?? []) + e.attributes.filter { !$0.isTransient }
    }

    static func relationships(of entity: String, in model: ManagedObjectModel) -> [RelationshipDescription] {
        guard let e = model.entity(named: entity) else { return [] }
        return (e.parent.map { relationships(of: $0, in: model) } ?? []) + e.relationships
    }

    mutating func int(_ r: ClosedRange<Int>) -> Int { Int.random(in: r, using: &rng) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func pick<T>(_ a: [T]) -> T { a[int(0...(a.count - 1))] }

    /// A predicate over `entity`, `depth` levels of AND/OR/NOT at most.
    mutating func predicate(_ entity: String, depth: Int) -> String {
        if depth > 0, chance(0.45) {
            switch int(0...2) {
            case 0: return "(\(predicate(entity, depth: depth - 1)) AND \(predicate(entity, depth: depth - 1)))"
            case 1: return "(\(predicate(entity, depth: depth - 1)) OR \(predicate(entity, depth: depth - 1)))"
            default: return "NOT (\(predicate(entity, depth: depth - 1)))"
            }
        }
        let relationships = Self.relationships(of: entity, in: model)
        let toOnes = relationships.filter { !$0.isToMany }
        let toManys = relationships.filter(\.isToMany)
        switch int(0...9) {
        case 0...3: return comparison(entity, prefix: "")
        case 4 where !toOnes.isEmpty:
            let r = pick(toOnes)
            return chance(0.15)
                ? "\(r.name) \(pick(["==", "!="])) nil" : comparison(r.destination, prefix: r.name + ".")
        case 5 where !toManys.isEmpty:
            let r = pick(toManys)
            return "\(pick(["ANY", "ALL", "NONE"])) "
                + comparison(r.destination, prefix: r.name + ".", scalarOnly: true)
        case 6 where !toManys.isEmpty:
            let r = pick(toManys)
            return "\(r.name).@count \(pick(["==", "!=", "<", ">", ">="])) \(int(0...3))"
        case 7 where !toManys.isEmpty:
            let r = pick(toManys)
            return
                "SUBQUERY(\(r.name), $x, \(comparison(r.destination, prefix: "$x."))).@count \(pick([">", "==", "<"])) \(int(0...2))"
        case 8 where !toManys.isEmpty:
            let r = pick(toManys)
            let numeric = Self.attributes(of: r.destination, in: model).filter { $0.type.isNumeric && !$0.isCollection }
            guard !numeric.isEmpty else { return comparison(entity, prefix: "") }
            let a = pick(numeric)
            return "\(r.name).\(pick(["@max", "@min", "@sum", "@avg"])).\(a.name) \(pick(["<", ">", "==", "!="])) "
                + constant(a, r.destination)
        case 9 where !relationships.isEmpty && chance(0.5):
            return objectComparison(pick(relationships))
        default: return twoKeys(entity) ?? comparison(entity, prefix: "")
        }
    }

    /// A relationship compared with an object of its destination (or nil): `box == %@`,
    /// `ANY labels == %@`, `%@ IN labels`, `NONE parts == %@`.
    mutating func objectComparison(_ r: RelationshipDescription) -> String {
        let candidates = objects[r.destination] ?? []
        let object: ManagedObject? = candidates.isEmpty || chance(0.1) ? nil : pick(candidates)
        arguments.append(object)
        if !r.isToMany { return "\(r.name) \(pick(["==", "!="])) %@" }
        return pick(["ANY \(r.name) == %@", "%@ IN \(r.name)", "NONE \(r.name) == %@", "ALL \(r.name) != %@"])
    }

    /// One or two sort descriptors on the entity's attributes or its to-ones', with string options.
    mutating func sortDescriptors(_ entity: String) -> [SiftSortDescriptor] {
        var keys = Self.attributes(of: entity, in: model).filter { $0.type != .transformable }.map(\.name)
        for r in Self.relationships(of: entity, in: model) where !r.isToMany {
            keys += Self.attributes(of: r.destination, in: model).filter { $0.type != .transformable }.map {
                r.name + "." + $0.name
            }
        }
        guard !keys.isEmpty else { return [] }
        return (0..<int(1...2)).compactMap { _ in
            try? SiftSortDescriptor(
                pick(keys), ascending: chance(0.5),
                options: pick([[], [], .caseInsensitive, [.caseInsensitive, .diacriticInsensitive]]))
        }
    }

    /// One attribute compared with a constant of its kind (or nil).
    mutating func comparison(_ entity: String, prefix: String, scalarOnly: Bool = false) -> String {
        let attributes = Self.attributes(of: entity, in: model).filter { !$0.isCollection && $0.type != .transformable }
        guard !attributes.isEmpty else { return "TRUEPREDICATE" }
        let a = pick(attributes)
        let key = prefix + a.name
        if chance(0.1) { return "\(key) \(pick(["==", "!="])) nil" }
        switch a.type {
        case .string, .uri:
            let op = pick(["==", "!=", "<", ">", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "IN"])
            let options = pick(["", "", "[c]", "[cd]", "[d]"])
            if op == "IN" { return "\(key) IN %@" + append([constantValue(a, entity), constantValue(a, entity)]) }
            return "\(key) \(op)\(options) " + constant(a, entity, text: op)
        case .boolean: return "\(key) \(pick(["==", "!="])) " + constant(a, entity)
        case .binary, .uuid: return "\(key) \(pick(["==", "!="])) " + constant(a, entity)
        default:
            let op = pick(["==", "!=", "<", "<=", ">", ">=", "BETWEEN", "IN"])
            if a.type.isNumeric, chance(0.15) {
                // Arithmetic: memory raises on nil, where SQL computes NULL.
                return "(\(key) \(pick(["+", "-", "*"])) \(int(1...3))) \(op == "BETWEEN" || op == "IN" ? "<" : op) "
                    + constant(a, entity)
            }
            if op == "BETWEEN" || op == "IN" {
                return "\(key) \(op) %@" + append([constantValue(a, entity), constantValue(a, entity)])
            }
            return "\(key) \(op) " + constant(a, entity)
        }
    }

    /// Two attributes of one entity and type compared (`year > price`, `name ==[c] title`).
    mutating func twoKeys(_ entity: String) -> String? {
        let attributes = Self.attributes(of: entity, in: model).filter { !$0.isCollection && $0.type != .transformable }
        let numeric = attributes.filter(\.type.isNumeric)
        let strings = attributes.filter { $0.type == .string }
        if numeric.count >= 2, chance(0.6) {
            return "\(pick(numeric).name) \(pick(["==", "!=", "<", ">="])) \(pick(numeric).name)"
        }
        // Across a to-one: `box.capacity > integer16Value`.
        if let r = Self.relationships(of: entity, in: model).filter({ !$0.isToMany }).randomElement(using: &rng),
            !numeric.isEmpty, chance(0.5)
        {
            let theirs = Self.attributes(of: r.destination, in: model).filter(\.type.isNumeric)
            if !theirs.isEmpty {
                return "\(r.name).\(pick(theirs).name) \(pick(["==", "!=", "<", ">="])) \(pick(numeric).name)"
            }
        }
        if !strings.isEmpty {
            return
                "\(pick(strings).name) \(pick(["==", "!=", "BEGINSWITH", "<"]))\(pick(["", "[c]"])) \(pick(strings).name)"
        }
        return nil
    }

    /// `%@`, with a constant for `a` appended to the arguments.
    mutating func constant(_ a: AttributeDescription, _ entity: String, text op: String = "") -> String {
        var v = constantValue(a, entity)
        if let s = v as? String, !s.isEmpty {
            switch op {
            case "BEGINSWITH": v = String(s.prefix(int(1...s.count)))
            case "ENDSWITH", "CONTAINS": v = String(s.suffix(int(1...s.count)))
            case "LIKE": v = String(s.prefix(int(0...s.count))) + pick(["*", "?", ""])
            default: break
            }
        }
        return "%@" + append([v].map { $0 })
    }

    private mutating func append(_ values: [Any?]) -> String {
        arguments.append(values.count == 1 ? values[0] : values)
        return ""
    }

    /// A value for `a`: a stored one (often), moved off one, or made up; as a Swift value.
    mutating func constantValue(_ a: AttributeDescription, _ entity: String) -> Any? {
        // Now and then a constant of another kind: memory compares it as false or raises.
        if chance(0.05) { return madeUp(pick([.string, .integer64, .date, .boolean, .binary])) }
        let seen = samples[entity]?[a.name] ?? []
        if !seen.isEmpty, chance(0.7) {
            let v = pick(seen)
            return chance(0.75) ? Self.swift(v, a.type) : moved(v, a.type)
        }
        return madeUp(a.type)
    }

    static func swift(_ v: Value, _ type: AttributeType) -> Any? {
        switch v {
        case .null: return nil
        case .bool(let b): return b
        case .integer(let i): return i
        case .double(let d): return d
        case .decimal(let d): return d
        case .string(let s): return s
        case .date(let d): return d
        case .data(let d): return d
        default: return "\(v)"
        }
    }

    mutating func moved(_ v: Value, _ type: AttributeType) -> Any? {
        switch v {
        case .integer(let i): return i &+ Int64(int(-2...2))
        case .double(let d): return d + pick([-1, 0.5, 1e-9, 2])
        case .decimal(let d): return d + Decimal(int(-1...1))
        case .string(let s): return pick([s.uppercased(), s.lowercased(), s + "x", String(s.dropFirst()), ""])
        case .date(let d): return d.addingTimeInterval(pick([-1, 1, 0.5]))
        case .data(let d): return d + [0]
        case .bool(let b): return !b
        default: return Self.swift(v, type)
        }
    }

    mutating func madeUp(_ type: AttributeType) -> Any? {
        switch type {
        case .integer16, .integer32, .integer64: return Int64(int(-3...3))
        case .double, .float: return pick([0.0, -1.5, 2.25, 1e300])
        case .decimal: return Decimal(string: pick(["0", "1.5", "-2", "1500.5"]))!
        case .string, .uri: return pick(["", "a", "Ann", "é", "E", "x*"])
        case .boolean: return chance(0.5)
        case .date: return Date(timeIntervalSinceReferenceDate: Double(int(-3...3)) * 1000)
        case .binary: return Data([UInt8(int(0...3))])
        case .uuid: return pick(["00112233-4455-6677-8899-AABBCCDDEEFF", "nope"])
        default: return nil
        }
    }
}

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
            do { try o.setValue(value.flatMap { ModelPredicates.swift($0, a.type) }, forKey: a.name) } catch {}
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
