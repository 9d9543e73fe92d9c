// The README says a store may be shared while each context belongs to one thread at a time. This
// test holds the store to that: several threads, each with its own context on one shared store,
// insert, save and fetch at once; every save must land whole, IDs must not collide, and each
// thread's fetches must see its own saves. `make test` also runs this suite under
// ThreadSanitizer, where unsynchronised state in the store fails the run.

import Foundation
import SiftEvaluation
import SiftStoreTestSupport
import SiftTestSupport
import Testing

@testable import SiftStore

@Suite struct ThreadSafetyTests {
    @Test func contextsOnSeveralThreadsShareOneStore() throws {
        let model = try Fixtures.companyModel()
        let store = try PersistentStore(model: model, path: Fixtures.temporaryPath())
        let threads = 4
        let perThread = 30
        let outcomes = try concurrently(threads: threads, rounds: 1) { t throws -> [ObjectID] in
            let context = ManagedObjectContext(store: store)
            var saved: [ObjectID] = []
            for batch in 0..<3 {
                var inserted: [ManagedObject] = []
                for i in 0..<(perThread / 3) {
                    let p = try context.insert("Person")
                    try p.setValue("t\(t)-\(batch)-\(i)", forKey: "name")
                    try p.setValue(20 + i, forKey: "age")
                    inserted.append(p)
                }
                try context.save()
                saved += inserted.map(\.objectID)
                let mine = try context.count(for: FetchRequest("Person", predicate: "name BEGINSWITH %@", "t\(t)-"))
                #expect(mine == saved.count)
            }
            return saved
        }
        let ids = outcomes.flatMap { $0 }
        #expect(ids.count == threads * perThread)
        #expect(Set(ids).count == ids.count, "permanent IDs must not collide across contexts")
        #expect(ids.allSatisfy { !$0.isTemporaryID })
        let reader = ManagedObjectContext(store: store)
        #expect(try reader.count(for: FetchRequest("Person")) == threads * perThread)
        #expect(
            try reader.count(for: FetchRequest("Person", predicate: "age >= 20 AND age < %@", 20 + perThread / 3))
                == threads * perThread)
    }
}
