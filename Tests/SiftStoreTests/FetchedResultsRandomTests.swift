// The fetched results controller under random work, seeded: random predicates (SQL and memory),
// sorts and section key paths over a small model, while its context, a child context (pushed),
// a sibling context (merged by hand or automatically), batch requests (merged), another store
// object on the same file and, in the second test, another process (the `sift` binary's `store
// update`, `delete` and `import`; merged from history) insert, edit, delete and save. After each change
// the controller reports, the recorded changes applied to the previous results must give exactly a
// fresh fetch's results, with no object inserted that was there and no move to its own place.

import Foundation
import SiftStoreTestSupport
import SiftTestSupport
import Testing

@testable import SiftStore

@Suite struct FetchedResultsRandomTests {
    static let predicates: [String?] = [
        nil, "price > 3", "price BETWEEN {2, 6}", "category IN {'a', 'b'}", "name BEGINSWITH 'n1'",
        "weight > 0.5 OR price < 2", "name MATCHES 'n[0-4].*'", "category ==[c] 'A' OR weight == nil",
        "group.title == 'g1'", "price + 1 > weight",
    ]
    /// Sort keys, sections: the section key path, when any, is the first sort key's.
    static let sorts: [(keys: [(String, Bool)], section: String?)] = [
        ([("category", true), ("price", true)], "category"),
        ([("category", false), ("name", true)], "category"),
        ([("price", true)], nil),
        ([("price", false), ("weight", true)], "price"),
        ([("weight", true), ("name", false)], nil),
        ([("name", true)], nil),
        ([("group.title", true), ("price", true)], "group.title"),
    ]

    struct World {
        var rng: SplitMix64
        let path: String
        let main: ManagedObjectContext
        let sibling: ManagedObjectContext
        let elsewhere: ManagedObjectContext
        var historyToken: HistoryToken?
        let autoMerge: Bool
        /// The `sift` executable, when steps may run it as another process saving into the file.
        let sift: URL?
        /// What each step did, for the failure messages.
        var log: [String] = []

        mutating func pick<T>(_ xs: [T]) -> T { xs[Int.random(in: 0..<xs.count, using: &rng)] }
        mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }

