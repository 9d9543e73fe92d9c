// The model: validation of every name and reference (each broken rule a clear error), the JSON
// model file round trip, the version hash, the storage layout and the lowering schema derived
// from it, and stores refusing a model they were not created with.

import Foundation
import SiftSQL
import SiftSQLite
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct ModelTests {
    func error(_ entities: [EntityDescription]) -> String? {
        do {
            _ = try ManagedObjectModel(entities: entities)
            return nil
        } catch { return error.message }
    }

    @Test func invalidModelsAreRejectedWithTheRuleBroken() {
        let person = { (attrs: [AttributeDescription], rels: [RelationshipDescription]) in
            EntityDescription("Person", attributes: attrs, relationships: rels)
        }
        #expect(
            error([person([AttributeDescription("", .string)], [])])?.contains("attribute 'Person.': the name is empty")
                == true)
        #expect(
            error([person([], [RelationshipDescription("", to: "Person")])])?.contains(
                "relationship 'Person.': the name is empty") == true)
        #expect(
            error([person([AttributeDescription("a b", .string), AttributeDescription("a b", .integer64)], [])])?
                .contains("two properties named 'a b'") == true)
        #expect(error([EntityDescription("first name")])?.contains("'first name' is not an identifier") == true)
        #expect(
            error([person([], [RelationshipDescription("pet", to: "Pet")])])?.contains("unknown entity 'Pet'") == true)
        #expect(
            error([person([AttributeDescription("age", .string, minValue: 1)], [])])?.contains(
                "min/max apply to numeric") == true)
        #expect(
            error([person([AttributeDescription("name", .string, regularExpression: "(")], [])])?.contains(
                "invalid regular expression") == true)
        #expect(
            error([person([AttributeDescription("age", .integer16, defaultValue: .integer(70_000))], [])])?.contains(
                "default value") == true)
        #expect(
            error([EntityDescription("Person", uniquenessConstraints: [["email"]])])?.contains(
                "names 'email', which is not an attribute") == true)
        #expect(
            error([EntityDescription("A", parent: "B"), EntityDescription("B", parent: "A")])?.contains(
                "inherits from itself") == true)
        #expect(
            error([EntityDescription("Person"), EntityDescription("person")])?.contains("two entities are named")
                == true)
        #expect(error([EntityDescription("sqlite_x")])?.contains("reserved") == true)
        // Inverses must point back at each other.
        let bad = error([
            person([], [RelationshipDescription("pets", to: "Pet", toMany: true, inverse: "owner")]),
            EntityDescription(
                "Pet", relationships: [RelationshipDescription("owner", to: "Person", inverse: "friends")]),
        ])
        #expect(bad?.contains("its inverse 'Pet.owner' has inverse 'friends', not 'pets'") == true)
        #expect(
            error([
                person([], [RelationshipDescription("pets", to: "Pet", toMany: true, inverse: "owner")]),
                EntityDescription("Pet"),
            ])?.contains("the inverse 'owner' is not a relationship of 'Pet'") == true)
    }

    /// Sibling sub-entities declaring the same property name (Core Data keeps them apart) each get a
    /// column of their root's table: stored, read back and queried through SQL apart, and fetched
    /// together through the parent.
    @Test func siblingsDeclaringOneNameEachGetTheirOwnColumn() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Person", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("dogs", to: "Dog", toMany: true, inverse: "owner"),
                    RelationshipDescription("cats", to: "Cat", toMany: true, inverse: "owner"),
                ]),
            EntityDescription("Animal", attributes: [AttributeDescription("name", .string)]),
            EntityDescription(
                "Dog", parent: "Animal",
                attributes: [AttributeDescription("x", .string), AttributeDescription("weight", .decimal)],
                relationships: [RelationshipDescription("owner", to: "Person", inverse: "dogs")]),
            EntityDescription(
                "Cat", parent: "Animal",
                attributes: [AttributeDescription("x", .integer64), AttributeDescription("weight", .decimal)],
                relationships: [RelationshipDescription("owner", to: "Person", inverse: "cats")]),
        ])
        let dog = try #require(model.resolved["Dog"])
        let cat = try #require(model.resolved["Cat"])
        #expect(dog.attribute("x")?.column == "x")
        #expect(cat.attribute("x")?.column == "x#2")
        #expect(dog.attribute("weight")?.exactColumn == "Z_weight_exact")
        #expect(cat.attribute("weight")?.exactColumn == "Z_weight_exact#2")
        #expect(dog.relationship("owner")?.storage == .foreignKey(column: "owner"))
        #expect(cat.relationship("owner")?.storage == .foreignKey(column: "owner#2"))
        #expect(model.schema.entity(named: "Cat")?.attribute(named: "x")?.column == "x#2")

        let path = Fixtures.temporaryPath()
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
            let ann = try c.insert("Person")
            try ann.setValue("Ann", forKey: "name")
            let d = try c.insert("Dog")
            try d.setValue("big", forKey: "x")
            try d.setValue(Decimal(string: "1.5")!, forKey: "weight")
            try d.setValue(ann, forKey: "owner")
            let k = try c.insert("Cat")
            try k.setValue(3, forKey: "x")
            try k.setValue(Decimal(string: "2.5")!, forKey: "weight")
            let animal = try c.insert("Animal")
            try animal.setValue("plain", forKey: "name")
            try c.save()
        }
        let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        func fetch(_ entity: String, _ predicate: String) throws -> [ManagedObject] {
            let request = try FetchRequest(entity, predicate: predicate)
            #expect(try c.explain(request).residualPredicate == nil, "\(entity): \(predicate)")
            return try c.fetch(request)
        }
        #expect(try fetch("Dog", "x == 'big' AND weight == 1.5 AND owner.name == 'Ann'").count == 1)
        #expect(try fetch("Dog", "x == 'small'").isEmpty)
        let cats = try fetch("Cat", "x == 3 AND weight > 2 AND owner == nil")
        #expect(cats.count == 1)
        #expect(try cats.first?.value(forKey: "x") == .integer(3))
        #expect(try fetch("Person", "ANY dogs.x == 'big' AND cats.@count == 0").count == 1)
        #expect(try fetch("Animal", "TRUEPREDICATE").count == 3)
    }

    /// Names given before siblings could share a property name are given the same way: a store
    /// made with an existing model finds its columns again.
    @Test func existingModelsKeepTheirColumnNames() throws {
        let model = try Fixtures.companyModel()
        for e in model.entities {
            let r = try #require(model.resolved[e.name])
            for a in r.attributes where !a.description.isCollection {
                #expect(a.column == a.name, "\(e.name).\(a.name)")
                #expect(a.exactColumn == (a.type == .decimal ? "Z_\(a.name)_exact" : nil), "\(e.name).\(a.name)")
            }
            for rel in r.relationships {
                switch rel.storage {
                case .foreignKey(let column): #expect(column == rel.name)
                case .inverseForeignKey(_, let column, let order):
                    #expect(column == rel.description.inverse)
                    #expect(order == (rel.description.isOrdered ? "Z_FOK_\(column)" : nil))
                case .joinTable(let table, _, _, _): #expect(table.hasPrefix("Z_"))
                }
            }
        }
    }

    /// Property names are any non-empty string (JSON keys are): the store derives its SQL names
    /// from them, unique as SQLite compares names, and never lets one reach SQL unquoted.
    @Test func propertyNamesAreAnyStringAndTheirSQLNamesAreDerived() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Item",
                attributes: [
                    AttributeDescription("first name", .string),
                    AttributeDescription("a", .integer64), AttributeDescription("A", .integer64),
                    AttributeDescription("Z_PK", .string),
                    AttributeDescription("x\u{0}y", .string),
                    AttributeDescription("say \"hi\"", .string),
                    AttributeDescription("price.€", .decimal),
                    AttributeDescription("two words", .string, collection: true),
                ],
                relationships: [
                    RelationshipDescription(
                        "my parts", to: "Part", toMany: true, ordered: true, inverse: "the item", deleteRule: .cascade)
                ]),
            EntityDescription(
                "Part", attributes: [AttributeDescription("n°", .integer64)],
                relationships: [RelationshipDescription("the item", to: "Item", inverse: "my parts")]),
        ])
        let item = try #require(model.resolved["Item"])
        #expect(item.attribute("first name")?.column == "first name")
        #expect(item.attribute("a")?.column == "a")
        #expect(item.attribute("A")?.column == "A#2")  // SQLite: "a" and "A" are one column
        #expect(item.attribute("Z_PK")?.column == "Z_PK#2")  // the store's own key keeps its name
        #expect(item.attribute("x\u{0}y")?.column == "x?y")  // the C API stops at NUL
        #expect(item.attribute("two words")?.valueTable == "Z_Item_two words")
        let schema = try #require(model.schema.entity(named: "Item"))
        #expect(schema.attribute(named: "A")?.column == "A#2")
        #expect(
            try schema.relationship(named: "my parts")?.shape() == .toMany(destination: "Part", foreignKey: "the item"))

        // Saved, reopened, fetched through SQL by those names.
        let path = Fixtures.temporaryPath()
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
            let o = try c.insert("Item")
            try o.setValue("Ana", forKey: "first name")
            try o.setValue(1, forKey: "a")
            try o.setValue(2, forKey: "A")
            try o.setValue("pk", forKey: "Z_PK")
            try o.setValue("nul", forKey: "x\u{0}y")
            try o.setValue("quoted", forKey: "say \"hi\"")
            try o.setValue(Decimal(string: "1.10")!, forKey: "price.€")
            try o.setValue(["p", "q"], forKey: "two words")
            let part = try c.insert("Part")
            try part.setValue(7, forKey: "n°")
            try o.add(part, to: "my parts")
            try c.save()
        }
        let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        let request = try FetchRequest(
            "Item",
            predicate: "%K == 'Ana' AND %K == 1 AND %K == 2 AND %K == 'pk' AND ANY %K == 'q' AND ANY %K.%K == 7",
            "first name", "a", "A", "Z_PK", "two words", "my parts", "n°")
        #expect(try c.explain(request).residualPredicate == nil)
        let found = try c.fetch(request)
        #expect(found.count == 1)
        let o = try #require(found.first)
        #expect(try o.value(forKey: "x\u{0}y") == .string("nul"))
        #expect(try o.value(forKey: "say \"hi\"") == .string("quoted"))
        #expect(try o.value(forKey: "price.€") == .decimal(Decimal(string: "1.10")!))
        #expect(try o.value(forKey: "two words") == .array([.string("p"), .string("q")]))
    }

    /// Tables derived from an entity and a property name could meet ("A_b" + "c", "A" + "b_c");
    /// the second gets its own name instead of sharing the first's rows.
    @Test func derivedTableNamesNeverCollide() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("A_b", attributes: [AttributeDescription("c", .string, collection: true)]),
            EntityDescription("A", attributes: [AttributeDescription("b_c", .string, collection: true)]),
        ])
        #expect(model.resolved["A_b"]?.attribute("c")?.valueTable == "Z_A_b_c")
        #expect(model.resolved["A"]?.attribute("b_c")?.valueTable == "Z_A_b_c#2")
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: model))
        try c.insert("A_b").setValue(["one"], forKey: "c")
        try c.insert("A").setValue(["two"], forKey: "b_c")
        try c.save()
        #expect(try c.fetch(try FetchRequest("A_b", predicate: "ANY c == 'one'")).count == 1)
        #expect(try c.fetch(try FetchRequest("A", predicate: "ANY b_c == 'one'")).count == 0)
        #expect(try c.fetch(try FetchRequest("A", predicate: "ANY b_c == 'two'")).count == 1)
    }

    /// An open entity reads nil for keys it does not declare, in memory and in SQL; with a
    /// transformable (which SQL cannot read) or a sub-entity declaring more keys, the lowering's
    /// entity stays closed, so such a key goes to memory instead of reading nil in SQL.
    @Test func openEntitiesReadUndeclaredKeysAsNil() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Doc", attributes: [AttributeDescription("n", .integer64)], open: true),
            EntityDescription("Memo", parent: "Doc", attributes: [AttributeDescription("t", .string)]),
            EntityDescription("Blob", attributes: [AttributeDescription("j", .transformable)], open: true),
            EntityDescription("Closed", attributes: [AttributeDescription("n", .integer64)]),
        ])
        #expect(model.schema.entity(named: "Doc")?.open == false)  // Memo rows have a 't'
        #expect(model.schema.entity(named: "Memo")?.open == true)  // inherited
        #expect(model.schema.entity(named: "Blob")?.open == false)
        #expect(model.schema.entity(named: "Closed")?.open == false)
        #expect(try ManagedObjectModel(json: Data(model.jsonString.utf8)) == model)
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: model))
        try c.insert("Doc").setValue(1, forKey: "n")
        try c.insert("Memo").setValue("x", forKey: "t")
        try c.insert("Blob").setValue(["k": 1], forKey: "j")
        try c.insert("Closed").setValue(1, forKey: "n")
        try c.save()
        let doc = try #require(try c.fetch(FetchRequest("Doc", predicate: "n == 1")).first)
        #expect(try doc.value(forKey: "missing") == .null)
        #expect(throws: StoreError.self) { try doc.setValue(1, forKey: "missing") }
        let missing = try FetchRequest("Memo", predicate: "missing == nil AND t == 'x'")
        #expect(try c.explain(missing).residualPredicate == nil)
        #expect(try c.fetch(missing).count == 1)
        // The Doc, not the Memo.
        #expect(try c.fetch(try FetchRequest("Doc", predicate: "t == nil AND missing == nil")).count == 1)
        let blob = try FetchRequest("Blob", predicate: "missing == nil AND j.k == 1")
        #expect(try c.fetch(blob).count == 1)
        #expect(try c.explain(blob).residualPredicate != nil)
        #expect(throws: (any Error).self) { try c.fetch(try FetchRequest("Closed", predicate: "missing == nil")) }
    }

    @Test func jsonRoundTripAndVersionHash() throws {
        let model = try Fixtures.companyModel()
        let again = try ManagedObjectModel(json: Data(model.jsonString.utf8))
        #expect(again == model)
        #expect(again.versionHash == model.versionHash)
        #expect(model.versionHash.count == 16)
        var entities = model.entities
        entities[0].attributes.append(AttributeDescription("nickname", .string))
        #expect(try ManagedObjectModel(entities: entities).versionHash != model.versionHash)
        // A model file with an unknown type says where.
        do {
            _ = try ManagedObjectModel(
                json: Data(#"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "int"}]}]}"#.utf8))
            Issue.record("an unknown attribute type was accepted")
        } catch {
            #expect(error.message.contains("entities"), "\(error.message)")
        }
        let file = try ManagedObjectModel(
            json: Data(
                #"""
                {"entities": [{"name": "Item", "attributes": [{"name": "id", "type": "integer64", "optional": false},
                                                              {"name": "price", "type": "decimal", "min": 0}]}]}
                """#.utf8))
        #expect(file.entity(named: "Item")?.attributes.first?.isOptional == false)
    }

    @Test func theLoweringSchemaIsDerivedFromTheLayout() throws {
        let schema = try Fixtures.companyModel().schema
        let person = try #require(schema.entity(named: "Person"))
        #expect(person.table == "Person")
        #expect(person.primaryKey == "Z_PK")
        #expect(person.attribute(named: "settings") == nil)  // transformable: memory only
        #expect(person.attribute(named: "born")?.effectiveEncoding == .secondsSince2001)
        #expect(
            try person.relationship(named: "address")?.shape() == .toOne(destination: "Address", foreignKey: "address"))
        #expect(try person.relationship(named: "pets")?.shape() == .toMany(destination: "Pet", foreignKey: "owner"))
        if case .manyToMany(let d, let j)? = try person.relationship(named: "projects")?.shape() {
            #expect(d == "Project")
            #expect(j.table == "Z_Person_projects")
        } else {
            Issue.record("projects is not many-to-many")
        }
        if case .values(let v)? = try person.relationship(named: "nicknames")?.shape() {
            #expect(v.table == "Z_Person_nicknames")
        } else {
            Issue.record("nicknames is not a value collection")
        }
        // Pet rows live in Animal's table, told apart by Z_ENT.
        let pet = try #require(schema.entity(named: "Pet"))
        #expect(pet.table == "Animal")
        #expect(pet.discriminator?.column == "Z_ENT")
        #expect(schema.entity(named: "Animal")?.discriminator?.values.count == 2)
    }

    @Test func aStoreRefusesAnotherModelAndNamesTheDifference() throws {
        let model = try Fixtures.companyModel()
        let path = Fixtures.temporaryPath()
        _ = try PersistentStore(model: model, path: path)
        var entities = model.entities
        entities[0].attributes[2] = AttributeDescription("age", .string)
        entities.append(EntityDescription("Team"))
        let changed = try ManagedObjectModel(entities: entities)
        do throws(StoreError) {
            _ = try PersistentStore(model: changed, path: path)
            Issue.record("a store opened with another model")
        } catch {
            #expect(error.kind == .modelMismatch)
            #expect(error.message.contains("entity 'Team' was added"))
            #expect(error.message.contains("attribute 'Person.age' changed type from integer16 to string"))
        }
        // The same model opens it again.
        _ = try PersistentStore(model: model, path: path)
    }

    @Test func aDatabaseThatIsNotAStoreIsRefused() throws {
        let path = Fixtures.temporaryPath()
        let db = try SQLiteConnection(path: path)
        try db.execute("CREATE TABLE other(x)")
        let model = try Fixtures.companyModel()
        do throws(StoreError) {
            _ = try PersistentStore(model: model, path: path)
            Issue.record("opened a foreign database")
        } catch {
            #expect(error.message.contains("not a Sift store"))
        }
    }
}
