// Unknown keys, found before a request reads a row. Memory raises `unknown-key` only on an object
// it reaches, so a misspelt key used to answer 0 rows on an empty store, behind an AND arm that
// rejects every row, or in a batch delete, without a word. Every key path a request names (the
// predicate, sort keys, properties, group-by keys, aggregates, batch-update expressions) is walked
// here against the model first: each step is a key of the entity reached so far (or of one of its
// sub-entities, whose objects a fetch may return), a relationship leads on to its destination, and
// the walk stops at an attribute (what follows reads a value: memory decides) or at an open entity
// (documents, `open` entities: a missing key is nil there, as in memory). A transient attribute
// is refused (the store does not hold it, as Core Data's SQLite store refuses them). A key path whose start
// is not an object of the model (`$VAR`, a function's result) is not checked.

import Foundation
import SiftEvaluation
import SiftSyntax

/// Checks the key paths of one text (a predicate, a sort key, an expression) against the model.
struct KeyCheck {
    let model: ManagedObjectModel
    /// The text the syntax was parsed from: errors point into it.
    let source: String?
    /// Subquery variables in scope, with the entity of their elements (nil: not an entity's).
    private var variables: [String: String?] = [:]
    /// Whether a comparison walked so far reads an attribute whose values may differ in kind from
    /// row to row (`.dynamic`, or mixed shapes) in a form that raises on some kinds (ordering,
    /// string operators, quantifiers, collection operators, arithmetic): memory may raise on a
    /// row where SQL answers. Plain `==`, `!=` and `IN` a literal list never raise on kinds.
    private(set) var readsMixedKinds = false
    /// Whether a key path walked since the last comparison began ends on such an attribute that
    /// holds one value (`scalars`), or a collection of values of different kinds (`collections`).
    private var touchesMixedKinds: (scalars: Bool, collections: Bool) = (false, false)
    /// Every relationship a key path walked through, with the entity it was read on (a derived
    /// attribute's value depends on the objects at their ends: `Derivations`).
    private(set) var steps: [(entity: String, relationship: ResolvedRelationship)] = []

    init(model: ManagedObjectModel, source: String?) {
        self.model = model
        self.source = source
    }

    /// Checks `text` (a key path or any expression) on objects of `entity`; a syntax error is the
    /// store's syntax error, located in `text`.
    /// Returns whether it reads an attribute whose values differ in kind (`readsMixedKinds`).
    @discardableResult
    static func expression(_ text: String, of entity: String, in model: ManagedObjectModel) throws(StoreError) -> Bool {
        let e: ExpressionSyntax
        do { e = try ExpressionSyntax.parse(text) } catch { throw StoreError(error) }
        var check = KeyCheck(model: model, source: text)
        try check.expression(e, entity)
        return check.readsMixedKinds || check.touchesMixedKinds.scalars || check.touchesMixedKinds.collections
    }

    mutating func predicate(_ p: PredicateSyntax, _ entity: String) throws(StoreError) {
        try StackGuard.ensure { () throws(StoreError) in try predicateHere(p, entity) }
    }

    private mutating func predicateHere(_ p: PredicateSyntax, _ entity: String) throws(StoreError) {
        switch p.kind {
        case .constant: break
        case .and(let ops), .or(let ops): for o in ops { try predicate(o, entity) }
        case .not(let o): try predicate(o, entity)
        case .comparison(let quantifier, let l, let op, _, let r):
            let outer = touchesMixedKinds
            touchesMixedKinds = (false, false)
            try expression(l, entity)
            try expression(r, entity)
            let (scalars, collections) = touchesMixedKinds
            if scalars && !Self.neverRaisesOnKinds(quantifier, l, op, r)
                || collections && !Self.neverRaisesOnElements(l, op, r)
            {
                readsMixedKinds = true
            }
            touchesMixedKinds = (outer.scalars || scalars, outer.collections || collections)
        }
    }

    mutating func expression(_ e: ExpressionSyntax, _ entity: String) throws(StoreError) {
        try StackGuard.ensure { () throws(StoreError) in try expressionHere(e, entity) }
    }

