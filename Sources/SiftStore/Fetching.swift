// Executing fetch requests. The plan: lower the whole predicate; when the lowering refuses it, keep
// the conjuncts of a top-level AND it accepts (SQL) and evaluate the rest in memory on the rows SQL
// returns (the residual). Strict, only the conjuncts before the first one left to memory go to SQL,
// so memory's error precedence holds (it raises at the first raising conjunct it reaches).
// Sorting, limits and offsets go to SQL only when nothing is left for memory; otherwise they are
// applied after the residual, in memory, with the same order (the evaluator's sort is the order
// the lowering's ORDER BY produces, ties broken by primary key).
//
// Pending changes: the result must equal saving first and fetching then. The objects whose answer
// may differ from the stored one are the changed objects of the entity, and the stored objects
// whose key paths (in the predicate or the sort) reach a changed object; the latter are found by
// walking the model's relationships backwards in SQL from the changed rows. Those "dirty" objects
// are judged in memory on their current state; every other row keeps SQL's answer.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite
import SiftSyntax

/// A fetch's split between SQL and memory.
struct FetchPlan {
    var info: EntityInfo
    var family: Set<String>
    var lowering: SQLLowering
    var pushed: PredicateSyntax
    var residual: SiftPredicate?
    var residualReason: String?
    var full: SiftPredicate
    var sqlSort: [SQLSortKey]?
    var variables: [String: Value]
}

extension ManagedObjectContext {
    // MARK: Public entry points

    /// The matching objects, sorted and limited as the request says, as the request's class:
    /// `[ManagedObject]` for `FetchRequest("Item")`, `[Employee]` for
    /// `FetchRequest(Employee.self)`. An object that is not an instance of that class (its
    /// entity's class not registered with the model) is a `.typeMismatch` error.
    ///
    /// ```swift
    /// let items = try context.fetch(FetchRequest("Item", predicate: "price > %@", 10))
    /// let staff = try context.fetch(FetchRequest(Employee.self))   // [Employee]
    /// ```
    public func fetch<Object>(_ request: FetchRequest<Object>) throws(StoreError) -> [Object] {
        let request = request.untyped
        let plan = try makePlan(request)
        let objects = try matchingObjects(request, plan)
        try prefetch(request.relationshipKeyPathsForPrefetching, for: objects)
        if Object.self == ManagedObject.self { return unsafeBitCast(objects, to: [Object].self) }
        for o in objects where !(o is Object) { throw Self.notAn(Object.self, o) }
        // Every element was checked to be an `Object`: the array's references are the same bits.
        return unsafeBitCast(objects, to: [Object].self)
    }

    /// The IDs of the matching objects.
    public func fetchObjectIDs<Object>(_ request: FetchRequest<Object>) throws(StoreError) -> [ObjectID] {
        let request = request.untyped
        let plan = try makePlan(request)
        if plan.residual == nil, try dirtyObjects(request, plan) == nil, plan.sqlSort != nil {
            // Without sub-entities every row is of the requested entity: the key alone will do.
            let single = plan.family.count == 1 ? plan.info : nil
            let q = try query(
                plan, request,
                columns: single == nil ? [Storage.primaryKey, Storage.entityColumn] : [Storage.primaryKey],
                limited: true)
            return try store.locked { () throws(StoreError) in
                do throws(SQLiteError) {
                    let s = try store.statement(q.sql)
                    try s.bind(q.bindings)
                    var out: [ObjectID] = []
                    while try s.step() {
                        // `key` asks SQLite for the column once (class and value together).
                        guard case .integer(let pk) = s.key(0) else { continue }
                        if let single {
                            out.append(ObjectID(single.names, key: .permanent(pk)))
                            continue
                        }
                        guard case .integer(let ent) = s.key(1), let info = store.infoByNumber[ent] else { continue }
                        out.append(ObjectID(info.names, key: .permanent(pk)))
                    }
                    try s.reset()
                    return out
                } catch { throw error.storeError }
            }
        }
        return try matchingObjects(request, plan).map(\.objectID)
    }

    /// The number of matching objects (limit and offset applied, as Core Data does).
    public func count<Object>(for request: FetchRequest<Object>) throws(StoreError) -> Int {
        let request = request.untyped
        let plan = try makePlan(request)
        if plan.residual == nil, try dirtyObjects(request, plan) == nil {
            return Self.limited(try sqlCount(plan, request), request)
        }
        var unlimited = request
        unlimited.fetchLimit = nil
        unlimited.fetchOffset = 0
        return Self.limited(try matchingObjects(unlimited, plan).count, request)
    }

    /// The error for a fetched object `o` that is not an instance of the request's class.
    static func notAn<Object>(_: Object.Type, _ o: ManagedObject) -> StoreError {
        StoreError(
            .typeMismatch,
            "\(o.objectID) is a '\(String(reflecting: type(of: o)))', not a '\(String(reflecting: Object.self))' (register the entity's class with the model: ManagedObjectModel(entities:classes:))"
        )
    }

    /// Memory's answer for `o`: on its document for a document entity (so a document that is not
    /// an object is SELF itself), through key-value coding otherwise.
    @inline(__always)
    static func matches(_ p: SiftPredicate, _ o: ManagedObject, _ variables: [String: Value]) throws(EvaluationError)
        -> Bool
    {
        if o.info.entity.document != nil { return try p.evaluate(with: o.evaluationRoot, variables: variables) }
        return try p.evaluate(with: o, variables: variables)
    }

