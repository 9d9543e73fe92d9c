// Core Data's derived-attribute triggers (issue 31): a store whose tables have triggers that call
// `NSCoreDataDATriggerUpdatedAffectedObjectValue` takes Sift's saves, since every store connection
// registers that function (inert: Sift computes derived values itself at save). The trigger here
// is written by the test in the shape our reference notes record (an update of the derived column,
// then a call of the function); without the function a write fails "no such function".

import Foundation
import SiftSQL
import SiftSQLite
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct CoreDataStoreTriggerTests {
    static let contents = xcodeContents(
        """
        <entity name="Item" representedClassName="Item" syncable="YES">
            <attribute name="title" optional="YES" attributeType="String"/>
            <relationship name="list" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="List" inverseName="items" inverseEntity="List"/>
        </entity>
        <entity name="List" representedClassName="List" syncable="YES">
            <attribute name="name" optional="YES" attributeType="String"/>
            <attribute name="itemCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="items.@count" usesScalarValueType="YES"/>
            <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="list" inverseEntity="Item"/>
        </entity>
        """)

    /// A trigger keeping `List.itemCount` on each insert into ZITEM, telling Core Data through its function.
    static let trigger = """
        CREATE TRIGGER ZQ_ZLIST_TRIGGER_ZITEMCOUNT_INSERT AFTER INSERT ON ZITEM FOR EACH ROW
        WHEN NEW.ZLIST IS NOT NULL BEGIN
            UPDATE ZLIST SET ZITEMCOUNT = (SELECT COUNT(*) FROM ZITEM WHERE ZLIST = NEW.ZLIST) WHERE Z_PK = NEW.ZLIST;
            SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('ZLIST', 2, NEW.ZLIST, 'itemCount',
                (SELECT ZITEMCOUNT FROM ZLIST WHERE Z_PK = NEW.ZLIST));
        END
        """

    @Test func savesFireTheDerivedAttributeTriggersAndKeepTheirValues() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let model = try ManagedObjectModel(contentsOf: try folder.bare("Lists", Self.contents))
        let url = folder.root.appendingPathComponent("Lists.sqlite")
        let store = try PersistentStore(coreDataStoreAt: url, model: model, create: true)
        let raw = try SQLiteConnection(path: url.path)
        try raw.execute(Self.trigger)
        // Without the function, a write that fires the trigger fails.
        _ = try raw.query("INSERT INTO ZLIST (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (100, 2, 1, 'raw')")
        #expect {
            _ = try raw.query("INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZLIST) VALUES (100, 1, 1, 100)")
        } throws: { e in (e as? SQLiteError)?.message.contains("no such function") == true }
        _ = try raw.query("DELETE FROM ZLIST")

        let c = ManagedObjectContext(store: store)
        let list = try c.insert("List")
        try list.setValue("groceries", forKey: "name")
        for title in ["milk", "eggs"] {
            let item = try c.insert("Item")
            try item.setValue(title, forKey: "title")
            try item.setValue(list, forKey: "list")
        }
        try c.save()
        #expect(try raw.query("SELECT ZNAME, ZITEMCOUNT FROM ZLIST") == [[.text("groceries"), .integer(2)]])
        // A later insert fires the trigger again, through Sift's save.
        let more = try c.insert("Item")
        try more.setValue("bread", forKey: "title")
        try more.setValue(list, forKey: "list")
        try c.save()
        #expect(try raw.query("SELECT ZITEMCOUNT FROM ZLIST") == [[.integer(3)]])
        let again = ManagedObjectContext(store: try PersistentStore(coreDataStoreAt: url, model: model))
        let fetched = try again.fetch(FetchRequest("List", predicate: "itemCount == 3"))
        #expect(try fetched.map { try $0.get("name", as: String.self) } == ["groceries"])
    }
}
