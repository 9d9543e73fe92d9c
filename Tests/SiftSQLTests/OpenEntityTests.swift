// Open entities (the ones inferred from JSON): a key the entity does not declare reads nil, as a
// missing dictionary key does in memory, while closed entities keep rejecting it and collection
// operators are never mistaken for such keys.

import SiftSQL
import SiftSyntax
import Testing

@Suite struct OpenEntityTests {
    static func schema(open: Bool) throws -> Schema {
        try Schema(
            json: """
                {"entities": [{"name": "R", "table": "r", "open": \(open),
                  "attributes": [{"name": "name", "type": "any"}],
                  "relationships": [{"name": "home", "toOne": "H", "foreignKey": "home_id"}]},
                 {"name": "H", "table": "h", "open": \(open), "attributes": [{"name": "city", "type": "any"}]}]}
                """)
    }

    func sql(_ format: String, open: Bool = true) throws -> String {
        try SQLLowering(schema: Self.schema(open: open), entity: "R").select(PredicateSyntax.parse(format)).sql
    }

    @Test func undeclaredKeysReadNil() throws {
        #expect(try sql("nickname == nil").contains("WHERE NULL IS NULL"))
        #expect(try sql("name == nickname").contains(#"WHERE t0."name" IS NULL"#))
        // A key on nil is nil, whatever follows it, and through a to-one relationship too.
        #expect(try sql("nickname.initial.letter == nil").contains("WHERE NULL IS NULL"))
        #expect(try sql("home.street != nil").contains("WHERE NULL IS NOT NULL"))
    }

    @Test func closedEntitiesAndCollectionOperatorsStillFail() throws {
        #expect(throws: SQLLoweringError.self) { try sql("nickname == nil", open: false) }
        do {
            _ = try sql("home.@count == 2")
            Issue.record("@count on a to-one object lowered")
        } catch {
            #expect(error is SQLLoweringError)
        }
    }

    @Test func openRoundTripsThroughJSON() throws {
        let open = try Self.schema(open: true)
        let closed = try Self.schema(open: false)
        #expect(open.entity(named: "R")?.open == true)
        #expect(closed.entity(named: "R")?.open == false)
        #expect(try Schema(json: open.jsonString) == open)
        #expect(!closed.jsonString.contains("\"open\""))
    }
}