        /// Random values for an item's attributes (and group) in `context`.
        mutating func edit(_ o: ManagedObject, in context: ManagedObjectContext) throws {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: try o.setValue(Int.random(in: 0..<10, using: &rng), forKey: "price")
            case 1: try o.setValue(pick(["a", "b", "c", "A"]) as String?, forKey: "category")
            case 2: try o.setValue(chance(0.2) ? nil : Double.random(in: 0..<2, using: &rng), forKey: "weight")
            case 3: try o.setValue("n\(Int.random(in: 0..<30, using: &rng))", forKey: "name")
            default:
                let groups = try context.fetch(FetchRequest("Group"))
                try o.setValue(groups.isEmpty ? nil : pick(groups), forKey: "group")
            }
        }

        mutating func insert(in context: ManagedObjectContext) throws {
            let o = try context.insert("Item")
            try o.setValue("n\(Int.random(in: 0..<30, using: &rng))", forKey: "name")
            try o.setValue(Int.random(in: 0..<10, using: &rng), forKey: "price")
            try o.setValue(pick(["a", "b", "c"]), forKey: "category")
            if chance(0.7) { try o.setValue(Double.random(in: 0..<2, using: &rng), forKey: "weight") }
        }

        /// Edits, inserts or deletes a few items in `context`.
        mutating func scribble(in context: ManagedObjectContext) throws {
            var items = try context.fetch(FetchRequest("Item"))
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                switch Int.random(in: 0..<6, using: &rng) {
                case 0:
                    try insert(in: context)
                    log.append("insert")
                case 1:
                    guard !items.isEmpty else { continue }
                    let o = items.remove(at: Int.random(in: 0..<items.count, using: &rng))
                    log.append("delete \(o.objectID)")
                    try context.delete(o)
                default:
                    guard !items.isEmpty else { continue }
                    let o = pick(items)
                    log.append("edit \(o.objectID)")
                    try edit(o, in: context)
                }
            }
        }

        /// One random step: changes somewhere, brought into the main context.
        mutating func step() throws {
            // With another process, one step in three is its.
            let kind = Int.random(in: 0..<(sift == nil ? 8 : 12), using: &rng)
            log.append(
                kind >= 8
                    ? "process"
                    : ["main", "main", "save", "child", "sibling", "batch update", "batch delete", "history"][kind])
            switch kind {
            case 0, 1: try scribble(in: main)
            case 2: try? main.save()
            case 3:
                let child = ManagedObjectContext(parent: main)
                try scribble(in: child)
                do { try child.save() } catch { child.rollback() }
            case 4:
                try scribble(in: sibling)
                let token =
                    autoMerge
                    ? nil
                    : sibling.observe { [main] note in
                        if case .didSave(let s) = note { try? main.mergeChanges(fromContextDidSave: s) }
                    }
                do { try sibling.save() } catch { sibling.rollback() }
                token?.cancel()
            case 5:
                var r = try BatchUpdateRequest("Item", predicate: "price == %@", Int.random(in: 0..<10, using: &rng))
                r.propertiesToUpdate = ["price": .constant(.integer(Int64.random(in: 0..<10, using: &rng)))]
                try main.mergeChanges(from: try main.execute(r))
            case 6:
                let r = try BatchDeleteRequest(
                    "Item", predicate: "price == %@ AND weight > 1.5", Int.random(in: 0..<10, using: &rng))
                try main.mergeChanges(from: try main.execute(r))
            case 7:
                try scribble(in: elsewhere)
                do { try elsewhere.save() } catch { elsewhere.rollback() }
                try mergeHistory()
            default:
                try anotherProcess()
                try mergeHistory()
            }
            try main.processPendingChanges()
        }

        /// Merges what was saved into the file since the last merge, from its history.
        mutating func mergeHistory() throws {
            let news = try main.store.history(after: historyToken)
            try main.mergeChanges(fromHistory: news)
            historyToken = news.last?.token ?? historyToken
        }

        /// A real second process saves into the store file: `sift store update`, `delete` or
        /// `import` (the store file names its model).
        mutating func anotherProcess() throws {
            let exe = try #require(sift)
            let price = Int.random(in: 0..<10, using: &rng)
            var args = ["store"]
            switch Int.random(in: 0..<4, using: &rng) {
            case 0:
                args += [
                    "update", path, "Item", "price == \(price)", "--set",
                    "price=\(Int.random(in: 0..<10, using: &rng))",
                ]
            case 1:
                args += [
                    "update", path, "Item", "price == \(price)", "--set", #"category="\#(pick(["a", "b", "c"]))""#,
                ]
            case 2: args += ["delete", path, "Item", "price == \(price) AND weight > 1.0"]
            default:
                let file = path + ".import.json"
                let weight = String(format: "%.2f", Double.random(in: 0..<2, using: &rng))
                let name = "n\(Int.random(in: 0..<30, using: &rng))"
                let category = pick(["a", "b", "c"])
                let record =
                    #"{"name": "\#(name)", "price": \#(price), "category": "\#(category)", "weight": \#(weight)}"#
                try Data(record.utf8).write(to: URL(fileURLWithPath: file))
                args += ["import", path, "Item", file]
            }
            log.append(args.dropFirst().joined(separator: " "))
            let child = try Child(exe.path, args)
            let status = child.wait()
            #expect(status == 0, "sift \(args) exited \(status)")
        }
    }

    static func makeWorld(seed: UInt64, anotherProcess: Bool = false) throws -> World {
        let path = Fixtures.temporaryPath()
        let store = try PersistentStore(model: try ResultsFixtures.model(), path: path, historyTracking: true)
        let main = ManagedObjectContext(store: store)
        var rng = SplitMix64(seed: seed)
        let autoMerge = Bool.random(using: &rng)
        main.automaticallyMergesChangesFromParent = autoMerge
        main.mergePolicy = Bool.random(using: &rng) ? .mergeByPropertyObjectTrump : .mergeByPropertyStoreTrump
        let sibling = ManagedObjectContext(store: store)
        sibling.mergePolicy = .mergeByPropertyObjectTrump
        let elsewhere = ManagedObjectContext(store: try PersistentStore(path: path, historyTracking: true))
        elsewhere.mergePolicy = .mergeByPropertyObjectTrump
        var sift: URL?
        if anotherProcess {
            let found = try #require(builtExecutable(named: "sift"), "no sift executable next to the test bundle")
            sift = found
        }
        var world = World(
            rng: rng, path: path, main: main, sibling: sibling, elsewhere: elsewhere, historyToken: nil,
            autoMerge: autoMerge, sift: sift)
        for t in ["g1", "g2"] { try main.insert("Group").setValue(t, forKey: "title") }
        for _ in 0..<25 { try world.insert(in: main) }
        try world.scribble(in: main)
        try main.save()
        world.historyToken = try store.history(after: nil).last?.token
        return world
    }

    @Test(arguments: 0..<24)
    func randomWorkKeepsTheResultsExact(round: Int) throws {
        try Self.check(round: round, world: try Self.makeWorld(seed: 0x5EED_0000 + UInt64(round)), steps: 50)
    }

    /// The same with another process among the savers: the `sift` binary, run as the command
    /// line's tests run it.
    @Test(arguments: 0..<4)
    func randomWorkWithAnotherProcessKeepsTheResultsExact(round: Int) throws {
        let world = try Self.makeWorld(seed: 0x5EED_1000 + UInt64(round), anotherProcess: true)
        try Self.check(round: round, world: world, steps: 25)
    }

    /// A controller over a random request follows `steps` random steps of `world` exactly.
    static func check(round: Int, world: World, steps: Int) throws {
        var world = world
        let predicate = world.pick(Self.predicates)
        let sort = world.pick(Self.sorts)
        var request = try predicate.map { try FetchRequest("Item", predicate: $0) } ?? FetchRequest("Item")
        request.sortDescriptors = try sort.keys.map { try SiftSortDescriptor($0.0, ascending: $0.1) }
        let c = try FetchedResultsController(
            fetchRequest: request, context: world.main, sectionNameKeyPath: sort.section)
        let recorder = ChangeRecorder()
        c.delegate = recorder
        try c.performFetch()
        let setting = "round \(round): \(predicate ?? "all") by \(sort.keys) in sections by \(sort.section ?? "none")"
        var before = ResultsFixtures.current(c)
        var changes = 0
        for n in 0..<steps {
            recorder.clear()
            world.log = []
            try world.step()
            try Self.expectStepExact(c, recorder, before: before, "\(setting), step \(n) \(world.log)")
            changes += recorder.objects.count
            before = ResultsFixtures.current(c)
        }
        #expect(changes > 0, "\(setting): nothing changed in \(steps) steps")
    }
}

