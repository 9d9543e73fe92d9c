// JSONValue's conventions: duplicate keys resolved as predicates read them (the last value wins,
// where the key first appears), `{"$date": seconds}` as a date, integers apart from doubles.

import Foundation
import SiftJSON
import Testing

@Suite struct JSONValueTests {
    @Test func theLastDuplicateKeyWinsWhereTheKeyFirstAppears() throws {
        let members: [(String, JSONValue)] = [("a", .integer(1)), ("b", .null), ("a", .integer(2))]
        let unique = JSONValue.uniqueMembers(members)
        #expect(unique.map(\.0) == ["a", "b"])
        #expect(unique.map(\.1) == [.integer(2), .null])
        // The same rule as the value predicates evaluate against.
        let parsed = try JSONReader.parse(#"{"a": 1, "b": null, "a": 2}"#)
        guard case .object(let fields) = parsed else {
            Issue.record("not an object")
            return
        }
        #expect(fields.count == 3)
        #expect(try SiftPredicate("a == 2 AND b == nil").evaluate(with: parsed.value))
        #expect(JSONValue.uniqueMembers([]).isEmpty)
    }

    @Test func datesIntegersAndDoublesKeepTheirKinds() throws {
        let v = try JSONReader.parse(#"[1, 1.0, {"$date": 86400}, {"$date": 1, "x": 2}]"#)
        guard case .array(let items) = v else {
            Issue.record("not an array")
            return
        }
        #expect(items[0] == .integer(1) && items[1] == .double(1.0) && items[0] != items[1])
        #expect(items[2].date == Date(timeIntervalSince1970: 86400))
        #expect(items[3].date == nil)
        #expect(v.text == #"[1,1.0,{"$date":86400},{"$date":1,"x":2}]"#)
    }
}
