// Keyed archives as transformable values (issue 31): the transformer registered under
// `NSSecureUnarchiveFromData` and `NSKeyedUnarchiveFromData` round-trips every allowed type, writes
// archives naming Foundation's classes as Apple's archiver does, reads an archive written here from
// the format (an XML property list with `CF$UID` references, a mutable array, as apps write them),
// and refuses other classes by name; an Xcode model's transformable attribute naming no transformer
// uses it, and in a Core Data store an archive of an unknown class is kept through saves.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct KeyedArchiveTransformerTests {
    let transformer = SecureUnarchiveFromDataTransformer()

    /// A keyed archive as a property list: `objects` after `$null`, the root at index 1.
    static func archive(_ objects: [Any]) throws -> Data {
        let plist: [String: Any] = [
            "$archiver": "NSKeyedArchiver", "$version": 100000, "$top": ["root": ["CF$UID": 1]],
            "$objects": ["$null"] + objects,
        ]
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
    }

    @Test func everyAllowedTypeRoundTripsWithItsSwiftType() throws {
        let uuid = UUID()
        let value: [String: Any] = [
            "name": "Ann", "count": 3, "ratio": 2.5, "on": true, "off": false,
            "when": Date(timeIntervalSinceReferenceDate: 12.25), "bytes": Data([0, 1, 255]),
            "tags": ["a", "b"], "ids": Set([1, 2]), "home": URL(string: "https://example.com/a?b=c")!,
            "uuid": uuid, "none": NSNull(), "nested": ["deep": [1.5, "x"]],
        ]
        let back = try #require(
            try transformer.reverseTransformedValue(transformer.transformedValue(value)) as? [String: Any])
        #expect(back["name"] as? String == "Ann")
        #expect(back["count"] as? Int == 3)
        #expect(back["ratio"] as? Double == 2.5)
        #expect(back["on"] as? Bool == true)
        #expect(back["off"] as? Bool == false)
        #expect(back["when"] as? Date == Date(timeIntervalSinceReferenceDate: 12.25))
        #expect(back["bytes"] as? Data == Data([0, 1, 255]))
        #expect(back["tags"] as? [String] == ["a", "b"])
        #expect(back["ids"] as? Set<AnyHashable> == [1, 2])
        #expect(back["home"] as? URL == URL(string: "https://example.com/a?b=c"))
        #expect(back["uuid"] as? UUID == uuid)
        #expect(back["none"] is NSNull)
        let nested = try #require(back["nested"] as? [String: Any])
        let deep = try #require(nested["deep"] as? [Any])
        #expect(deep.count == 2 && deep[0] as? Double == 1.5 && deep[1] as? String == "x")
        // Sift's values archive as the same Foundation objects.
        let sift = SiftEvaluation.Value.array([.integer(7), .string("s"), .bool(true), .null])
        let fromValue = try #require(
            try transformer.reverseTransformedValue(transformer.transformedValue(sift)) as? [Any])
        #expect(fromValue[0] as? Int == 7 && fromValue[1] as? String == "s" && fromValue[2] as? Bool == true)
        #expect(fromValue[3] is NSNull)
    }

    @Test func numbersThatCompareEqualKeepTheirOwnTypes() throws {
        let value: [Any] = [true, 1, 1.0, false, 0, 0.0, -7, Int64.max, Int64.min, 3.25]
        let back = try #require(try transformer.reverseTransformedValue(transformer.transformedValue(value)) as? [Any])
        #expect(back.count == value.count)
        #expect(back[0] as? Bool == true && back[3] as? Bool == false)
        #expect(back[1] as? Int == 1 && back[4] as? Int == 0 && back[6] as? Int == -7)
        #expect(back[2] as? Double == 1.0 && back[5] as? Double == 0.0 && back[9] as? Double == 3.25)
        #expect(back[7] as? Int == Int.max && back[8] as? Int == Int.min)
    }

    @Test func largeArchivesAndEveryStringRoundTrip() throws {
        // 400 elements: more than 255 objects (two-byte references) and counts past the marker's 15.
        let strings = (0..<400).map { i in
            i % 3 == 0 ? "ascii \(i)" : i % 3 == 1 ? "Zoë ✓ \(i) 🎉" : "nul\u{0}ctl\u{1}\(i)"
        }
        let bytes = Data((0..<300).map { UInt8($0 % 256) })
        let back = try #require(
            try transformer.reverseTransformedValue(transformer.transformedValue(["s": strings, "d": bytes]))
                as? [String: Any])
        #expect(back["s"] as? [String] == strings)
        #expect(back["d"] as? Data == bytes)
    }

    @Test func theArchiveNamesFoundationsClassesAsApplesArchiverDoes() throws {
        let data = try transformer.transformedValue(["list": ["x"], "when": Date(timeIntervalSinceReferenceDate: 0)])
        let plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        #expect(plist["$archiver"] as? String == "NSKeyedArchiver")
        #expect(plist["$version"] as? Int == 100000)
        let names = Set(
            (plist["$objects"] as? [Any] ?? []).compactMap { ($0 as? [String: Any])?["$classname"] as? String })
        #expect(names == ["NSDictionary", "NSArray", "NSDate"], "\(names)")
    }

    @Test func anArchiveWrittenFromTheFormatIsRead() throws {
        let uid = { (n: Int) in ["CF$UID": n] }
        let data = try Self.archive([
            ["NS.objects": [uid(2), uid(3), uid(4)], "$class": uid(5)], "red", 3, true,
            ["$classname": "NSMutableArray", "$classes": ["NSMutableArray", "NSArray", "NSObject"]],
        ])
        let back = try #require(try transformer.reverseTransformedValue(data) as? [Any])
        #expect(back.count == 3)
        #expect(back[0] as? String == "red" && back[1] as? Int == 3 && back[2] as? Bool == true)
    }

    @Test func anArchiveOfAnotherClassOrNotAnArchiveIsAnErrorNamingWhy() throws {
        let color = try Self.archive([
            ["UIRed": 1.0, "$class": ["CF$UID": 2]], ["$classname": "UIColor", "$classes": ["UIColor", "NSObject"]],
        ])
        #expect {
            _ = try transformer.reverseTransformedValue(color)
        } throws: { e in
            (e as? TransformerError)?.kind == .reverse
                && (e as? TransformerError)?.message.contains("a UIColor") == true
        }
        #expect {
            _ = try transformer.reverseTransformedValue(Data("not an archive".utf8))
        } throws: { e in (e as? TransformerError)?.message.contains("not a keyed archive") == true }
        struct Point { var x = 1 }
        #expect {
            _ = try transformer.transformedValue(["p": Point()])
        } throws: { e in
            let t = e as? TransformerError
            return t?.kind == .transform && t?.message.contains("the value[\"p\"] is a Point") == true
        }
    }

    @Test func bothOfFoundationsNamesAreRegisteredFromTheStart() {
        #expect(AttributeTransformers.valueTransformer(forName: "NSSecureUnarchiveFromData") != nil)
        #expect(AttributeTransformers.valueTransformer(forName: "NSKeyedUnarchiveFromData") != nil)
    }

    /// An Xcode model with a transformable attribute naming no transformer, and one naming the secure one.
    static let contents = xcodeContents(
        """
        <entity name="Note" representedClassName="Note" syncable="YES">
            <attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="tags" optional="YES" attributeType="Transformable"/>
            <attribute name="settings" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData"/>
        </entity>
        """)

    @Test func aCoreDataStoresTransformablesAreKeyedArchivesThroughSaveFetchAndPredicates() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let model = try ManagedObjectModel(contentsOf: try folder.bare("Notes", Self.contents))
        let tags = try #require(model.entity(named: "Note")?.attributes.first { $0.name == "tags" })
        #expect(tags.valueTransformerName == "NSKeyedUnarchiveFromData")
        let url = folder.root.appendingPathComponent("Notes.sqlite")
        let c = ManagedObjectContext(store: try PersistentStore(coreDataStoreAt: url, model: model, create: true))
        for (title, theme) in [("a", "dark"), ("b", "light")] {
            let n = try c.insert("Note")
            try n.setValue(title, forKey: "title")
            try n.setValue(["home", title], forKey: "tags")
            try n.setValue(["theme": theme, "fontSize": 12], forKey: "settings")
        }
        try c.save()
        let db = try SQLiteConnection(path: url.path)
        for row in try db.query("SELECT ZTAGS, ZSETTINGS FROM ZNOTE") {
            for case .blob(let b) in row {
                let plist = try PropertyListSerialization.propertyList(from: Data(b), format: nil) as? [String: Any]
                #expect(plist?["$archiver"] as? String == "NSKeyedArchiver")
            }
        }
        let again = ManagedObjectContext(store: try PersistentStore(coreDataStoreAt: url, model: model))
        let a = try #require(try again.fetch(FetchRequest("Note", predicate: "title == 'a'")).first)
        #expect(try a.get("tags", as: [Any].self)?.compactMap { $0 as? String } == ["home", "a"])
        // Predicates read the archived dictionary's keys.
        let dark = try again.fetch(
            FetchRequest("Note", predicate: "settings.theme == 'dark' AND settings.fontSize == 12"))
        #expect(try dark.map { try $0.get("title", as: String.self) } == ["a"])
    }

    @Test func anArchiveOfAnUnknownClassIsKeptAndReadingItSaysWhy() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let model = try ManagedObjectModel(contentsOf: try folder.bare("Notes", Self.contents))
        let url = folder.root.appendingPathComponent("Notes.sqlite")
        let store = try PersistentStore(coreDataStoreAt: url, model: model, create: true)
        let color = try Self.archive([
            ["UIRed": 1.0, "$class": ["CF$UID": 2]], ["$classname": "UIColor", "$classes": ["UIColor", "NSObject"]],
        ])
        let db = try SQLiteConnection(path: url.path)
        _ = try db.query(
            "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZTAGS) VALUES (1, 1, 1, 'c', ?)", [.blob([UInt8](color))])
        _ = try db.query("UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_ENT = 1")
        let c = ManagedObjectContext(store: store)
        let note = try #require(try c.fetch(FetchRequest("Note")).first)
        #expect(try note.get("title", as: String.self) == "c")
        #expect {
            _ = try note.get("tags", as: [Any].self)
        } throws: { e in
            let s = e as? StoreError
            return s?.kind == .model && s?.message.contains("a UIColor") == true
                && s?.message.contains("bytes are kept as stored") == true
        }
        try note.setValue("d", forKey: "title")
        try c.save()
        #expect(try db.query("SELECT ZTITLE, ZTAGS FROM ZNOTE") == [[.text("d"), .blob([UInt8](color))]])
    }
}
