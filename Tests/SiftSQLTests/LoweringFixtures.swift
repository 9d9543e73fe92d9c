// The schema the lowering tests share, and a helper that lowers a predicate string.

import Foundation
import SiftSQL
import SiftSyntax

enum Fixture {
    static let schema: Schema = {
        try! Schema(entities: [
            Schema.Entity(
                name: "Person", table: "person",
                attributes: [
                    Schema.Attribute(name: "name", type: .string),
                    Schema.Attribute(name: "age", type: .integer),
                    Schema.Attribute(name: "score", type: .double),
                    Schema.Attribute(name: "born", type: .date),
                    Schema.Attribute(name: "born70", type: .date, encoding: .secondsSince1970),
                    Schema.Attribute(name: "bornISO", type: .date, encoding: .iso8601),
                    Schema.Attribute(name: "flag", type: .boolean),
                    Schema.Attribute(name: "blob", type: .data),
                    Schema.Attribute(name: "misc", type: .any),
                    Schema.Attribute(name: "price", type: .decimal, encoding: .text),
                    Schema.Attribute(name: "nick", column: "nick name", type: .string),
                ],
                relationships: [
                    Schema.Relationship(name: "address", toOne: "Address", foreignKey: "address_id"),
                    Schema.Relationship(name: "kids", toMany: "Kid", foreignKey: "parent_id"),
                    Schema.Relationship(name: "pets", toMany: "Kid", foreignKey: "owner_id", countColumn: "pet_count"),
                    Schema.Relationship(
                        name: "friends", toMany: "Person",
                        joinTable: .init(table: "friendship", source: "person_id", destination: "friend_id")),
                    Schema.Relationship(
                        name: "tags", values: .init(table: "person_tag", owner: "person_id", type: .string)),
                    Schema.Relationship(
                        name: "scores", values: .init(table: "person_score", owner: "person_id", type: .integer),
                        countColumn: "score_count"),
                ]),
            Schema.Entity(
                name: "Address", table: "address", attributes: [Schema.Attribute(name: "city", type: .string)],
                relationships: [
                    Schema.Relationship(name: "country", toOne: "Country", foreignKey: "country_id"),
                    Schema.Relationship(name: "residents", toMany: "Person", foreignKey: "address_id"),
                ]),
            Schema.Entity(
                name: "Country", table: "country", primaryKey: "code",
                attributes: [Schema.Attribute(name: "name", type: .string)]),
            Schema.Entity(
                name: "Kid", table: "kid",
                attributes: [
                    Schema.Attribute(name: "name", type: .string), Schema.Attribute(name: "age", type: .integer),
                ],
                relationships: [Schema.Relationship(name: "address", toOne: "Address", foreignKey: "address_id")]),
        ])
    }()

    static let lowering = try! SQLLowering(schema: schema, entity: "Person")

    /// The query for `format`, parsed with `arguments`.
    static func lower(
        _ format: String, _ arguments: [Any?] = [], variables: [String: LiteralValue] = [:],
        sortedBy: [SQLSortKey] = []
    ) throws -> SQLQuery {
        let p = try PredicateSyntax.parse(format, arguments: arguments)
        return try lowering.select(p, source: format, variables: variables, sortedBy: sortedBy)
    }

    /// The WHERE clause alone ("" when there is none).
    static func whereClause(_ format: String, _ arguments: [Any?] = [], variables: [String: LiteralValue] = [:]) throws
        -> String
    {
        let sql = try lower(format, arguments, variables: variables).sql
        guard let w = sql.range(of: " WHERE "), let o = sql.range(of: " ORDER BY ", options: .backwards) else {
            return ""
        }
        return String(sql[w.upperBound..<o.lowerBound])
    }

    /// The error lowering `format` raises, if any.
    static func error(_ format: String, _ arguments: [Any?] = []) -> SQLLoweringError? {
        do {
            _ = try lower(format, arguments)
            return nil
        } catch let e as SQLLoweringError { return e } catch { return nil }
    }
}
