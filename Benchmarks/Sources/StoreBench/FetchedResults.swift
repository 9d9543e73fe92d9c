// StoreBench part 7 (issue 30): what a fetched results controller costs to take a change in. A
// context holds a controller over every Person of a 100,000-row store (sorted by city and age,
// in sections by city); another context changes 1, 10 or 1,000 of them (new ages: most move) and
// saves, and the holder merges the did-save. The merge is timed with the controller and, on an
// identical holder without one, without it: the difference is the controller's work (judging the
// changed objects, moving them by binary search, the delegate's changes). Its target: ≤ 1 ms for
// a 1-object save, in proportion to the changed objects, not the 100,000 held. Before any time is
// kept, the controller's results must equal a fresh fetch's, object for object.

import BenchSupport
import Foundation
import SiftStore

/// Counts the delegate's changes (the work a list screen would start from them).
final class ChangeCounter: FetchedResultsControllerDelegate {
    var changes = 0
    func controller(
        _ controller: FetchedResultsController, didChange object: ManagedObject, at indexPath: ResultIndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: ResultIndexPath?
    ) { changes += 1 }
}

/// One measured size: changed objects, ms with and without the controller (wall clock and this
/// thread's CPU time: the machine may be shared), the delegate's changes.
struct ControllerRow {
    var changed: Int
    var with: Double
    var without: Double
    var withCPU: Double
    var withoutCPU: Double
    var told: Int
}

/// This thread's CPU time, ns.
func threadCPU() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) * 1e9 + Double(t.tv_nsec)
}

/// `body`'s wall-clock and CPU time, ms.
func timedBoth(_ body: () -> Void) -> (wall: Double, cpu: Double) {
    let c0 = threadCPU()
    let (ns, _) = timed(body)
    return (ns / 1e6, (threadCPU() - c0) / 1e6)
}

/// The controller's request: every person, by city then age, in sections by city.
func controllerRequest() -> SiftStore.FetchRequest<ManagedObject> {
    var r = SiftStore.FetchRequest("Person")
    do { r.sortDescriptors = [try SiftSortDescriptor("city"), try SiftSortDescriptor("age")] } catch {
        fail("\(error)")
    }
    return r
}

/// A writer's did-save of new ages for `n` objects spread over `ids`.
func savedAges(_ store: PersistentStore, _ ids: [ObjectID], _ n: Int, round: Int) -> ChangeSet {
    let writer = ManagedObjectContext(store: store)
    let heard = Heard()
    do {
        let step = max(1, ids.count / n)
        for (k, i) in Swift.stride(from: round % step, to: ids.count, by: step).prefix(n).enumerated() {
            try writer.object(with: ids[i]).setValue((k * 7 + round * 13) % 90, forKey: "age")
        }
        let token = writer.observe(heard.keep)
        try writer.save()
        token.cancel()
    } catch { fail("controller setup: \(error)") }
    guard let saved = heard.saved, saved.updated.count == n else {
        fail("controller: the writer saved no \(n) objects")
    }
    return saved
}

/// Part 7: for each size, the median merge time with and without a controller over `held` rows.
func runControllerBenchmark(held: Int, sizes: [Int]) -> [ControllerRow] {
    let (path, _) = populatedStore("controller", makePeople(held, seed: 7))
    let store: PersistentStore
    do { store = try PersistentStore(model: model, path: path) } catch { fail("\(error)") }
    let holder = ManagedObjectContext(store: store)
    let plain = ManagedObjectContext(store: store)
    let counter = ChangeCounter()
    let controller: FetchedResultsController
    do {
        controller = try FetchedResultsController(
            fetchRequest: controllerRequest(), context: holder, sectionNameKeyPath: "city")
        controller.delegate = counter
        try controller.performFetch()
        _ = try plain.fetch(controllerRequest())
    } catch { fail("controller: \(error)") }
    let ids = controller.fetchedObjects.map(\.objectID)
    var out: [ControllerRow] = []
    for n in sizes {
        var times: [[Double]] = [[], [], [], []]
        var told = 0
        for round in 0...rounds {
            let saved = savedAges(store, ids, n, round: round)
            counter.changes = 0
            let a = timedBoth { profiledSiftMerge(holder, saved) }
            let b = timedBoth { profiledSiftMerge(plain, saved) }
            if round == 0 {
                checkController(controller, n)
            } else {
                for (i, x) in [a.wall, b.wall, a.cpu, b.cpu].enumerated() { times[i].append(x) }
            }
            told = counter.changes
        }
        let m = times.map(median)
        out.append(ControllerRow(changed: n, with: m[0], without: m[1], withCPU: m[2], withoutCPU: m[3], told: told))
    }
    checks.append("controller: after each size's first merge, its results equal a fresh fetch's, object for object")
    withExtendedLifetime((controller, holder, plain, store)) {}
    removeStore(path)
    return out
}

/// Fails unless the controller's results are a fresh fetch's.
func checkController(_ controller: FetchedResultsController, _ n: Int) {
    let fresh: [ManagedObject]
    do { fresh = try controller.context.fetch(controller.fetchRequest) } catch { fail("\(error)") }
    let mine = controller.fetchedObjects
    guard mine.count == fresh.count, zip(mine, fresh).allSatisfy({ $0 === $1 }) else {
        fail("controller: after merging \(n) changes its results differ from a fresh fetch")
    }
}

/// The part's table.
func printControllerResult(_ rows: [ControllerRow], held: Int) {
    guard !rows.isEmpty else { return }
    print("")
    print(
        "| a did-save of N changed ages merged into a context with a controller over \(held) objects | "
            + "merge with controller, ms | without, ms | controller's share, ms | its CPU time, ms | "
            + "CPU µs per changed object | delegate changes | target |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows {
        let share = r.with - r.without
        let cpu = r.withCPU - r.withoutCPU
        let target = r.changed == 1 ? (share <= 1 ? "≤ 1 ms met" : "≤ 1 ms MISSED") : "–"
        print(
            "| \(r.changed) | \(f(r.with, 3)) | \(f(r.without, 3)) | \(f(share, 3)) | \(f(cpu, 3)) | "
                + "\(f(cpu * 1000 / Double(r.changed), 1)) | \(r.told) | \(target) |")
    }
}
