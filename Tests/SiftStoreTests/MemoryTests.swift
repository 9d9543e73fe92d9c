// Related objects hold each other strongly (each side of an inverse pair links the other), so
// every object graph with an inverse is a reference cycle while its context lives. These tests
// hold the context to breaking those cycles whenever objects leave it: when the context goes
// away, on reset, on rollback, and when a save or a batch delete removes deleted objects.
// AddressSanitizer's leak check (`make asan`) found the first of these.

import Foundation
import SiftEvaluation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

/// Weak references to objects, to see whether anything still holds them.
private final class Watch {
    private var refs: [() -> AnyObject?] = []
    func add(_ objects: AnyObject...) { for o in objects { refs.append { [weak o] in o } } }
    var alive: Int { refs.filter { $0() != nil }.count }
}

/// A person with an address and two pets, each side linked to the other.
private func family(in c: ManagedObjectContext, _ name: String) throws -> [ManagedObject] {
    let p = try c.insert("Person")
    try p.setValue(name, forKey: "name")
    let a = try c.insert("Address")
    try a.setValue("Oslo", forKey: "city")
    try p.setValue(a, forKey: "address")
    let pets = try (0..<2).map { i throws -> ManagedObject in
        let pet = try c.insert("Pet")
        try pet.setValue("\(name)-\(i)", forKey: "name")
        try pet.setValue(p, forKey: "owner")
        return pet
    }
    return [p, a] + pets
}

@Suite struct MemoryTests {
    @Test func aReleasedContextReleasesItsObjects() throws {
        let store = try PersistentStore(model: try Fixtures.companyModel(), path: Fixtures.temporaryPath())
        let watch = Watch()
        do {
            let c = ManagedObjectContext(store: store)
            for o in try family(in: c, "Ann") { watch.add(o) }
            try c.save()
            // Read back through a second context too: faults and their links.
            let c2 = ManagedObjectContext(store: store)
            for p in try c2.fetch(FetchRequest("Person")) {
                watch.add(p)
                for pet in try p.get("pets", as: [ManagedObject].self) ?? [] { watch.add(pet) }
            }
            #expect(watch.alive == 7)
        }
        #expect(watch.alive == 0, "objects kept alive by their links after their contexts went away")
    }

    @Test func resetAndRollbackReleaseObjects() throws {
        let store = try PersistentStore(model: try Fixtures.companyModel(), path: Fixtures.temporaryPath())
        let c = ManagedObjectContext(store: store)
        let watch = Watch()
        do {
            for o in try family(in: c, "Bo") { watch.add(o) }
            c.rollback()
        }
        #expect(watch.alive == 0, "rolled-back inserts kept alive by their links")
        do {
            for o in try family(in: c, "Cy") { watch.add(o) }
            try c.save()
            c.reset()
        }
        #expect(watch.alive == 0, "objects kept alive after reset")
    }

    @Test func savedDeletionsAndBatchDeletionsReleaseObjects() throws {
        let store = try PersistentStore(model: try Fixtures.companyModel(), path: Fixtures.temporaryPath())
        let c = ManagedObjectContext(store: store)
        let watch = Watch()
        do {
            let objects = try family(in: c, "Di")
            try c.save()
            // The cascade deletes the pets with their owner; the address stays.
            try c.delete(objects[0])
            try c.save()
            watch.add(objects[0], objects[2], objects[3])
        }
        #expect(watch.alive == 0, "deleted objects kept alive by each other after the save")
        do {
            for o in try family(in: c, "Ed").dropFirst(2) { watch.add(o) }
            try c.save()
            let result = try c.execute(try BatchDeleteRequest("Pet", predicate: "name BEGINSWITH 'Ed'"))
            try c.mergeChanges(from: result)
        }
        #expect(watch.alive == 0, "batch-deleted objects kept alive after merging")
    }
}
