// Value transformers (issue 28): a value of any type stored through the transformer its model
// names (the column keeps exactly the transformer's bytes), read back through it; the errors of a
// missing transformer (at store open), of a value of the wrong type or one the transformer refuses
// (at setValue); a non-Codable value without a transformer refused at setValue instead of being
// stored as a reflected dictionary; predicates over transformed values in memory and in store
// fetches (memory's rows or memory's error).

import Foundation
import SiftEvaluation
import SiftSQL
import SiftStoreTestSupport
import SiftSyntax
import Testing

@testable import SiftStore

/// A plain class: neither Codable nor KeyValueCoding.
final class Swatch {
    let width: Int
    init(width: Int) { self.width = width }
}

/// A swatch as its width in decimal text.
struct SwatchTransformer: AttributeTransformer {
    func transformedValue(_ swatch: Swatch) throws(TransformerError) -> Data { Data("\(swatch.width)".utf8) }
    func reverseTransformedValue(_ data: Data) throws(TransformerError) -> Swatch {
        guard let width = Int(String(decoding: data, as: UTF8.self)) else {
            throw TransformerError(.reverse, "no width")
        }
        return Swatch(width: width)
    }
}

/// A Codable point stored as "x,y" text: predicates read it through its coding keys.
struct Point: Codable {
    var x: Double, y: Double
}

struct PointTransformer: AttributeTransformer {
    func transformedValue(_ p: Point) throws(TransformerError) -> Data { Data("\(p.x),\(p.y)".utf8) }
    func reverseTransformedValue(_ data: Data) throws(TransformerError) -> Point {
        let parts = String(decoding: data, as: UTF8.self).split(separator: ",").compactMap { Double($0) }
        guard parts.count == 2 else { throw TransformerError(.reverse, "not x,y") }
        return Point(x: parts[0], y: parts[1])
    }
}

/// A transformer that cannot read back what it writes.
struct OneWayTransformer: AttributeTransformer {
    static var allowsReverseTransformation: Bool { false }
    func transformedValue(_ s: String) throws(TransformerError) -> Data { Data(s.utf8) }
    func reverseTransformedValue(_ data: Data) throws(TransformerError) -> String {
        throw TransformerError(.reverse, "one way")
    }
}

@Suite struct TransformerTests {
    typealias Color = TransformerSample.Color

    init() {
        AttributeTransformers.setValueTransformer(TransformerSample.ColorTransformer(), forName: "ColorTransformer")
        AttributeTransformers.setValueTransformer(SwatchTransformer(), forName: "SwatchTransformer")
        AttributeTransformers.setValueTransformer(PointTransformer(), forName: "PointTransformer")
        AttributeTransformers.setValueTransformer(OneWayTransformer(), forName: "OneWayTransformer")
    }