    static func limited(_ n: Int, _ r: FetchRequest<ManagedObject>) -> Int {
        let afterOffset = max(0, n - r.fetchOffset)
        return r.fetchLimit.map { min($0, afterOffset) } ?? afterOffset
    }

    /// Dictionaries of the matching objects: `propertiesToFetch` (or every attribute), distinct
    /// when asked, or one per group with its aggregates. Computed in memory over the matching
    /// objects, so pending changes take part here too.
    public func fetchDictionaries<Object>(_ request: FetchRequest<Object>) throws(StoreError) -> [[String: Value]] {
        let request = request.untyped
        var unlimited = request
        unlimited.fetchLimit = nil
        unlimited.fetchOffset = 0
        let plan = try makePlan(request)
        let objects = try matchingObjects(
            request.propertiesToGroupBy == nil && !request.returnsDistinctResults ? request : unlimited, plan)
        let info = plan.info
        // A document entity's properties are its documents' top-level keys.
        let properties =
            request.propertiesToFetch
            ?? info.entity.document.map { _ in info.entity.description.document?.shape.object?.keys.map(\.name) ?? [] }
            ?? info.entity.attributes.map(\.name)
        var rows: [[String: Value]] = []
        if request.propertiesToGroupBy == nil, !request.aggregates.isEmpty {
            // Aggregates without grouping: one row over every match (counts 0 when none match).
            var row: [String: Value] = [:]
            for a in request.aggregates { row[a.name] = try aggregate(a, objects) }
            return [row]
        }
        if let groupBy = request.propertiesToGroupBy {
            rows = try grouped(objects, by: Self.readers(groupBy), aggregates: request.aggregates)
        } else {
            let keys = try Self.readers(properties)
            var seen = Set<[ValueKey]>()
            for o in objects {
                let (row, key) = try Self.row(keys, o)
                if request.returnsDistinctResults, !seen.insert(key).inserted { continue }
                rows.append(row)
            }
        }
        if request.propertiesToGroupBy != nil || request.returnsDistinctResults {
            let start = min(request.fetchOffset, rows.count)
            let end = request.fetchLimit.map { min(rows.count, start + $0) } ?? rows.count
            rows = Array(rows[start..<end])
        }
        return rows
    }

    /// One row per distinct combination of `keys`' values over `objects`, in order of first
    /// appearance, each with `aggregates` over its group's members.
    private func grouped(
        _ objects: [ManagedObject], by keys: [(String, SiftSortDescriptor)], aggregates: [FetchAggregate]
    ) throws(StoreError) -> [[String: Value]] {
        var order: [[ValueKey]] = []
        var groups: [[ValueKey]: (values: [String: Value], members: [ManagedObject])] = [:]
        for o in objects {
            let (values, key) = try Self.row(keys, o)
            if groups[key] == nil {
                order.append(key)
                groups[key] = (values, [])
            }
            groups[key]!.members.append(o)
        }
        var rows: [[String: Value]] = []
        for key in order {
            var row = groups[key]!.values
            let members = groups[key]!.members
            for a in aggregates {
                row[a.name] = try aggregate(a, members)
            }
            rows.append(row)
        }
        return rows
    }

    /// A reader of each key path of `paths`, by its path.
    private static func readers(_ paths: [String]) throws(StoreError) -> [(String, SiftSortDescriptor)] {
        var out: [(String, SiftSortDescriptor)] = []
        for p in paths {
            do { out.append((p, try SiftSortDescriptor(p))) } catch { throw StoreError(error) }
        }
        return out
    }

    /// The dictionary of one object, and its values as a hashable key (groups, distinct rows).
    private static func row(_ keys: [(String, SiftSortDescriptor)], _ o: ManagedObject) throws(StoreError) -> (
        [String: Value], [ValueKey]
    ) {
        var row: [String: Value] = [:]
        var key: [ValueKey] = []
        for (name, d) in keys {
            let v: Value
            do { v = try d.key(of: o.evaluationRoot) } catch {
                throw StoreError(error, object: o.objectID, in: d.keyPath)
            }
            row[name] = v
            key.append(ValueKey(v))
        }
        return (row, key)
    }

    /// One aggregate over a group: `@count` alone counts the objects, `@count.key` the non-nil
    /// values of `key` (as Core Data's `count:`), the others apply the collection operator to the
    /// group as KVC applies it to an array of objects. Errors point into the aggregate's text and
    /// name the object whose value raised.
    func aggregate(_ a: FetchAggregate, _ members: [ManagedObject]) throws(StoreError) -> Value {
        if a.function == .count, a.keyPath.isEmpty { return .integer(Int64(members.count)) }
        let reader: SiftSortDescriptor
        do { reader = try SiftSortDescriptor(a.keyPath) } catch { throw a.locate(StoreError(error)) }
        func value(_ o: ManagedObject) throws(StoreError) -> Value {
            do { return try reader.key(of: o.evaluationRoot) } catch {
                throw a.locate(StoreError(error, object: o.objectID, in: a.keyPath))
            }
        }
        if a.function == .count {
            var n: Int64 = 0
            for o in members where !(try value(o)).isNull { n += 1 }
            return .integer(n)
        }
        let path = a.function.rawValue + "." + a.keyPath
        let d: SiftSortDescriptor
        do { d = try SiftSortDescriptor("SELF." + path) } catch {
            do { d = try SiftSortDescriptor(path) } catch { throw a.locate(StoreError(error)) }
        }
        do { return try d.key(of: .array(members.map(\.evaluationRoot))) } catch {
            // Name the object whose value raised, if one did; else the operator failed on the
            // values together (a sum of strings): the aggregate as a whole.
            for o in members { _ = try value(o) }
            var whole = StoreError(error)
            whole.range = nil
            throw a.locate(whole)
        }
    }

