// StoreBench's typed-access part (issue 28): reading and writing the properties of objects already
// in memory through a generated-style subclass (`person.age`), through the string API
// (`get(_:as:)`, `setValue(_:forKey:)`), and GRDB's hand-written records (plain struct fields,
// what a GRDB user reads after `fetchAll`), on the same fetched rows in the same run. The issue
// asks typed access to be no slower than `get(_:as:)`. Reads take name, age and score of every
// object and must sum to the same checksum; writes set every object's score (the objects' change
// tracking included for Sift: each round writes into a freshly fetched context).
import BenchSupport
import Foundation
import GRDB
import SiftStore

/// Person as `sift store codegen` would write it (class name "TypedPerson" in the model).
final class TypedPerson: ManagedObject {
    var name: String? {
        get { attribute("name") }
        set { setAttribute(newValue, "name") }
    }
    var age: Int {
        get { attribute("age", default: 0) }
        set { setAttribute(newValue, "age") }
    }
    var score: Double {
        get { attribute("score", default: 0) }
        set { setAttribute(newValue, "score") }
    }
}

/// The Person model with TypedPerson registered: the same table as the untyped model's.
let typedModel: ManagedObjectModel = {
    var entities = model.entities
    entities[0].className = "TypedPerson"
    do { return try ManagedObjectModel(entities: entities, classes: [TypedPerson.self]) } catch {
        fail("typed model: \(error)")
    }
}()

/// One checksum for the three values read per object.
struct ReadSum: Equatable {
    var age = 0
    var score = 0.0
    var nameBytes = 0
}

@inline(never)
func profiledSiftTypedReads(_ people: [TypedPerson]) -> ReadSum {
    var s = ReadSum()
    for p in people {
        s.age &+= p.age
        s.score += p.score
        s.nameBytes &+= p.name?.utf8.count ?? 0
    }
    return s
}

@inline(never)
func siftStringReads(_ people: [ManagedObject]) -> ReadSum {
    var s = ReadSum()
    do {
        for p in people {
            s.age &+= try p.get("age", as: Int.self) ?? 0
            s.score += try p.get("score", as: Double.self) ?? 0
            s.nameBytes &+= try p.get("name", as: String.self)?.utf8.count ?? 0
        }
    } catch { fail("get(_:as:): \(error)") }
    return s
}

@inline(never)
func grdbReads(_ people: [GRDBPerson]) -> ReadSum {
    var s = ReadSum()
    for p in people {
        s.age &+= Int(p.values.age)
        s.score += p.values.score
        s.nameBytes &+= p.values.name.utf8.count
    }
    return s
}

@inline(never)
func profiledSiftTypedWrites(_ people: [TypedPerson]) -> Int {
    for (i, p) in people.enumerated() { p.score = Double(i) }
    return people.count
}

@inline(never)
func siftStringWrites(_ people: [ManagedObject]) -> Int {
    do { for (i, p) in people.enumerated() { try p.setValue(Double(i), forKey: "score") } } catch {
        fail("setValue(_:forKey:): \(error)")
    }
    return people.count
}

@inline(never)
func grdbWrites(_ people: inout [GRDBPerson]) -> Int {
    for i in people.indices { people[i].values.score = Double(i) }
    return people.count
}

/// The typed-access rows: ns per object for reads (three properties) and writes (one).
struct TypedRow {
    var label: String
    var objects: Int
    var typed: Double
    var string: Double
    var grdb: Double
}

/// Fetches `count` stored people three ways per round and times reads and writes of each.
func runTypedBenchmark(count: Int) -> [TypedRow] {
    let people = makePeople(count, seed: 5)
    let (path, _) = populatedStore("typed", people)
    defer { removeStore(path) }
    let typedStore: PersistentStore
    let plainStore: PersistentStore
    do {
        typedStore = try PersistentStore(model: typedModel, path: path)
        plainStore = try PersistentStore(model: model, path: path)
    } catch { fail("typed stores: \(error)") }
    let pool = openPool(path)
    var reads = Contest<ReadSum>()
    var writes = Contest<Int>()
    for round in 0...rounds {
        // The contexts live through the round: a released context lets its objects go.
        let typedContext = ManagedObjectContext(store: typedStore)
        let plainContext = ManagedObjectContext(store: plainStore)
        let typed: [TypedPerson]
        let plain: [ManagedObject]
        var records: [GRDBPerson]
        do {
            typed = try typedContext.fetch(SiftStore.FetchRequest(TypedPerson.self))
            plain = try plainContext.fetch(SiftStore.FetchRequest("Person"))
            records = try pool.read { try GRDBPerson.fetchAll($0) }
        } catch { fail("typed fetch: \(error)") }
        guard typed.count == count, plain.count == count, records.count == count else {
            fail("typed: fetched \(typed.count), \(plain.count) and \(records.count) rows, expected \(count)")
        }
        reads.run("typed", round) { profiledSiftTypedReads(typed) }
        reads.run("get(_:as:)", round) { siftStringReads(plain) }
        reads.run("GRDB record", round) { grdbReads(records) }
        writes.run("typed", round) { profiledSiftTypedWrites(typed) }
        writes.run("setValue(_:forKey:)", round) { siftStringWrites(plain) }
        writes.run("GRDB record", round) { grdbWrites(&records) }
        if !typedContext.accessErrors.isEmpty { fail("typed writes: \(typedContext.accessErrors[0])") }
        withExtendedLifetime((typedContext, plainContext)) {}
    }
    for (who, sum) in reads.answers where sum != reads.answers[0].1 {
        fail("typed reads: \(who) read \(sum), \(reads.answers[0].0) read \(reads.answers[0].1)")
    }
    checks.append(
        "typed reads: the same sums of age, score and name bytes from \(reads.answers.map(\.0).joined(separator: ", "))"
    )
    let median = { (c: [String: [Double]], who: String) in BenchSupport.median(c[who] ?? [.nan]) }
    return [
        TypedRow(
            label: "read name, age, score", objects: count, typed: median(reads.times, "typed"),
            string: median(reads.times, "get(_:as:)"), grdb: median(reads.times, "GRDB record")),
        TypedRow(
            label: "write score", objects: count, typed: median(writes.times, "typed"),
            string: median(writes.times, "setValue(_:forKey:)"), grdb: median(writes.times, "GRDB record")),
    ]
}

/// Prints the typed-access table (ns per object, and the ratios the issue asks about).
func printTyped(_ rows: [TypedRow]) {
    guard !rows.isEmpty else { return }
    print("")
    print(
        "| typed access, objects in memory | objects | typed ns/object | string API ns/object | GRDB record ns/object | typed / string | typed / GRDB | target |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows {
        let n = Double(r.objects)
        let ratio = r.typed / r.string
        print(
            "| \(r.label) | \(r.objects) | \(f(r.typed / n, 1)) | \(f(r.string / n, 1)) | \(f(r.grdb / n, 1)) | \(f(ratio, 2))× | \(f(r.typed / r.grdb, 1))× | ≤ 1× \(ratio <= 1 ? "met" : "MISSED") |"
        )
    }
}
