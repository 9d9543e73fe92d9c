// Structured store errors: each failure of a save, a delete, a `setValue` or a key lookup carries
// its object ID, entity, key, offending value and broken rule as fields, besides the words it
// prints, so a UI can mark the field that failed without parsing the message.

import Foundation
import SiftEvaluation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct StructuredErrorTests {
    func makeContext() throws -> ManagedObjectContext {
        ManagedObjectContext(store: try PersistentStore.inMemory(model: try Fixtures.companyModel()))
    }

    /// A team of one to two members and a required leader.
    func teamContext() throws -> ManagedObjectContext {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Team",
                relationships: [
                    RelationshipDescription("members", to: "Member", toMany: true, minCount: 1, maxCount: 2),
                    RelationshipDescription("leader", to: "Member", optional: false),
                ]),
            EntityDescription("Member", attributes: [AttributeDescription("name", .string)]),
        ])
        return ManagedObjectContext(store: try PersistentStore.inMemory(model: model))
    }

    func saveError(_ c: ManagedObjectContext) -> StoreError? {
        do { try c.save() } catch { return error }
        return nil
    }

    @Test func aSaveBreakingSeveralRulesReportsEachWithItsFields() throws {
        let c = try makeContext()
        let bad = try c.insert("Person")
        try bad.setValue("", forKey: "name")
        try bad.setValue("not an email", forKey: "email")
        try bad.setValue(200, forKey: "age")
        let error = try #require(saveError(c))
        #expect(error.kind == .validation)
        let byKey = Dictionary(uniqueKeysWithValues: error.failures.map { ($0.key ?? "", $0) })
        #expect(Set(byKey.keys) == ["name", "email", "age"])
        #expect(error.failures.allSatisfy { $0.objectID == bad.objectID && $0.entity == "Person" })
        #expect(byKey["name"]?.constraint == .minLength)
        #expect(byKey["name"]?.value == .string(""))
        #expect(byKey["email"]?.constraint == .regularExpression)
        #expect(byKey["email"]?.value == .string("not an email"))
        #expect(byKey["age"]?.constraint == .maxValue)
        #expect(byKey["age"]?.value == .integer(200))
        #expect(byKey["age"]?.message == "\(bad.objectID) 'age': 200 is above the maximum 150.0")
        // The error's own fields are its first failure's; the description prints every message.
        #expect(error.objectID == bad.objectID && error.key == error.failures[0].key)
        for f in error.failures { #expect(error.description.contains(f.message)) }
    }

    @Test func aMissingRequiredValueAndABelowMinimumNumberNameTheirRules() throws {
        let c = try makeContext()
        let p = try c.insert("Person")
        try p.setValue(-1, forKey: "age")
        let error = try #require(saveError(c))
        #expect(error.failures.map(\.constraint) == [.required, .minValue])
        #expect(error.failures.map(\.key) == ["name", "age"])
        #expect(error.failures[0].value == .null)
        #expect(error.failures[1].value == .integer(-1))
    }

    @Test func countBoundsAndARequiredToOneNameTheRelationship() throws {
        let c = try teamContext()
        let team = try c.insert("Team")
        let error = try #require(saveError(c))
        #expect(error.kind == .validation)
        #expect(error.failures.map(\.constraint) == [.minCount, .required])
        #expect(error.failures.map(\.key) == ["members", "leader"])
        #expect(error.failures[0].value == .integer(0))
        #expect(error.failures.allSatisfy { $0.objectID == team.objectID && $0.entity == "Team" })
        let members = try (0..<3).map { _ in try c.insert("Member") }
        try team.setValue(members, forKey: "members")
        try team.setValue(members[0], forKey: "leader")
        let tooMany = try #require(saveError(c))
        #expect(tooMany.constraint == .maxCount && tooMany.value == .integer(3) && tooMany.key == "members")
    }

    @Test func aUniquenessFailureNamesBothObjects() throws {
        let c = try makeContext()
        let ann = try c.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        try ann.setValue("a@x.org", forKey: "email")
        let bob = try c.insert("Person")
        try bob.setValue("Bob", forKey: "name")
        try bob.setValue("a@x.org", forKey: "email")
        let pending = try #require(saveError(c))
        #expect(pending.kind == .uniqueness)
        #expect(pending.constraint == .uniqueness && pending.failures[0].keys == ["email"])
        #expect(pending.objectID == bob.objectID && pending.failures[0].relatedObjectIDs == [ann.objectID])
        #expect(pending.value == .string("a@x.org"))
        // Against a stored row: the other object is the stored one's permanent ID.
        try bob.setValue("b@x.org", forKey: "email")
        try c.save()
        let carl = try c.insert("Person")
        try carl.setValue("Carl", forKey: "name")
        try carl.setValue("a@x.org", forKey: "email")
        let stored = try #require(saveError(c))
        #expect(stored.kind == .uniqueness && stored.objectID == carl.objectID)
        #expect(stored.failures[0].relatedObjectIDs == [ann.objectID])
    }

    @Test func aDenyDeleteNamesTheObjectTheRelationshipAndWhatItHolds() throws {
        let c = try makeContext()
        let home = try c.insert("Address")
        let ann = try c.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        try ann.setValue(home, forKey: "address")
        try c.save()
        do {
            try c.delete(home)
            try c.save()
            Issue.record("a deny rule let the delete through")
        } catch {
            #expect(error.kind == .deleteDenied)
            #expect(error.constraint == .deleteDeny && error.objectID == home.objectID)
            #expect(error.entity == "Address" && error.key == "residents")
            #expect(error.failures[0].relatedObjectIDs == [ann.objectID])
        }
    }

    @Test func aValueOfTheWrongTypeAtSetValueCarriesTheValue() throws {
        let c = try makeContext()
        let p = try c.insert("Person")
        do {
            try p.setValue("old", forKey: "age")
            Issue.record("a string was taken as an integer")
        } catch {
            #expect(error.kind == .typeMismatch && error.constraint == .type)
            #expect(error.objectID == p.objectID && error.entity == "Person" && error.key == "age")
            #expect(error.value == .string("old"))
        }
        let pet = try c.insert("Pet")
        do {
            try p.setValue(pet, forKey: "address")
            Issue.record("a pet was taken as an address")
        } catch {
            #expect(error.kind == .typeMismatch && error.key == "address")
            #expect(error.value == .object(pet))
        }
    }

    @Test func anUnknownKeyNamesTheEntityAndTheKey() throws {
        let c = try makeContext()
        let p = try c.insert("Person")
        do {
            try p.setValue(1, forKey: "agee")
            Issue.record("an unknown key was set")
        } catch {
            #expect(error.kind == .unknownKey && error.constraint == .unknownKey)
            #expect(error.entity == "Person" && error.key == "agee" && error.objectID == p.objectID)
        }
        do {
            _ = try c.fetch(try FetchRequest("Person", predicate: "agee > 3"))
            Issue.record("a predicate with an unknown key ran")
        } catch {
            #expect(error.kind == .unknownKey && error.entity == "Person" && error.key == "agee")
            #expect(error.location != nil)
        }
    }

    @Test func aBatchUpdateBreakingARuleReportsTheObjectAndTheValue() throws {
        let c = try makeContext()
        let p = try c.insert("Person")
        try p.setValue("Ann", forKey: "name")
        try c.save()
        var request = BatchUpdateRequest("Person")
        request.propertiesToUpdate = ["age": .constant(.integer(-5))]
        do {
            _ = try c.execute(request)
            Issue.record("a batch update broke a minimum")
        } catch {
            #expect(error.kind == .validation && error.constraint == .minValue)
            #expect(error.objectID == p.objectID && error.key == "age" && error.value == .integer(-5))
        }
    }
}