    /// The SQL, plan and residual of a request.
    public func explain<Object>(_ request: FetchRequest<Object>) throws(StoreError) -> FetchExplanation {
        let request = request.untyped
        let plan = try makePlan(request)
        let q = try query(plan, request, columns: [Storage.primaryKey], limited: plan.residual == nil, explaining: true)
        let lines = try store.locked { () throws(StoreError) in
            do throws(SQLiteError) { return try store.connection.queryPlan(q) } catch { throw error.storeError }
        }
        return FetchExplanation(
            sql: q.sql, bindings: q.bindings.map(\.description), queryPlan: lines,
            residualPredicate: plan.residual?.description, residualReason: plan.residualReason,
            sortsInMemory: plan.sqlSort == nil && !request.sortDescriptors.isEmpty)
    }

    // MARK: Planning

    func makePlan(_ request: FetchRequest<ManagedObject>) throws(StoreError) -> FetchPlan {
        let info = try store.info(request.entityName)
        // Before any row is read: a key the entity does not have fails here, on every path.
        let kinds = try KeyCheck.check(request, in: store.model)
        let schema = request.includesSubentities ? store.model.schema : store.ownEntitySchema
        let lowering: SQLLowering
        do { lowering = try SQLLowering(schema: schema, entity: request.entityName) } catch {
            throw StoreError(.unknownEntity, error.message)
        }
        let predicate = request.predicate ?? SiftPredicate(PredicateSyntax(.constant(value: true)))
        let syntax = predicate.syntax
        var pushed = syntax
        var residual: SiftPredicate?
        var reason: String?
        // Conjuncts that read attributes whose kinds differ between rows go to memory (the row
        // guard covers documents only): there memory's error or lenient answer is the outcome.
        do throws(SQLLoweringError) {
            if kinds.predicateReadsMixedKinds {
                throw SQLLoweringError(.unsupported, "reads an attribute whose values differ in kind")
            }
            _ = try lowering.count(syntax, variables: request.variables)
        } catch {
            // Keep the conjuncts SQL expresses exactly; the others are judged in memory.
            reason = error.message
            var lowered: [PredicateSyntax] = []
            var rest: [PredicateSyntax] = []
            let conjuncts: [PredicateSyntax]
            if case .and(let ops) = syntax.kind { conjuncts = ops } else { conjuncts = [syntax] }
            // Strict, memory stops at the first conjunct that is false and raises at the first
            // that raises: a conjunct after one left to memory stays in memory too, or SQL would
            // drop a row on which memory raises before reaching it. Lenient, a raising conjunct
            // is false whatever comes after it, so any conjunct SQL expresses may go to SQL.
            let lenient = predicate.options.lenient
            // Each conjunct is tried with those kept before it: some parts lower alone but not
            // together (`price * 2 > 5` is guarded on the row, which a relationship in another part
            // makes impossible).
            func and(_ ps: [PredicateSyntax]) -> PredicateSyntax {
                ps.count == 1 ? ps[0] : PredicateSyntax(.and(operands: ps))
            }
            for c in conjuncts {
                if lenient || rest.isEmpty,
                    !kinds.predicateReadsMixedKinds
                        || !KeyCheck.readsMixedKinds(c, of: request.entityName, in: store.model),
                    (try? lowering.count(and(lowered + [c]), variables: request.variables)) != nil
                {
                    lowered.append(c)
                } else {
                    rest.append(c)
                }
            }
            pushed = lowered.isEmpty ? PredicateSyntax(.constant(value: true)) : and(lowered)
            let restSyntax = and(rest)
            // The residual keeps the original text: its nodes' ranges point into it.
            residual = SiftPredicate(restSyntax, source: predicate.source, options: predicate.options)
        }
        var sqlSort: [SQLSortKey]? = request.sortDescriptors.map {
            SQLSortKey(keyPath: $0.keyPath, ascending: $0.ascending, options: $0.options)
        }
        if let keys = sqlSort, !keys.isEmpty {
            if kinds.sortReadsMixedKinds
                || (try? lowering.select(pushed, variables: request.variables, sortedBy: keys)) == nil
            {
                sqlSort = nil
            }
        }
        let family = request.includesSubentities ? Set(info.entity.family) : [info.name]
        return FetchPlan(
            info: info, family: family, lowering: lowering, pushed: pushed, residual: residual,
            residualReason: reason, full: predicate, sqlSort: sqlSort,
            variables: request.variables.mapValues { Value($0) })
    }

