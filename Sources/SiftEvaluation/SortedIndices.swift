// The permutation a sort would apply, for callers that must report positions rather than
// elements (`sift filter --indices --sort`). Same keys, same order, same stability as
// `sorted(by:)`.

import Foundation

/// The positions of a sequence's elements in sorted order.
extension Sequence {
    /// The 0-based positions of the elements in the order `sorted(by: descriptors)` would put them.
    ///
    /// ```swift
    /// try [["a": 3], ["a": 1], ["a": 2]].sortedIndices(by: [SiftSortDescriptor("a")])   // [1, 2, 0]
    /// ```
    public func sortedIndices(by descriptors: [SiftSortDescriptor]) throws(EvaluationError) -> [Int] {
        var keyed: [(keys: [Value], index: Int)] = []
        for (i, e) in enumerated() {
            let v = Value(any: e)
            var keys: [Value] = []
            keys.reserveCapacity(descriptors.count)
            for d in descriptors { keys.append(try d.key(v)) }
            keyed.append((keys, i))
        }
        keyed.sort { x, y in
            for (n, d) in descriptors.enumerated() {
                let o = d.compare(x.keys[n], y.keys[n])
                if o != 0 { return o < 0 }
            }
            return x.index < y.index
        }
        return keyed.map(\.index)
    }
}
