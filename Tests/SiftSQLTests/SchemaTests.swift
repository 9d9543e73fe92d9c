// The schema mapping's JSON form: defaults, every relationship shape, and clear errors for schemas
// that do not hold together.

import SiftSQL
import Testing

@Suite struct SchemaTests {
    static let people = """
        {"entities": [
          {"name": "Person", "table": "person",
           "attributes": [{"name": "name", "type": "string"},
                          {"name": "born", "type": "date", "encoding": "seconds-since-1970", "column": "born_at"},
                          {"name": "active", "type": "boolean"}],
           "relationships": [
             {"name": "address", "toOne": "Address", "foreignKey": "address_id"},
             {"name": "kids", "toMany": "Person", "foreignKey": "parent_id", "countColumn": "kids_count"},
             {"name": "friends", "toMany": "Person", "joinTable": {"table": "friendship", "source": "a", "destination": "b"}},
             {"name": "tags", "values": {"table": "person_tag", "owner": "person_id", "type": "string"}}]},
          {"name": "Address", "attributes": [{"name": "city", "type": "string"}]}
        ]}
        """

    @Test func decodesEveryShapeWithDefaults() throws {
        let schema = try Schema(json: Self.people)
        let person = try #require(schema.entity(named: "Person"))
        #expect(person.primaryKey == "id")
        #expect(person.attribute(named: "name")?.column == "name")
        #expect(person.attribute(named: "born")?.column == "born_at")
        #expect(person.attribute(named: "born")?.effectiveEncoding == .secondsSince1970)
        #expect(person.attribute(named: "active")?.effectiveEncoding == .integer01)
        #expect(
            try person.relationship(named: "address")?.shape()
                == .toOne(destination: "Address", foreignKey: "address_id"))
        #expect(
            try person.relationship(named: "kids")?.shape() == .toMany(destination: "Person", foreignKey: "parent_id"))
        #expect(
            try person.relationship(named: "friends")?.shape()
                == .manyToMany(
                    destination: "Person", joinTable: .init(table: "friendship", source: "a", destination: "b")))
        guard case .values(let v)? = try person.relationship(named: "tags")?.shape() else {
            Issue.record("tags is not a value table")
            return
        }
        #expect(v.column == "value" && v.type == .string)
        #expect(schema.entity(named: "Address")?.table == "Address")
        // The JSON form round-trips.
        #expect(try Schema(json: schema.jsonString) == schema)
    }

    @Test(arguments: [
        (#"{"entities": [{"name": "A"}, {"name": "A"}]}"#, "duplicate entity 'A'"),
        (
            #"{"entities": [{"name": "A", "relationships": [{"name": "b", "toOne": "B", "foreignKey": "b_id"}]}]}"#,
            "points at unknown entity 'B'"
        ),
        (#"{"entities": [{"name": "A", "relationships": [{"name": "b", "toOne": "A"}]}]}"#, "needs 'foreignKey'"),
        (
            #"{"entities": [{"name": "A", "relationships": [{"name": "b", "toOne": "A", "toMany": "A", "foreignKey": "x"}]}]}"#,
            "exactly one of"
        ),
        (
            #"{"entities": [{"name": "A", "attributes": [{"name": "d", "type": "date", "encoding": "0/1"}]}]}"#,
            "does not fit type 'date'"
        ),
        (
            #"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "decimal128"}]}]}"#,
            "at .entities[0].attributes[0].type"
        ),
        (#"{"entities": [{"table": "t"}]}"#, "missing key 'name'"),
        (
            #"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "string"}, {"name": "x", "type": "integer"}]}]}"#,
            "two properties named 'x'"
        ),
    ])
    func rejectsBrokenSchemas(json: String, message: String) {
        #expect {
            try Schema(json: json)
        } throws: { error in
            (error as? SchemaError)?.message.contains(message) == true
        }
    }
}