    /// The statement for `plan`; `limited`: with the request's limit and offset where SQL orders
    /// the rows, after judging every row (`sqlCount`) unless `explaining`.
    func query(
        _ plan: FetchPlan, _ request: FetchRequest<ManagedObject>, columns: [String], limited: Bool,
        explaining: Bool = false
    )
        throws(StoreError)
        -> SQLQuery
    {
        let useLimit =
            limited && (request.sortDescriptors.isEmpty || plan.sqlSort != nil)
            && (request.fetchLimit != nil || request.fetchOffset > 0)
        let q: SQLQuery
        do {
            q = try plan.lowering.select(
                plan.pushed, variables: request.variables, sortedBy: plan.sqlSort ?? [],
                tableColumns: columns,
                limit: useLimit ? request.fetchLimit : nil, offset: useLimit ? request.fetchOffset : 0,
                lenient: plan.full.options.lenient)
        } catch {
            throw StoreError(.syntax, error.description)
        }
        if useLimit, q.asksMemoryPerRow, !explaining { _ = try sqlCount(plan, request) }
        return q
    }

    /// The number of rows SQL selects for `plan` over the whole table, no limit or offset. The
    /// count reads every row, so a row guard meets every row memory raises on and raises its
    /// error: a limited statement, which stops at its limit, runs it first, as memory judges
    /// every object before a limit applies.
    func sqlCount(_ plan: FetchPlan, _ request: FetchRequest<ManagedObject>) throws(StoreError) -> Int {
        let q: SQLQuery
        do {
            q = try plan.lowering.count(plan.pushed, variables: request.variables, lenient: plan.full.options.lenient)
        } catch {
            throw StoreError(error)
        }
        let rows = try store.locked { () throws(StoreError) in
            do throws(SQLiteError) { return try store.rows(q.sql, q.bindings) } catch { throw error.storeError }
        }
        guard case .integer(let n)? = rows.first?.first else { return 0 }
        return Int(n)
    }

    // MARK: Matching

    func matchingObjects(_ request: FetchRequest<ManagedObject>, _ plan: FetchPlan) throws(StoreError)
        -> [ManagedObject]
    {
        let dirty = try dirtyObjects(request, plan)
        let sqlDoesAll =
            plan.residual == nil && dirty == nil && (request.sortDescriptors.isEmpty || plan.sqlSort != nil)
        let q = try query(plan, request, columns: plan.info.layout.columns, limited: sqlDoesAll)
        let batch = request.fetchBatchSize
        var objects: [ManagedObject] = []
        try store.locked { () throws(StoreError) in
            // Rows changed in this context are judged in memory below: what their stored values
            // would raise does not count (see SiftSQL's RowGuard.swift).
            let space = plan.info.names.space
            let skipped = Set((dirty ?? []).compactMap { $0.info.names.space == space ? $0.objectID.primaryKey : nil })
            if !skipped.isEmpty { store.connection.rowsTheGuardSkips = skipped }
            defer { if !skipped.isEmpty { store.connection.rowsTheGuardSkips = [] } }
            do {
                let s = try store.statement(q.sql)
                try s.bind(q.bindings)
                while try s.step() {
                    let o = try materialize(s)
                    objects.append(o)
                }
                try s.reset()
            } catch let e as SQLiteError { throw e.storeError } catch let e as StoreError { throw e } catch {
                throw StoreError(.sqlite, "\(error)")
            }
        }
        if sqlDoesAll {
            if batch > 0 { makeBatches(objects, size: batch) }
            return objects
        }
        // The dirty objects are marked with a number of this pass rather than put in a set: every
        // row asks, and a mark costs a load where a set costs a hash (a new number per pass, so
        // the marks of earlier passes need no clearing; nothing below fetches again). The rows
        // are filtered in place: a second array would retain and release every object again.
        fetchPasses &+= 1
        let pass = fetchPasses
        for o in dirty ?? [] { o.dirtyPass = pass }
        if let r = plan.residual {
            var failure: EvaluationError?
            objects.removeAll { o in
                if failure != nil || o.dirtyPass == pass { return true }
                do throws(EvaluationError) { return try !Self.matches(r, o, plan.variables) } catch {
                    failure = error
                    return true
                }
            }
            if let failure { throw StoreError(failure) }
        } else if dirty != nil {
            objects.removeAll { $0.dirtyPass == pass }
        }
        let keep = objects
        var changed: [ManagedObject] = []
        // Objects a child's ancestors deleted are gone from its view.
        let hidden = parent == nil || dirty == nil ? [] : try inheritedChanges().deleted
        for o in dirty ?? []
        where !deletedSet.contains(o) && plan.family.contains(o.info.name)
            && (hidden.isEmpty || !hidden.contains(o.objectID))
        {
            do { if try Self.matches(plan.full, o, plan.variables) { changed.append(o) } } catch {
                throw StoreError(error)
            }
        }
        let result: [ManagedObject]
        if changed.isEmpty && (request.sortDescriptors.isEmpty || plan.sqlSort != nil) {
            result = keep
        } else {
            result = try merging(keep, changed, request, plan)
        }
        let start = min(request.fetchOffset, result.count)
        let end = request.fetchLimit.map { min(result.count, start + $0) } ?? result.count
        return Array(result[start..<end])
    }

