// Migration plans (issue 32): a model file's version name; renames chained across three versions
// in one open; a store at any version of a plan reaching the last; every step run in turn (a
// default filled by a middle version kept by the last); custom stages' code before and
// after the schema change, in the same transaction; and every failure (a row breaking a rule, the
// code throwing, a store at no version of the plan) leaving the store exactly as it was.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct MigrationPlanTests {
    typealias M = MigrationSupport

    /// A model file with version name `version` and `entities`.
    static func version(_ version: String, _ entities: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(json: Data("{\"version\": \"\(version)\", \"entities\": [\(entities)]}".utf8))
    }

    /// Version 1: people (name, age) and their pets.
    static let v1 = """
        {"name": "Person", "attributes": [{"name": "name", "type": "string"}, {"name": "age", "type": "integer16"}],
         "relationships": [{"name": "pets", "destination": "Pet", "toMany": true, "inverse": "owner"}]},
        {"name": "Pet", "attributes": [{"name": "name", "type": "string"}],
         "relationships": [{"name": "owner", "destination": "Person", "inverse": "pets"}]}
        """
    /// Version 2: `name` → `fullName`, Pet → Animal, `pets` → `animals`, age widened.
    static let v2 = """
        {"name": "Person", "attributes": [{"name": "fullName", "type": "string", "renamingIdentifier": "name"},
            {"name": "age", "type": "integer32"}],
         "relationships": [{"name": "animals", "renamingIdentifier": "pets", "destination": "Animal", "toMany": true, "inverse": "owner"}]},
        {"name": "Animal", "renamingIdentifier": "Pet", "attributes": [{"name": "name", "type": "string"}],
         "relationships": [{"name": "owner", "destination": "Person", "inverse": "animals"}]}
        """
    /// Version 3: `fullName` → `displayName`, Animal → Creature, age a string.
    static let v3 = """
        {"name": "Person", "attributes": [{"name": "displayName", "type": "string", "renamingIdentifier": "fullName"},
            {"name": "age", "type": "string"}],
         "relationships": [{"name": "animals", "destination": "Creature", "toMany": true, "inverse": "owner"}]},
        {"name": "Creature", "renamingIdentifier": "Animal", "attributes": [{"name": "name", "type": "string"}],
         "relationships": [{"name": "owner", "destination": "Person", "inverse": "animals"}]}
        """

    static func threeVersions() throws -> [ManagedObjectModel] {
        [try version("v1", v1), try version("v2", v2), try version("v3", v3)]
    }

    /// A store at `model` (version 1's shape or a later one) with Ann (31, pets Rex and Tom), Bo
    /// (no age, no pets) and Kit, a pet without an owner.
    static func store(_ model: ManagedObjectModel) throws -> String {
        let path = Fixtures.temporaryPath()
        let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        let names = ["Person": ["name", "fullName", "displayName"], "Pet": ["Pet", "Animal", "Creature"]]
        let nameKey = names["Person"]!.first { model.entity(named: "Person")!.attributes.map(\.name).contains($0) }!
        let petEntity = names["Pet"]!.first { model.entity(named: $0) != nil }!
        let pets = try ["Rex", "Tom", "Kit"].map { n in
            let p = try c.insert(petEntity)
            try p.setValue(n, forKey: "name")
            return p
        }
        let person = model.entity(named: "Person")!
        let agesAreStrings = person.attributes[1].type == .string
        for (name, age, owned) in [("Ann Lee", 31, [0, 1]), ("Bo", nil, [])] as [(String, Int?, [Int])] {
            let o = try c.insert("Person")
            try o.setValue(name, forKey: nameKey)
            let ageValue: Any? = age.map { agesAreStrings ? "\($0)" as Any : $0 as Any }
            try o.setValue(ageValue, forKey: "age")
            try o.setValue(owned.map { pets[$0] }, forKey: person.relationships[0].name)
        }
        try c.save()
        return path
    }

    @Test func aModelFileKeepsItsVersionNameOutsideTheHash() throws {
        let named = try Self.version("2.0", Self.v1)
        let unnamed = try M.model(Self.v1)
        #expect(named.version == "2.0")
        #expect(unnamed.version == nil)
        #expect(named.versionHash == unnamed.versionHash)
        #expect(try ManagedObjectModel(json: Data(named.jsonString.utf8)).version == "2.0")
        #expect(!unnamed.jsonString.contains("\"version\""))
        // Kept in the store's metadata with the model.
        let store = try PersistentStore(model: named, path: Fixtures.temporaryPath())
        #expect(try PersistentStore(path: store.path!).model.version == "2.0")
    }

    @Test func renamesChainAcrossThreeVersionsInOneOpen() throws {
        let versions = try Self.threeVersions()
        let plan = try MigrationPlan(from: versions[0], [.inferred(versions[1]), .inferred(versions[2])])
        let path = try Self.store(versions[0])
        let before = try M.snapshot(try PersistentStore(model: versions[0], path: path))
        let store = try PersistentStore(model: versions[2], path: path, migration: .plan(plan))
        #expect(try store.rows("PRAGMA integrity_check", []) == [[.text("ok")]])
        var expected = M.mapping(before, "Person") {
            $0["displayName"] = $0.removeValue(forKey: "name")
            $0["animals"] = $0.removeValue(forKey: "pets")
            $0["age"] =
                $0["age"] == M.show(.null) ? M.show(.null) : M.show(.string(String($0["age"]!.filter(\.isNumber))))
        }
        expected["Creature"] = expected.removeValue(forKey: "Pet")
        #expect(try M.snapshot(store) == expected)
        #expect(try M.snapshot(try PersistentStore(path: path)) == expected)
        try M.expectFetchAgreesWithMemory(store, "Person", "displayName BEGINSWITH 'Ann' AND ANY animals.name == 'Tom'")
        try M.expectFetchAgreesWithMemory(store, "Creature", "owner == nil")
        // Opened with version 3 directly, version 1's `name` and Pet are unknown to it (its
        // renaming identifiers name version 2's elements): they are removed, and the names lost.
        // The chain is the plan's.
        let direct = try PersistentStore(model: versions[2], path: try Self.store(versions[0]), migration: .inferred)
        let c = ManagedObjectContext(store: direct)
        #expect(try c.count(for: FetchRequest("Person", predicate: "displayName == nil")) == 2)
        #expect(try c.count(for: FetchRequest("Creature")) == 0)
    }

    /// A plan runs every step in turn: `flag` optional in version 1, required with default YES
    /// in version 2, optional again in version 3 (which adds `note`). The step to version 2 fills
    /// the nil flag, and version 3 keeps it; a plan without version 2 has no step that fills it.
    /// The same on a store laid out as Core Data lays it out.
    @Test(arguments: [false, true]) func aDefaultFilledByAMiddleVersionIsKeptByTheLast(coreData: Bool) throws {
        func item(_ attributes: String) -> String {
            #"{"name": "Item", "attributes": [{"name": "name", "type": "string"}, "# + attributes + "]}"
        }
        let flag = #"{"name": "flag", "type": "boolean"}"#
        let v1 = try Self.version("1", item(flag))
        let v2 = try Self.version(
            "2", item(#"{"name": "flag", "type": "boolean", "optional": false, "default": true}"#))
        let v3 = try Self.version("3", item(flag + #", {"name": "note", "type": "string"}"#))
        for (stages, filled) in [([v2, v3], true), ([v3], false)] {
            let path = Fixtures.temporaryPath()
            let url = URL(fileURLWithPath: path)
            let first =
                coreData
                ? try PersistentStore(coreDataStoreAt: url, model: v1, create: true)
                : try PersistentStore(model: v1, path: path)
            let c = ManagedObjectContext(store: first)
            for (name, value) in [("nil", nil), ("no", false), ("yes", true)] as [(String, Bool?)] {
                let o = try c.insert("Item")
                try o.setValue(name, forKey: "name")
                try o.setValue(value, forKey: "flag")
            }
            try c.save()
            let plan = try MigrationPlan(from: v1, stages.map { .inferred($0) })
            let store =
                coreData
                ? try PersistentStore(coreDataStoreAt: url, model: v3, migration: .plan(plan))
                : try PersistentStore(model: v3, path: path, migration: .plan(plan))
            var flags: [String: Bool?] = [:]
            for o in try ManagedObjectContext(store: store).fetch(FetchRequest("Item")) {
                flags[try #require(try o.get("name", as: String.self))] = try o.get("flag", as: Bool.self)
            }
            let expected: [String: Bool?] = ["nil": filled ? true : nil, "no": false, "yes": true]
            #expect(flags == expected, "through \(plan.versions.compactMap(\.version))")
        }
    }

    @Test func aStoreAtAnyVersionReachesTheLast() throws {
        let versions = try Self.threeVersions()
        let plan = try MigrationPlan(from: versions[0], [.inferred(versions[1]), .inferred(versions[2])])
        for start in versions.indices {
            let path = try Self.store(versions[start])
            let store = try PersistentStore(model: versions[2], path: path, migration: .plan(plan))
            let c = ManagedObjectContext(store: store)
            let ann = try #require(c.fetch(try FetchRequest("Person", predicate: "displayName == 'Ann Lee'")).first)
            #expect(try ann.get("age", as: String.self) == "31", "from \(start + 1)")
            #expect(M.show(try ann.value(forKey: "animals")).split(separator: ",").count == 2, "from \(start + 1)")
            #expect(store.model.versionHash == versions[2].versionHash)
        }
    }

    @Test func aFailingLaterStepLeavesTheFirstVersionUntouched() throws {
        let versions = try Self.threeVersions()
        // Version 3 also limits names to 3 characters: "Ann Lee" breaks it, after step 1 ran.
        let strict = try Self.version(
            "v3",
            Self.v3.replacingOccurrences(
                of: #""renamingIdentifier": "fullName""#, with: #""renamingIdentifier": "fullName", "maxLength": 3"#))
        let plan = try MigrationPlan(from: versions[0], [.inferred(versions[1]), .inferred(strict)])
        let path = try Self.store(versions[0])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let before = try M.snapshot(try PersistentStore(model: versions[0], path: path))
        do {
            _ = try PersistentStore(model: strict, path: path, migration: .plan(plan))
            Issue.record("the migration should fail")
        } catch {
            #expect(error.kind == .validation)
            #expect(error.failures.map(\.keys) == [["displayName"]])
            #expect(error.message.hasPrefix("the migration fails: Person "))
        }
        let reopened = try PersistentStore(model: versions[0], path: path)
        #expect(try M.snapshot(reopened) == before)
        #expect(try reopened.rows("PRAGMA integrity_check", []) == [[.text("ok")]])
        withExtendedLifetime(reopened) {}
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count >= bytes.count)
    }

    /// Version A: people with an optional name and email. B: email required (no default), C:
    /// `first` and `last` added, `initials` added as required without a default.
    static let a = """
        {"name": "Person", "attributes": [{"name": "name", "type": "string"}, {"name": "email", "type": "string"}]}
        """
    static let b = a.replacingOccurrences(
        of: #""email", "type": "string""#, with: #""email", "type": "string", "optional": false"#)
    static let c = b.replacingOccurrences(
        of: #""optional": false}"#,
        with:
            #""optional": false}, {"name": "first", "type": "string"}, {"name": "last", "type": "string"}, {"name": "initials", "type": "string", "optional": false}"#
    )

    static func people(_ model: ManagedObjectModel, _ rows: [(String, String?)]) throws -> String {
        let path = Fixtures.temporaryPath()
        let ctx = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        for (name, email) in rows {
            let p = try ctx.insert("Person")
            try p.setValue(name, forKey: "name")
            try p.setValue(email, forKey: "email")
        }
        try ctx.save()
        return path
    }

    /// Fills nil emails from the name.
    static let fillEmails: MigrationPlan.StageCode = { context in
        for p in try context.fetch(FetchRequest("Person", predicate: "email == nil")) {
            try p.setValue("\(try p.get("name", as: String.self)!.lowercased())@example.com", forKey: "email")
        }
    }
    /// Splits each name into first and last, and sets the initials.
    static let splitNames: MigrationPlan.StageCode = { context in
        for p in try context.fetch(FetchRequest("Person")) {
            let parts = try p.get("name", as: String.self)!.split(separator: " ").map(String.init)
            try p.setValue(parts[0], forKey: "first")
            try p.setValue(parts.dropFirst().joined(separator: " "), forKey: "last")
            try p.setValue(parts.compactMap(\.first).map(String.init).joined(), forKey: "initials")
        }
    }

    @Test func customStagesRunCodeBeforeAndAfterTheChange() throws {
        let (va, vb, vc) = (try Self.version("a", Self.a), try Self.version("b", Self.b), try Self.version("c", Self.c))
        let plan = try MigrationPlan(
            from: va, [.custom(vb, willMigrate: Self.fillEmails), .custom(vc, didMigrate: Self.splitNames)])
        let path = try Self.people(va, [("Ann Lee", nil), ("Bo Day", "bo@day.org")])
        let store = try PersistentStore(model: vc, path: path, migration: .plan(plan))
        let rows = try ManagedObjectContext(store: store).fetch(FetchRequest("Person")).sorted {
            try $0.get("name", as: String.self)! < $1.get("name", as: String.self)!
        }
        let values = try rows.map { p in
            try ["email", "first", "last", "initials"].map { try p.get($0, as: String.self) }
        }
        #expect(values == [["ann lee@example.com", "Ann", "Lee", "AL"], ["bo@day.org", "Bo", "Day", "BD"]])
        try M.expectFetchAgreesWithMemory(store, "Person", "initials == 'AL' OR #last ENDSWITH 'y'")
        #expect(try store.rows("PRAGMA integrity_check", []) == [[.text("ok")]])
    }

    /// A store recording history in tables made before the tombstone column existed: the store
    /// the custom code gets adds the column inside the migration's transaction (it cannot open a
    /// transaction of its own there).
    @Test func customCodeRunsOnAStoreWhoseHistoryPredatesTombstones() throws {
        let (va, vb) = (try Self.version("a", Self.a), try Self.version("b", Self.b))
        let path = Fixtures.temporaryPath()
        do {
            let ctx = ManagedObjectContext(store: try PersistentStore(model: va, path: path, historyTracking: true))
            try ctx.insert("Person").setValue("Ann Lee", forKey: "name")
            try ctx.save()
        }
        try SQLiteConnection(path: path).execute("ALTER TABLE ACHANGE DROP COLUMN ZTOMBSTONE")
        let plan = try MigrationPlan(from: va, [.custom(vb, willMigrate: Self.fillEmails)])
        let store = try PersistentStore(model: vb, path: path, migration: .plan(plan))
        let people = try ManagedObjectContext(store: store).fetch(FetchRequest("Person"))
        #expect(try people.map { try $0.get("email", as: String.self) } == ["ann lee@example.com"])
        #expect(try store.rows("PRAGMA table_info(ACHANGE)", []).contains { $0[1] == .text("ZTOMBSTONE") })
        #expect(try store.rows("PRAGMA integrity_check", []) == [[.text("ok")]])
    }

    @Test func aRequiredValueTheCodeLeftNilFailsTheWholePlan() throws {
        let (va, vb, vc) = (try Self.version("a", Self.a), try Self.version("b", Self.b), try Self.version("c", Self.c))
        // Without code before, a nil email cannot become required: refused when the plan is made.
        #expect(throws: StoreError.self) { _ = try MigrationPlan(from: va, [.inferred(vb)]) }
        // Code that fills some emails only: the other person fails, by name, and nothing changes.
        let some: MigrationPlan.StageCode = { context in
            for p in try context.fetch(FetchRequest("Person", predicate: "name == 'Ann Lee'")) {
                try p.setValue("ann@lee.org", forKey: "email")
            }
        }
        let plan = try MigrationPlan(
            from: va, [.custom(vb, willMigrate: some), .custom(vc, didMigrate: Self.splitNames)])
        let path = try Self.people(va, [("Ann Lee", nil), ("Cy Moe", nil)])
        let before = try M.snapshot(try PersistentStore(model: va, path: path))
        do {
            _ = try PersistentStore(model: vc, path: path, migration: .plan(plan))
            Issue.record("the migration should fail")
        } catch {
            #expect(error.kind == .validation)
            #expect(error.failures.map(\.keys) == [["email"]])
            #expect(error.failures.first?.constraint == .required)
        }
        #expect(try M.snapshot(try PersistentStore(model: va, path: path)) == before)
        // Code after the change that leaves an added required attribute nil fails the same way.
        let noInitials: MigrationPlan.StageCode = { _ in }
        let plan2 = try MigrationPlan(
            from: va, [.custom(vb, willMigrate: Self.fillEmails), .custom(vc, didMigrate: noInitials)])
        do {
            _ = try PersistentStore(model: vc, path: path, migration: .plan(plan2))
            Issue.record("the migration should fail")
        } catch {
            #expect(error.failures.map(\.keys) == [["initials"], ["initials"]])
            #expect(error.failures.allSatisfy { $0.message.hasSuffix("'initials': is required") })
        }
        #expect(try M.snapshot(try PersistentStore(model: va, path: path)) == before)
    }

    @Test func codeThatThrowsRollsEveryStepBack() throws {
        let (va, vb, vc) = (try Self.version("a", Self.a), try Self.version("b", Self.b), try Self.version("c", Self.c))
        struct Stop: Error {}
        let plan = try MigrationPlan(
            from: va, [.custom(vb, willMigrate: Self.fillEmails), .custom(vc, didMigrate: { _ in throw Stop() })])
        let path = try Self.people(va, [("Ann Lee", nil)])
        let before = try M.snapshot(try PersistentStore(model: va, path: path))
        do {
            _ = try PersistentStore(model: vc, path: path, migration: .plan(plan))
            Issue.record("the migration should fail")
        } catch {
            #expect(error.kind == .invalidOperation)
            #expect(error.message == "the custom code of the step to 'c' (after the change) failed: Stop()")
        }
        #expect(try M.snapshot(try PersistentStore(model: va, path: path)) == before)
    }

    @Test func aStoreAtNoVersionOfThePlanIsAClearError() throws {
        let versions = try Self.threeVersions()
        let plan = try MigrationPlan(from: versions[1], [.inferred(versions[2])])
        let path = try Self.store(versions[0])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            _ = try PersistentStore(model: versions[2], path: path, migration: .plan(plan))
            Issue.record("the open should fail")
        } catch {
            #expect(error.kind == .modelMismatch)
            #expect(
                error.message
                    == "the store's model \(versions[0].versionHash) is none of the migration plan's versions: 'v2' (\(versions[1].versionHash)), 'v3' (\(versions[2].versionHash))"
            )
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        // The plan must end at the model the store is opened with.
        do {
            _ = try PersistentStore(model: versions[1], path: path, migration: .plan(plan))
            Issue.record("the open should fail")
        } catch {
            #expect(error.kind == .modelMismatch)
            #expect(error.message.contains("the migration plan ends at 'v3'"))
        }
    }

    @Test func aPlanRefusesVersionsItCouldNotTellApart() throws {
        let versions = try Self.threeVersions()
        let again = try M.model(Self.v1)
        do {
            _ = try MigrationPlan(from: versions[0], [.inferred(versions[1]), .inferred(again)])
            Issue.record("the plan should be refused")
        } catch {
            #expect(error.kind == .modelMismatch)
            #expect(error.message.hasPrefix("versions 'v1' and 3 of the migration plan have the same version hash"))
        }
    }
}
