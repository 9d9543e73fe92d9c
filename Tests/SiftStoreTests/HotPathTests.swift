// The store's fast paths give the answers of the general ones: typed `setValue` overloads against
// `setValue(_: Any?)`, the integer-keyed registry against a Dictionary under random operations,
// interned object IDs (equality, names, URIs), and rows read by their declared column types
// against rows whose values another program stored with other storage classes.

import Foundation
import SiftEvaluation
import SiftSQLite
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct HotPathTests {
    func makeContext() throws -> ManagedObjectContext {
        ManagedObjectContext(store: try PersistentStore.inMemory(model: try Fixtures.companyModel()))
    }

    /// What a set did: the value read back, or the error's kind and message.
    enum Outcome: Equatable {
        case stored(String)
        case failed(StoreError.Kind, String)
    }

    func outcome(_ o: ManagedObject, _ key: String, _ set: () throws(StoreError) -> Void) -> Outcome {
        do {
            try set()
            return .stored(o[key].map { "\($0)" } ?? "unreadable")
        } catch {
            return .failed(error.kind, error.message)
        }
    }

    @Test func typedSetValueMatchesTheGeneralForm() throws {
        let c = try makeContext()
        let p = try c.insert("Person")
        let keys = ["name", "age", "salary", "balance", "active", "token", "home", "address", "pets", "nope"]
        for key in keys {
            // Each pair: the typed overload, then the same value through `Any?`.
            let strings = ["Ann", "41", "6F9619FF-8B86-D011-B42D-00C04FC964FF", "https://example.org", ""]
            for s in strings {
                let typed = outcome(p, key) { () throws(StoreError) in try p.setValue(s, forKey: key) }
                let general = outcome(p, key) { () throws(StoreError) in try p.setValue(s as Any?, forKey: key) }
                #expect(typed == general, "\(key) = \"\(s)\"")
            }
            for i in [0, 41, 70_000, -1] {
                let typed = outcome(p, key) { () throws(StoreError) in try p.setValue(i, forKey: key) }
                let general = outcome(p, key) { () throws(StoreError) in try p.setValue(i as Any?, forKey: key) }
                #expect(typed == general, "\(key) = \(i)")
                let typed64 = outcome(p, key) { () throws(StoreError) in try p.setValue(Int64(i), forKey: key) }
                let general64 = outcome(p, key) { () throws(StoreError) in try p.setValue(Int64(i) as Any?, forKey: key)
                }
                #expect(typed64 == general64, "\(key) = Int64(\(i))")
            }
            for d in [41.0, 41.5, -0.0, .infinity, .nan] {
                let typed = outcome(p, key) { () throws(StoreError) in try p.setValue(d, forKey: key) }
                let general = outcome(p, key) { () throws(StoreError) in try p.setValue(d as Any?, forKey: key) }
                #expect(typed == general, "\(key) = \(d)")
            }
            for b in [true, false] {
                let typed = outcome(p, key) { () throws(StoreError) in try p.setValue(b, forKey: key) }
                let general = outcome(p, key) { () throws(StoreError) in try p.setValue(b as Any?, forKey: key) }
                #expect(typed == general, "\(key) = \(b)")
            }
        }
        // The checks above really ran both kinds of outcome.
        #expect(
            outcome(p, "age") { () throws(StoreError) in try p.setValue(70_000, forKey: "age") }
                == .failed(.typeMismatch, "\(p.objectID) 'age': 70000 does not fit in a integer16"))
        try p.setValue(41, forKey: "age")
        #expect(try p.get("age", as: Int.self) == 41)
    }

    @Test func typedSetValueTracksChangesAndOwnership() throws {
        let c = try makeContext()
        let p = try c.insert("Person")
        try p.setValue("Ann", forKey: "name")
        try c.save()
        try p.setValue(52, forKey: "age")
        #expect(c.updatedObjects.contains(p))
        #expect(p.changedValues["age"].map { "\($0)" } == "\(Value.integer(52))")
        c.rollback()
        #expect(try p.get("age", as: Int.self) == nil)
        try c.delete(p)
        do {
            try p.setValue("Bob", forKey: "name")
            Issue.record("a deleted object took a value")
        } catch {
            #expect(error.kind == .invalidOperation)
        }
    }

    @Test func registryAgreesWithADictionary() throws {
        let c = try makeContext()
        var objects: [ManagedObject] = []
        for _ in 0..<64 { objects.append(try c.insert("Address")) }
        let registry = ObjectRegistry()
        // Permanent keys in three key spaces (as a Core Data store's hierarchies have); temporary
        // keys have one.
        struct Slot: Hashable {
            let key: ObjectID.Key
            let space: UInt32
        }
        var reference: [Slot: ManagedObject] = [:]
        var state: UInt64 = 0x5eed
        func next(_ n: UInt64) -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (state >> 33) % n
        }
        for step in 0..<20_000 {
            // Keys from a small range (collisions, re-inserts, removals of present keys) and a
            // wide one, clustered multiples included: runs form and break apart in the table.
            let raw = Int64(next(3) == 0 ? next(1 << 40) : next(300)) * (next(4) == 0 ? 1024 : 1)
            let key: ObjectID.Key = next(3) == 0 ? .temporary(raw) : .permanent(raw)
            let slot = Slot(key: key, space: key == .temporary(raw) ? 0 : UInt32(next(3)))
            switch next(4) {
            case 0:
                registry[key, slot.space] = nil
                reference[slot] = nil
            case 1, 2:
                let o = objects[Int(next(64))]
                registry[key, slot.space] = o
                reference[slot] = o
            default:
                #expect(registry[key, slot.space] === reference[slot], "step \(step)")
            }
            if step % 1000 == 0 {
                #expect(registry.count == reference.count)
                for (k, o) in reference { #expect(registry[k.key, k.space] === o) }
            }
        }
        #expect(registry.count == reference.count)
        #expect(Set(registry.values.map(ObjectIdentifier.init)) == Set(reference.values.map(ObjectIdentifier.init)))
        #expect(registry.values.count == reference.count)
    }

    @Test func objectIDsKeepTheirNames() throws {
        let model = try Fixtures.companyModel()
        let a = try PersistentStore.inMemory(model: model)
        let b = try PersistentStore.inMemory(model: model)
        let ca = ManagedObjectContext(store: a)
        let cb = ManagedObjectContext(store: b)
        let pa = try ca.insert("Person")
        let pb = try cb.insert("Pet")
        try pa.setValue("Ann", forKey: "name")
        try ca.save()
        try cb.save()
        #expect(pa.objectID.entityName == "Person" && pa.objectID.storeIdentifier == a.identifier)
        #expect(pb.objectID.entityName == "Pet" && pb.objectID.storeIdentifier == b.identifier)
        // Same key, other store: different IDs; the URI form names the store and entity.
        let twin = try #require(
            ObjectID(uri: URL(string: "sift://\(b.identifier)/Person/p\(pa.objectID.primaryKey!)")!))
        #expect(twin != pa.objectID && twin.storeIdentifier == b.identifier)
        #expect(ObjectID(uri: pa.objectID.uriRepresentation) == pa.objectID)
        #expect(
            pa.objectID.uriRepresentation.absoluteString == "sift://\(a.identifier)/Person/p\(pa.objectID.primaryKey!)")
        // A store this process never opened is named all the same.
        let foreign = try #require(ObjectID(uri: URL(string: "sift://not-opened-here/Gadget/t7")!))
        #expect(foreign.entityName == "Gadget" && foreign.storeIdentifier == "not-opened-here" && foreign.isTemporaryID)
        #expect(foreign.description == "Gadget (temporary 7)")
        // The entity is not identity.
        #expect(ObjectID(uri: URL(string: "sift://not-opened-here/Other/t7")!) == foreign)
        #expect(Set([pa.objectID, twin, foreign, pa.objectID]).count == 3)
    }

    @Test func rowsAreReadByTheirColumnTypesAndOtherwiseAsStored() throws {
        let path = Fixtures.temporaryPath()
        let model = try Fixtures.companyModel()
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
            for (name, age, salary, active) in [("Ann", 41, 5200.5, true), ("Bob", 30, 10.0, false)] {
                let p = try c.insert("Person")
                try p.setValue(name, forKey: "name")
                try p.setValue(age, forKey: "age")
                try p.setValue(salary, forKey: "salary")
                try p.setValue(active, forKey: "active")
                try p.setValue(Date(timeIntervalSinceReferenceDate: 86_400.5), forKey: "born")
            }
            try c.save()
        }
        // Another program stores Bob's values with other storage classes (and NULLs).
        let db = try SQLiteConnection(path: path)
        try db.execute(
            "UPDATE Person SET age = 'thirty', salary = 10, active = 'yes', born = 7, name = NULL WHERE name = 'Bob'")
        let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        var request = FetchRequest("Person")
        request.sortDescriptors = [try SiftSortDescriptor("salary", ascending: false)]
        let people = try c.fetch(request)
        #expect(people.count == 2)
        let ann = people[0]
        let bob = people[1]
        #expect(try ann.get("name", as: String.self) == "Ann")
        #expect(try ann.get("age", as: Int.self) == 41)
        #expect(try ann.get("salary", as: Double.self) == 5200.5)
        #expect(try ann.get("active", as: Bool.self) == true)
        #expect(try ann.get("born", as: Date.self) == Date(timeIntervalSinceReferenceDate: 86_400.5))
        #expect(try ann.get("email", as: String.self) == nil)
        #expect(bob["name"].map { "\($0)" } == "\(Value.null)")
        #expect(bob["age"].map { "\($0)" } == "\(Value.string("thirty"))")  // read as it is
        #expect(try bob.get("salary", as: Double.self) == 10.0)
        #expect(bob["active"].map { "\($0)" } == "\(Value.string("yes"))")
        #expect(try bob.get("born", as: Date.self) == Date(timeIntervalSinceReferenceDate: 7))
    }
}
