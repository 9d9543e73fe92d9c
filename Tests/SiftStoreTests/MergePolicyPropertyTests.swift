// Property test of contexts and merge policies (issue 29). Several contexts, each on its own private
// queue (every step runs through `performAndWait`, so the work really hops threads while the
// schedule stays replayable), apply seeded random reads, edits, inserts, deletes, rollbacks,
// resets, saves, batch updates and batch deletes to one store. A plain serial model of Core Data's
// semantics — each context's committed copy and version of every object it read, the stored rows
// and their versions, and the policy's per-property rule — predicts every step: whether a save
// throws `merge-conflict`, and after every save and batch request, the whole stored table (values
// and versions) and the saving context's values. A saved change that vanished without a conflict
// error, or a conflict that was not reported, fails the run with its seed and step.

import Foundation
import SiftTestSupport
import Testing

@testable import SiftStore

/// The serial model: what the store and each context should hold.
struct PolicyModel {
    struct Row: Equatable {
        var name: String
        var price: Int
        var version: Int64
    }
    /// A context's copy of an object it read or inserted.
    struct Copy {
        /// Values the context last read or saved (its committed state) and the version then.
        var base: (name: String, price: Int)
        var version: Int64
        var current: (name: String, price: Int)
        var deleted = false
        var inserted = false
        /// Edited since `base` (even back to the same values: the object is then updated, and its
        /// version is checked, though nothing of it is written).
        var touched = false
        var changed: Bool { current != base }
    }

    /// Stored rows by the model's object number (nil: deleted).
    var stored: [Int: Row] = [:]
    /// The next object number (for inserts, and for rows written again under a new key).
    var nextNumber = 0
    /// Objects the last save wrote again as new rows: old number → new number.
    var renumbered: [(Int, Int)] = []
    /// Per context: copies by object number.
    var copies: [[Int: Copy]]
    let policy: MergePolicy

    init(contexts: Int, policy: MergePolicy) {
        copies = Array(repeating: [:], count: contexts)
        self.policy = policy
    }

    /// The outcome of saving context `c`: nil when it must throw `merge-conflict`.
    mutating func save(_ c: Int) -> Bool {
        renumbered = []
        var conflicts: [Int] = []
        for (n, copy) in copies[c] where !copy.inserted && (copy.deleted || copy.touched) {
            if stored[n]?.version != copy.version { conflicts.append(n) }
        }
        if policy == .error && !conflicts.isEmpty { return false }
        for n in conflicts.sorted() { resolve(c, n) }
        for (n, copy) in copies[c] {
            if copy.inserted {
                stored[n] = Row(name: copy.current.name, price: copy.current.price, version: 0)
                copies[c][n] = Copy(base: copy.current, version: 0, current: copy.current)
            } else if copy.deleted {
                stored[n] = nil
                copies[c][n] = nil
            } else if copy.changed {
                let v = stored[n]!.version + 1
                stored[n] = Row(name: copy.current.name, price: copy.current.price, version: v)
                copies[c][n] = Copy(base: copy.current, version: v, current: copy.current)
            } else if copy.touched {
                copies[c][n]!.touched = false
            }
        }
        return true
    }

    /// The policy's answer for a conflicting object `n` of context `c` (before the writes).
    private mutating func resolve(_ c: Int, _ n: Int) {
        var copy = copies[c][n]!
        guard let row = stored[n] else {
            switch policy {
            case _ where copy.deleted: copies[c][n] = nil
            case .mergeByPropertyObjectTrump, .overwrite:
                // Written again with the object's values, as a new row: a new object.
                copy.inserted = true
                copies[c][n] = nil
                copies[c][nextNumber] = copy
                renumbered.append((n, nextNumber))
                nextNumber += 1
            default: copies[c][n] = nil
            }
            return
        }
        let theirs = (name: row.name, price: row.price)
        if policy == .rollback {
            copies[c][n] = Copy(base: theirs, version: row.version, current: theirs)
            return
        }
        if !copy.deleted {
            let mineName = copy.current.name != copy.base.name
            let minePrice = copy.current.price != copy.base.price
            let theirsName = theirs.name != copy.base.name
            let theirsPrice = theirs.price != copy.base.price
            switch policy {
            case .mergeByPropertyObjectTrump:
                if !mineName { copy.current.name = theirs.name }
                if !minePrice { copy.current.price = theirs.price }
            case .mergeByPropertyStoreTrump:
                if theirsName || !mineName { copy.current.name = theirs.name }
                if theirsPrice || !minePrice { copy.current.price = theirs.price }
            default: break
            }
        }
        copy.base = theirs
        copy.version = row.version
        copies[c][n] = copy
    }

