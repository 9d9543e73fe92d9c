// Contexts: typed values and coercion, inverses kept in step in memory, delete rules, validation
// and uniqueness failing the whole save (store unchanged, changes kept), temporary IDs becoming
// permanent, uniquing and faults, rollback/reset/refresh, and notifications.

import Foundation
import SiftEvaluation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct ContextTests {
    func makeContext(path: String? = nil) throws -> ManagedObjectContext {
        let model = try Fixtures.companyModel()
        return ManagedObjectContext(
            store: try path.map { try PersistentStore(model: model, path: $0) }
                ?? PersistentStore.inMemory(model: model))
    }

    func person(_ c: ManagedObjectContext, _ name: String, email: String? = nil) throws -> ManagedObject {
        let p = try c.insert("Person")
        try p.setValue(name, forKey: "name")
        try p.setValue(email, forKey: "email")
        return p
    }

    func rows(_ c: ManagedObjectContext, _ entity: String) throws -> Int {
        try ManagedObjectContext(store: c.store).count(for: FetchRequest(entity))
    }

    @Test func valuesOfEveryTypeRoundTrip() throws {
        let path = Fixtures.temporaryPath()
        let c = try makeContext(path: path)
        let p = try person(c, "Jörg", email: "j@x.org")
        struct Settings: Codable, Equatable {
            var theme: String
            var sizes: [Int]
        }
        let token = UUID()
        try p.setValue(41, forKey: "age")
        try p.setValue(1234.5, forKey: "salary")
        try p.setValue(Decimal(string: "12345678901234567.891")!, forKey: "balance")
        try p.setValue(Date(timeIntervalSince1970: 1_000_000.25), forKey: "born")
        try p.setValue(token, forKey: "token")
        try p.setValue(URL(string: "https://example.org/a?b=c")!, forKey: "home")
        try p.setValue(Data([0, 1, 2, 255]), forKey: "photo")
        try p.setValue(Settings(theme: "dark", sizes: [1, 2]), forKey: "settings")
        try p.setValue(["Jo", "J"], forKey: "nicknames")
        #expect(try p.get("active", as: Bool.self) == true)  // the model's default
        try c.save()

        let c2 = try makeContext(path: path)
        let q = try #require(try c2.fetch(FetchRequest("Person")).first)
        #expect(try q.get("name", as: String.self) == "Jörg")
        #expect(try q.get("age", as: Int.self) == 41)
        #expect(try q.get("salary", as: Double.self) == 1234.5)
        #expect(try q.get("balance", as: Decimal.self) == Decimal(string: "12345678901234567.891")!)
        #expect(try q.get("born", as: Date.self) == Date(timeIntervalSince1970: 1_000_000.25))
        #expect(try q.get("token", as: UUID.self) == token)
        #expect(try q.get("home", as: URL.self) == URL(string: "https://example.org/a?b=c")!)
        #expect(try q.get("photo", as: Data.self) == Data([0, 1, 2, 255]))
        #expect(try q.get("settings", as: Settings.self) == Settings(theme: "dark", sizes: [1, 2]))
        #expect(q["nicknames"]?.collectionElements?.count == 2)
        #expect(try SiftPredicate("settings.theme == 'dark' AND ANY nicknames == 'Jo'").evaluate(with: q))
        // Transformables are read in memory (the SQL schema leaves them out), so this fetch has a
        // residual. Strict, memory raises at the first conjunct that raises: a conjunct after one
        // left to memory stays in memory too (SQL must not drop a row memory raises on first).
        let found = try c2.fetch(try FetchRequest("Person", predicate: "age > 40 AND settings.theme == 'dark'"))
        #expect(found.count == 1)
        #expect(
            try c2.explain(try FetchRequest("Person", predicate: "age > 40 AND settings.theme == 'dark'"))
                .residualPredicate == #"settings.theme == "dark""#)
        #expect(
            try c2.explain(try FetchRequest("Person", predicate: "settings.theme == 'dark' AND age > 40"))
                .residualPredicate == #"settings.theme == "dark" AND age > 40"#)
    }

    @Test func valuesAreCoercedOrRejected() throws {
        let c = try makeContext()
        let p = try person(c, "Ann")
        func kind(_ v: Any?, _ key: String) -> StoreError.Kind? {
            do {
                try p.setValue(v, forKey: key)
                return nil
            } catch { return error.kind }
        }
        #expect(kind(70_000, "age") == .typeMismatch)  // integer16
        #expect(kind("41", "age") == .typeMismatch)  // a string is not a number
        #expect(kind(41.5, "age") == .typeMismatch)  // not integral
        #expect(kind(41.0, "age") == nil)
        #expect(kind("not a uuid", "token") == .typeMismatch)
        #expect(kind(1, "name") == .typeMismatch)
        #expect(kind("x", "nope") == .unknownKey)
        #expect(kind(p, "pets") == .typeMismatch)  // a to-many takes a collection
        let a = try c.insert("Address")
        #expect(kind(a, "projects") == .typeMismatch)
        #expect(kind([a], "pets") == .typeMismatch)  // an Address is not a Pet
        #expect(try p.get("age", as: Int.self) == 41)
        #expect(throws: StoreError.self) { try c.insert("Animal") }  // abstract
    }

    @Test func inversesStayInStep() throws {
        let c = try makeContext()
        let ann = try person(c, "Ann")
        let bob = try person(c, "Bob")
        let rex = try c.insert("Pet")
        let tom = try c.insert("Pet")
        try rex.setValue(ann, forKey: "owner")
        try ann.add(tom, to: "pets")
        #expect(try ann.get("pets", as: [ManagedObject].self) == [rex, tom])
        #expect(try tom.get("owner", as: ManagedObject.self) === ann)
        // Moving a pet takes it out of its old owner's pets.
        try rex.setValue(bob, forKey: "owner")
        #expect(try ann.get("pets", as: [ManagedObject].self) == [tom])
        #expect(try bob.get("pets", as: [ManagedObject].self) == [rex])
        // Many-to-many.
        let p1 = try c.insert("Project")
        try ann.setValue([p1], forKey: "projects")
        try bob.add(p1, to: "projects")
        #expect(Set(try p1.get("members", as: [ManagedObject].self) ?? []) == [ann, bob])
        try p1.remove(ann, from: "members")
        #expect(try ann.get("projects", as: [ManagedObject].self) == [])
        try c.save()
        // The same graph read back from the store.
        let c2 = ManagedObjectContext(store: c.store)
        let bob2 = try #require(try c2.fetch(try FetchRequest("Person", predicate: "name == 'Bob'")).first)
        #expect((try bob2.get("pets", as: [ManagedObject].self))?.count == 1)
        #expect((try bob2.get("projects", as: [ManagedObject].self))?.count == 1)
        let ann2 = try #require(try c2.fetch(try FetchRequest("Person", predicate: "name == 'Ann'")).first)
        #expect(try ann2.get("projects", as: [ManagedObject].self) == [])
        #expect(try c2.count(for: try FetchRequest("Person", predicate: "ANY projects.title == nil")) == 1)
    }

    @Test func orderedToManyKeepsItsOrder() throws {
        let c = try makeContext()
        let ann = try person(c, "Ann")
        let pets = try (0..<4).map { n -> ManagedObject in
            let p = try c.insert("Pet")
            try p.setValue("p\(n)", forKey: "name")
            return p
        }
        try ann.setValue([pets[2], pets[0], pets[3], pets[1]], forKey: "pets")
        try c.save()
        let c2 = ManagedObjectContext(store: c.store)
        let ann2 = try #require(try c2.fetch(FetchRequest("Person")).first)
        let names = try (ann2.get("pets", as: [ManagedObject].self) ?? []).map { try $0.get("name", as: String.self) }
        #expect(names == ["p2", "p0", "p3", "p1"])
        #expect(try SiftPredicate("pets.@count == 4").evaluate(with: ann2))
    }

    @Test func deleteRules() throws {
        let c = try makeContext()
        let ann = try person(c, "Ann")
        let home = try c.insert("Address")
        try ann.setValue(home, forKey: "address")
        let rex = try c.insert("Pet")
        try rex.setValue(ann, forKey: "owner")
        try c.save()
        // Address.residents is deny: the address cannot go while Ann lives there.
        try c.delete(home)
        do {
            try c.save()
            Issue.record("deny did not refuse")
        } catch {
            #expect(error.kind == .deleteDenied)
            #expect(error.message.contains("'residents'"))
        }
        #expect(try rows(c, "Address") == 1)
        c.rollback()
        // Person.pets is cascade; Person.address is nullify (Address.residents loses Ann).
        try c.delete(ann)
        try c.save()
        #expect(try rows(c, "Person") == 0)
        #expect(try rows(c, "Pet") == 0)
        #expect(try home.get("residents", as: [ManagedObject].self) == [])
        // Now nothing denies the address.
        try c.delete(home)
        try c.save()
        #expect(try rows(c, "Address") == 0)
    }

    @Test func aFailedSaveWritesNothingAndKeepsTheChanges() throws {
        let path = Fixtures.temporaryPath()
        let c = try makeContext(path: path)
        _ = try person(c, "Ann", email: "ann@x.org")
        try c.save()
        let ok = try person(c, "Bob", email: "bob@x.org")
        let bad = try person(c, "", email: "not an email")
        try bad.setValue(200, forKey: "age")
        do {
            try c.save()
            Issue.record("an invalid object was saved")
        } catch {
            #expect(error.kind == .validation)
            #expect(error.failures.count == 3, "\(error.failures)")
            #expect(error.failures.contains { $0.message.contains("'name': length 0 is below the minimum length 1") })
            #expect(error.failures.contains { $0.message.contains("'email'") && $0.message.contains("does not match") })
            #expect(error.failures.contains { $0.message.contains("'age': 200 is above the maximum 150") })
        }
        #expect(try rows(c, "Person") == 1)
        #expect(c.hasChanges && c.insertedObjects.count == 2)
        // Fixing the object lets the same changes save.
        try bad.setValue("Cy", forKey: "name")
        try bad.setValue("cy@x.org", forKey: "email")
        try bad.setValue(30, forKey: "age")
        try c.save()
        #expect(try rows(c, "Person") == 3)
        #expect(!ok.objectID.isTemporaryID)
    }

    @Test func uniquenessAcrossPendingAndStoredObjects() throws {
        let c = try makeContext()
        let ann = try person(c, "Ann", email: "a@x.org")
        let bob = try person(c, "Bob", email: "b@x.org")
        try c.save()
        // A new object with a stored object's email.
        let dup = try person(c, "Ann 2", email: "a@x.org")
        do {
            try c.save()
            Issue.record("duplicate saved")
        } catch {
            #expect(error.kind == .uniqueness)
            #expect(error.message.contains(ann.objectID.description) && error.message.contains("[email]"))
        }
        try c.delete(dup)
        // Two pending objects with the same email.
        let x = try person(c, "X", email: "x@x.org")
        let y = try person(c, "Y", email: "x@x.org")
        do {
            try c.save()
            Issue.record("pending duplicates saved")
        } catch {
            #expect(error.kind == .uniqueness)
            #expect(error.message.contains(x.objectID.description) && error.message.contains(y.objectID.description))
        }
        try c.delete(y)
        // Swapping two stored values in one save is fine.
        try ann.setValue("b@x.org", forKey: "email")
        try bob.setValue("a@x.org", forKey: "email")
        try c.save()
        #expect(try rows(c, "Person") == 3)
        // nil never collides.
        _ = try person(c, "N1")
        _ = try person(c, "N2")
        try c.save()
    }

    @Test func identityFaultsAndURIs() throws {
        let path = Fixtures.temporaryPath()
        let c = try makeContext(path: path)
        let ann = try person(c, "Ann")
        let temporary = ann.objectID
        #expect(temporary.isTemporaryID)
        try c.save()
        #expect(!ann.objectID.isTemporaryID && ann.objectID != temporary)
        #expect(try c.object(with: ann.objectID) === ann)
        let uri = ann.objectID.uriRepresentation
        #expect(ObjectID(uri: uri) == ann.objectID)
        let c2 = try makeContext(path: path)
        let fault = try c2.object(with: try #require(ObjectID(uri: uri)))
        #expect(fault.isFault)
        #expect(try fault.get("name", as: String.self) == "Ann")
        #expect(!fault.isFault)
        // One object per ID: a fetch returns the same instance.
        #expect(try c2.fetch(FetchRequest("Person")).first === fault)
        // The same key in another store is another object.
        let elsewhere = ManagedObjectContext(store: try PersistentStore.inMemory(model: try Fixtures.companyModel()))
        do {
            _ = try elsewhere.object(with: ann.objectID)
            Issue.record("another store's ID resolved")
        } catch {
            #expect(error.kind == .objectNotFound)
        }
        // A deleted row is a clear error when its fault fires.
        let c3 = try makeContext(path: path)
        try c3.delete(try c3.existingObject(with: ann.objectID))
        try c3.save()
        let c4 = try makeContext(path: path)
        #expect(throws: StoreError.self) { try c4.existingObject(with: ann.objectID) }
    }

    @Test func rollbackResetAndRefresh() throws {
        let c = try makeContext()
        let ann = try person(c, "Ann")
        try c.save()
        try ann.setValue("Anne", forKey: "name")
        let tmp = try person(c, "Tmp")
        #expect(ann.isUpdated && tmp.isInserted && c.hasChanges)
        #expect(ann.changedValues["name"] == .string("Anne"))
        c.rollback()
        #expect(!c.hasChanges)
        #expect(try ann.get("name", as: String.self) == "Ann")
        #expect(try c.count(for: FetchRequest("Person")) == 1)
        // Another context changes the row; refresh reads it, merging our own change on top.
        let other = ManagedObjectContext(store: c.store)
        let theirs = try other.existingObject(with: ann.objectID)
        try theirs.setValue(33, forKey: "age")
        try other.save()
        try ann.setValue("Annie", forKey: "name")
        try c.refresh(ann, mergeChanges: true)
        #expect(try ann.get("age", as: Int.self) == 33)
        #expect(try ann.get("name", as: String.self) == "Annie")
        try c.refresh(ann, mergeChanges: false)
        #expect(try ann.get("name", as: String.self) == "Ann")
        c.reset()
        #expect(c.registeredObjects.isEmpty)
        #expect(throws: StoreError.self) { try ann.setValue("x", forKey: "name") }
    }

    @Test func objectsOutlivingTheirContextFailCleanly() throws {
        let store = try PersistentStore.inMemory(model: try Fixtures.companyModel())
        var kept: ManagedObject?
        var fault: ManagedObject?
        do {
            let c = ManagedObjectContext(store: store)
            let ann = try person(c, "Ann")
            try c.save()
            kept = ann
            fault = try ManagedObjectContext(store: store).object(with: ann.objectID)
        }
        let o = try #require(kept)
        #expect(try o.get("name", as: String.self) == "Ann")  // read before the context went
        do {
            try o.setValue("Anne", forKey: "name")
            Issue.record("a change without a context")
        } catch {
            #expect(error.kind == .invalidOperation)
        }
        // A fault whose context is gone cannot read its row: an error, not a crash.
        #expect(throws: StoreError.self) { try fault?.get("name", as: String.self) }
    }

    @Test func notificationsCarryTheIDs() async throws {
        let c = try makeContext()
        final class Box: @unchecked Sendable { var notes: [ContextNotification] = [] }
        let box = Box()
        let token = c.observe { box.notes.append($0) }
        let stream = c.notifications
        let ann = try person(c, "Ann")
        try c.save()
        let saved = try #require(box.notes.compactMap { if case .didSave(let s) = $0 { s } else { nil } }.first)
        #expect(saved.inserted == [ann.objectID])
        #expect(box.notes.contains { if case .willSave = $0 { true } else { false } })
        #expect(box.notes.contains { if case .objectsDidChange(let s) = $0 { s.inserted.count == 1 } else { false } })
        var iterator = stream.makeAsyncIterator()
        let first = await iterator.next()
        if case .objectsDidChange? = first {
        } else {
            Issue.record("the stream's first notification is \(String(describing: first))")
        }
        token.cancel()
        try ann.setValue("Anne", forKey: "name")
        try c.save()
        #expect(box.notes.filter { if case .didSave = $0 { true } else { false } }.count == 1)
    }
}