    /// The clean rows and the changed objects that match, in the request's order: sorted whole
    /// when SQL did not order the rows, else each changed object inserted where it belongs.
    private func merging(
        _ keep: [ManagedObject], _ changed: [ManagedObject], _ request: FetchRequest<ManagedObject>, _ plan: FetchPlan
    ) throws(StoreError) -> [ManagedObject] {
        // Ties are broken by primary key, inserted objects last in insertion order: the keys
        // a save would give them.
        let tiebreak = Self.keyOrder
        let sqlOrdered = request.sortDescriptors.isEmpty || plan.sqlSort != nil
        var result: [ManagedObject]
        if !sqlOrdered {
            result = (keep + changed).sorted { tiebreak($0) < tiebreak($1) }
            do {
                result = try result.map(\.evaluationRoot).sortedIndices(by: request.sortDescriptors).map {
                    result[$0]
                }
            } catch { throw Self.sortError(error, result, request.sortDescriptors) }
        } else {
            // SQL already ordered the clean rows: sort the few changed objects the same way
            // and insert each where a binary search over the clean rows puts it.
            var sortedChanged = changed.sorted { tiebreak($0) < tiebreak($1) }
            if !request.sortDescriptors.isEmpty {
                do {
                    sortedChanged = try sortedChanged.map(\.evaluationRoot).sortedIndices(
                        by: request.sortDescriptors
                    ).map { sortedChanged[$0] }
                } catch { throw Self.sortError(error, sortedChanged, request.sortDescriptors) }
            }
            result = try inserting(sortedChanged, into: keep, request, tiebreak: tiebreak)
        }
        return result
    }

    /// A sort's error, naming the first object (and its sort key) whose key raises when read
    /// alone, as a row's error does elsewhere; the sort's own error when none does.
    static func sortError(_ error: EvaluationError, _ objects: [ManagedObject], _ keys: [SiftSortDescriptor])
        -> StoreError
    {
        for o in objects {
            for d in keys {
                do { _ = try d.key(of: o.evaluationRoot) } catch {
                    return StoreError(error, object: o.objectID, in: d.keyPath)
                }
            }
        }
        return StoreError(error)
    }