    /// A batch update: price = `value` on every stored row whose price is below `limit`.
    /// Returns the object numbers it selected.
    mutating func batchUpdate(below limit: Int, to value: Int) -> [Int] {
        let hit = stored.filter { $0.value.price < limit }.map(\.key)
        for n in hit where stored[n]!.price != value {
            stored[n]!.price = value
            stored[n]!.version += 1
        }
        return hit
    }

    /// A batch delete of every stored row whose price is above `limit`.
    mutating func batchDelete(above limit: Int) -> [Int] {
        let hit = stored.filter { $0.value.price > limit }.map(\.key)
        for n in hit { stored[n] = nil }
        return hit
    }
}

@Suite struct MergePolicyPropertyTests {
    /// The seeds run by `make test`; `SIFT_POLICY_SEED=n` replays one.
    static var seeds: [UInt64] {
        if let s = ProcessInfo.processInfo.environment["SIFT_POLICY_SEED"], let n = UInt64(s) { return [n] }
        return [1, 2, 3, 4, 5, 6]
    }

    @Test(arguments: MergePolicy.allCases)
    func contextsSavingUnderAPolicyMatchTheSerialModel(_ policy: MergePolicy) throws {
        for seed in Self.seeds { try run(policy, seed: seed, contexts: 3, steps: 400) }
    }

