import Foundation
import SiftEvaluation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct SmokeTests {
    @Test func insertSaveFetch() throws {
        let model = try Fixtures.companyModel()
        let path = Fixtures.temporaryPath()
        let store = try PersistentStore(model: model, path: path)
        let c = ManagedObjectContext(store: store)
        let ann = try c.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        try ann.setValue(41, forKey: "age")
        let oslo = try c.insert("Address")
        try oslo.setValue("Oslo", forKey: "city")
        try ann.setValue(oslo, forKey: "address")
        let rex = try c.insert("Pet")
        try rex.setValue("Rex", forKey: "name")
        try rex.setValue(ann, forKey: "owner")
        #expect(try ann.get("pets", as: [ManagedObject].self)?.count == 1)
        try c.save()
        #expect(!ann.objectID.isTemporaryID)

        let c2 = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        let found = try c2.fetch(
            try FetchRequest("Person", predicate: "address.city == 'Oslo' AND ANY pets.name == 'Rex'"))
        #expect(found.count == 1)
        #expect(try found.first?.get("name", as: String.self) == "Ann")
        #expect(try c2.count(for: FetchRequest("Animal")) == 1)
        let e = try c2.explain(try FetchRequest("Person", predicate: "name MATCHES 'A.*' AND FUNCTION(name, 'x') == 1"))
        print(e)
    }
}