    /// `keep` (ordered by SQL) with each of `sortedChanged` inserted where a binary search over
    /// the clean rows puts it.
    private func inserting(
        _ sortedChanged: [ManagedObject], into keep: [ManagedObject], _ request: FetchRequest<ManagedObject>,
        tiebreak: (ManagedObject) -> (Int64, Int64)
    ) throws(StoreError) -> [ManagedObject] {
        var keyCache: [ObjectIdentifier: [Value]] = [:]
        func keys(_ o: ManagedObject) throws(StoreError) -> [Value] {
            if let k = keyCache[ObjectIdentifier(o)] { return k }
            var k: [Value] = []
            for d in request.sortDescriptors {
                do { k.append(try d.key(of: o.evaluationRoot)) } catch {
                    throw StoreError(error, object: o.objectID, in: d.keyPath)
                }
            }
            keyCache[ObjectIdentifier(o)] = k
            return k
        }
        func before(_ a: ManagedObject, _ b: ManagedObject) throws(StoreError) -> Bool {
            let (ka, kb) = (try keys(a), try keys(b))
            for (n, d) in request.sortDescriptors.enumerated() {
                let o = d.compareKeys(ka[n], kb[n])
                if o != 0 { return o < 0 }
            }
            return tiebreak(a) < tiebreak(b)
        }
        var result: [ManagedObject] = []
        result.reserveCapacity(keep.count + sortedChanged.count)
        var from = 0
        for c in sortedChanged {
            var lo = from
            var hi = keep.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if try before(keep[mid], c) { lo = mid + 1 } else { hi = mid }
            }
            result.append(contentsOf: keep[from..<lo])
            result.append(c)
            from = lo
        }
        result.append(contentsOf: keep[from...])
        return result
    }

    // MARK: Pending changes

    /// The objects whose answer may differ from the stored one (nil when there are none or the
    /// request ignores pending changes).
    func dirtyObjects(_ request: FetchRequest<ManagedObject>, _ plan: FetchPlan) throws(StoreError) -> [ManagedObject]?
    {
        guard request.includesPendingChanges, hasChanges || parent != nil else { return nil }
        var out: [ManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        func add(_ o: ManagedObject) { if seen.insert(ObjectIdentifier(o)).inserted { out.append(o) } }
        var changed = insertedList + Array(updatedSet) + Array(deletedSet)
        // A child's view includes its ancestors' unsaved changes: its objects for them are judged
        // in memory like its own.
        if parent != nil { changed += try inheritedChanges().changed }
        if changed.isEmpty { return nil }
        for o in changed where plan.family.contains(o.info.name) { add(o) }
        // Stored objects of the entity that reach a changed object through a relationship path.
        let paths = KeyPathCollector(model: store.model).paths(
            plan.full.syntax, request.sortDescriptors.map(\.keyPath), from: plan.info.name)
        guard let paths else {
            // A form whose reads cannot be listed (a computed key, a custom function): judge every
            // object of the entity in memory.
            var everything = request
            everything.predicate = nil
            everything.includesPendingChanges = false
            everything.sortDescriptors = []
            everything.fetchLimit = nil
            everything.fetchOffset = 0
            let all = try matchingObjects(everything, try makePlan(everything))
            for o in all { add(o) }
            return out
        }
        let changedStored = changed.filter { !$0.pendingInsert && $0.objectID.primaryKey != nil }
        for path in paths where !path.isEmpty {
            for depth in 1...path.count {
                let destination = try store.info(path[depth - 1].destination).entity.family
                var keys = changedStored.filter { destination.contains($0.info.name) }.compactMap {
                    $0.objectID.primaryKey
                }
                guard !keys.isEmpty else { continue }
                var step = depth
                while step > 0, !keys.isEmpty {
                    keys = try sources(of: path[step - 1], reaching: keys)
                    step -= 1
                }
                for k in keys {
                    let o = try faultObject(pk: k, declared: plan.info.name)
                    try o.fire()
                    if plan.family.contains(o.info.name) { add(o) }
                }
            }
        }
        return out.isEmpty ? nil : out
    }

    /// The stored keys of the objects whose relationship `rel` reaches one of `keys`.
    func sources(of rel: ResolvedRelationship, reaching keys: [Int64]) throws(StoreError) -> [Int64] {
        let q = PersistentStore.q
        let list = "[" + keys.map(String.init).joined(separator: ",") + "]"
        let inList = "IN (SELECT value FROM json_each(?))"
        let sql: String
        switch rel.storage {
        case .foreignKey(let column):
            let table = try store.info(rel.declaringEntity).layout.table
            sql = "SELECT \(q(Storage.primaryKey)) FROM \(q(table)) WHERE \(q(column)) \(inList)"
        case .inverseForeignKey(let table, let column, _):
            sql =
                "SELECT \(q(column)) FROM \(q(table)) WHERE \(q(Storage.primaryKey)) \(inList) AND \(q(column)) IS NOT NULL"
        case .joinTable(let table, let source, let dest, _):
            sql = "SELECT \(q(source)) FROM \(q(table)) WHERE \(q(dest)) \(inList)"
        }
        let rows = try store.locked { () throws(StoreError) in
            do throws(SQLiteError) { return try store.rows(sql, [.text(list)]) } catch { throw error.storeError }
        }
        return Array(Set(rows.compactMap { if case .integer(let k) = $0[0] { k } else { nil } })).sorted()
    }

    // MARK: Batches and prefetching

    func makeBatches(_ objects: [ManagedObject], size: Int) {
        // Objects already read keep their values; the point is that the rows of the rest are read
        // a batch at a time.
        var start = 0
        while start < objects.count {
            let slice = Array(objects[start..<min(objects.count, start + size)])
            let batch = FaultBatch(objects: slice)
            for o in slice where !o.hasChanges && o.snapshot == nil {
                o.isFault = true
                o.batch = batch
            }
            start += size
        }
    }

    /// Reads the rows of every fault in `o`'s batch with one query.
    func fulfillBatch(_ batch: FaultBatch) throws(StoreError) {
        let faults = batch.objects.filter { $0.isFault && $0.objectID.primaryKey != nil }
        guard let first = faults.first else { return }
        let rows = try self.rows(of: faults.map { $0.objectID.primaryKey! }, in: first.info.layout)
        for row in rows { _ = try materialize(row: row) }
        for o in batch.objects { o.batch = nil }
    }

    /// The rows (the columns `materialize` reads) of the primary keys `keys` of `layout`'s table.
    func rows(of keys: [Int64], in layout: TableLayout) throws(StoreError) -> [[SQLValue]] {
        let list = "[" + keys.map(String.init).joined(separator: ",") + "]"
        let sql = Self.rowsSQL(layout)
        return try store.locked { () throws(StoreError) in
            do throws(SQLiteError) { return try store.rows(sql, [.text(list)]) } catch { throw error.storeError }
        }
    }

    /// The rows of `layout`'s table (its columns) whose keys are in the JSON array bound to `?`;
    /// with `keyed` false, every row of the table (nothing bound).
    static func rowsSQL(_ layout: TableLayout, keyed: Bool = true) -> String {
        let q = PersistentStore.q
        let select = "SELECT \(layout.columns.map(q).joined(separator: ", ")) FROM \(q(layout.table))"
        return keyed ? select + " WHERE \(q(Storage.primaryKey)) IN (SELECT value FROM json_each(?))" : select
    }

    /// `rowsSQL`'s keyed rows in the order of the keys in the JSON array bound to `?`, each key
    /// one search of the table (no list of the keys built, no rows sorted): a key bound twice
    /// reads its row twice.
    static func rowsInKeyOrderSQL(_ layout: TableLayout) -> String {
        let q = PersistentStore.q
        return "SELECT \(layout.columns.map { "r.\(q($0))" }.joined(separator: ", ")) FROM \(keysBound) CROSS JOIN "
            + "\(q(layout.table)) AS r ON r.\(q(Storage.primaryKey)) = k.value"
    }

    /// The keys of a JSON array bound to `?`, as the outer loop of a join (SQLite keeps the left
    /// side of a CROSS JOIN outermost).
    static let keysBound = "json_each(?) AS k"

    /// The destination rows of to-many `rel` (the owner's key, then `destination`'s columns) of the
    /// owners whose keys are in the JSON array bound to `?`, grouped by owner in the relationship's
    /// order; nil for a to-one. With `keyed` false, those of every owner in the table's order (no
    /// sort), the element's place last (its order column, else its key); nil for a join table too.
    static func toManySQL(_ rel: ResolvedRelationship, _ destination: TableLayout, keyed: Bool = true) -> String? {
        let q = PersistentStore.q
        let columns = destination.columns.map { "r.\(q($0))" }.joined(separator: ", ")
        switch rel.storage {
        case .inverseForeignKey(let table, let column, let order):
            let owner = "r.\(q(column))"
            let place = "r.\(q(order ?? Storage.primaryKey))"
            guard keyed else {
                return "SELECT \(owner), \(columns), \(place) FROM \(q(table)) AS r WHERE \(owner) IS NOT NULL"
            }
            return
                "SELECT \(owner), \(columns) FROM \(q(table)) AS r WHERE \(owner) IN (SELECT value FROM json_each(?)) ORDER BY \(owner), \(order.map { "r.\(q($0)), " } ?? "")r.\(q(Storage.primaryKey))"
        case .joinTable(let table, let source, let dest, let order):
            guard keyed else { return nil }
            return
                "SELECT j.\(q(source)), \(columns) FROM \(q(table)) AS j JOIN \(q(destination.table)) AS r ON r.\(q(Storage.primaryKey)) = j.\(q(dest)) WHERE j.\(q(source)) IN (SELECT value FROM json_each(?)) ORDER BY j.\(q(source)), \(order.map { "j.\(q($0)), " } ?? "")j.rowid"
        case .foreignKey:
            return nil
        }
    }

    /// `toManySQL`'s keyed rows owner by owner in the order of the owner keys in the JSON array
    /// bound to `?` (each owner one search of the owner index), each owner's in that index's
    /// order, not sorted: the element's place last, for the reader to check that it rises
    /// (`toManySQL`'s rows otherwise). Nil where `toManySQL(keyed: false)` is nil.
    static func toManyInKeyOrderSQL(_ rel: ResolvedRelationship, _ destination: TableLayout) -> String? {
        guard case .inverseForeignKey(let table, let column, let order) = rel.storage else { return nil }
        let q = PersistentStore.q
        let columns = destination.columns.map { "r.\(q($0))" }.joined(separator: ", ")
        let owner = "r.\(q(column))"
        let place = "r.\(q(order ?? Storage.primaryKey))"
        return
            "SELECT \(owner), \(columns), \(place) FROM \(keysBound) CROSS JOIN \(q(table)) AS r ON \(owner) = k.value"
    }

    /// Loads the relationships named by `keyPaths` for every object, one query per step.
    func prefetch(_ keyPaths: [String], for objects: [ManagedObject]) throws(StoreError) {
        for path in keyPaths {
            var current = objects
            for name in path.split(separator: ".").map(String.init) {
                var next: [ManagedObject] = []
                var seen = Set<ObjectIdentifier>()
                // Read the rows of faults first, in one batch per entity table.
                try fireAll(current)
                for o in current {
                    guard let i = o.info.entity.relationshipIndex[name] else { continue }
                    if o.links[i] == nil, o.info.entity.relationships[i].isToMany, o.objectID.primaryKey != nil {
                        // Loaded together below.
                        continue
                    }
                    switch try o.link(i) {
                    case .one(let t?): if seen.insert(ObjectIdentifier(t)).inserted { next.append(t) }
                    case .many(let m): for t in m where seen.insert(ObjectIdentifier(t)).inserted { next.append(t) }
                    default: break
                    }
                }
                let unloaded = current.filter { o in
                    guard let i = o.info.entity.relationshipIndex[name] else { return false }
                    return o.links[i] == nil && o.objectID.primaryKey != nil
                }
                try loadToMany(name, of: unloaded)
                for o in unloaded {
                    for t in try o.many(o.info.entity.relationshipIndex[name]!)
                    where seen.insert(ObjectIdentifier(t)).inserted { next.append(t) }
                }
                current = next
            }
            try fireAll(current)
        }
    }

    /// Loads to-many relationship `name` of every owner (stored, not loaded yet) with one query per
    /// entity: the destination rows, read whole, grouped by owner in the relationship's order.
    func loadToMany(_ name: String, of owners: [ManagedObject]) throws(StoreError) {
        var byEntity: [ObjectIdentifier: [ManagedObject]] = [:]
        for o in owners { byEntity[ObjectIdentifier(o.info), default: []].append(o) }
        for group in byEntity.values {
            let i = group[0].info.entity.relationshipIndex[name]!
            let rel = group[0].info.entity.relationships[i]
            let destination = try store.info(rel.destination).layout
            let list = "[" + group.map { String($0.objectID.primaryKey!) }.joined(separator: ",") + "]"
            guard let sql = Self.toManySQL(rel, destination) else { continue }
            let rows = try store.locked { () throws(StoreError) in
                do throws(SQLiteError) { return try store.rows(sql, [.text(list)]) } catch { throw error.storeError }
            }
            var members: [Int64: [ManagedObject]] = [:]
            for row in rows {
                guard case .integer(let owner) = row[0] else { continue }
                members[owner, default: []].append(try materialize(RowValues(values: row, offset: 1)))
            }
            for o in group where o.links[i] == nil {
                o.links[i] = .many(members[o.objectID.primaryKey!] ?? [])
            }
        }
    }

    /// Reads the rows of all faults among `objects` with one query per table.
    func fireAll(_ objects: [ManagedObject]) throws(StoreError) {
        let faults = objects.filter { $0.isFault && $0.objectID.primaryKey != nil }
        guard !faults.isEmpty else { return }
        var byTable: [String: [ManagedObject]] = [:]
        for o in faults { byTable[o.info.layout.table, default: []].append(o) }
        for group in byTable.values { try fulfillBatch(FaultBatch(objects: group)) }
    }
}

