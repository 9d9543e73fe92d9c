// The fetched results controller: a sorted fetch kept live, in sections, telling a delegate and
// an `AsyncSequence` of snapshots what changed. A change is taken in at the context's hook
// (ResultTaps.swift) in proportion to the changed objects when the predicate, sort keys and
// section key path read the object's own attributes only: each changed object is judged again in
// memory and moved in the sorted results by binary search (ResultsIndex.swift). Other requests
// (relationship key paths, limits, no pending changes) are fetched again and compared whole. A
// change that raises leaves the results as they were and is told, never dropped. On a child
// context the controller also hears the ancestors' changes (ResultTaps.swift), so its results
// stay those of a fetch in the child; after the context's `reset()` it fetches again.

import Foundation
import SiftEvaluation

/// A fetch request's results kept up to date as the context changes, by sections.
///
/// ```swift
/// var request = FetchRequest("Item")
/// request.sortDescriptors = [try SiftSortDescriptor("category"), try SiftSortDescriptor("name")]
/// let controller = try FetchedResultsController(
///     fetchRequest: request, context: context, sectionNameKeyPath: "category")
/// try controller.performFetch()
/// print(controller.sections.map(\.name), controller.fetchedObjects.count)
/// ```
public final class FetchedResultsController {
    /// The request whose results the controller keeps (sorted; its first sort key groups like the
    /// section key path). A typed request (`FetchRequest(Employee.self)`) is kept as the same
    /// request of plain objects; its objects are still instances of the registered classes
    /// (`controller.fetchedObjects.first as? Employee`).
    public let fetchRequest: FetchRequest<ManagedObject>
    /// The context the results live in; changes are taken in on its thread or queue.
    public let context: ManagedObjectContext
    /// The key path whose value names each object's section (nil: one section).
    public let sectionNameKeyPath: String?
    /// Told of each change (held weakly).
    public weak var delegate: FetchedResultsControllerDelegate?
    /// Why the last change could not be taken in, if it could not (nil after one that could).
    public private(set) var lastError: StoreError?

    var index: ResultsIndex
    private let sectionReader: SiftSortDescriptor?
    private var plan: FetchPlan?
    /// Whether a change is taken in object by object (else the request is fetched again).
    private var incremental = false
    private var tap: UUID?
    /// On a child context: the taps on its ancestors.
    private var ancestorTaps: [(ManagedObjectContext, UUID)] = []
    /// Objects of a change that failed, judged again with the next one.
    var retry: [ObjectIdentifier: ManagedObject] = [:]
    private let streams = SnapshotStreams()

    /// A controller over `fetchRequest` (sorted, of objects) in `context`, sectioned by
    /// `sectionNameKeyPath`. Nothing is fetched before ``performFetch()``.
    ///
    /// ```swift
    /// let controller = try FetchedResultsController(fetchRequest: request, context: context)
    /// ```
    public init<Object>(
        fetchRequest: FetchRequest<Object>, context: ManagedObjectContext, sectionNameKeyPath: String? = nil
    ) throws(StoreError) {
        let fetchRequest = fetchRequest.untyped
        guard !fetchRequest.sortDescriptors.isEmpty else {
            throw StoreError(
                .invalidOperation,
                "a fetched results controller needs a sorted request: '\(fetchRequest.entityName)' has no sort descriptors"
            )
        }
        self.fetchRequest = fetchRequest
        self.context = context
        self.sectionNameKeyPath = sectionNameKeyPath
        if let sectionNameKeyPath {
            do { sectionReader = try SiftSortDescriptor(sectionNameKeyPath) } catch { throw StoreError(error) }
        } else {
            sectionReader = nil
        }
        index = ResultsIndex(descriptors: fetchRequest.sortDescriptors)
    }

    deinit {
        if let tap { context.resultTaps[tap] = nil }
        ManagedObjectContext.removeAncestorTaps(ancestorTaps)
        streams.finish()
    }

    // MARK: Fetching

    /// Fetches the results and starts following the context's changes.
    ///
    /// ```swift
    /// try controller.performFetch()
    /// ```
    public func performFetch() throws(StoreError) {
        let plan = try context.makePlan(fetchRequest)
        let objects = try context.fetch(fetchRequest)
        var entries: [ResultEntry] = []
        entries.reserveCapacity(objects.count)
        for o in objects { entries.append(try entry(o, plan)) }
        index = try grouped { () throws(ResultsIndex.GroupingBroken) in
            try ResultsIndex.build(entries, descriptors: fetchRequest.sortDescriptors)
        }
        self.plan = plan
        incremental = followsObjectByObject(plan)
        lastError = nil
        retry = [:]
        if tap == nil {
            tap = context.addResultTap { [weak self] event in
                switch event {
                case .changes(let changes, let updates): self?.take(changes, reportsUpdates: updates)
                case .reset: self?.takeReset()
                }
            }
            ancestorTaps = context.tapAncestors()
        }
        streams.yield(snapshot(reloaded: []))
    }

    /// Whether the request's answer for an object depends on that object's own attributes alone
    /// (and every pending change takes part, with no limit): then a change is judged per object.
    private func followsObjectByObject(_ plan: FetchPlan) -> Bool {
        guard fetchRequest.fetchLimit == nil, fetchRequest.fetchOffset == 0, fetchRequest.includesPendingChanges else {
            return false
        }
        let keys = fetchRequest.sortDescriptors.map(\.keyPath) + (sectionNameKeyPath.map { [$0] } ?? [])
        guard
            let paths = KeyPathCollector(model: context.store.model).paths(plan.full.syntax, keys, from: plan.info.name)
        else { return false }
        return paths.allSatisfy(\.isEmpty)
    }

