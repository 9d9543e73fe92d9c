// Fetch requests: an entity, a predicate, sort descriptors and limits, as a `Sendable` value; the
// context method run decides the result (objects, IDs, a count or dictionaries). Executing one (Fetching.swift) pushes the part of the predicate the lowering
// expresses exactly down to SQL and evaluates the rest in memory, so every predicate the
// evaluator accepts works in a fetch.

import Foundation
import SiftEvaluation
import SiftSyntax

/// What a fetch asks for. The result type is the method that runs it: `fetch` (objects),
/// `fetchObjectIDs`, `count(for:)` or `fetchDictionaries`.
///
/// ```swift
/// var request = try FetchRequest("Person", predicate: "age >= %@ AND address.city ==[c] %@", 18, "oslo")
/// request.sortDescriptors = [try SiftSortDescriptor("name")]
/// request.fetchLimit = 10
/// let people = try context.fetch(request)
/// ```
///
/// Generic over the class of the objects it returns: `FetchRequest("Person")` returns
/// `ManagedObject`s; `FetchRequest(Employee.self)` names a registered class's entity and returns
/// `Employee`s (instances of sub-entities' classes among them).
///
/// ```swift
/// let managers = try context.fetch(FetchRequest(Employee.self, predicate: "reports.@count > 0"))
/// managers.first?.salary   // Double
/// ```
public struct FetchRequest<Object: ManagedObject>: Sendable {
    /// One aggregate of a dictionary fetch (``FetchAggregate``).
    public typealias Aggregate = FetchAggregate

    /// The entity to fetch.
    public var entityName: String
    /// Whether objects of sub-entities are fetched too (default true).
    public var includesSubentities = true
    /// Which objects to fetch (nil: all).
    public var predicate: SiftPredicate?
    /// Values for the predicate's `$VARIABLES`.
    public var variables: [String: LiteralValue] = [:]
    /// The order of the results, the first descriptor primary.
    public var sortDescriptors: [SiftSortDescriptor] = []
    /// At most this many results (nil: all).
    public var fetchLimit: Int?
    /// How many results to skip first.
    public var fetchOffset = 0
    /// When positive, objects come back as faults that read their rows this many at a time,
    /// when the first of each batch is touched.
    public var fetchBatchSize = 0
    /// Dictionary results: the key paths to read (attributes, to-one key paths); nil means every
    /// attribute of the entity.
    public var propertiesToFetch: [String]?
    /// Dictionary results: leave out repeated dictionaries.
    public var returnsDistinctResults = false
    /// Dictionary results: one dictionary per distinct combination of these key paths, with the
    /// aggregates computed over the group. Aggregates without it give one dictionary over every
    /// match.
    public var propertiesToGroupBy: [String]?
    /// Dictionary results: the aggregates to compute (over each group, or over every match).
    public var aggregates: [Aggregate] = []
    /// Whether the context's unsaved changes take part (default true): the result is what saving
    /// first and fetching then would return, for every result type.
    public var includesPendingChanges = true
    /// Relationship key paths (`address`, `kids.toys`) to load with the objects.
    public var relationshipKeyPathsForPrefetching: [String] = []

    /// A request for `entityName`'s objects that match `predicate`.
    ///
    /// ```swift
    /// let all = FetchRequest("Employee")
    /// ```
    public init(_ entityName: String, predicate: SiftPredicate? = nil) where Object == ManagedObject {
        self.entityName = entityName
        self.predicate = predicate
    }

    /// A request with sort descriptors.
    public init(_ entityName: String, predicate: SiftPredicate? = nil, sortDescriptors: [SiftSortDescriptor])
    where Object == ManagedObject {
        self.init(entityName, predicate: predicate)
        self.sortDescriptors = sortDescriptors
    }

    /// A request for the objects of the entity `type` is registered for (see
    /// ``ManagedObjectModel/init(entities:classes:configurations:)``; an unregistered class names the entity of
    /// its own name), returning them as `type`.
    ///
    /// ```swift
    /// let everyone = try context.fetch(FetchRequest(Employee.self))   // [Employee]
    /// ```
    public init(_ type: Object.Type, predicate: SiftPredicate? = nil, sortDescriptors: [SiftSortDescriptor] = []) {
        self.entityName = ObjectClasses.entityName(of: type)
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }

    /// A typed request whose predicate is a format string with `%@`/`%K` arguments.
    ///
    /// ```swift
    /// let rich = try FetchRequest(Employee.self, predicate: "salary > %@", 5000)
    /// ```
    public init(_ type: Object.Type, predicate format: String, _ arguments: Any?...) throws(StoreError) {
        let predicate: SiftPredicate
        do { predicate = try SiftPredicate(format: format, arguments: arguments) } catch { throw StoreError(error) }
        self.init(type, predicate: predicate)
    }

    /// The same request, returning plain `ManagedObject`s (what the fetch machinery runs).
    var untyped: FetchRequest<ManagedObject> {
        // `Object` is only a type argument (no stored property has it), so every specialization
        // has the same layout and the value is the same bits.
        unsafeBitCast(self, to: FetchRequest<ManagedObject>.self)
    }
}

extension FetchRequest: PredicateRequest where Object == ManagedObject {}

