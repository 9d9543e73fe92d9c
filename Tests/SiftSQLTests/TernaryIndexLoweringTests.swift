// Exact SQL for TERNARY and for indexes into collections. Both are easy to get subtly wrong: a CASE
// must take the ELSE branch exactly where memory's condition is not true (NULL included), and an
// index must read the element at memory's position, which only an ordered collection has. The rows
// these forms select are checked against memory by the corpus and the differential test; these
// tests pin the shape, so that a change in it is seen and reviewed.

import Foundation
import SiftSQL
import SiftSyntax
import Testing

/// `Person` with ordered `kids` (an order column in the child table), an unordered `pets`, an
/// ordered value collection `tags`, and a to-one `address`.
private let lowering: SQLLowering = {
    let schema = try! Schema(entities: [
        Schema.Entity(
            name: "Person", table: "person",
            attributes: [
                Schema.Attribute(name: "name", type: .string),
                Schema.Attribute(name: "age", type: .integer),
                Schema.Attribute(name: "score", type: .double),
            ],
            relationships: [
                Schema.Relationship(name: "address", toOne: "Address", foreignKey: "address_id"),
                Schema.Relationship(name: "kids", toMany: "Kid", foreignKey: "parent_id", orderColumn: "position"),
                Schema.Relationship(name: "pets", toMany: "Kid", foreignKey: "owner_id"),
                Schema.Relationship(
                    name: "tags", values: .init(table: "person_tag", owner: "person_id", type: .string),
                    orderColumn: "position"),
            ]),
        Schema.Entity(name: "Address", table: "address", attributes: [Schema.Attribute(name: "city", type: .string)]),
        Schema.Entity(
            name: "Kid", table: "kid",
            attributes: [
                Schema.Attribute(name: "name", type: .string),
                Schema.Attribute(name: "age", type: .integer),
            ]),
    ])
    return try! SQLLowering(schema: schema, entity: "Person")
}()

/// `format` lowered; `guarded` false leaves out the row guard (which refuses an element read by
/// its number next to a relationship: no row alone tells where memory raises past the last one).
private func lower(_ format: String, guarded: Bool = true) throws -> SQLQuery {
    var l = lowering
    l.guardsRows = guarded
    return try l.select(try PredicateSyntax.parse(format), source: format)
}

/// The WHERE clause alone.
private func w(_ format: String, guarded: Bool = true) throws -> String {
    let sql = try lower(format, guarded: guarded).sql
    guard let start = sql.range(of: " WHERE "), let end = sql.range(of: " ORDER BY ", options: .backwards) else {
        return ""
    }
    return String(sql[start.upperBound..<end.lowerBound])
}

private func b(_ format: String, guarded: Bool = true) throws -> [SQLValue] {
    try lower(format, guarded: guarded).bindings
}

@Suite struct TernaryLoweringTests {
    @Test func caseOfTheLoweredCondition() throws {
        #expect(
            try w("TERNARY(age > 5, name, 'none') == 'x'")
                == #"(CASE WHEN t0."age" > ? THEN t0."name" ELSE ? END) = ?"#)
        #expect(try b("TERNARY(age > 5, name, 'none') == 'x'") == [.integer(5), .text("none"), .text("x")])
    }

    /// Under NOT the comparison keeps NULL rows (a nil `name` branch is not 'x'), as memory does.
    @Test func negatedComparisonKeepsNull() throws {
        #expect(
            try w("NOT TERNARY(age > 5, name, 'none') == 'x'")
                == #"(CASE WHEN t0."age" > ? THEN t0."name" ELSE ? END) IS NOT ?"#)
    }

    /// The condition is lowered as a predicate, so a NULL `age` makes `age != 5` true (memory's
    /// nil != 5), and `name == nil` is `IS NULL`, not `= NULL`.
    @Test func conditionFollowsMemoryForNull() throws {
        #expect(
            try w("TERNARY(age != 5, 1, 2) == 1")
                == #"(CASE WHEN t0."age" IS NOT ? THEN ? ELSE ? END) = ?"#)
        #expect(
            try w("TERNARY(name == nil, 0, age) < 3")
                == #"(CASE WHEN t0."name" IS NULL THEN ? ELSE t0."age" END) < ?"#)
    }

    /// A condition that reads no row is decided once; only the branch taken is lowered.
    @Test func constantConditionLowersOneBranch() throws {
        #expect(try w("TERNARY(1 == 1, age, score) > 3") == #"t0."age" > ?"#)
        #expect(try w("TERNARY(1 == 2, age, score) > 3") == #"t0."score" > ?"#)
        #expect(try b("TERNARY(1 == 1, age, score) > 3") == [.integer(3)])
    }
}

@Suite struct IndexLoweringTests {
    private static func element(_ column: String, _ table: String, _ owner: String, _ direction: String) -> String {
        #"(SELECT t1."\#(column)" FROM "\#(table)" AS t1 WHERE t1."\#(owner)" = t0."id" ORDER BY t1."position" \#(direction) LIMIT 1 OFFSET ?)"#
    }