    /// `o`'s entry: its sort keys and section name now.
    func entry(_ o: ManagedObject, _ plan: FetchPlan) throws(StoreError) -> ResultEntry {
        let root = o.evaluationRoot
        var keys: [Value] = []
        keys.reserveCapacity(fetchRequest.sortDescriptors.count)
        for d in fetchRequest.sortDescriptors {
            do { keys.append(try d.key(of: root)) } catch { throw StoreError(error, object: o.objectID, in: d.keyPath) }
        }
        var section = ""
        if let sectionReader {
            do { section = Self.sectionName(try sectionReader.key(of: root)) } catch {
                throw StoreError(error, object: o.objectID, in: sectionReader.keyPath)
            }
        }
        return ResultEntry(o, keys: keys, section: section)
    }

    /// A section key path's value as a section name.
    static func sectionName(_ v: Value) -> String {
        switch v {
        case .null: ""
        case .string(let s): s
        case .integer(let i): String(i)
        case .bool(let b): b ? "1" : "0"
        case .double(let d): String(d)
        default: v.description
        }
    }

    /// Runs `body`, turning broken grouping into the controller's error.
    func grouped<T>(_ body: () throws(ResultsIndex.GroupingBroken) -> T) throws(StoreError) -> T {
        do { return try body() } catch {
            let first = fetchRequest.sortDescriptors[0].keyPath
            throw StoreError(
                .invalidOperation,
                "section '\(error.name)' is not one run of the results: the first sort key '\(first)' does not group "
                    + "like the section key path '\(sectionNameKeyPath ?? "")'")
        }
    }

    // MARK: Reading the results

    /// Every object, section after section.
    public var fetchedObjects: [ManagedObject] { index.sections.flatMap { $0.entries.map(\.object) } }

    /// The sections, in order.
    public var sections: [FetchedResultsSection] {
        index.sections.map { FetchedResultsSection(name: $0.name, objects: $0.entries.map(\.object)) }
    }

    /// The index titles of the sections, in order, each once.
    public var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return index.sections.compactMap { FetchedResultsSection.indexTitle(of: $0.name) }.filter {
            seen.insert($0).inserted
        }
    }

    /// The object at `indexPath` (which must be inside the results).
    public func object(at indexPath: ResultIndexPath) -> ManagedObject {
        index.sections[indexPath.section].entries[indexPath.item].object
    }

    /// Where `object` is in the results (nil when it is not among them).
    public func indexPath(forObject object: ManagedObject) -> ResultIndexPath? {
        index.byObject[ObjectIdentifier(object)].map { index.path(of: $0) }
    }

    /// The results as a snapshot, `reloaded` marking changed contents.
    func snapshot(reloaded: Set<ObjectID>, failure: StoreError? = nil) -> FetchedResultsSnapshot {
        FetchedResultsSnapshot(
            sections: index.sections.map { .init(name: $0.name, objectIDs: $0.entries.map(\.object.objectID)) },
            reloadedItemIdentifiers: reloaded, failure: failure)
    }

    /// Snapshots of the results: the current one first (once fetched), then one per change, and
    /// one carrying the error of a change that could not be taken in.
    ///
    /// ```swift
    /// for await snapshot in controller.snapshots { print(snapshot.itemIdentifiers.count) }
    /// ```
    public var snapshots: AsyncStream<FetchedResultsSnapshot> {
        streams.make(first: plan == nil ? nil : snapshot(reloaded: []))
    }

    // MARK: Taking changes in

    /// Takes `changes` in: judges the objects again (or fetches again), then tells.
    private func take(_ changes: ChangeSet, reportsUpdates: Bool) {
        guard let plan else { return }
        let result: Result<(ChangeReport, Bool), StoreError>
        if incremental {
            result = Result { () throws(StoreError) in try takeIncrementally(changes, plan, reportsUpdates) }
        } else {
            result = Result { () throws(StoreError) in try fetchAgain(changes, plan, reportsUpdates) }
        }
        announce(result)
    }

    /// The context was reset: every object of the results was forgotten (and detached), so the
    /// request is fetched again, as `performFetch()` would. The delegate hears each old object
    /// as a delete and each new one as an insert (they are other objects, even for the same
    /// IDs); a snapshot marks the IDs present before and after as reloaded.
    private func takeReset() {
        guard let plan else { return }
        retry = [:]
        let before = Set(index.byID.keys)
        let result = Result { () throws(StoreError) in try fetchAgain(ChangeSet(), plan, false) }
        announce(result, reloaded: before.intersection(index.byID.keys))
    }

    /// Tells the delegate and the snapshot streams what `result` says changed (`reloaded`: IDs
    /// whose objects were replaced, besides the updates).
    private func announce(_ result: Result<(ChangeReport, Bool), StoreError>, reloaded extra: Set<ObjectID> = []) {
        switch result {
        case .failure(let error):
            lastError = error
            delegate?.controller(self, didFailWith: error)
            streams.yield(snapshot(reloaded: [], failure: error))
        case .success(let (report, renamed)):
            lastError = nil
            if !report.isEmpty { tell(report) }
            if !report.isEmpty || renamed {
                let reloaded = report.objects.filter { $0.type == .update }.map(\.object.objectID)
                streams.yield(snapshot(reloaded: extra.union(reloaded)))
            }
        }
    }

    private func tell(_ report: ChangeReport) {
        guard let delegate else { return }
        delegate.controllerWillChangeContent(self)
        for s in report.sections {
            delegate.controller(self, didChangeSection: s.name, atSectionIndex: s.index, for: s.type)
        }
        for c in report.objects {
            delegate.controller(self, didChange: c.object, at: c.old, for: c.type, newIndexPath: c.new)
        }
        delegate.controllerDidChangeContent(self)
    }
}
