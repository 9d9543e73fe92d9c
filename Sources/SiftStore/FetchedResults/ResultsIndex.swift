// A controller's results kept sorted, in sections, with each object's sort keys and section name
// as they were when it was placed: a changed object is found again by binary search on those
// keys (its current values may already differ), so taking a change in costs a search per changed
// object, not a pass over the results. The order is the fetch's: the request's sort keys, ties
// broken by the key a save gives (Fetching.swift's `keyOrder`).

import Foundation
import SiftEvaluation

/// One object in the results, with what placed it there.
final class ResultEntry {
    let object: ManagedObject
    /// Its ID when placed (an insert's temporary ID until it is placed again after the save).
    let id: ObjectID
    let keys: [Value]
    let order: (Int64, Int64)
    let section: String

    init(_ object: ManagedObject, keys: [Value], section: String) {
        self.object = object
        self.id = object.objectID
        self.keys = keys
        self.order = ManagedObjectContext.keyOrder(object)
        self.section = section
    }
}

/// The results: sections of entries, each section a run of one name in the request's order.
struct ResultsIndex {
    struct Section {
        var name: String
        var entries: [ResultEntry]
    }

    /// Sections would not group: an object of a section lands among another section's objects.
    struct GroupingBroken: Error {
        let name: String
    }

    let descriptors: [SiftSortDescriptor]
    private(set) var sections: [Section] = []
    private(set) var byObject: [ObjectIdentifier: ResultEntry] = [:]
    private(set) var byID: [ObjectID: ResultEntry] = [:]
    private var names: Set<String> = []

    init(descriptors: [SiftSortDescriptor]) { self.descriptors = descriptors }

    var count: Int { byObject.count }

    /// Whether `a` comes before `b` in the request's order.
    func before(_ a: ResultEntry, _ b: ResultEntry) -> Bool {
        for (n, d) in descriptors.enumerated() {
            let o = d.compareKeys(a.keys[n], b.keys[n])
            if o != 0 { return o < 0 }
        }
        return a.order < b.order
    }

    /// The first section whose last entry does not come before `e` (sections.count if none).
    private func sectionIndex(for e: ResultEntry) -> Int {
        var lo = 0
        var hi = sections.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if before(sections[mid].entries[sections[mid].entries.count - 1], e) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The first index of `entries` whose entry does not come before `e`.
    private func lowerBound(_ entries: [ResultEntry], _ e: ResultEntry) -> Int {
        var lo = 0
        var hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if before(entries[mid], e) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Where `e` (an entry of the results) is now.
    func path(of e: ResultEntry) -> ResultIndexPath {
        let s = sectionIndex(for: e)
        return ResultIndexPath(item: lowerBound(sections[s].entries, e), section: s)
    }

    /// Takes `e` out of the results.
    mutating func remove(_ e: ResultEntry) {
        let p = path(of: e)
        sections[p.section].entries.remove(at: p.item)
        if sections[p.section].entries.isEmpty {
            names.remove(sections[p.section].name)
            sections.remove(at: p.section)
        }
        byObject[ObjectIdentifier(e.object)] = nil
        byID[e.id] = nil
    }

    /// Puts `e` in its place; throws when its section cannot be one run there.
    mutating func insert(_ e: ResultEntry) throws(GroupingBroken) {
        let s = sectionIndex(for: e)
        let i = s < sections.count ? lowerBound(sections[s].entries, e) : 0
        if s < sections.count, i > 0 {
            // Inside section s: it must be its section.
            guard sections[s].name == e.section else { throw GroupingBroken(name: e.section) }
            sections[s].entries.insert(e, at: i)
        } else if s > 0, sections[s - 1].name == e.section {
            sections[s - 1].entries.append(e)
        } else if s < sections.count, sections[s].name == e.section {
            sections[s].entries.insert(e, at: 0)
        } else {
            guard !names.contains(e.section) else { throw GroupingBroken(name: e.section) }
            names.insert(e.section)
            sections.insert(Section(name: e.section, entries: [e]), at: s)
        }
        byObject[ObjectIdentifier(e.object)] = e
        byID[e.id] = e
    }

    /// The results of a fresh fetch, `entries` in the request's order.
    static func build(_ entries: [ResultEntry], descriptors: [SiftSortDescriptor]) throws(GroupingBroken) -> Self {
        var index = ResultsIndex(descriptors: descriptors)
        for e in entries {
            if let last = index.sections.last, last.name == e.section {
                index.sections[index.sections.count - 1].entries.append(e)
            } else {
                guard index.names.insert(e.section).inserted else { throw GroupingBroken(name: e.section) }
                index.sections.append(Section(name: e.section, entries: [e]))
            }
            index.byObject[ObjectIdentifier(e.object)] = e
            index.byID[e.id] = e
        }
        return index
    }

    /// The number of objects before each section.
    func offsets() -> [Int] {
        var out: [Int] = []
        out.reserveCapacity(sections.count)
        var n = 0
        for s in sections {
            out.append(n)
            n += s.entries.count
        }
        return out
    }
}
