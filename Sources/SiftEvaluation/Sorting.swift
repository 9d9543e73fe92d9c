// In-memory sorting by sort descriptors, in the order the SQL back-end produces: nil first when
// ascending (last when descending), numbers numerically, strings in Unicode scalar order of their
// NFC forms (or folded for [c]/[d]), dates chronologically; values of different kinds order by
// kind (nil < numbers < dates < strings < data < everything else). Sorting is stable.

import Foundation
import SiftSyntax
import SiftText

/// One sort key: a key path, a direction and string options.
///
/// ```swift
/// let byCity = try SiftSortDescriptor("address.city", options: .caseInsensitive)
/// let sorted = try people.sorted(by: [byCity, SiftSortDescriptor("age", ascending: false)])
/// ```
public struct SiftSortDescriptor: Sendable, CustomStringConvertible {
    /// The key path as written (`address.city`, `kids.@count`).
    public let keyPath: String
    /// Whether smaller values come first (nil first ascending, last descending).
    public let ascending: Bool
    /// String options for the comparison (`[c]`, `[d]`).
    public let options: ComparisonOptions
    let read: ExpressionFn

    /// Parses `keyPath` (any expression the predicate language accepts, usually a key path).
    public init(_ keyPath: String, ascending: Bool = true, options: ComparisonOptions = []) throws(SyntaxError) {
        let e = try ExpressionSyntax.parse(keyPath)
        self.keyPath = keyPath
        self.ascending = ascending
        self.options = options
        self.read = Compiler(options: EvaluationOptions(), source: keyPath, access: .value).expression(e)
    }

    /// `keyPath[options]:desc`, as `sift filter --sort` takes it (e.g. `name[c]:desc`).
    public var description: String {
        keyPath + (options.isEmpty ? "" : "[\(options.letters)]") + (ascending ? "" : ":desc")
    }

    /// The key of one object.
    func key(_ object: Value) throws(EvaluationError) -> Value {
        var scope = Scope(variables: [:])
        var object = object
        return try read(&object, &scope)
    }

    /// The sort key of one object: the descriptor's key path (any expression) read from it, as the
    /// sort reads it. A store uses it to read key paths of its objects.
    ///
    /// ```swift
    /// try SiftSortDescriptor("address.city").key(of: .object(person))   // .string("Oslo")
    /// ```
    public func key(of object: Value) throws(EvaluationError) -> Value { try key(object) }

    /// The order of two sort keys in this descriptor's direction (-1, 0, 1), nil first ascending.
    public func compareKeys(_ a: Value, _ b: Value) -> Int { compare(a, b) }

    /// Compares two keys in this descriptor's direction.
    func compare(_ a: Value, _ b: Value) -> Int {
        let o = SortOrder.compare(a, b, TextOptions(options))
        return ascending ? o : -o
    }
}

enum SortOrder {
    /// The total order the sort uses (ascending).
    static func compare(_ a: Value, _ b: Value, _ options: TextOptions) -> Int {
        let (ra, rb) = (rank(a), rank(b))
        if ra != rb { return ra < rb ? -1 : 1 }
        if case .string(let x) = a, case .string(let y) = b {
            return options.altersComparison ? textCompare(x, y, options) : (x == y ? 0 : (x < y ? -1 : 1))
        }
        return a.order(comparedTo: b) ?? 0
    }

    private static func rank(_ v: Value) -> Int {
        switch v {
        case .null: 0
        case .bool, .integer, .double, .decimal: 1
        case .date: 2
        case .string: 3
        case .data: 4
        default: 5
        }
    }
}

/// Sorting a sequence with sort descriptors.
extension Sequence {
    /// The elements sorted by `descriptors` (the first is the primary key), stably.
    public func sorted(by descriptors: [SiftSortDescriptor]) throws(EvaluationError) -> [Element] {
        let elements = Array(self)
        return try elements.sortedIndices(by: descriptors).map { elements[$0] }
    }
}