    @Test func firstLastAndPositionReadTheOrderColumn() throws {
        let first = Self.element("name", "kid", "parent_id", "ASC")
        #expect(try w("kids[FIRST].name == 'a'") == "\(first) = ?")
        #expect(try b("kids[FIRST].name == 'a'") == [.integer(0), .text("a")])
        #expect(try w("kids[2].age == 1", guarded: false) == "\(Self.element("age", "kid", "parent_id", "ASC")) = ?")
        #expect(try b("kids[2].age == 1", guarded: false) == [.integer(2), .integer(1)])
        #expect(
            try w("tags[0] == 'x'", guarded: false) == "\(Self.element("value", "person_tag", "person_id", "ASC")) = ?")
        #expect(try w("tags[LAST] == 'x'") == "\(Self.element("value", "person_tag", "person_id", "DESC")) = ?")
    }

    /// Past the last element memory raises where the subquery reads NULL; FIRST and LAST of no
    /// elements are nil in memory too. Without documents no row alone can be handed to memory, so
    /// a numeric index (or an index of a value that is no collection) is refused, for the store
    /// to judge in memory.
    @Test func numericIndexNextToARelationshipIsRefused() throws {
        for format in ["kids[2].age == 1", "tags[0] == 'x'", "kids[-1].age == 1", "name[0] == 'x' AND kids[SIZE] > 0"] {
            let error = #expect(throws: SQLLoweringError.self, "\(format)") { try lower(format) }
            #expect(error?.kind == .unsupported)
            #expect(error?.message.contains("an index or a SUBQUERY compared whole") == true, "\(format)")
        }
        #expect(throws: Never.self) { try lower("kids[FIRST].name == 'a' AND tags[LAST] == 'x'") }
        // The row alone: memory decides it.
        #expect(try w("name[0] == 'x'").hasPrefix("sift_guard("))
    }

    /// A missing element (an empty collection) is NULL, which the negated comparison keeps.
    @Test func negatedIndexKeepsMissingElements() throws {
        let last = Self.element("age", "kid", "parent_id", "DESC")
        #expect(try w("NOT kids[LAST].age > 3") == "(\(last) <= ? OR \(last) IS NULL)")
    }

    @Test func sizeCountsEveryCollection() throws {
        #expect(try w("kids[SIZE] == 2") == #"(SELECT COUNT(*) FROM "kid" AS t1 WHERE t1."parent_id" = t0."id") = ?"#)
        // SIZE needs no order, so it works on an unordered relationship too.
        #expect(try w("pets[SIZE] > 1") == #"(SELECT COUNT(*) FROM "kid" AS t1 WHERE t1."owner_id" = t0."id") > ?"#)
    }

    /// An unordered relationship is a set in memory: a position in it means nothing SQL could match.
    @Test func positionInUnorderedRelationshipIsRejected() throws {
        for format in ["pets[FIRST].age == 1", "pets[LAST].age == 1", "pets[0].age == 1"] {
            let error = #expect(throws: SQLLoweringError.self, "\(format)") { try lower(format) }
            #expect(error?.kind == .unsupported)
            #expect(error?.message.contains("unordered") == true, "\(String(describing: error))")
            #expect(error?.location?.description == "1:1")
        }
    }

    /// `object['key']` on a to-one is the key path `object.key`.
    @Test func subscriptOfToOneIsItsKey() throws {
        #expect(try w("address['city'] == 'Oslo'") == (try w("address.city == 'Oslo'")))
        #expect(try lower("address['city'] == 'Oslo'").sql.contains(#"LEFT JOIN "address" AS t1"#))
    }
}

/// A SUBQUERY over a constant collection whose predicate reads only its variable reads no row:
/// memory filters the collection once and the count is bound (or the comparison decided).
@Suite struct ConstantSubqueryLoweringTests {
    @Test func foldedOnce() throws {
        #expect(try w("SUBQUERY({1, 2, 3, 4}, $x, $x > 2).@count == 2 AND age > 1") == #"(t0."age" > ?)"#)
        #expect(try w("SUBQUERY({1, 2, 3, 4}, $x, $x > 2)[SIZE] == 3 OR age > 1") == #"(t0."age" > ?)"#)
        #expect(try lower("SUBQUERY({1, 2, 3, 4}, $x, $x > 2).@count == 3").sql.contains(" WHERE 0 "))
        #expect(try w("age < SUBQUERY({1, 2, 3, 4}, $x, $x >= 2).@count") == #"t0."age" < ?"#)
        #expect(try b("age < SUBQUERY({1, 2, 3, 4}, $x, $x >= 2).@count") == [.integer(3)])
    }

    /// A predicate that reads the row (`age`) makes it a per-row SUBQUERY, which needs a relationship.
    @Test func readingTheRowIsNotConstant() throws {
        let error = #expect(throws: SQLLoweringError.self) { try lower("SUBQUERY({1, 2}, $x, $x > age).@count == 1") }
        #expect(error?.kind == .notACollection)
    }
}
