// The schema the lowering tests share, and a helper that lowers a predicate string.

import Foundation
import SiftSQL
import SiftSyntax

enum Fixture {
    static let schema: Schema = {
        try! Schema(entities: [
            Entity(name: "Person", table: "person", attributes: [
                Attribute(name: "name", type: .string),
                Attribute(name: "age", type: .integer),
                Attribute(name: "score", type: .double),
                Attribute(name: "born", type: .date),
                Attribute(name: "born70", type: .date, encoding: .secondsSince1970),
                Attribute(name: "bornISO", type: .date, encoding: .iso8601),
                Attribute(name: "flag", type: .boolean),
                Attribute(name: "blob", type: .data),
                Attribute(name: "misc", type: .any),
                Attribute(name: "price", type: .decimal, encoding: .text),
                Attribute(name: "nick", column: "nick name", type: .string),
            ], relationships: [
                Relationship(name: "address", toOne: "Address", foreignKey: "address_id"),
                Relationship(name: "kids", toMany: "Kid", foreignKey: "parent_id"),
                Relationship(name: "pets", toMany: "Kid", foreignKey: "owner_id", countColumn: "pet_count"),
                Relationship(name: "friends", toMany: "Person", joinTable: .init(table: "friendship", source: "person_id", destination: "friend_id")),
                Relationship(name: "tags", values: .init(table: "person_tag", owner: "person_id", type: .string)),
                Relationship(name: "scores", values: .init(table: "person_score", owner: "person_id", type: .integer), countColumn: "score_count"),
            ]),
            Entity(name: "Address", table: "address", attributes: [Attribute(name: "city", type: .string)],
                   relationships: [Relationship(name: "country", toOne: "Country", foreignKey: "country_id"),
                                   Relationship(name: "residents", toMany: "Person", foreignKey: "address_id")]),
            Entity(name: "Country", table: "country", primaryKey: "code", attributes: [Attribute(name: "name", type: .string)]),
            Entity(name: "Kid", table: "kid", attributes: [Attribute(name: "name", type: .string), Attribute(name: "age", type: .integer)],
                   relationships: [Relationship(name: "address", toOne: "Address", foreignKey: "address_id")]),
        ])
    }()

    static let lowering = try! SQLLowering(schema: schema, entity: "Person")

    /// The query for `format`, parsed with `arguments`.
    static func lower(_ format: String, _ arguments: [Any?] = [], variables: [String: LiteralValue] = [:],
                      sortedBy: [SQLSortKey] = []) throws -> SQLQuery {
        let p = try PredicateSyntax.parse(format, arguments: arguments)
        return try lowering.select(p, source: format, variables: variables, sortedBy: sortedBy)
    }

    /// The WHERE clause alone ("" when there is none).
    static func whereClause(_ format: String, _ arguments: [Any?] = [], variables: [String: LiteralValue] = [:]) throws -> String {
        let sql = try lower(format, arguments, variables: variables).sql
        guard let w = sql.range(of: " WHERE "), let o = sql.range(of: " ORDER BY ", options: .backwards) else { return "" }
        return String(sql[w.upperBound..<o.lowerBound])
    }

    /// The error lowering `format` raises, if any.
    static func error(_ format: String, _ arguments: [Any?] = []) -> SQLLoweringError? {
        do { _ = try lower(format, arguments); return nil } catch let e as SQLLoweringError { return e } catch { return nil }
    }
}