    /// Car: name, color (ColorTransformer), swatch (SwatchTransformer), spot (PointTransformer),
    /// extra (transformable, no transformer).
    static func model(_ extra: [AttributeDescription] = []) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Car",
                attributes: [
                    AttributeDescription("name", .string),
                    AttributeDescription("color", .transformable, valueTransformerName: "ColorTransformer"),
                    AttributeDescription("swatch", .transformable, valueTransformerName: "SwatchTransformer"),
                    AttributeDescription("spot", .transformable, valueTransformerName: "PointTransformer"),
                    AttributeDescription("extra", .transformable),
                ] + extra)
        ])
    }

    /// Cars a (red 0.9), b (red 0.2), c (no color), saved in a store at `path`.
    static func seeded(_ path: String) throws -> ManagedObjectModel {
        let model = try model()
        let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        for (name, red) in [("a", 0.9), ("b", 0.2), ("c", nil)] {
            let car = try c.insert("Car")
            try car.setValue(name, forKey: "name")
            try car.setValue(red.map { Color(red: $0, green: 0.5, blue: 0) }, forKey: "color")
            try car.setValue(Swatch(width: name == "a" ? 3 : 1), forKey: "swatch")
            try car.setValue(Point(x: red ?? 0, y: 1), forKey: "spot")
        }
        try c.save()
        return model
    }

    @Test func theColumnKeepsTheTransformersBytesAndAFetchReadsThemBack() throws {
        let path = Fixtures.temporaryPath()
        let model = try Self.seeded(path)
        let store = try PersistentStore(model: model, path: path)
        let c = ManagedObjectContext(store: store)
        let a = try #require(try c.fetch(FetchRequest("Car", predicate: "name == 'a'")).first)
        let color = try #require(try a.get("color", as: Color.self))
        #expect([color.red, color.green, color.blue, color.alpha] == [0.9, 0.5, 0, 1])
        #expect(try a.get("swatch", as: Swatch.self)?.width == 3)
        #expect(try a.get("spot", as: Point.self)?.x == 0.9)
        let none = try #require(try c.fetch(FetchRequest("Car", predicate: "name == 'c'")).first)
        #expect(try none.get("color", as: Color.self) == nil)
        // The column holds exactly the transformer's bytes, not the binary form of a Value.
        let car = try #require(model.resolved["Car"])
        func column(_ key: String) throws -> String {
            PersistentStore.q(try #require(car.attributes.first { $0.name == key }?.column))
        }
        let rows = try store.query(
            "SELECT \(try column("color")), \(try column("swatch")) FROM \(PersistentStore.q(car.table)) WHERE name = 'a'"
        )
        let expected = try TransformerSample.ColorTransformer().transformedValue(Color(red: 0.9, green: 0.5, blue: 0))
        #expect(rows == [[.blob([UInt8](expected)), .blob(Array("3".utf8))]])
        // Saved again unchanged, then changed: the stored bytes follow.
        try a.setValue(Color(red: 0.1, green: 0.1, blue: 0.1, alpha: 0.5), forKey: "color")
        try c.save()
        let again = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        let back = try #require(try again.fetch(FetchRequest("Car", predicate: "name == 'a'")).first)
        #expect(try back.get("color", as: Color.self)?.alpha == 0.5)
    }

    @Test func aModelFileNamesTheTransformer() throws {
        let json = #"""
            {"entities": [{"name": "Car", "attributes": [
                {"name": "color", "type": "transformable", "valueTransformerName": "ColorTransformer"},
                {"name": "extra", "type": "transformable"}]}]}
            """#
        let model = try ManagedObjectModel(json: Data(json.utf8))
        let car = try #require(model.entity(named: "Car"))
        #expect(car.attributes.map(\.valueTransformerName) == ["ColorTransformer", nil])
        #expect(model.jsonString.contains(#""valueTransformerName" : "ColorTransformer""#))
        #expect(try ManagedObjectModel(json: Data(model.jsonString.utf8)) == model)
        // The store opens with it and stores a color through the transformer.
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: model))
        try c.insert("Car").setValue(Color(red: 0, green: 1, blue: 0), forKey: "color")
        try c.save()
    }

    @Test func changeTrackingComparesTheTransformersBytes() throws {
        let path = Fixtures.temporaryPath()
        let model = try Self.seeded(path)
        let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        let a = try #require(try c.fetch(FetchRequest("Car", predicate: "name == 'a'")).first)
        try a.setValue("a2", forKey: "name")
        #expect(Set(a.changedValues.keys) == ["name"])
        // Another instance with the same components makes the same bytes: no change.
        try a.setValue(Color(red: 0.9, green: 0.5, blue: 0), forKey: "color")
        #expect(Set(a.changedValues.keys) == ["name"])
        try a.setValue(Color(red: 0.8, green: 0.5, blue: 0), forKey: "color")
        #expect(Set(a.changedValues.keys) == ["name", "color"])
    }

    @Test func aDeletesTombstoneKeepsTheTransformersBytes() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Car",
                attributes: [
                    AttributeDescription(
                        "color", .transformable, preservesValueInHistoryOnDeletion: true,
                        valueTransformerName: "ColorTransformer")
                ])
        ])
        let s = try PersistentStore.inMemory(model: model, historyTracking: true)
        let c = ManagedObjectContext(store: s)
        let car = try c.insert("Car")
        let color = Color(red: 0.25, green: 0.5, blue: 0.75)
        try car.setValue(color, forKey: "color")
        try c.save()
        try c.delete(car)
        try c.save()
        let gone = try #require(try s.history(after: nil).last?.changes.first)
        let bytes = try TransformerSample.ColorTransformer().transformedValue(color)
        #expect(gone.kind == .delete && gone.tombstone == ["color": .data(bytes)])
    }

    @Test func aTransformerOnAnotherTypeOrWithADefaultIsAModelError() {
        let cases: [(AttributeDescription, String)] = [
            (
                AttributeDescription("shade", .string, valueTransformerName: "ColorTransformer"),
                "a value transformer ('ColorTransformer') applies to transformable attributes, not string"
            ),
            (
                AttributeDescription(
                    "shade", .transformable, defaultValue: .integer(1), valueTransformerName: "ColorTransformer"),
                "an attribute with a value transformer ('ColorTransformer') has no default"
            ),
        ]
        for (attribute, message) in cases {
            #expect { _ = try Self.model([attribute]) } throws: { error in "\(error)".contains(message) }
        }
    }

    @Test func aModelNamingAnUnusableTransformerFailsWhenTheStoreOpens() throws {
        let unknown = "Missing\(UUID().uuidString.prefix(8))"
        let cases: [(AttributeDescription, String)] = [
            (
                AttributeDescription("shade", .transformable, valueTransformerName: unknown),
                "Car.shade: no value transformer is registered under the name '\(unknown)'"
            ),
            (
                AttributeDescription("shade", .transformable, valueTransformerName: "OneWayTransformer"),
                "does not allow reverse transformation"
            ),
        ]
        for (attribute, message) in cases {
            let model = try Self.model([attribute])
            #expect { _ = try PersistentStore.inMemory(model: model) } throws: { error in
                (error as? StoreError)?.kind == .model && "\(error)".contains(message)
            }
        }
        // Registered, the same model opens.
        AttributeTransformers.setValueTransformer(TransformerSample.ColorTransformer(), forName: unknown)
        defer { AttributeTransformers.setValueTransformer(nil, forName: unknown) }
        #expect(AttributeTransformers.names.contains(unknown))
        let model = try Self.model([AttributeDescription("shade", .transformable, valueTransformerName: unknown)])
        _ = try PersistentStore.inMemory(model: model)
    }

    @Test func aValueTheTransformerDoesNotTakeIsATypeMismatchAtSetValue() throws {
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: try Self.model()))
        let car = try c.insert("Car")
        try car.setValue(Color(red: 1, green: 0, blue: 0), forKey: "color")
        let cases: [(Any, String)] = [
            ("red", "a String is not a Color, the type of the value transformer 'ColorTransformer'"),
            (Swatch(width: 1), "a Swatch is not a Color"),
            (Color(red: 2, green: 0, blue: 0), "the value transformer 'ColorTransformer' refused"),
        ]
        for (value, message) in cases {
            #expect { try car.setValue(value, forKey: "color") } throws: { error in
                (error as? StoreError)?.kind == .typeMismatch && "\(error)".contains("'color': \(message)")
            }
        }
        // The typed setters go through the transformer too.
        #expect(throws: StoreError.self) { try car.setValue(1.5, forKey: "color") }
        #expect(throws: StoreError.self) { try car.setValue("x", forKey: "color") }
        // Nothing changed: the first color is still there.
        #expect(try car.get("color", as: Color.self)?.red == 1)
        try car.setValue(nil, forKey: "color")
        #expect(try car.get("color", as: Color.self) == nil)
    }

    @Test func aNonCodableValueWithoutATransformerIsATypeMismatchNotAReflection() throws {
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: try Self.model()))
        let car = try c.insert("Car")
        for value in [
            Swatch(width: 1) as Any, [Swatch(width: 1)], ["k": Swatch(width: 1)], Color(red: 0, green: 0, blue: 0),
        ] {
            #expect { try car.setValue(value, forKey: "extra") } throws: { error in
                let text = "\(error)"
                return (error as? StoreError)?.kind == .typeMismatch && text.contains("'extra'")
                    && (text.contains("a Swatch cannot be stored") || text.contains("a Color cannot be stored"))
            }
        }
        #expect(car["extra"] == .null)
        // A transformed value moved to an attribute without a transformer is refused the same way.
        let other = try c.insert("Car")
        try other.setValue(Swatch(width: 4), forKey: "swatch")
        #expect(throws: StoreError.self) { try car.setValue(other["swatch"], forKey: "extra") }
        // Codable values are still stored through their encoding, kinds kept.
        try car.setValue(Point(x: 1, y: 2.5), forKey: "extra")
        let extra = try #require(car["extra"])
        #expect(extra.isIdentical(to: .dictionary(["x": .double(1), "y": .double(2.5)])))
    }

    /// Memory's outcome for `text` over every stored car, by name.
    static func memory(_ text: String, _ c: ManagedObjectContext) throws -> Result<Set<String>, EvaluationError> {
        let p = try SiftPredicate(text)
        let cars = try c.fetch(FetchRequest("Car")).map { ($0, try $0.get("name", as: String.self) ?? "") }
        do throws(EvaluationError) {
            var out: Set<String> = []
            for (o, name) in cars where try p.evaluate(with: o) { out.insert(name) }
            return .success(out)
        } catch { return .failure(error) }
    }

    static let predicates = [
        "color.red > 0.5", "color.green == 0.5 AND name != 'b'", "color == nil", "color != nil AND color.alpha == 1",
        "spot.x < 0.5", "spot.y == 1 AND spot.x > 0.5", "swatch.width > 1", "name == 'a' AND swatch.width > 1",
        "color.hue > 1", "spot.z == 1",
    ]

    /// What memory answers for some of them, so the comparison is not of two empty answers.
    static let expected: [String: Set<String>] = [
        "color.red > 0.5": ["a", "d"], "color == nil": ["c"], "spot.y == 1 AND spot.x > 0.5": ["a"],
        "color.green == 0.5 AND name != 'b'": ["a", "d"],
    ]

    @Test(arguments: predicates)
    func storeFetchesGiveMemorysRowsOrMemorysError(_ text: String) throws {
        let path = Fixtures.temporaryPath()
        let model = try Self.seeded(path)
        let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        // An unsaved car takes part too (pending changes).
        let d = try c.insert("Car")
        try d.setValue("d", forKey: "name")
        try d.setValue(Color(red: 0.7, green: 0.5, blue: 0), forKey: "color")
        let request = try FetchRequest("Car", predicate: text)
        switch try Self.memory(text, c) {
        case .success(let names):
            let fetched = Set(try c.fetch(request).map { try $0.get("name", as: String.self) ?? "" })
            #expect(fetched == names, "\(text)")
            #expect(try c.count(for: request) == names.count, "\(text)")
            if let known = Self.expected[text] { #expect(names == known, "\(text): \(names)") }
        case .failure(let error):
            #expect { _ = try c.fetch(request) } throws: { thrown in
                guard let e = thrown as? StoreError else { return false }
                return e.kind == .evaluation && e.location == error.location && e.location != nil
                    && e.message.contains(error.message)
            }
        }
    }

    @Test func aValueWithNoKeysIsAnUnknownKeyErrorAtTheKey() throws {
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: try Self.model()))
        let car = try c.insert("Car")
        try car.setValue(Swatch(width: 2), forKey: "swatch")
        try car.setValue(Point(x: 3, y: 4), forKey: "spot")
        #expect(try SiftPredicate("spot.x == 3 AND spot.y > 3.5").evaluate(with: car))
        #expect { _ = try SiftPredicate("name == nil AND swatch.width > 1").evaluate(with: car) } throws: { error in
            guard let e = error as? EvaluationError, case .unknownKey(let key, let type) = e.kind else { return false }
            return key == "width" && type.contains("neither KeyValueCoding nor Encodable")
                && e.location != nil
        }
    }

    @Test func batchUpdatesGoThroughTheTransformer() throws {
        let path = Fixtures.temporaryPath()
        let model = try Self.seeded(path)
        let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        // A constant the transformer does not take fails; copying the attribute keeps its bytes.
        var wrong = try BatchUpdateRequest("Car", predicate: "name == 'a'")
        wrong.propertiesToUpdate = ["color": .constant(.string("red"))]
        #expect(throws: StoreError.self) { try c.execute(wrong) }
        var copy = try BatchUpdateRequest("Car", predicate: "name == 'b'")
        copy.propertiesToUpdate = ["color": .expression("color")]
        #expect(try c.execute(copy).count == 1)
        let again = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        let b = try #require(try again.fetch(FetchRequest("Car", predicate: "name == 'b'")).first)
        #expect(try b.get("color", as: Color.self)?.red == 0.2)
    }
}
