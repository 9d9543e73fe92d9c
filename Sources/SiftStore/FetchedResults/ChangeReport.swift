// From the places of the changed objects before and after a change to the changes a delegate
// hears of. Objects outside the changed set keep their order relative to one another, so an
// object present before and after stays in place (an update) when as many unchanged objects come
// before it as before, in the same section, and its order among the other changed objects that
// stay holds (a heaviest increasing run of their new places, one at its old index path
// outweighing the rest); every other one is one move. No
// object ever moves to its own place, and an update is never a move or an insert.

import Foundation

/// A changed object's place in the results, before or after a change.
struct PlacedEntry {
    let entry: ResultEntry
    let path: ResultIndexPath
    /// Its index counting every section's objects.
    let global: Int
}

/// The changes of one controller update, as the delegate hears them.
struct ChangeReport {
    struct ObjectChange {
        let object: ManagedObject
        let type: FetchedResultsChangeType
        let old: ResultIndexPath?
        let new: ResultIndexPath?
    }
    struct SectionChange {
        let name: String
        let index: Int
        let type: FetchedResultsChangeType
    }
    var sections: [SectionChange] = []
    var objects: [ObjectChange] = []
    var isEmpty: Bool { sections.isEmpty && objects.isEmpty }

    /// The report for the changed objects placed `old` before and `new` after, the objects in
    /// `touched` having changed contents; sections by name before and after.
    init(
        old: [PlacedEntry], new: [PlacedEntry], touched: Set<ObjectIdentifier>,
        oldSections: [String], newSections: [String]
    ) {
        let newNames = Set(newSections)
        let oldNames = Set(oldSections)
        for (i, name) in oldSections.enumerated() where !newNames.contains(name) {
            sections.append(SectionChange(name: name, index: i, type: .delete))
        }
        for (i, name) in newSections.enumerated() where !oldNames.contains(name) {
            sections.append(SectionChange(name: name, index: i, type: .insert))
        }
        let before = Self.ranked(old)
        let after = Self.ranked(new)
        var stay: [(old: PlacedEntry, new: PlacedEntry)] = []
        var moved: [(old: PlacedEntry, new: PlacedEntry)] = []
        for (id, (o, rank)) in before {
            guard let (n, newRank) = after[id] else {
                objects.append(ObjectChange(object: o.entry.object, type: .delete, old: o.path, new: nil))
                continue
            }
            if rank == newRank && o.entry.section == n.entry.section {
                stay.append((o, n))
            } else {
                moved.append((o, n))
            }
        }
        for (id, (n, _)) in after where before[id] == nil {
            objects.append(ObjectChange(object: n.entry.object, type: .insert, old: nil, new: n.path))
        }
        stay.sort { $0.old.global < $1.old.global }
        // Objects at the same index path before and after weigh more than all others together:
        // every one of them stays (they never disagree on order), and no move is to itself.
        let fixedWeight = stay.count + 1
        let kept = Self.heaviestIncreasing(stay.map(\.new.global)) {
            stay[$0].old.path == stay[$0].new.path ? fixedWeight : 1
        }
        for (i, pair) in stay.enumerated() {
            if kept.contains(i) {
                if touched.contains(ObjectIdentifier(pair.old.entry.object)) {
                    objects.append(
                        ObjectChange(
                            object: pair.old.entry.object, type: .update, old: pair.old.path, new: pair.new.path))
                }
            } else {
                moved.append(pair)
            }
        }
        for (o, n) in moved {
            objects.append(ObjectChange(object: o.entry.object, type: .move, old: o.path, new: n.path))
        }
        objects.sort { ($0.new ?? $0.old!) < ($1.new ?? $1.old!) }
    }

    /// Each placed object with the number of objects outside the set that come before it.
    private static func ranked(_ placed: [PlacedEntry]) -> [ObjectIdentifier: (PlacedEntry, Int)] {
        let sorted = placed.sorted { $0.global < $1.global }
        var out: [ObjectIdentifier: (PlacedEntry, Int)] = [:]
        for (i, p) in sorted.enumerated() { out[ObjectIdentifier(p.entry.object)] = (p, p.global - i) }
        return out
    }

    /// The indices of a heaviest strictly increasing subsequence of `xs` (distinct values), each
    /// index weighing `weight(i)`: O(n log n) with a Fenwick tree of prefix maxima over the ranks.
    static func heaviestIncreasing(_ xs: [Int], weight: (Int) -> Int) -> Set<Int> {
        let ranks = xs.indices.sorted { xs[$0] < xs[$1] }
        var rank = Array(repeating: 0, count: xs.count)
        for (r, i) in ranks.enumerated() { rank[i] = r }
        // tree[j]: the best (total, index) over a range of ranks ending at j-1 (1-based).
        var tree = Array(repeating: (total: 0, index: -1), count: xs.count + 1)
        var previous = Array(repeating: -1, count: xs.count)
        var best = (total: 0, index: -1)
        for i in xs.indices {
            var j = rank[i]
            var below = (total: 0, index: -1)
            while j > 0 {
                if tree[j].total > below.total { below = tree[j] }
                j -= j & -j
            }
            let mine = (total: below.total + weight(i), index: i)
            previous[i] = below.index
            if mine.total > best.total { best = mine }
            j = rank[i] + 1
            while j <= xs.count {
                if mine.total > tree[j].total { tree[j] = mine }
                j += j & -j
            }
        }
        var out = Set<Int>()
        var i = best.index
        while i >= 0 {
            out.insert(i)
            i = previous[i]
        }
        return out
    }
}
