// Xcode models (`.xcdatamodeld` bundles and bare `.xcdatamodel` folders) read into Sift's model:
// every attribute type and option, entity hierarchies, relationships of every kind, uniqueness
// constraints, fetch request templates, the version a bundle names, warnings for what Sift does
// not keep (at their line), errors at their place, and a store opened with the model saving and
// fetching through it. Every fixture is written here from the documented format.

import Foundation
import SiftEvaluation
import SiftStoreTestSupport
import SiftSyntax
import Testing

@testable import SiftStore

/// A company: an abstract hierarchy three levels deep, a uniqueness constraint, an ordered to-many
/// with counts, a to-many without inverse, every delete rule, and templates with escaped predicates.
let companyContents = xcodeContents(
    """
        <entity name="Person" representedClassName="Person" isAbstract="YES" syncable="YES">
            <attribute name="name" attributeType="String"/>
            <attribute name="email" optional="YES" attributeType="String"/>
            <relationship name="pets" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Pet" inverseName="owner" inverseEntity="Pet"/>
            <uniquenessConstraints>
                <uniquenessConstraint>
                    <constraint value="email"/>
                </uniquenessConstraint>
            </uniquenessConstraints>
        </entity>
        <entity name="Employee" representedClassName=".Employee" parentEntity="Person" syncable="YES">
            <attribute name="salary" optional="YES" attributeType="Double" minValueString="0" defaultValueString="0.0" usesScalarValueType="YES"/>
            <relationship name="team" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Team" inverseName="members" inverseEntity="Team"/>
        </entity>
        <entity name="Manager" representedClassName="Manager" parentEntity="Employee" syncable="YES">
            <relationship name="reports" optional="YES" toMany="YES" deletionRule="No Action" destinationEntity="Employee"/>
        </entity>
        <entity name="Pet" representedClassName="NSManagedObject" syncable="YES" codeGenerationType="class">
            <attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="owner" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="pets" inverseEntity="Person"/>
        </entity>
        <entity name="Team" representedClassName="Team" syncable="YES">
            <attribute name="title" optional="YES" attributeType="String"/>
            <relationship name="members" optional="YES" toMany="YES" minCount="1" maxCount="10" deletionRule="Deny" ordered="YES" destinationEntity="Employee" inverseName="team" inverseEntity="Employee"/>
        </entity>
        <fetchRequest name="byName" entity="Person" predicateString="name == $NAME"/>
        <fetchRequest name="wellPaid" entity="Employee" predicateString="salary &gt; $MIN AND name != &quot;nobody&quot;" fetchLimit="2"/>
        <fetchRequest name="allPets" entity="Pet"/>
        <elements>
            <element name="Person" positionX="-63" positionY="-18" width="128" height="74"/>
        </elements>
    """)

