// Keys that are not identifiers in the SQL lowering (issue 16): such keys are properties like any
// other and reach SQL only as quoted identifiers; a component is an operator only when it names
// one, so `@timestamp` is a column while `@count` never reads a column of that name.

import Foundation
import SiftSQL
import SiftSyntax
import Testing

private let schema: Schema = {
    try! Schema(entities: [
        Schema.Entity(
            name: "Log", table: "log t",
            attributes: [
                Schema.Attribute(name: "user-agent", type: .string),
                Schema.Attribute(name: "@timestamp", type: .integer),
                Schema.Attribute(name: "@count", type: .integer),
                Schema.Attribute(name: "x\"; DROP TABLE t; --", type: .integer),
                Schema.Attribute(name: "a.b", column: "a dot b", type: .integer),
            ],
            relationships: [
                Schema.Relationship(
                    name: "line items", toMany: "Item", foreignKey: "log id", countColumn: "line items count")
            ], open: true),
        Schema.Entity(
            name: "Item", table: "item",
            attributes: [
                Schema.Attribute(name: "unit price", type: .double),
                Schema.Attribute(name: "@price", type: .double),
            ]),
    ])
}()

private func whereClause(_ format: String, _ args: [Any?] = []) throws -> String {
    let lowering = try SQLLowering(schema: schema, entity: "Log")
    let sql = try lowering.select(try PredicateSyntax.parse(format, arguments: args), source: format).sql
    guard let w = sql.range(of: " WHERE "), let o = sql.range(of: " ORDER BY ", options: .backwards) else { return "" }
    return String(sql[w.upperBound..<o.lowerBound])
}

@Suite struct OddKeyLoweringTests {
    @Test func keysBecomeQuotedColumns() throws {
        #expect(try whereClause("%K == 'x'", ["user-agent"]) == #"t0."user-agent" = ?"#)
        #expect(try whereClause(#"#"user-agent" == 'x'"#) == #"t0."user-agent" = ?"#)
        #expect(try whereClause("%K == 1", [#"x"; DROP TABLE t; --"#]) == #"t0."x""; DROP TABLE t; --" = ?"#)
        // One key with a dot in it is its own property; through %K the dot splits.
        #expect(try whereClause(#"#"a.b" == 1"#) == #"t0."a dot b" = ?"#)
    }

    @Test func anAtKeyIsAColumnAndAnOperatorIsNot() throws {
        #expect(try whereClause(#"#"@timestamp" > 1"#) == #"t0."@timestamp" > ?"#)
        #expect(try whereClause("%K > 1", ["@timestamp"]) == #"t0."@timestamp" > ?"#)
        // "@count" is the operator even where the entity has a property of that name.
        let count = try whereClause(#"#"line items".@count > 1"#)
        #expect(count == #"t0."line items count" > ?"#)
        #expect(throws: SQLLoweringError.self) { try whereClause("%K > 1", ["@count"]) }
    }

    @Test func operatorsAndKeysUnderAToManyKey() throws {
        let sum = try whereClause(#"#"line items".@sum.#"unit price" > 1"#)
        #expect(sum.contains(#""unit price""#), "\(sum)")
        #expect(sum.contains(#"FROM "item""#), "\(sum)")
        let any = try whereClause("ANY %K > 1", ["line items.unit price"])
        #expect(any.hasPrefix("EXISTS (SELECT 1 FROM \"item\""), "\(any)")
        #expect(any.contains(#""log id""#), "\(any)")
        // A key beginning with "@" under a to-many key is a key of each element, not an operator.
        let at = try whereClause(#"ANY #"line items".#"@price" > 1"#)
        #expect(at.hasPrefix("EXISTS (SELECT 1 FROM \"item\""), "\(at)")
        #expect(at.contains(#"."@price" > ?"#), "\(at)")
    }

    @Test func undeclaredOddKeysOfAnOpenEntityAreNil() throws {
        #expect(try whereClause(#"#"no such-key" == nil"#) == "NULL IS NULL")
        #expect(try whereClause("%K == nil", ["no such.key"]) == "NULL IS NULL")
    }
}