    /// One seeded run; every disagreement is recorded with the seed and the step.
    func run(_ policy: MergePolicy, seed: UInt64, contexts: Int, steps: Int) throws {
        var rng = SplitMix64(seed: seed &* 7919 &+ UInt64(MergePolicy.allCases.firstIndex(of: policy)!))
        let store = try PersistentStore.inMemory(model: try MergeConflictTests.model())
        var model = PolicyModel(contexts: contexts, policy: policy)
        // Object numbers ↔ IDs (an object written again under a new key gets a new number).
        var ids: [Int: ObjectID] = [:]
        let cs = (0..<contexts).map { _ in
            let c = ManagedObjectContext(store: store, concurrency: .privateQueue)
            c.mergePolicy = policy
            return c
        }
        // Every context's objects by number, touched only on that context's queue.
        let held = Held(contexts)
        // A few saved rows to start with.
        let setup = ManagedObjectContext(store: store)
        for n in 0..<6 {
            let o = try setup.insert("Item")
            try o.setValue("n\(n)", forKey: "name")
            try o.setValue(n * 10, forKey: "price")
            try setup.save()
            ids[n] = o.objectID
            model.stored[n] = .init(name: "n\(n)", price: n * 10, version: 0)
        }
        model.nextNumber = 6
        let trace = ProcessInfo.processInfo.environment["SIFT_POLICY_TRACE"] != nil
        let where_ = { (step: Int, what: String) in "seed \(seed), \(policy), step \(step): \(what)" }
        for step in 0..<steps {
            let c = Int.random(in: 0..<contexts, using: &rng)
            let context = cs[c]
            let roll = Int.random(in: 0..<100, using: &rng)
            switch roll {
            case 0..<30:  // edit an object (reading it first when the context has no copy)
                guard let n = Set(model.stored.keys).union(model.copies[c].keys).sorted().randomElement(using: &rng)
                else { continue }
                if model.copies[c][n] == nil {
                    guard let row = model.stored[n] else { continue }
                    try context.performAndWait { () throws(StoreError) in
                        held.put(c, n, try context.existingObject(with: ids[n]!))
                    }
                    let values = (name: row.name, price: row.price)
                    model.copies[c][n] = .init(base: values, version: row.version, current: values)
                }
                guard !model.copies[c][n]!.deleted else { continue }
                let price = Bool.random(using: &rng)
                let value = Int.random(in: 0..<100, using: &rng)
                try context.performAndWait { () throws(StoreError) in
                    let o = held.get(c, n)!
                    if price {
                        try o.setValue(value, forKey: "price")
                    } else {
                        try o.setValue("v\(value)", forKey: "name")
                    }
                }
                if price {
                    model.copies[c][n]!.current.price = value
                } else {
                    model.copies[c][n]!.current.name = "v\(value)"
                }
                model.copies[c][n]!.touched = true
            case 30..<38:  // insert
                let n = model.nextNumber
                model.nextNumber += 1
                let value = Int.random(in: 0..<100, using: &rng)
                try context.performAndWait { () throws(StoreError) in
                    let o = try context.insert("Item")
                    try o.setValue("i\(n)", forKey: "name")
                    try o.setValue(value, forKey: "price")
                    held.put(c, n, o)
                }
                model.copies[c][n] = .init(base: ("i\(n)", value), version: 0, current: ("i\(n)", value))
                model.copies[c][n]!.inserted = true
            case 38..<46:  // delete one of the context's saved copies
                guard
                    let n = model.copies[c].filter({ !$0.value.deleted && !$0.value.inserted }).keys.sorted()
                        .randomElement(using: &rng)
                else { continue }
                try context.performAndWait { () throws(StoreError) in try context.delete(held.get(c, n)!) }
                model.copies[c][n]!.deleted = true
            case 46..<72:  // save
                let expected = model.save(c)
                let outcome: StoreError? = context.performAndWait { () -> StoreError? in
                    do throws(StoreError) { try context.save() } catch { return error }
                    return nil
                }
                if expected {
                    #expect(
                        outcome == nil,
                        "\(where_(step, "the save threw \(outcome.map(String.init(describing:)) ?? "")"))")
                } else {
                    #expect(
                        outcome?.kind == .mergeConflict,
                        "\(where_(step, "the save should be a merge conflict, got \(outcome.map(String.init(describing:)) ?? "no error")"))"
                    )
                }
                // New rows' IDs, then the saving context's objects against the model.
                for (old, new) in model.renumbered { held.renumber(c, old, new) }
                let now = context.performAndWait { held.ids(c) }
                for (n, id) in now where !id.isTemporaryID { ids[n] = id }
                try compareContext(context, c, held, model, where_(step, "after a save"))
            case 72..<80:  // roll back or reset the context
                if Bool.random(using: &rng) {
                    context.performAndWait { context.rollback() }
                    for (n, copy) in model.copies[c] {
                        if copy.inserted {
                            model.copies[c][n] = nil
                        } else {
                            model.copies[c][n]!.current = copy.base
                            model.copies[c][n]!.deleted = false
                            model.copies[c][n]!.touched = false
                        }
                    }
                } else {
                    context.performAndWait { context.reset() }
                    model.copies[c] = [:]
                }
                context.performAndWait { held.keep(c, Set(model.copies[c].keys)) }
            case 80..<90:  // batch update
                let limit = Int.random(in: 0..<100, using: &rng)
                let value = Int.random(in: 0..<100, using: &rng)
                var request = try BatchUpdateRequest("Item", predicate: "price < %@", limit)
                request.propertiesToUpdate = ["price": .constant(.integer(Int64(value)))]
                let result = try setup.execute(request)
                let hit = model.batchUpdate(below: limit, to: value)
                #expect(result.count == hit.count, "\(where_(step, "batch update count"))")
            default:  // batch delete
                let limit = Int.random(in: 50..<100, using: &rng)
                let result = try setup.execute(try BatchDeleteRequest("Item", predicate: "price > %@", limit))
                let hit = model.batchDelete(above: limit)
                #expect(result.count == hit.count, "\(where_(step, "batch delete count"))")
            }
            if trace {
                print(
                    "\(policy) step \(step) ctx \(c) roll \(roll) stored \(model.stored.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value.name)/\($0.value.price)@\($0.value.version)" }) copies \(model.copies[c].sorted { $0.key < $1.key }.map { "\($0.key):\($0.value.current)@\($0.value.version)\($0.value.deleted ? "D" : "")\($0.value.inserted ? "I" : "")\($0.value.touched ? "T" : "")" })"
                )
            }
            if roll >= 46 && roll < 72 || roll >= 80 {
                try compareStore(store, ids, model, where_(step, "stored rows"))
            }
        }
    }

    /// The stored table, values and versions, against the model.
    func compareStore(_ store: PersistentStore, _ ids: [Int: ObjectID], _ model: PolicyModel, _ at: String) throws {
        let reader = ManagedObjectContext(store: store)
        var actual: [ObjectID: PolicyModel.Row] = [:]
        for o in try reader.fetch(FetchRequest("Item")) {
            actual[o.objectID] = .init(
                name: try o.get("name", as: String.self) ?? "", price: try o.get("price", as: Int.self) ?? -1,
                version: o.version)
        }
        var expected: [ObjectID: PolicyModel.Row] = [:]
        for (n, row) in model.stored { if let id = ids[n] { expected[id] = row } }
        #expect(
            actual.count == model.stored.count,
            "\(at): \(actual.count) rows stored, the model has \(model.stored.count)")
        for (id, row) in expected where actual[id] != row {
            Issue.record("\(at): \(id) stored \(actual[id].map { "\($0)" } ?? "nothing"), the model says \(row)")
        }
    }

    /// The saving context's live objects against the model's copies.
    func compareContext(
        _ context: ManagedObjectContext, _ c: Int, _ held: Held, _ model: PolicyModel, _ at: String
    ) throws {
        let seen: [Int: (String, Int, Bool)] = try context.performAndWait { () throws(StoreError) in
            var out: [Int: (String, Int, Bool)] = [:]
            for (n, o) in held.objects(c) where o.context === context {
                out[n] = (try o.get("name", as: String.self) ?? "", try o.get("price", as: Int.self) ?? -1, o.isDeleted)
            }
            return out
        }
        for (n, copy) in model.copies[c] {
            guard let (name, price, deleted) = seen[n] else {
                Issue.record("\(at): context \(c) lost object \(n), which the model keeps")
                continue
            }
            #expect(
                name == copy.current.name && price == copy.current.price && deleted == copy.deleted,
                "\(at): context \(c) object \(n) holds \(name), \(price), deleted \(deleted); the model \(copy.current), deleted \(copy.deleted)"
            )
        }
        held.keep(c, Set(model.copies[c].keys))
    }
}

/// Each context's objects by model number. Every access happens on the owning context's queue
/// (inside `performAndWait`), or between steps when no work is in flight.
final class Held: @unchecked Sendable {
    private var byContext: [[Int: ManagedObject]]
    init(_ n: Int) { byContext = Array(repeating: [:], count: n) }
    func put(_ c: Int, _ n: Int, _ o: ManagedObject) { byContext[c][n] = o }
    func get(_ c: Int, _ n: Int) -> ManagedObject? { byContext[c][n] }
    func renumber(_ c: Int, _ old: Int, _ new: Int) {
        byContext[c][new] = byContext[c][old]
        byContext[c][old] = nil
    }
    func objects(_ c: Int) -> [Int: ManagedObject] { byContext[c] }
    func ids(_ c: Int) -> [Int: ObjectID] { byContext[c].mapValues(\.objectID) }
    /// Forgets the objects the model no longer has in context `c`.
    func keep(_ c: Int, _ numbers: Set<Int>) { byContext[c] = byContext[c].filter { numbers.contains($0.key) } }
}