@Suite struct XcodeModelTests {
    @Test func everyAttributeTypeAndOptionMaps() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let url = try folder.bare(
            "Items",
            xcodeContents(
                """
                    <entity name="Item" representedClassName=".Item" syncable="YES" codeGenerationType="class">
                        <attribute name="i16" optional="YES" attributeType="Integer 16" minValueString="-5" maxValueString="5" defaultValueString="0" usesScalarValueType="YES"/>
                        <attribute name="i32" attributeType="Integer 32" defaultValueString="7" usesScalarValueType="YES"/>
                        <attribute name="i64" optional="YES" attributeType="Integer 64" defaultValueString="-9000000000" usesScalarValueType="YES"/>
                        <attribute name="dec" optional="YES" attributeType="Decimal" defaultValueString="1.5"/>
                        <attribute name="dbl" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                        <attribute name="flt" optional="YES" attributeType="Float" minValueString="0.5" defaultValueString="2.25" usesScalarValueType="YES"/>
                        <attribute name="str" optional="YES" attributeType="String" minValueString="1" maxValueString="20" regularExpressionString="[a-z ]+" defaultValueString="new item"/>
                        <attribute name="flag" attributeType="Boolean" defaultValueString="YES" usesScalarValueType="YES"/>
                        <attribute name="off" optional="YES" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>
                        <attribute name="when" optional="YES" attributeType="Date" defaultDateTimeInterval="-31622400" usesScalarValueType="NO"/>
                        <attribute name="blob" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES" maxValueString="64"/>
                        <attribute name="uuid" optional="YES" attributeType="UUID" usesScalarValueType="NO"/>
                        <attribute name="link" optional="YES" attributeType="URI"/>
                        <attribute name="extra" optional="YES" attributeType="Transformable" valueTransformerName="ColorTransformer"/>
                        <attribute name="kept" optional="YES" attributeType="String" preserveAfterDeletion="YES" allowsCloudEncryption="YES"/>
                    </entity>
                    <elements>
                        <element name="Item" positionX="-63" positionY="-18" width="128" height="254"/>
                    </elements>
                """))
        let model = try ManagedObjectModel(contentsOf: url)
        #expect(model.warnings.isEmpty, "\(model.warnings)")
        let expected = EntityDescription(
            "Item",
            attributes: [
                AttributeDescription("i16", .integer16, defaultValue: .integer(0), minValue: -5, maxValue: 5),
                AttributeDescription("i32", .integer32, optional: false, defaultValue: .integer(7)),
                AttributeDescription("i64", .integer64, defaultValue: .integer(-9_000_000_000)),
                AttributeDescription("dec", .decimal, defaultValue: .double(1.5)),
                AttributeDescription("dbl", .double, defaultValue: .integer(0)),
                AttributeDescription("flt", .float, defaultValue: .double(2.25), minValue: 0.5),
                AttributeDescription(
                    "str", .string, defaultValue: .string("new item"), minLength: 1, maxLength: 20,
                    regularExpression: "[a-z ]+"),
                AttributeDescription("flag", .boolean, optional: false, defaultValue: .bool(true)),
                AttributeDescription("off", .boolean, defaultValue: .bool(false)),
                AttributeDescription("when", .date, defaultValue: .integer(-31_622_400)),
                AttributeDescription("blob", .binary, maxLength: 64),
                AttributeDescription("uuid", .uuid),
                AttributeDescription("link", .uri),
                AttributeDescription("extra", .transformable, valueTransformerName: "ColorTransformer"),
                AttributeDescription("kept", .string, preservesValueInHistoryOnDeletion: true),
            ], className: "Item")
        #expect(model.entities == [expected])
        // The date default is seconds since 2001-01-01 UTC: 2000-01-01.
        let when = try #require(model.resolved["Item"]?.attribute("when"))
        #expect(when.defaultValue == .date(Date(timeIntervalSince1970: 946_684_800)))
        #expect(model.resolved["Item"]?.attribute("dec")?.defaultValue == .decimal(Decimal(string: "1.5")!))
        // The JSON form reads back to an equal model.
        #expect(try ManagedObjectModel(json: Data(model.jsonString.utf8)) == model)
    }

    @Test func hierarchiesRelationshipsAndConstraintsMap() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let model = try ManagedObjectModel(contentsOf: try folder.bundle("Company", ["Company": companyContents]))
        #expect(model.warnings.isEmpty, "\(model.warnings)")
        let byName = Dictionary(uniqueKeysWithValues: model.entities.map { ($0.name, $0) })
        #expect(model.entities.map(\.name) == ["Person", "Employee", "Manager", "Pet", "Team"])
        let person = try #require(byName["Person"])
        #expect(person.isAbstract && person.className == "Person" && person.uniquenessConstraints == [["email"]])
        #expect(person.attributes == [AttributeDescription("name", .string, optional: false), .init("email", .string)])
        #expect(
            person.relationships == [
                RelationshipDescription("pets", to: "Pet", toMany: true, inverse: "owner", deleteRule: .cascade)
            ])
        #expect(byName["Employee"]?.parent == "Person" && byName["Employee"]?.className == "Employee")
        #expect(byName["Manager"]?.parent == "Employee")
        #expect(
            byName["Manager"]?.relationships == [
                RelationshipDescription("reports", to: "Employee", toMany: true, deleteRule: .noAction)
            ])
        #expect(byName["Pet"]?.className == nil)
        #expect(
            byName["Pet"]?.relationships == [
                RelationshipDescription("owner", to: "Person", inverse: "pets", optional: false)
            ])
        #expect(
            byName["Team"]?.relationships == [
                RelationshipDescription(
                    "members", to: "Employee", toMany: true, ordered: true, inverse: "team", deleteRule: .deny,
                    minCount: 1, maxCount: 10)
            ])
        #expect(try ManagedObjectModel(json: Data(model.jsonString.utf8)) == model)
    }

    @Test func aStoreWithTheModelSavesAndFetches() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let model = try ManagedObjectModel(contentsOf: try folder.bundle("Company", ["Company": companyContents]))
        let path = folder.root.appendingPathComponent("company.sqlite").path
        let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        let team = try c.insert("Team")
        try team.setValue("core", forKey: "title")
        var people: [ManagedObject] = []
        for (entity, name, salary) in [("Employee", "Ann", 5000.0), ("Manager", "Bob", 9000.0), ("Employee", "Cy", 10)]
        {
            let e = try c.insert(entity)
            try e.setValue(name, forKey: "name")
            try e.setValue("\(name.lowercased())@example.com", forKey: "email")
            try e.setValue(salary, forKey: "salary")
            try e.setValue(team, forKey: "team")
            people.append(e)
        }
        try people[1].add(people[0], to: "reports")
        let rex = try c.insert("Pet")
        try rex.setValue("Rex", forKey: "name")
        try rex.setValue(people[0], forKey: "owner")
        try c.save()

        // A new object starts with the model's defaults; an abstract entity has no objects.
        #expect(try c.insert("Employee").get("salary", as: Double.self) == 0)
        c.rollback()
        #expect(throws: StoreError.self) { _ = try c.insert("Person") }
        // The uniqueness constraint of the abstract root holds across its sub-entities.
        let copy = try c.insert("Manager")
        try copy.setValue("Ann again", forKey: "name")
        try copy.setValue("ann@example.com", forKey: "email")
        try copy.setValue(team, forKey: "team")
        do {
            try c.save()
            Issue.record("a duplicate email was saved")
        } catch { #expect(error.kind == .uniqueness, "\(error)") }
        c.rollback()

        let reopened = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        #expect(try reopened.count(for: FetchRequest("Person")) == 3)
        #expect(try reopened.count(for: FetchRequest("Employee")) == 3)
        let saved = try #require(try reopened.fetch(FetchRequest("Team")).first)
        let members = try #require(try saved.get("members", as: [ManagedObject].self))
        #expect(try members.map { try $0.get("name", as: String.self) } == ["Ann", "Bob", "Cy"])
        let paid = try reopened.fetch(model.fetchRequestTemplate("wellPaid", substitutionVariables: ["MIN": 1000]))
        #expect(Set(try paid.map { try $0.get("name", as: String.self) }) == ["Ann", "Bob"])
        let one = try reopened.fetch(model.fetchRequestTemplate("byName", substitutionVariables: ["NAME": "Bob"]))
        #expect(one.count == 1 && one.first?.entityName == "Manager")
        let reports = try one[0].get("reports", as: [ManagedObject].self)
        #expect(try reports?.map { try $0.get("name", as: String.self) } == ["Ann"])
        // The deny rule of Team.members refuses deleting a team with members.
        #expect(throws: StoreError.self) {
            try reopened.delete(saved)
            try reopened.save()
        }
    }

    @Test func indexesAreKeptAndCreatedByTheStore() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let url = try folder.bare(
            "Posts",
            xcodeContents(
                """
                    <entity name="Post" representedClassName="Post" syncable="YES">
                        <attribute name="title" optional="YES" attributeType="String" indexed="YES"/>
                        <attribute name="date" optional="YES" attributeType="Date"/>
                        <attribute name="score" optional="YES" attributeType="Integer 32" defaultValueString="0"/>
                        <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author"/>
                        <compoundIndexes>
                            <compoundIndex>
                                <index value="author"/>
                                <index value="score"/>
                            </compoundIndex>
                        </compoundIndexes>
                        <fetchIndex name="byDate">
                            <fetchIndexElement property="date" type="Binary" order="descending"/>
                            <fetchIndexElement property="title" type="Binary" order="ascending"/>
                        </fetchIndex>
                    </entity>
                    <entity name="Author" representedClassName="Author" syncable="YES">
                        <attribute name="name" optional="YES" attributeType="String"/>
                    </entity>
                """))
        let model = try ManagedObjectModel(contentsOf: url)
        #expect(model.warnings.isEmpty, "\(model.warnings)")
        let post = try #require(model.entity(named: "Post"))
        #expect(post.attributes.map(\.isIndexed) == [true, false, false])
        #expect(
            post.indexes == [
                IndexDescription(elements: [.init("author"), .init("score")]),
                IndexDescription(name: "byDate", elements: [.init("date", descending: true), .init("title")]),
            ])
        #expect(try ManagedObjectModel(json: Data(model.jsonString.utf8)) == model)

        let store = try PersistentStore(model: model, path: folder.root.appendingPathComponent("posts.sqlite").path)
        let sql = try store.query(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Post' ORDER BY name")
        let made = Dictionary(
            uniqueKeysWithValues: sql.compactMap { row -> (String, String)? in
                guard case .text(let name)? = row.first, case .text(let text)? = row.last else { return nil }
                return (name, text)
            })
        #expect(made["Z_Post_title_index"] == #"CREATE INDEX "Z_Post_title_index" ON "Post" ("title")"#)
        #expect(made["Z_Post_author_score"] == #"CREATE INDEX "Z_Post_author_score" ON "Post" ("author", "score")"#)
        #expect(made["Z_Post_byDate"] == #"CREATE INDEX "Z_Post_byDate" ON "Post" ("date" DESC, "title")"#)
        // SQLite uses them.
        let plan = try store.query(#"EXPLAIN QUERY PLAN SELECT * FROM "Post" WHERE "title" = 'x'"#)
        #expect("\(plan)".contains("Z_Post_title_index"), "\(plan)")

        // An index on what has no column of its own is refused.
        var bad = post
        bad.indexes = [IndexDescription(name: "x", elements: [.init("nope")])]
        #expect(throws: ModelError.self) {
            _ = try ManagedObjectModel(entities: [bad, model.entity(named: "Author")!])
        }
    }

    @Test func indexRulesInAModelFileAreLocated() throws {
        let text = """
            {"entities": [{"name": "A", "attributes": [
              {"name": "tags", "type": "string", "collection": true, "indexed": true},
              {"name": "x", "type": "string", "indexed": true}],
             "indexes": [{"name": "byX", "elements": [{"property": "x", "descending": true}], "unique": true}]}]}
            """
        do {
            _ = try ManagedObjectModel(json: Data(text.utf8))
            Issue.record("accepted")
        } catch {
            #expect(
                error.failures.map(\.description) == [
                    "2:58: error: entities[0].attributes[0].indexed: an index applies to attributes kept in a column of their own, not collections",
                    "4:83: error: entities[0].indexes[0].unique: unknown key 'unique'",
                ])
        }
        let fine = text.replacingOccurrences(of: ", \"indexed\": true},", with: "},")
            .replacingOccurrences(of: ", \"unique\": true", with: "")
        let model = try ManagedObjectModel(json: Data(fine.utf8))
        #expect(model.entities[0].indexes == [IndexDescription(name: "byX", elements: [.init("x", descending: true)])])
        #expect(model.entities[0].attributes.map(\.isIndexed) == [false, true])
    }

    @Test func userInfoAndRenamingIdentifiersAreKeptAndLeftOutOfTheVersionHash() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let body = """
                <entity name="Note" representedClassName="Note" elementID="Memo" syncable="YES">
                    <attribute name="text" optional="YES" attributeType="String" elementID="body">
                        <userInfo>
                            <entry key="maxLines" value="3"/>
                            <entry key="hint" value="a &quot;note&quot;"/>
                        </userInfo>
                    </attribute>
                    <relationship name="next" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Note" elementID="following">
                        <userInfo>
                            <entry key="shown" value="NO"/>
                        </userInfo>
                    </relationship>
                    <userInfo>
                        <entry key="table" value="notes"/>
                    </userInfo>
                </entity>
            """
        let model = try ManagedObjectModel(contentsOf: try folder.bare("Notes", xcodeContents(body)))
        #expect(model.warnings.isEmpty, "\(model.warnings)")
        let note = try #require(model.entity(named: "Note"))
        #expect(note.userInfo == ["table": "notes"])
        #expect(note.attributes[0].userInfo == ["maxLines": "3", "hint": "a \"note\""])
        #expect(note.relationships[0].userInfo == ["shown": "NO"])
        #expect(note.renamingIdentifier == "Memo")
        #expect(note.attributes[0].renamingIdentifier == "body")
        #expect(note.relationships[0].renamingIdentifier == "following")
        #expect(try ManagedObjectModel(json: Data(model.jsonString.utf8)) == model)
        #expect(model.jsonString.contains(#""userInfo" : {"#))
        // The same model without its notes has the same version hash: a store takes either.
        var plain = note
        plain.userInfo = [:]
        plain.attributes[0].userInfo = [:]
        plain.relationships[0].userInfo = [:]
        plain.renamingIdentifier = nil
        plain.attributes[0].renamingIdentifier = nil
        plain.relationships[0].renamingIdentifier = nil
        let bare = try ManagedObjectModel(entities: [plain])
        #expect(bare != model)
        #expect(bare.versionHash == model.versionHash)
        let path = folder.root.appendingPathComponent("notes.sqlite").path
        _ = try PersistentStore(model: bare, path: path)
        _ = try PersistentStore(model: model, path: path)
    }

    @Test func configurationsAreKeptInTheModelAndItsJSON() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let body = """
                <entity name="Song" representedClassName="Song" syncable="YES"/>
                <entity name="Draft" representedClassName="Draft" syncable="YES"/>
                <configuration name="Cloud" usedWithCloudKit="YES">
                    <memberEntity name="Song"/>
                </configuration>
                <configuration name="Local">
                    <memberEntity name="Draft"/>
                    <memberEntity name="Song"/>
                </configuration>
            """
        let model = try ManagedObjectModel(contentsOf: try folder.bare("Music", xcodeContents(body)))
        #expect(model.warnings.isEmpty, "\(model.warnings)")
        #expect(
            model.configurations == [
                ConfigurationDescription("Cloud", entities: ["Song"]),
                ConfigurationDescription("Local", entities: ["Draft", "Song"]),
            ])
        let json = model.jsonString
        #expect(try ManagedObjectModel(json: Data(json.utf8)) == model)
        let without = try ManagedObjectModel(entities: model.entities)
        #expect(without != model && without.versionHash == model.versionHash)
        #expect(!without.jsonString.contains("configurations"))
        // A member that is not an entity: an error at its line.
        let bad = try folder.bare(
            "Bad", xcodeContents(body.replacingOccurrences(of: "\"Draft\"/>\n", with: "\"Drat\"/>\n")))
        do {
            _ = try ManagedObjectModel(contentsOf: bad)
            Issue.record("accepted")
        } catch {
            #expect(
                error.failures.map { $0.description.components(separatedBy: "/contents:").last ?? "" } == [
                    "9:9: error: configuration 'Local': the model has no entity 'Drat'"
                ])
        }
        #expect(throws: ModelError.self) {
            _ = try ManagedObjectModel(entities: model.entities, configurations: [.init("X", entities: ["Nope"])])
        }
    }
}