    private mutating func expressionHere(_ e: ExpressionSyntax, _ entity: String) throws(StoreError) {
        switch e.kind {
        case .constant, .variable, .evaluatedObject: break
        case .keyPath(nil, let components): _ = try keyPath(components, from: entity, e.range)
        case .keyPath(let base?, let components):
            switch base.kind {
            case .evaluatedObject: _ = try keyPath(components, from: entity, e.range)
            case .variable(let name):
                if case .some(.some(let bound)) = variables[name] { _ = try keyPath(components, from: bound, e.range) }
            default: try expression(base, entity)
            }
        case .dynamicKey(let base, let key):
            try expression(base, entity)
            try expression(key, entity)
        case .customFunction(let target, _, let args):
            try expression(target, entity)
            for x in args { try expression(x, entity) }
        case .aggregate(let es): for x in es { try expression(x, entity) }
        case .function(_, let args): for x in args { try expression(x, entity) }
        case .index(let b, let i):
            try expression(b, entity)
            if case .expression(let x) = i { try expression(x, entity) }
        case .binary(_, let l, let r):
            try expression(l, entity)
            try expression(r, entity)
        case .unary(_, let x): try expression(x, entity)
        case .subquery(let collection, let v, let body):
            try expression(collection, entity)
            var element: String?
            if case .keyPath(nil, let components) = collection.kind {
                element = try keyPath(components, from: entity, collection.range)
            }
            let saved = variables[v]
            variables[v] = .some(element)
            defer { variables[v] = saved }
            try predicate(body, entity)
        case .ternary(let c, let t, let f):
            try predicate(c, entity)
            try expression(t, entity)
            try expression(f, entity)
        case .cast(let v, let t):
            try expression(v, entity)
            try expression(t, entity)
        case .assignment(_, let v): try expression(v, entity)
        }
    }

    /// Walks `components` from `start`; returns the entity the path ends on when its last step is
    /// a relationship, nil when it ends on a value (or where the walk stopped checking).
    @discardableResult
    mutating func keyPath(_ components: [String], from start: String, _ range: SourceRange) throws(StoreError)
        -> String?
    {
        var entity = start
        for (i, key) in components.enumerated() {
            if KeyPathComponent.isCollectionOperator(key) { continue }
            guard let r = model.resolved[entity], !r.isOpen else { return nil }
            let family = r.family.compactMap { model.resolved[$0] }
            if let owner = family.first(where: { $0.transientIndex[key] != nil }) {
                throw StoreError(
                    .invalidOperation,
                    "\(owner.name).\(key) is transient: the store does not hold it, so a fetch request cannot name it; filter the fetched objects in memory"
                )
            }
            if !model.fetchedProperties.isEmpty,
                let owner = family.first(where: { model.fetchedProperties[$0.name]?[key] != nil })
            {
                throw StoreError(
                    .invalidOperation,
                    "\(owner.name).\(key) is a fetched property: the store does not hold it, so a fetch request cannot name it; read it on the fetched objects"
                )
            }
            let attributes = family.compactMap { $0.attribute(key) }
            if !attributes.isEmpty {
                // A key after an attribute reads into its value: memory answers or raises by the
                // value's kind (`number has no key 'city'`), which only memory can tell.
                if components[(i + 1)...].contains(where: { !KeyPathComponent.isCollectionOperator($0) }) {
                    readsMixedKinds = true
                }
                for a in attributes where a.type == .dynamic || a.type == .mixed {
                    if a.type == .dynamic && a.description.isCollection {
                        touchesMixedKinds.collections = true
                    } else {
                        touchesMixedKinds.scalars = true
                    }
                }
                return nil
            }
            guard let rel = family.lazy.compactMap({ $0.relationship(key) }).first else {
                throw unknown(key, of: r, components: components, index: i, range)
            }
            steps.append((entity, rel))
            entity = rel.destination
        }
        return entity
    }

    /// `Item has no key 'prise'; did you mean 'price'?`, located at the key in the source.
    private func unknown(
        _ key: String, of entity: ResolvedEntity, components: [String], index: Int, _ range: SourceRange
    ) -> StoreError {
        let names = Set(
            entity.family.compactMap { model.resolved[$0] }.flatMap {
                $0.attributes.map(\.name) + $0.relationships.map(\.name)
            })
        var error = StoreError(
            .unknownKey,
            failures: [
                .init(
                    "\(entity.name) has no key '\(key)'" + KeyCheck.suggestion(for: key, among: names),
                    entity: entity.name, keys: [key], constraint: .unknownKey)
            ])
        guard let source else { return error }
        // Under the key itself when the path is written plainly (`a.b.c`, `$v.a.b`), else under
        // the whole path.
        var lower = range.lowerBound
        var upper = range.upperBound
        let utf8 = Array(source.utf8)
        let path = Array(components.joined(separator: ".").utf8)
        if 0 <= lower, lower <= upper, upper <= utf8.count, upper - lower >= path.count {
            let start = upper - path.count
            if Array(utf8[start..<upper]) == path, start == lower || utf8[start - 1] == UInt8(ascii: ".") {
                lower = start + components[..<index].reduce(0) { $0 + $1.utf8.count + 1 }
                upper = lower + key.utf8.count
            }
        }
        error.locate(in: source, SourceRange(lower, upper))
        return error
    }

