// How a controller takes a change set in. Object by object: the changed objects (and those of a
// change that failed before) are found in the results by their recorded keys, judged again in
// memory on their current state (as a fetch judges pending changes), then taken out and put back
// in their new places; every judgement happens before the results change, and a section that
// would not group puts everything back, so a failure leaves the last good results. Otherwise the
// request is fetched again and the whole results compared.

import Foundation

extension FetchedResultsController {
    /// The objects `changes` names that may be in the results before or after: the held entries
    /// and the context's objects for the IDs.
    private func candidates(_ changes: ChangeSet, _ plan: FetchPlan) -> [ObjectIdentifier: ManagedObject] {
        var out = retry
        retry = [:]
        let deleted = Set(changes.deleted)
        for id in changes.inserted + changes.updated + changes.deleted {
            if let e = index.byID[id] { out[ObjectIdentifier(e.object)] = e.object }
            guard id.names.store == context.store.names else { continue }
            if let o = context.registry[id] {
                out[ObjectIdentifier(o)] = o
            } else if !deleted.contains(id), plan.family.contains(id.entityName),
                let o = try? context.object(with: id)
            {
                out[ObjectIdentifier(o)] = o
            }
        }
        return out
    }

    /// `o`'s entry when it belongs to the results now, judged as a fetch judges a changed object.
    private func judge(_ o: ManagedObject, _ plan: FetchPlan) throws(StoreError) -> ResultEntry? {
        guard o.context === context, !o.isDeleted else { return nil }
        // In a child, an object an ancestor deleted is deleted here too unless it has changes
        // here (as `object(with:)` and a fetch there find it).
        if context.isChild, try context.unlessDeletedAbove(o).isDeleted { return nil }
        do { try o.fire() } catch  where error.kind == .objectNotFound { return nil }
        guard !o.isDeleted, plan.family.contains(o.info.name) else { return nil }
        do { guard try ManagedObjectContext.matches(plan.full, o, plan.variables) else { return nil } } catch {
            throw StoreError(error, object: o.objectID, in: plan.full.description)
        }
        return try entry(o, plan)
    }

    /// Takes `changes` in object by object; returns the report and whether an ID was renamed.
    func takeIncrementally(_ changes: ChangeSet, _ plan: FetchPlan, _ reportsUpdates: Bool) throws(StoreError)
        -> (ChangeReport, Bool)
    {
        let objects = candidates(changes, plan)
        // Merged objects are faults: their rows are read together (one query per table), not one
        // query each; a row that cannot be read leaves its fault for `judge` to meet alone.
        if objects.count > 1 { try? context.fireAll(objects.values.filter { $0.context === context && !$0.isDeleted }) }
        var fresh: [ResultEntry] = []
        do {
            for o in objects.values { if let e = try judge(o, plan) { fresh.append(e) } }
        } catch {
            retry = objects
            throw error
        }
        let oldNames = index.sections.map(\.name)
        let oldOffsets = index.offsets()
        var old: [PlacedEntry] = []
        for o in objects.values {
            guard let e = index.byObject[ObjectIdentifier(o)] else { continue }
            let p = index.path(of: e)
            old.append(PlacedEntry(entry: e, path: p, global: oldOffsets[p.section] + p.item))
        }
        for p in old { index.remove(p.entry) }
        var placed: [ResultEntry] = []
        do {
            for e in fresh.sorted(by: index.before) {
                try index.insert(e)
                placed.append(e)
            }
        } catch {
            // Put the last good results back.
            for e in placed { index.remove(e) }
            for p in old { try? index.insert(p.entry) }
            retry = objects
            return try grouped { () throws(ResultsIndex.GroupingBroken) in throw error }
        }
        let newOffsets = index.offsets()
        let new = fresh.map { e in
            let p = index.path(of: e)
            return PlacedEntry(entry: e, path: p, global: newOffsets[p.section] + p.item)
        }
        let touched = reportsUpdates ? Set(objects.keys) : []
        let report = ChangeReport(
            old: old, new: new, touched: touched, oldSections: oldNames, newSections: index.sections.map(\.name))
        let renamed = old.contains { p in p.entry.id != p.entry.object.objectID }
        return (report, renamed)
    }

    /// Fetches the request again and compares the whole results.
    func fetchAgain(_ changes: ChangeSet, _ plan: FetchPlan, _ reportsUpdates: Bool) throws(StoreError)
        -> (ChangeReport, Bool)
    {
        let objects = try context.fetch(fetchRequest)
        var entries: [ResultEntry] = []
        entries.reserveCapacity(objects.count)
        for o in objects { entries.append(try entry(o, plan)) }
        let fresh = try grouped { () throws(ResultsIndex.GroupingBroken) in
            try ResultsIndex.build(entries, descriptors: fetchRequest.sortDescriptors)
        }
        func placed(_ r: ResultsIndex) -> [PlacedEntry] {
            var out: [PlacedEntry] = []
            out.reserveCapacity(r.count)
            for (s, section) in r.sections.enumerated() {
                for (i, e) in section.entries.enumerated() {
                    out.append(PlacedEntry(entry: e, path: ResultIndexPath(item: i, section: s), global: out.count))
                }
            }
            return out
        }
        var touched = Set<ObjectIdentifier>()
        if reportsUpdates {
            for id in changes.inserted + changes.updated {
                if let e = index.byID[id] ?? fresh.byID[id] { touched.insert(ObjectIdentifier(e.object)) }
            }
        }
        let old = placed(index)
        let renamed = old.contains { p in p.entry.id != p.entry.object.objectID }
        let report = ChangeReport(
            old: old, new: placed(fresh), touched: touched, oldSections: index.sections.map(\.name),
            newSections: fresh.sections.map(\.name))
        index = fresh
        return (report, renamed)
    }
}