// MARK: A controller on a child context

extension FetchedResultsRandomTests.World {
    /// One random step for a controller on `child` (a child of `main`): work in the child or in
    /// the parent, saves of either, a sibling's save merged into the parent, the child's reset or a
    /// refresh of one of its objects; then both process their changes (the parent first).
    mutating func childStep(_ child: ManagedObjectContext) throws {
        let kind = Int.random(in: 0..<9, using: &rng)
        log.append(
            ["child", "child", "parent", "push", "save parent", "sibling", "reset", "refresh", "refresh merging"][kind])
        switch kind {
        case 0, 1: try scribble(in: child)
        case 2: try scribble(in: main)
        case 3: do { try child.save() } catch { child.rollback() }
        case 4: do { try main.save() } catch { main.rollback() }
        case 5:
            try scribble(in: sibling)
            let token = sibling.observe { [main] note in
                if case .didSave(let s) = note { try? main.mergeChanges(fromContextDidSave: s) }
            }
            do { try sibling.save() } catch { sibling.rollback() }
            token.cancel()
        case 6: child.reset()
        default:
            let items = try child.fetch(FetchRequest("Item"))
            guard !items.isEmpty else { return }
            let o = pick(items)
            log.append("\(o.objectID)")
            try child.refresh(o, mergeChanges: kind == 8)
        }
        try main.processPendingChanges()
        try child.processPendingChanges()
    }
}