    /// `; did you mean 'price'?` (or `'a' or 'b'`), or nothing when no name is near `key`.
    static func suggestion(for key: String, among names: some Sequence<String>) -> String {
        let close = closest(to: key, among: Set(names))
        return close.isEmpty ? "" : "; did you mean " + close.map { "'\($0)'" }.joined(separator: " or ") + "?"
    }

    /// The names nearest `key` in edit distance (case ignored), at most three, when near enough
    /// to be a slip: within a third of the key's length (at least 2 edits).
    static func closest(to key: String, among names: Set<String>) -> [String] {
        let limit = max(2, key.count / 3)
        let scored = names.map { ($0, editDistance(key.lowercased(), $0.lowercased())) }.filter { $0.1 <= limit }
        guard let best = scored.map(\.1).min() else { return [] }
        return scored.filter { $0.1 == best }.map(\.0).sorted().prefix(3).map { $0 }
    }

    /// Levenshtein distance over characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

extension KeyCheck {
    /// Whether `p` reads an attribute whose values may differ in kind between rows (`.dynamic`,
    /// mixed shapes) on objects of `entity`. Such a predicate is judged in memory, where a value
    /// of a kind memory refuses raises memory's error (or, lenient, answers false) instead of
    /// SQL ordering any text above any number. (The walk assumes the keys were checked.)
    static func readsMixedKinds(_ p: PredicateSyntax, of entity: String, in model: ManagedObjectModel) -> Bool {
        var check = KeyCheck(model: model, source: nil)
        do { try check.predicate(p, entity) } catch { return true }
        return check.readsMixedKinds
    }

    /// `a == b`, `a != b` or `a IN {…}` between plain key paths and constants: memory answers
    /// these for values of any kinds without raising.
    static func neverRaisesOnKinds(
        _ quantifier: Quantifier?, _ l: ExpressionSyntax, _ op: ComparisonOperator, _ r: ExpressionSyntax
    ) -> Bool {
        func plain(_ e: ExpressionSyntax) -> Bool {
            switch e.kind {
            case .constant, .variable: return true
            case .keyPath(nil, let components):
                return !components.contains(where: KeyPathComponent.isCollectionOperator)
            case .aggregate(let es): return op == .in && es.allSatisfy(plain)
            default: return false
            }
        }
        guard quantifier == nil, op == .equal || op == .notEqual || op == .in else { return false }
        return plain(l) && plain(r)
    }

    /// A comparison over a collection whose elements differ in kind that never orders or matches
    /// the elements: equality on them (quantified or not) or their `@count`, the only collection
    /// operator used.
    static func neverRaisesOnElements(_ l: ExpressionSyntax, _ op: ComparisonOperator, _ r: ExpressionSyntax) -> Bool {
        func countsOnly(_ e: ExpressionSyntax) -> (ok: Bool, counts: Bool) {
            switch e.kind {
            case .constant, .variable: return (true, false)
            case .keyPath(nil, let components):
                let operators = components.filter(KeyPathComponent.isCollectionOperator)
                return (operators.allSatisfy { $0 == "@count" }, !operators.isEmpty)
            case .aggregate(let es): return (es.allSatisfy { countsOnly($0).ok && !countsOnly($0).counts }, false)
            default: return (false, false)
            }
        }
        let (a, b) = (countsOnly(l), countsOnly(r))
        guard a.ok, b.ok else { return false }
        return op == .equal || op == .notEqual || op == .in || a.counts || b.counts
    }

    /// Checks every key path of a fetch request: predicate, sort keys, properties to fetch,
    /// group-by keys and aggregates.
    /// Also says, from the same walk, whether the predicate and the sort keys read attributes
    /// whose values differ in kind (the fetch then judges those parts in memory).
    static func check(_ request: FetchRequest<ManagedObject>, in model: ManagedObjectModel) throws(StoreError) -> (
        predicateReadsMixedKinds: Bool, sortReadsMixedKinds: Bool
    ) {
        let entity = request.entityName
        var predicateFlag = false
        if let p = request.predicate {
            var check = KeyCheck(model: model, source: p.source)
            try check.predicate(p.syntax, entity)
            predicateFlag = check.readsMixedKinds
        }
        var sortFlag = false
        for d in request.sortDescriptors where try expression(d.keyPath, of: entity, in: model) { sortFlag = true }
        for k in (request.propertiesToFetch ?? []) + (request.propertiesToGroupBy ?? []) {
            try expression(k, of: entity, in: model)
        }
        for a in request.aggregates where !a.keyPath.isEmpty {
            do { try expression(a.keyPath, of: entity, in: model) } catch { throw a.locate(error) }
        }
        return (predicateFlag, sortFlag)
    }
}
