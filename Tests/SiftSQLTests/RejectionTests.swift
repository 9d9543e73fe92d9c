// Every form the lowering refuses: the error kind and where it points (line:column), so a caller
// can show the same diagnostic as for syntax and evaluation errors.

import Foundation
import SiftSQL
import SiftSyntax
import Testing

@Suite struct RejectionTests {
    static let cases: [(String, SQLLoweringError.Kind, String)] = [
        ("nme == 1", .unknownKey, "1:1"),
        ("age == 1 AND address.town == 'x'", .unknownKey, "1:14"),
        ("name.length == 1", .unknownKey, "1:1"),
        ("name == 5", .typeMismatch, "1:1"),
        ("age == 'x'", .typeMismatch, "1:1"),
        ("born < 'x'", .typeMismatch, "1:1"),
        ("age BEGINSWITH 'x'", .typeMismatch, "1:1"),
        ("name BEGINSWITH 5", .typeMismatch, "1:1"),
        ("age == name", .typeMismatch, "1:1"),
        ("address == 'x'", .typeMismatch, "1:1"),
        ("kids.age == 5", .toManyKeyPath, "1:1"),
        ("kids == 5", .toManyKeyPath, "1:1"),
        ("kids.age IN {1}", .toManyKeyPath, "1:1"),
        ("address IN {1}", .typeMismatch, "1:1"),
        ("ANY friends.kids.age == 5", .toManyKeyPath, "1:5"),
        ("ANY name == 'x'", .notACollection, "1:5"),
        ("5 IN age", .notACollection, "1:1"),
        ("age == $y", .unboundVariable, "1:8"),
        ("SELF == 5", .unsupported, "1:1"),
        ("born * 2 > %@", .typeMismatch, "1:1"),
        ("name - born > 0", .typeMismatch, "1:1"),
        ("name + 1 == 2", .typeMismatch, "1:1"),
        ("abs(name) == 5", .typeMismatch, "1:5"),
        ("tags[0] == 'x'", .unsupported, "1:1"),
        ("FUNCTION(age, 'foo') == 1", .unsupported, "1:1"),
        ("kids.@distinctUnionOfObjects.age == 1", .unsupported, "1:1"),
        ("SUBQUERY(kids, $k, $k.age > 3)[FIRST] == nil", .unsupported, "1:1"),
        ("SUBQUERY(friends, $f, $f.kids.@count > 3).@count > 0", .toManyKeyPath, "1:23"),
        ("SUBQUERY(name, $k, $k == 'x').@count > 0", .notACollection, "1:10"),
        ("SUBQUERY(kids, $k, $k == 'x').@count > 0", .unsupported, "1:20"),
        ("age BETWEEN {1, age}", .unsupported, "1:13"),
        ("price < 3", .unsupported, "1:1"),
        ("kids.@sum.name > 3", .typeMismatch, "1:1"),
        // Values random in memory, and constant parts that raise in memory on every row.
        ("random() < age", .unsupported, "1:1"),
        ("sqrt:('a') == age", .unsupported, "1:1"),
        ("mode:(kids.age) == {1}", .unsupported, "1:1"),
    ]

    @Test(arguments: cases.indices)
    func rejected(_ i: Int) throws {
        let (format, kind, location) = Self.cases[i]
        let args: [Any?] = format.contains("%@") ? [Date(timeIntervalSinceReferenceDate: 0)] : []
        let e = try #require(Fixture.error(format, args), "\(format) was lowered")
        #expect(e.kind == kind, "\(format): \(e)")
        #expect(e.location?.description == location, "\(format): \(e)")
        #expect(e.description.hasPrefix("\(location): error: "))
    }

    @Test func annotatedShowsCaret() throws {
        let e = try #require(Fixture.error("age == 1 AND nme == 2"))
        #expect(e.annotated == "1:14: error: Person has no key 'nme'\nage == 1 AND nme == 2\n             ^~~")
        #expect(e.id == "unknown-key")
    }

    @Test func multiLineSourceAndNoSource() throws {
        let src = "age == 1 AND\n  name == 5"
        let p = try PredicateSyntax.parse(src)
        do {
            _ = try Fixture.lowering.select(p, source: src)
            Issue.record("lowered")
        } catch {
            #expect(error.description == "2:3: error: 'name' is string and cannot be compared with 5")
            #expect(error.kind == .typeMismatch)
        }
        do {
            _ = try Fixture.lowering.select(p)
            Issue.record("lowered")
        } catch {
            #expect(error.description == "error: 'name' is string and cannot be compared with 5")
            #expect(error.range == SourceRange(15, 24))
        }
    }

    @Test func badSortKeysAndColumns() throws {
        let p = try PredicateSyntax.parse("TRUEPREDICATE")
        #expect(throws: SQLLoweringError.self) {
            try Fixture.lowering.select(p, sortedBy: [SQLSortKey(keyPath: "kids")])
        }
        #expect(throws: SQLLoweringError.self) {
            try Fixture.lowering.select(p, sortedBy: [SQLSortKey(keyPath: "nope")])
        }
        #expect(throws: SQLLoweringError.self) { try Fixture.lowering.select(p, columns: ["address"]) }
        #expect(throws: SQLLoweringError.self) { try Fixture.lowering.select(p, columns: ["a b"]) }
        let q = try Fixture.lowering.select(p, sortedBy: [SQLSortKey(keyPath: "kids.@count", ascending: false)])
        #expect(
            q.sql
                == #"SELECT t0."id" FROM "person" AS t0 ORDER BY (SELECT COUNT(*) FROM "kid" AS t1 WHERE t1."parent_id" = t0."id") DESC, t0."id" ASC"#
        )
    }

    @Test func unknownEntity() {
        #expect(throws: SQLLoweringError.self) { try SQLLowering(schema: Fixture.schema, entity: "Nope") }
    }
}
