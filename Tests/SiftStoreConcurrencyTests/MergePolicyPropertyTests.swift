// Property test of contexts and merge policies (issue 29). Several contexts, each on its own private
// queue (every step runs through `performAndWait`, so the work really hops threads while the
// schedule stays replayable), apply seeded random reads, edits, inserts, deletes, rollbacks,
// resets, saves, batch updates and batch deletes to one store: side by side on the store, and as
// a stack (two contexts on the store, a child and a grandchild, a sibling child), where a child's
// save is a push into its parent. A plain serial model of Core Data's semantics — each context's
// committed copy and version of every object it read, what a child sees through its ancestors,
// the stored rows and their versions, and the policy's per-property rule (a push of an insert the
// parent holds a copy of is an update of that copy) — predicts every step: whether a save or push
// throws `merge-conflict`, whether a child can read an object (not when an ancestor deleted it),
// and after every save, push and batch request, the whole stored table
// (values and versions), the saving context's values and, after a push, the parent's. A saved
// change that vanished without a conflict error, or a conflict that was not reported, fails the
// run with its seed and step (`SIFT_POLICY_SEED=n` replays one, `SIFT_POLICY_TRACE=1` prints it).

import Foundation
import SiftStoreTestSupport
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
    /// Objects that had a stored row at some time: put back after it went, one is a new object.
    var everStored = Set<Int>()
    /// The next object number (for inserts, and for rows written again under a new key).
    var nextNumber = 0
    /// Objects the last save or push wrote again as new objects: old number → new number.
    var renumbered: [(Int, Int)] = []
    /// Per context: copies by object number.
    var copies: [[Int: Copy]]
    /// Per context: the context it pushes into (nil: it saves to the store).
    let parents: [Int?]
    let policy: MergePolicy

    init(parents: [Int?], policy: MergePolicy) {
        copies = Array(repeating: [:], count: parents.count)
        self.parents = parents
        self.policy = policy
    }

    /// A stored row to start with.
    mutating func seed(_ n: Int, _ row: Row) {
        stored[n] = row
        everStored.insert(n)
        nextNumber = max(nextNumber, n + 1)
    }

    /// What context `c` sees of object `n`: its own copy, else what its parent sees, else the
    /// stored row; nil when it is deleted there (a child cannot read an object deleted above it).
    func seen(_ c: Int, _ n: Int) -> (values: (name: String, price: Int), version: Int64)? {
        if let copy = copies[c][n] { return copy.deleted ? nil : (copy.current, copy.version) }
        if let p = parents[c] { return seen(p, n) }
        return stored[n].map { ((name: $0.name, price: $0.price), $0.version) }
    }

    /// Context `c` reads object `n` (it has no copy yet): false when it cannot (deleted or gone).
    mutating func read(_ c: Int, _ n: Int) -> Bool {
        guard let (values, version) = parents[c].map({ seen($0, n) }) ?? seen(c, n) else { return false }
        copies[c][n] = Copy(base: values, version: version, current: values)
        return true
    }

    /// Context `c` deletes its saved copy of `n`.
    mutating func delete(_ c: Int, _ n: Int) {
        if copies[c][n]!.inserted {
            copies[c][n] = nil
        } else {
            copies[c][n]!.deleted = true
        }
        forgetBelow(c, n)
    }

    /// A delete in `c`: the descendants' copies of `n` without changes of their own are deleted
    /// too (they leave the model); a copy with changes hides the delete from those below it.
    mutating func forgetBelow(_ c: Int, _ n: Int) {
        for d in parents.indices where parents[d] == c {
            if let copy = copies[d][n] {
                if copy.touched || copy.deleted { continue }
                copies[d][n] = nil
            }
            forgetBelow(d, n)
        }
    }

    /// Context `c` rolls back (`reset`: forgets everything). A copy whose changes hid a delete
    /// above it (from `c` and those below) meets that delete now.
    mutating func rollback(_ c: Int, reset: Bool) {
        let reverted = copies[c].filter { !$0.value.inserted && ($0.value.touched || $0.value.deleted) }.keys
        if reset {
            copies[c] = [:]
        } else {
            for (n, copy) in copies[c] {
                if copy.inserted {
                    copies[c][n] = nil
                } else {
                    copies[c][n]!.current = copy.base
                    copies[c][n]!.deleted = false
                    copies[c][n]!.touched = false
                }
            }
        }
        for n in reverted where deletedAbove(c, n) {
            copies[c][n] = nil
            forgetBelow(c, n)
        }
    }

    /// Whether a context above `c` deleted `n` and none between holds it with changes (a copy
    /// without changes hides nothing).
    func deletedAbove(_ c: Int, _ n: Int) -> Bool {
        guard let p = parents[c] else { return false }
        if let copy = copies[p][n] {
            if copy.deleted { return true }
            if copy.touched || copy.inserted { return false }
        }
        return deletedAbove(p, n)
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
                everStored.insert(n)
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

    /// What a push does with one updated or deleted object of the child.
    enum Pushed {
        /// The child's values of these properties go into the parent's copy (taken back from
        /// its delete when `undelete`).
        case apply(name: Bool, price: Bool, undelete: Bool)
        /// The parent's copy is deleted.
        case delete
        /// The child's changes are dropped for the parent's state (`.rollback`).
        case dropped
        /// The object leaves the child (deleted or gone above, or deleted on both sides).
        case gone
        /// Gone above, it goes back into the parent as an insert.
        case reinsert
    }

    /// Child `c` saves into its parent: nil when the push must throw `merge-conflict`. Every
    /// object the push looks at is read into the parent first (a copy there even when it throws).
    /// An insert of an object the parent holds a copy of (another child's push put it back there)
    /// is an update of that copy, one that changed every property and was read with its own values.
    mutating func push(_ c: Int) -> Bool {
        renumbered = []
        let p = parents[c]!
        var plans: [(Int, Pushed)] = []
        var conflict = false
        for (n, copy) in copies[c].sorted(by: { $0.key < $1.key })
        where copy.inserted ? copies[p][n] != nil : copy.deleted || copy.touched {
            if copies[p][n] == nil, let (values, version) = seen(p, n) {
                copies[p][n] = Copy(base: values, version: version, current: values)
            }
            guard let parent = copies[p][n], !parent.deleted else {
                // Deleted in the parent (`undelete` takes it back), or gone from its view.
                let here = copies[p][n] != nil
                switch policy {
                case _ where copy.deleted: plans.append((n, .gone))
                case .error: conflict = true
                case .mergeByPropertyObjectTrump, .overwrite:
                    plans.append((n, here ? .apply(name: true, price: true, undelete: true) : .reinsert))
                case .mergeByPropertyStoreTrump, .rollback: plans.append((n, .gone))
                }
                continue
            }
            let base = copy.inserted ? copy.current : copy.base
            let mine = (
                name: copy.inserted || copy.current.name != base.name,
                price: copy.inserted || copy.current.price != base.price
            )
            let theirs = (name: parent.current.name != base.name, price: parent.current.price != base.price)
            let clean = copy.deleted ? Pushed.delete : .apply(name: mine.name, price: mine.price, undelete: false)
            guard theirs.name || theirs.price else {
                plans.append((n, clean))
                continue
            }
            switch policy {
            case .error: conflict = true
            case .rollback: plans.append((n, .dropped))
            case _ where copy.deleted: plans.append((n, .delete))
            case .mergeByPropertyStoreTrump:
                plans.append(
                    (n, .apply(name: mine.name && !theirs.name, price: mine.price && !theirs.price, undelete: false)))
            case .mergeByPropertyObjectTrump: plans.append((n, clean))
            case .overwrite: plans.append((n, .apply(name: true, price: true, undelete: false)))
            }
        }
        if conflict { return false }
        for (n, copy) in copies[c] where copy.inserted && !plans.contains(where: { $0.0 == n }) {
            copies[p][n] = Copy(base: copy.current, version: 0, current: copy.current, inserted: true)
            copies[c][n] = Copy(base: copy.current, version: 0, current: copy.current)
        }
        for (n, plan) in plans { finishPush(c, p, n, plan) }
        return true
    }

    /// One object of a push: the parent's copy, then the child's.
    private mutating func finishPush(_ c: Int, _ p: Int, _ n: Int, _ plan: Pushed) {
        let mine = copies[c][n]!
        switch plan {
        case .apply(let name, let price, let undelete):
            var theirs = copies[p][n]!
            if name { theirs.current.name = mine.current.name }
            if price { theirs.current.price = mine.current.price }
            if undelete { theirs.deleted = false }
            theirs.touched = theirs.touched || name || price || undelete
            copies[p][n] = theirs
            copies[c][n] = Copy(base: theirs.current, version: theirs.version, current: theirs.current)
        case .dropped:
            let theirs = copies[p][n]!
            copies[c][n] = Copy(base: theirs.current, version: theirs.version, current: theirs.current)
        case .delete:
            copies[c][n] = nil
            if copies[p][n]!.inserted { copies[p][n] = nil } else { copies[p][n]!.deleted = true }
            forgetBelow(p, n)
        case .gone:
            copies[c][n] = nil
        case .reinsert:
            // An object that had a row comes back under a new ID: a new object.
            var m = n
            if everStored.contains(n) {
                m = nextNumber
                nextNumber += 1
                renumbered.append((n, m))
            }
            copies[c][n] = nil
            copies[c][m] = Copy(base: mine.current, version: 0, current: mine.current)
            copies[p][m] = Copy(base: mine.current, version: 0, current: mine.current, inserted: true)
        }
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

    /// Three contexts on the store, side by side.
    @Test(arguments: MergePolicy.allCases)
    func contextsSavingUnderAPolicyMatchTheSerialModel(_ policy: MergePolicy) throws {
        for seed in Self.seeds { try PolicyRun(policy, seed: seed, parents: [nil, nil, nil]).run(steps: 400) }
    }

    /// Two contexts on the store, a child of the first with a child of its own, and a second
    /// child of the first (siblings at each level): pushes, deletes above a child's objects and
    /// conflicts between a push and its parent, under the same policy everywhere.
    @Test(arguments: MergePolicy.allCases)
    func parentAndChildContextsMatchTheSerialModel(_ policy: MergePolicy) throws {
        for seed in Self.seeds { try PolicyRun(policy, seed: seed, parents: [nil, nil, 0, 2, 0]).run(steps: 400) }
    }

    /// Seed 8008's schedule, cut down: a child's clean object leaves when the root deletes it,
    /// the root takes the delete back, and a grandchild's edit of it goes up through the child
    /// (which holds a fresh object for it, not the one that left) to the store.
    @Test(arguments: MergePolicy.allCases)
    func anObjectDeletedAboveAndTakenBackTakesAGrandchildsEdit(_ policy: MergePolicy) throws {
        let (root, child, grandchild) = (0, 1, 2)
        let script: [PolicyRun.Scripted] = [
            .rename(child, 4, 61), .save(child), .delete(root, 4), .rollback(root),
            .rename(grandchild, 4, 59), .save(grandchild), .save(child), .save(root),
        ]
        let run = try PolicyRun(policy, script: script, parents: [nil, root, child])
        try run.run(steps: script.count)
        #expect(run.model.stored[4]?.name == "v59")
    }
}

/// Where a run's choices come from: the seeded generator, or a script of them (a scenario).
struct Choices {
    var rng: SplitMix64
    /// The scripted choices still to come, in the order the run asks for them; nil: random.
    var script: [Int]?

    /// The next scripted choice (-1, recorded as an issue, when the script has run out).
    private mutating func next() -> Int {
        guard let n = script!.first else {
            Issue.record("the script has no choice left")
            return -1
        }
        script!.removeFirst()
        return n
    }

    mutating func int(in range: Range<Int>) -> Int {
        guard script != nil else { return Int.random(in: range, using: &rng) }
        let n = next()
        #expect(range.contains(n), "scripted choice \(n) is outside \(range)")
        return range.contains(n) ? n : range.lowerBound
    }

    mutating func bool() -> Bool { script == nil ? Bool.random(using: &rng) : int(in: 0..<2) == 1 }

    /// One of `candidates`; a script names it by value.
    mutating func element(of candidates: [Int]) -> Int? {
        guard script != nil else { return candidates.randomElement(using: &rng) }
        let n = next()
        #expect(candidates.contains(n), "scripted choice \(n) is not one of \(candidates)")
        return candidates.contains(n) ? n : nil
    }
}

/// One seeded (or scripted) run against the model; every disagreement is recorded with the seed
/// and the step.
final class PolicyRun {
    let policy: MergePolicy
    let seed: UInt64
    var choices: Choices
    let store: PersistentStore
    var model: PolicyModel
    /// Object numbers ↔ IDs: permanent ones, and temporary ones of objects not saved yet (an
    /// object written again under a new ID gets a new number).
    var ids: [Int: ObjectID] = [:]
    var temporaryIDs: [Int: ObjectID] = [:]
    let cs: [ManagedObjectContext]
    /// Every context's objects by number, touched only on that context's queue.
    let held: Held
    /// Runs the batch requests and puts in the first rows.
    let setup: ManagedObjectContext
    var step = 0
    let trace = ProcessInfo.processInfo.environment["SIFT_POLICY_TRACE"] != nil

    init(_ policy: MergePolicy, seed: UInt64, parents: [Int?]) throws {
        self.policy = policy
        self.seed = seed
        // The sibling runs keep the seeds they always had; the stack's differ.
        let salt: UInt64 = parents.allSatisfy { $0 == nil } ? 0 : 104_729
        let rng = SplitMix64(seed: seed &* 7919 &+ UInt64(MergePolicy.allCases.firstIndex(of: policy)!) &+ salt)
        choices = Choices(rng: rng)
        store = try PersistentStore.inMemory(model: try Fixtures.itemsModel())
        model = PolicyModel(parents: parents, policy: policy)
        var made: [ManagedObjectContext] = []
        for p in parents {
            let c =
                p.map { ManagedObjectContext(parent: made[$0], concurrency: .privateQueue) }
                ?? ManagedObjectContext(store: store, concurrency: .privateQueue)
            c.mergePolicy = policy
            made.append(c)
        }
        cs = made
        held = Held(parents.count)
        setup = ManagedObjectContext(store: store)
        // A few saved rows to start with.
        for n in 0..<6 {
            let o = try setup.insert("Item")
            try o.setValue("n\(n)", forKey: "name")
            try o.setValue(n * 10, forKey: "price")
            try setup.save()
            ids[n] = o.objectID
            model.seed(n, .init(name: "n\(n)", price: n * 10, version: 0))
        }
    }

    /// A run of the steps `script` spells out (seed 0 in its messages).
    convenience init(_ policy: MergePolicy, script: [Scripted], parents: [Int?]) throws {
        try self.init(policy, seed: 0, parents: parents)
        choices.script = script.flatMap(\.choices)
    }

    /// Each kind of step's share of the rolls (out of 100).
    enum Roll {
        static let edit = 0..<30
        static let insert = 30..<38
        static let delete = 38..<46
        static let save = 46..<72
        static let rollback = 72..<80
        static let batchUpdate = 80..<90
        static let batchDelete = 90..<100
    }

    /// A step of a scripted run, as the choices the run asks for.
    enum Scripted {
        /// Context, object, and the number of its new name ("v<number>").
        case rename(Int, Int, Int)
        case save(Int)
        /// Context and object.
        case delete(Int, Int)
        case rollback(Int)

        var choices: [Int] {
            switch self {
            case .rename(let c, let n, let value): [c, Roll.edit.lowerBound, n, 0, value]
            case .save(let c): [c, Roll.save.lowerBound]
            case .delete(let c, let n): [c, Roll.delete.lowerBound, n]
            case .rollback(let c): [c, Roll.rollback.lowerBound, 0]
            }
        }
    }

    func at(_ what: String) -> String { "seed \(seed), \(policy), step \(step): \(what)" }

    func run(steps: Int) throws {
        for step in 0..<steps {
            self.step = step
            let c = choices.int(in: 0..<cs.count)
            let roll = choices.int(in: 0..<100)
            switch roll {
            case Roll.edit: try edit(c)
            case Roll.insert: try insert(c)
            case Roll.delete: try delete(c)
            case Roll.save: try save(c)
            case Roll.rollback: rollback(c)
            case Roll.batchUpdate: try batchUpdate()
            default: try batchDelete()
            }
            // Work a step left on the queues (a parent telling its children of a delete or of
            // new IDs) runs before the next step, parents first: the model is serial. Then each
            // context's held objects are the model's copies: an object a context no longer holds
            // (deleted above it, `forgetBelow`) is looked up again when next used, as a user would.
            for (c, context) in cs.enumerated() {
                let copies = Set(model.copies[c].keys)
                context.performAndWait { held.keep(c, copies) }
            }
            if trace { print(describe(c, roll)) }
            if Roll.save.contains(roll) || roll >= Roll.batchUpdate.lowerBound { try compareStore() }
        }
    }

    /// The ID of object `n`: its permanent one once saved, else its temporary one.
    func id(_ n: Int) -> ObjectID? { ids[n] ?? temporaryIDs[n] }

    /// Edits an object, reading it first when the context has no copy (an object deleted above a
    /// child, or gone from the store, cannot be read: `object-not-found`).
    func edit(_ c: Int) throws {
        var visible = Set(model.stored.keys)
        var up: Int? = c
        while let u = up {
            visible.formUnion(model.copies[u].keys)
            up = model.parents[u]
        }
        guard let n = choices.element(of: visible.sorted()), let id = id(n) else { return }
        let context = cs[c]
        if model.copies[c][n] == nil {
            let readable = model.read(c, n)
            let failure = context.performAndWait { () -> StoreError? in
                do throws(StoreError) { held.put(c, n, try context.existingObject(with: id)) } catch { return error }
                return nil
            }
            if readable {
                #expect(failure == nil, "\(at("reading \(n) in context \(c) threw \(failure.map { "\($0)" } ?? "")"))")
            } else {
                #expect(failure?.kind == .objectNotFound, "\(at("context \(c) read \(n), deleted or gone"))")
            }
            guard readable, failure == nil else { return }
        }
        guard !model.copies[c][n]!.deleted else { return }
        let price = choices.bool()
        let value = choices.int(in: 0..<100)
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
    }

    func insert(_ c: Int) throws {
        let n = model.nextNumber
        model.nextNumber += 1
        let value = choices.int(in: 0..<100)
        let context = cs[c]
        temporaryIDs[n] = try context.performAndWait { () throws(StoreError) in
            let o = try context.insert("Item")
            try o.setValue("i\(n)", forKey: "name")
            try o.setValue(value, forKey: "price")
            held.put(c, n, o)
            return o.objectID
        }
        model.copies[c][n] = .init(base: ("i\(n)", value), version: 0, current: ("i\(n)", value))
        model.copies[c][n]!.inserted = true
    }

    /// Deletes one of the context's saved copies (the children's copies follow).
    func delete(_ c: Int) throws {
        guard
            let n = choices.element(
                of: model.copies[c].filter { !$0.value.deleted && !$0.value.inserted }.keys.sorted())
        else { return }
        let context = cs[c]
        try context.performAndWait { () throws(StoreError) in try context.delete(held.get(c, n)!) }
        model.delete(c, n)
    }

    /// A save to the store, or a child's push into its parent.
    func save(_ c: Int) throws {
        let context = cs[c]
        let parent = model.parents[c]
        let expected = parent == nil ? model.save(c) : model.push(c)
        let outcome: StoreError? = context.performAndWait { () -> StoreError? in
            do throws(StoreError) { try context.save() } catch { return error }
            return nil
        }
        let what = parent == nil ? "the save" : "the push"
        if expected {
            #expect(outcome == nil, "\(at("\(what) threw \(outcome.map(String.init(describing:)) ?? "")"))")
        } else {
            #expect(
                outcome?.kind == .mergeConflict,
                "\(at("\(what) should be a merge conflict, got \(outcome.map(String.init(describing:)) ?? "no error")"))"
            )
        }
        // Objects written again under new IDs, then the new IDs.
        for (old, new) in model.renumbered { held.renumber(c, old, new) }
        let now = context.performAndWait { held.ids(c) }
        for (n, id) in now {
            if id.isTemporaryID { temporaryIDs[n] = id } else { ids[n] = id }
        }
        compareContext(c, at("after \(what)"))
        guard let parent else { return }
        // The parent's objects the push gave it, then the parent against the model.
        for n in model.copies[parent].keys.sorted() where held.get(parent, n) == nil {
            guard let id = id(n) else { continue }
            let p = cs[parent]
            let failure = p.performAndWait { () -> StoreError? in
                do throws(StoreError) { held.put(parent, n, try p.object(with: id)) } catch { return error }
                return nil
            }
            #expect(failure == nil, "\(at("the parent has no object \(n) after the push"))")
        }
        compareContext(parent, at("the parent after the push"))
    }

    /// Rolls back or resets the context.
    func rollback(_ c: Int) {
        let context = cs[c]
        let reset = choices.bool()
        if reset { context.performAndWait { context.reset() } } else { context.performAndWait { context.rollback() } }
        model.rollback(c, reset: reset)
    }

    func batchUpdate() throws {
        let limit = choices.int(in: 0..<100)
        let value = choices.int(in: 0..<100)
        var request = try BatchUpdateRequest("Item", predicate: "price < %@", limit)
        request.propertiesToUpdate = ["price": .constant(.integer(Int64(value)))]
        let result = try setup.execute(request)
        let hit = model.batchUpdate(below: limit, to: value)
        #expect(result.count == hit.count, "\(at("batch update count"))")
    }

    func batchDelete() throws {
        let limit = choices.int(in: 50..<100)
        let result = try setup.execute(try BatchDeleteRequest("Item", predicate: "price > %@", limit))
        let hit = model.batchDelete(above: limit)
        #expect(result.count == hit.count, "\(at("batch delete count"))")
    }

    /// One line of `SIFT_POLICY_TRACE`: the step, the stored rows and the context's copies.
    func describe(_ c: Int, _ roll: Int) -> String {
        let rows = model.stored.sorted { $0.key < $1.key }.map {
            "\($0.key):\($0.value.name)/\($0.value.price)@\($0.value.version)"
        }
        let copies = model.copies[c].sorted { $0.key < $1.key }.map {
            let flags = ($0.value.deleted ? "D" : "") + ($0.value.inserted ? "I" : "") + ($0.value.touched ? "T" : "")
            return "\($0.key):\($0.value.current)@\($0.value.version)\(flags)"
        }
        let parent = model.parents[c].map { " (child of \($0))" } ?? ""
        return "\(policy) step \(step) ctx \(c)\(parent) roll \(roll) stored \(rows) copies \(copies)"
    }

    /// The stored table, values and versions, against the model.
    func compareStore() throws {
        let reader = ManagedObjectContext(store: store)
        var actual: [ObjectID: PolicyModel.Row] = [:]
        for o in try reader.fetch(FetchRequest("Item")) {
            actual[o.objectID] = .init(
                name: try o.get("name", as: String.self) ?? "", price: try o.get("price", as: Int.self) ?? -1,
                version: o.version)
        }
        var expected: [ObjectID: PolicyModel.Row] = [:]
        for (n, row) in model.stored { if let id = ids[n] { expected[id] = row } }
        let where_ = at("stored rows")
        #expect(
            actual.count == model.stored.count,
            "\(where_): \(actual.count) rows stored, the model has \(model.stored.count)")
        for (id, row) in expected where actual[id] != row {
            Issue.record("\(where_): \(id) stored \(actual[id].map { "\($0)" } ?? "nothing"), the model says \(row)")
        }
    }

    /// Context `c`'s live objects against the model's copies.
    func compareContext(_ c: Int, _ at: String) {
        let context = cs[c]
        let seen: [Int: Result<(String, Int, Bool), StoreError>] = context.performAndWait {
            var out: [Int: Result<(String, Int, Bool), StoreError>] = [:]
            for (n, o) in held.objects(c) where o.context === context {
                out[n] = Result { () throws(StoreError) in
                    (try o.get("name", as: String.self) ?? "", try o.get("price", as: Int.self) ?? -1, o.isDeleted)
                }
            }
            return out
        }
        for (n, copy) in model.copies[c] {
            guard let read = seen[n] else {
                Issue.record("\(at): context \(c) lost object \(n), which the model keeps")
                continue
            }
            guard case .success(let (name, price, deleted)) = read else {
                Issue.record("\(at): context \(c) cannot read object \(n): \(read)")
                continue
            }
            #expect(
                name == copy.current.name && price == copy.current.price && deleted == copy.deleted,
                "\(at): context \(c) object \(n) holds \(name), \(price), deleted \(deleted); the model \(copy.current), deleted \(copy.deleted)"
            )
        }
    }
}

/// Each context's objects by model number; after every step, those of the model's copies (`run`).
/// Every access happens on the owning context's queue (inside `performAndWait`), or between
/// steps when no work is in flight.
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