/// Faults read together: touching one reads the rows of all.
final class FaultBatch {
    let objects: [ManagedObject]
    init(objects: [ManagedObject]) { self.objects = objects }
}

/// A hashable stand-in for a value (distinct results and groups).
struct ValueKey: Hashable {
    let value: Value
    init(_ v: Value) { value = v }
    static func == (a: ValueKey, b: ValueKey) -> Bool {
        a.value.isIdentical(to: b.value) || (a.value.isEqual(to: b.value) && a.value.kindName == b.value.kindName)
    }
    func hash(into h: inout Hasher) {
        switch value {
        case .null: h.combine(0)
        case .bool(let b): h.combine(b)
        case .integer(let i): h.combine(Double(i))
        case .double(let d): h.combine(d)
        case .decimal(let d): h.combine(NSDecimalNumber(decimal: d).doubleValue)
        case .string(let s): h.combine(s)
        case .date(let d): h.combine(d)
        case .data(let d): h.combine(d)
        case .object(let o): if let m = o as? ManagedObject { h.combine(ObjectIdentifier(m)) }
        default: h.combine(value.description)
        }
    }
}

/// The relationship paths a predicate (and sort keys) read from the root entity.
struct KeyPathCollector {
    let model: ManagedObjectModel

    /// Every relationship path, or nil when the predicate reads keys it cannot list.
    func paths(_ p: PredicateSyntax, _ sortKeys: [String], from entity: String) -> [[ResolvedRelationship]]? {
        var walk = KeyPathWalk(model: model)
        walk.predicate(p, entity, [])
        for k in sortKeys {
            if let e = try? ExpressionSyntax.parse(k) { walk.expression(e, entity, []) } else { walk.ok = false }
        }
        return walk.ok ? walk.out : nil
    }
}

