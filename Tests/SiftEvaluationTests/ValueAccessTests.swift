// How user values reach predicates: Swift and Foundation scalars, JSONSerialization output,
// dictionaries, Encodable types, plain structs by reflection, and hand-written KeyValueCoding.

import Foundation
import Testing

@testable import SiftEvaluation

struct Address: Codable {
    var city: String
    var zip: String?
}
struct Person: Codable {
    var name: String
    var age: Int?
    var address: Address?
    var tags: [String]
    var born: Date?
}

/// A plain struct with no conformances: read by reflection.
struct Plain {
    var title: String
    var pages: Int
    var note: String?
}

/// A hand-written conformance that rejects unknown keys.
struct Point: KeyValueCoding {
    var x: Int, y: Int
    func value(forKey key: String) throws -> Value {
        switch key {
        case "x": .integer(Int64(x))
        case "y": .integer(Int64(y))
        default: throw KeyValueCodingError.unknownKey(key, in: "Point")
        }
    }
}

@Suite struct ValueConversionTests {
    @Test func scalars() {
        #expect(Value(any: nil) == .null)
        #expect(Value(any: NSNull()).isNull)
        #expect(Value(any: 5) == .integer(5))
        #expect(Value(any: Int8(-3)) == .integer(-3))
        #expect(Value(any: UInt64.max).order(comparedTo: .double(1.8e19)) == 1)
        #expect(Value(any: Float(1.5)) == .double(1.5))
        #expect(Value(any: "x") == .string("x"))
        #expect(Value(any: Substring("ab")) == .string("ab"))
        let optionalInt: Int? = 4
        #expect(Value(any: optionalInt as Any) == .integer(4))
        let none: Int? = nil
        #expect(Value(any: none as Any).isNull)
    }

    @Test func nsNumberKeepsBooleansApartFromIntegers() {
        guard case .bool(true) = Value(any: NSNumber(value: true)) else {
            Issue.record("NSNumber(true) is not a Bool")
            return
        }
        guard case .integer(7) = Value(any: NSNumber(value: 7)) else {
            Issue.record("NSNumber(7) is not an integer")
            return
        }
        guard case .double(2.5) = Value(any: NSNumber(value: 2.5)) else {
            Issue.record("NSNumber(2.5) is not a double")
            return
        }
        // Booleans still compare numerically, as NSNumber does.
        #expect(Value(any: NSNumber(value: true)) == .integer(1))
    }

    @Test func jsonSerializationOutput() throws {
        let json = #"[{"name": "Ann", "age": 41, "score": 2.5, "ok": true, "gone": null, "tags": ["a"]}]"#
        let records = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [Any]
        let p = try SiftPredicate(
            "age == 41 AND score > 2 AND ok == YES AND gone == nil AND missing == nil AND ANY tags == 'a'")
        #expect(try p.evaluate(with: records[0]))
        #expect(try records.filter(SiftPredicate("name == 'Ann'")).count == 1)
    }

    @Test func encodableTypesUseTheirCodingKeys() throws {
        let ann = Person(
            name: "Ann", age: 41, address: Address(city: "Lisbon", zip: nil), tags: ["x"],
            born: Date(timeIntervalSince1970: 0))
        let bo = Person(name: "Bo", age: nil, address: nil, tags: [], born: nil)
        let people = [ann, bo]
        #expect(try people.filter(SiftPredicate("address.city == 'Lisbon'")).map(\.name) == ["Ann"])
        #expect(try people.filter(SiftPredicate("address.city == nil")).map(\.name) == ["Bo"])
        #expect(try people.filter(SiftPredicate("age == nil")).map(\.name) == ["Bo"])
        #expect(try people.filter(SiftPredicate("tags.@count == 0")).map(\.name) == ["Bo"])
        // Dates stay dates (not the number JSONEncoder would write).
        #expect(try people.filter(SiftPredicate("born < %@", Date(timeIntervalSince1970: 10))).map(\.name) == ["Ann"])
        guard case .dictionary(let d) = try ValueEncoder.encode(ann) else {
            Issue.record("not a dictionary")
            return
        }
        #expect(d["address"]?.dictionaryContent?["zip"] == nil || d["address"]?.dictionaryContent?["zip"] == .null)
    }

    @Test func plainStructsByReflection() throws {
        let books = [Plain(title: "Dune", pages: 412, note: nil), Plain(title: "Emma", pages: 474, note: "gift")]
        #expect(try books.filter(SiftPredicate("pages > 450")).map(\.title) == ["Emma"])
        #expect(try books.filter(SiftPredicate("note == nil")).map(\.title) == ["Dune"])
        #expect(throws: EvaluationError.self) { try SiftPredicate("colour == 'red'").evaluate(with: books[0]) }
    }

    @Test func keyValueCodingTypesAndUnknownKeys() throws {
        let points = [Point(x: 1, y: 2), Point(x: 5, y: 0)]
        #expect(try points.filter(SiftPredicate("x + y > 4")).map(\.x) == [5])
        do {
            _ = try SiftPredicate("z == 1").evaluate(with: points[0])
            Issue.record("an unknown key on a typed object must throw")
        } catch let error as EvaluationError {
            #expect(error.id == "unknown-key")
            #expect(error.message == "Point has no key 'z'")
            #expect(error.description == "1:1: error: Point has no key 'z'")
        }
    }

    @Test func dictionariesOfValuesAndAny() throws {
        let typed: [String: Value] = ["a": .integer(1), "b": .array([.string("x")])]
        #expect(try SiftPredicate("a == 1 AND b[0] == 'x' AND c == nil").evaluate(with: typed))
        let any: [String: Any] = ["a": 1, "nested": ["k": [1, 2, 3]]]
        #expect(try SiftPredicate("nested.k.@sum == 6 AND nested.k[LAST] == 3").evaluate(with: any))
        let sets: [String: Any] = ["s": Set([1, 2, 2, 3])]
        #expect(try SiftPredicate("s.@count == 3 AND 2 IN s AND ANY s > 2").evaluate(with: sets))
    }

    @Test func keyOnAnArrayMapsOverItsElements() throws {
        let kids: [String: Any] = ["kids": [["age": 3], ["age": NSNull()], ["name": "no age"]]]
        let v = try Value(any: kids).value(forKey: "kids").value(forKey: "age")
        #expect(v == .array([.integer(3), .null, .null]))
        #expect(try SiftPredicate("kids.age CONTAINS 3").evaluate(with: kids))
        #expect(try SiftPredicate("kids.@avg.age == 3").evaluate(with: kids))
    }
}
