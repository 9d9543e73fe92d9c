// A generator of random predicates over any model, for the model-driven differential
// (ModelPredicateDifferentialTests): comparisons of every attribute type with constants taken from
// the stored values or moved off them, to-one paths, quantifiers, aggregates and SUBQUERY over
// to-manys, two keys compared, relationships compared with objects, sort descriptors.

import Foundation
import SiftEvaluation
import SiftTestSupport

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
        let p = argument(object)
        if !r.isToMany { return "\(r.name) \(pick(["==", "!="])) \(p)" }
        return pick(["ANY \(r.name) == \(p)", "\(p) IN \(r.name)", "NONE \(r.name) == \(p)", "ALL \(r.name) != \(p)"])
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
            if op == "IN" { return "\(key) IN " + argument([constantValue(a, entity), constantValue(a, entity)]) }
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
                return "\(key) \(op) " + argument([constantValue(a, entity), constantValue(a, entity)])
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

    /// `%@` for a constant of `a` (cut to a prefix, suffix or pattern for the text operator `op`).
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
        return argument(v)
    }

    /// `%@`, with `value` appended to the arguments.
    private mutating func argument(_ value: Any?) -> String {
        arguments.append(value)
        return "%@"
    }

    /// A value for `a`: a stored one (often), moved off one, or made up; as a Swift value.
    mutating func constantValue(_ a: AttributeDescription, _ entity: String) -> Any? {
        // Now and then a constant of another kind: memory compares it as false or raises.
        if chance(0.05) { return madeUp(pick([.string, .integer64, .date, .boolean, .binary])) }
        let seen = samples[entity]?[a.name] ?? []
        if !seen.isEmpty, chance(0.7) {
            let v = pick(seen)
            return chance(0.75) ? Self.swift(v) : moved(v)
        }
        return madeUp(a.type)
    }

    /// `v` as the Swift value a `%@` argument takes.
    static func swift(_ v: Value) -> Any? {
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

    /// A value near `v` of its kind (another case, one more, a second later), or `v`.
    mutating func moved(_ v: Value) -> Any? {
        switch v {
        case .integer(let i): return i &+ Int64(int(-2...2))
        case .double(let d): return d + pick([-1, 0.5, 1e-9, 2])
        case .decimal(let d): return d + Decimal(int(-1...1))
        case .string(let s): return pick([s.uppercased(), s.lowercased(), s + "x", String(s.dropFirst()), ""])
        case .date(let d): return d.addingTimeInterval(pick([-1, 1, 0.5]))
        case .data(let d): return d + [0]
        case .bool(let b): return !b
        default: return Self.swift(v)
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