/// One aggregate of a dictionary fetch (``FetchRequest/aggregates``): `name` = `function` over `keyPath`
/// (`@count`, `@sum`, `@avg`, `@min`, `@max`).
public struct FetchAggregate: Sendable, Hashable {
    /// The aggregate functions of a dictionary fetch.
    public enum Function: String, Sendable, Hashable, CaseIterable {
        /// `@count`: the number of values (of objects, for a plain `@count`).
        case count = "@count"
        /// `@sum`: the sum of the key path's values.
        case sum = "@sum"
        /// `@avg`: the average of the key path's values.
        case avg = "@avg"
        /// `@min`: the smallest of the key path's values.
        case min = "@min"
        /// `@max`: the largest of the key path's values.
        case max = "@max"
    }
    /// The key of the aggregate in each result dictionary.
    public var name: String
    /// The function applied.
    public var function: Function
    /// The key path aggregated (empty for a plain `@count`).
    public var keyPath: String
    /// An aggregate `name` = `function` over `keyPath`.
    ///
    /// ```swift
    /// let avg = FetchAggregate(name: "avg", function: .avg, keyPath: "age")
    /// ```
    public init(name: String, function: Function, keyPath: String) {
        self.name = name
        self.function = function
        self.keyPath = keyPath
    }
    /// The aggregate as ``init(parsing:)`` reads it: `NAME=@op.keyPath`.
    var text: String { name + "=" + function.rawValue + (keyPath.isEmpty ? "" : "." + keyPath) }

    /// `error`, which points into ``keyPath`` (or nowhere), pointed into ``text`` instead: the
    /// caret goes under the aggregate as written (under all of it when the error had no place).
    func locate(_ error: StoreError) -> StoreError {
        var moved = error
        let prefix = text.utf8.count - keyPath.utf8.count
        let r = error.range.map { SourceRange($0.lowerBound + prefix, $0.upperBound + prefix) }
        moved.locate(in: text, r ?? SourceRange(0, text.utf8.count))
        return moved
    }

    /// Parses `NAME=@op.keyPath` (`@count` may stand alone).
    public init(parsing text: String) throws(StoreError) {
        guard let eq = text.firstIndex(of: "="), !text[..<eq].isEmpty else {
            throw StoreError(.syntax, "aggregate '\(text)' is not NAME=@op.key")
        }
        name = String(text[..<eq])
        let rest = String(text[text.index(after: eq)...])
        let parts = rest.split(separator: ".", maxSplits: 1).map(String.init)
        guard let op = parts.first, let f = Function(rawValue: op) else {
            throw StoreError(
                .syntax, "aggregate '\(text)': '\(rest)' does not start with @count, @sum, @avg, @min or @max")
        }
        function = f
        if parts.count == 2 {
            keyPath = parts[1]
        } else if f == .count {
            keyPath = ""
        } else {
            throw StoreError(.syntax, "aggregate '\(text)': \(op) needs a key path (\(op).key)")
        }
    }
}

/// A request for the objects of an entity a predicate selects: fetch, batch update, batch delete.
/// They share the format-string initializer.
///
/// ```swift
/// let fetch = try FetchRequest("Person", predicate: "age > %@", 30)
/// let purge = try BatchDeleteRequest("Person", predicate: "age > %@", 120)
/// let all = FetchRequest("Person", predicate: nil)
/// ```
public protocol PredicateRequest {
    /// A request for the objects of `entityName` that `predicate` selects (nil: all).
    init(_ entityName: String, predicate: SiftPredicate?)
}

extension PredicateRequest {
    /// A request whose predicate is a format string with `%@`/`%K` arguments.
    ///
    /// ```swift
    /// let r = try FetchRequest("Person", predicate: "age > %@", 30)
    /// ```
    public init(_ entityName: String, predicate format: String, _ arguments: Any?...) throws(StoreError) {
        let predicate: SiftPredicate
        do { predicate = try SiftPredicate(format: format, arguments: arguments) } catch { throw StoreError(error) }
        self.init(entityName, predicate: predicate)
    }
}

/// How a fetch runs: the SQL it sends, SQLite's plan for it, and what is left for memory.
///
/// ```swift
/// let plan = try context.explain(try FetchRequest("Person", predicate: "age > %@", 30))
/// print(plan)                      // sql: …, plan: …, residual: none
/// plan.residualPredicate == nil    // true: SQL alone decides this fetch
/// ```
public struct FetchExplanation: Sendable, CustomStringConvertible {
    /// The SQL of the pushed-down part, with its bound values.
    public var sql: String
    /// The bound values, as text.
    public var bindings: [String]
    /// SQLite's `EXPLAIN QUERY PLAN` lines.
    public var queryPlan: [String]
    /// The part of the predicate evaluated in memory on the rows SQL returns, if any.
    public var residualPredicate: String?
    /// Why that part is not in SQL (the lowering's message).
    public var residualReason: String?
    /// Whether sorting happens in memory (a sort key SQL cannot order by exactly).
    public var sortsInMemory: Bool

    /// The SQL, bindings, plan lines and residual predicate, one per line.
    public var description: String {
        var lines = ["sql: \(sql)"]
        if !bindings.isEmpty { lines.append("bindings: \(bindings.joined(separator: ", "))") }
        lines += queryPlan.map { "plan: \($0)" }
        lines.append("residual: \(residualPredicate ?? "none")" + (residualReason.map { " (\($0))" } ?? ""))
        if sortsInMemory { lines.append("sort: in memory") }
        return lines.joined(separator: "\n")
    }
}