extension FetchedResultsRandomTests {
    @Test(arguments: 0..<10)
    func aControllerOnAChildContextKeepsTheResultsExact(round: Int) throws {
        var world = try Self.makeWorld(seed: 0xC41D_0000 + UInt64(round))
        // Half the items in a group, so the predicates and sections on `group.title` see some.
        let groups = try world.main.fetch(FetchRequest("Group"))
        for item in try world.main.fetch(FetchRequest("Item")) where world.chance(0.5) {
            try item.setValue(world.pick(groups), forKey: "group")
        }
        try world.main.save()
        let child = ManagedObjectContext(parent: world.main)
        child.mergePolicy = .mergeByPropertyObjectTrump
        child.automaticallyMergesChangesFromParent = world.chance(0.5)
        let predicate = world.pick(Self.predicates)
        let sort = world.pick(Self.sorts)
        var request = try predicate.map { try FetchRequest("Item", predicate: $0) } ?? FetchRequest("Item")
        request.sortDescriptors = try sort.keys.map { try SiftSortDescriptor($0.0, ascending: $0.1) }
        let c = try FetchedResultsController(fetchRequest: request, context: child, sectionNameKeyPath: sort.section)
        let recorder = ChangeRecorder()
        c.delegate = recorder
        try c.performFetch()
        let setting =
            "child round \(round): \(predicate ?? "all") by \(sort.keys) in sections by \(sort.section ?? "none")"
        var before = ResultsFixtures.current(c)
        var changes = 0
        for n in 0..<40 {
            recorder.clear()
            world.log = []
            try world.childStep(child)
            try Self.expectStepExact(c, recorder, before: before, "\(setting), step \(n) \(world.log)")
            changes += recorder.objects.count
            before = ResultsFixtures.current(c)
        }
        #expect(changes > 0, "\(setting): nothing changed in 40 steps")
    }
}

extension FetchedResultsRandomTests {
    /// After one step (`step` names it): no change failed; the recorded changes, applied to
    /// `before` one will/did pair at a time, give exactly a fresh fetch's results, with no object
    /// inserted that was there and no update or move that breaks the rules; and the controller
    /// holds the same.
    static func expectStepExact(
        _ c: FetchedResultsController, _ recorder: ChangeRecorder, before: ResultsFixtures.Sections, _ step: String
    ) throws {
        #expect(recorder.failures.isEmpty, "\(step): \(recorder.failures)")
        let fresh = try ResultsFixtures.freshSections(c)
        var present = before
        for round in recorder.rounds {
            let inserted = round.objects.filter { $0.type == .insert }.map(\.object)
            let wasThere = inserted.filter { o in present.contains { $0.objects.contains { $0 === o } } }
            #expect(wasThere.isEmpty, "\(step): an object already there reported as an insert")
            let one = ChangeRecorder()
            (one.objects, one.sections) = (round.objects, round.sections)
            present = one.applied(to: present).0 ?? present
        }
        let (after, why) = recorder.appliedRoundByRound(to: before)
        #expect(after != nil, "\(step): \(why)")
        if let after {
            #expect(
                ResultsFixtures.same(after, fresh),
                "\(step):\n applied \(ResultsFixtures.describe(after))\n fresh   \(ResultsFixtures.describe(fresh))")
        }
        #expect(ResultsFixtures.same(ResultsFixtures.current(c), fresh), "\(step): controller differs")
    }
}