/// One walk of ``KeyPathCollector``: the paths found so far, whether every key read could be
/// listed, and the subquery variables in scope with where they stand.
private struct KeyPathWalk {
    let model: ManagedObjectModel
    var out: [[ResolvedRelationship]] = []
    var ok = true
    var variables: [String: (entity: String, prefix: [ResolvedRelationship])] = [:]

    init(model: ManagedObjectModel) { self.model = model }

    /// Follows the relationship components of a key path; records the path, returns where it ends.
    @discardableResult
    mutating func walk(_ components: [String], _ start: String, _ prefix: [ResolvedRelationship]) -> (
        String, [ResolvedRelationship]
    ) {
        var entity = start
        var path = prefix
        for c in components {
            guard let r = model.resolved[entity], let rel = r.relationship(c) else { break }
            path.append(rel)
            entity = rel.destination
        }
        if !path.isEmpty { out.append(path) }
        return (entity, path)
    }

    // Both walks check the stack at their recursion point (see `StackGuard`).
    mutating func expression(_ e: ExpressionSyntax, _ start: String, _ prefix: [ResolvedRelationship]) {
        StackGuard.ensure { expressionHere(e, start, prefix) }
    }

    private mutating func expressionHere(_ e: ExpressionSyntax, _ start: String, _ prefix: [ResolvedRelationship]) {
        switch e.kind {
        case .constant, .variable, .evaluatedObject: break
        case .keyPath(nil, let components): walk(components, start, prefix)
        case .keyPath(let base?, let components):
            if case .variable(let name) = base.kind, let bound = variables[name] {
                walk(components, bound.entity, bound.prefix)
            } else {
                expression(base, start, prefix)
                // Keys read on a computed value: only subqueries over to-manys reach objects.
                if case .subquery = base.kind {} else { ok = false }
            }
        case .dynamicKey, .customFunction: ok = false
        case .aggregate(let es): for x in es { expression(x, start, prefix) }
        case .index(let b, let i):
            expression(b, start, prefix)
            if case .expression(let x) = i { expression(x, start, prefix) }
        case .binary(_, let l, let r):
            expression(l, start, prefix)
            expression(r, start, prefix)
        case .unary(_, let x): expression(x, start, prefix)
        case .function(_, let args): for x in args { expression(x, start, prefix) }
        case .subquery(let collection, let v, let body):
            if case .keyPath(nil, let components) = collection.kind {
                let (entity, path) = walk(components, start, prefix)
                let saved = variables[v]
                variables[v] = (entity, path)
                predicate(body, start, prefix)
                variables[v] = saved
            } else {
                ok = false
            }
        case .ternary(let c, let t, let f):
            predicate(c, start, prefix)
            expression(t, start, prefix)
            expression(f, start, prefix)
        case .cast(let v, let t):
            expression(v, start, prefix)
            expression(t, start, prefix)
        case .assignment(_, let v): expression(v, start, prefix)
        }
    }

    mutating func predicate(_ p: PredicateSyntax, _ start: String, _ prefix: [ResolvedRelationship]) {
        StackGuard.ensure { predicateHere(p, start, prefix) }
    }

    private mutating func predicateHere(_ p: PredicateSyntax, _ start: String, _ prefix: [ResolvedRelationship]) {
        switch p.kind {
        case .constant: break
        case .and(let ops), .or(let ops): for o in ops { predicate(o, start, prefix) }
        case .not(let o): predicate(o, start, prefix)
        case .comparison(_, let l, _, _, let r):
            expression(l, start, prefix)
            expression(r, start, prefix)
        }
    }
}
