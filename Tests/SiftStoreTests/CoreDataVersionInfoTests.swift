// A compiled model's VersionInfo.plist (issue 31): written by the test with the keys Xcode's model
// compiler uses, read from the file or its .momd folder, and its version's entity hashes written into
// a Core Data store's metadata (other keys kept, the stale digest removed); a version whose entities
// are not the model's, a hash that is not 32 bytes, an unknown version are clear errors.

import Foundation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct CoreDataVersionInfoTests {
    static func hash(_ seed: UInt8) -> Data {
        Data((0..<32).map { UInt8(truncatingIfNeeded: Int($0) * 7 + Int(seed)) })
    }

    /// A .momd folder with a VersionInfo.plist of two versions, the second current.
    static func momd(in folder: XcodeModelFolder, _ v2: [String: Any]? = nil) throws -> URL {
        let momd = folder.root.appendingPathComponent("Garage.momd")
        try FileManager.default.createDirectory(at: momd, withIntermediateDirectories: true)
        let plist: [String: Any] = [
            "NSManagedObjectModel_CurrentVersionName": "Garage 2",
            "NSManagedObjectModel_VersionHashes": [
                "Garage": ["Car": hash(1)], "Garage 2": v2 ?? ["Car": hash(2), "Person": hash(3)],
            ],
            "NSManagedObjectModel_VersionChecksums": ["Garage 2": "c2VjcmV0LWNoZWNrc3Vt"],
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        try data.write(to: momd.appendingPathComponent("VersionInfo.plist"))
        return momd
    }

    static func store(in folder: XcodeModelFolder) throws -> PersistentStore {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Car", attributes: [AttributeDescription("make", .string)]),
            EntityDescription("Person", attributes: [AttributeDescription("name", .string)]),
        ])
        let url = folder.root.appendingPathComponent("Garage.sqlite")
        return try PersistentStore(coreDataStoreAt: url, model: model, create: true)
    }

    @Test func theCurrentVersionsHashesGoIntoTheMetadataAndOtherKeysStay() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let info = try CoreDataVersionInfo(contentsOf: try Self.momd(in: folder))
        #expect(info.currentVersionName == "Garage 2" && info.versionHashes.count == 2)
        // The plist file itself reads the same.
        let file = try Self.momd(in: folder).appendingPathComponent("VersionInfo.plist")
        #expect(try CoreDataVersionInfo(contentsOf: file) == info)
        let store = try Self.store(in: folder)
        try store.setCoreDataMetadata(["AppKey": "kept", "NSStoreModelVersionHashesDigest": "stale"])
        let uuid = try #require(try store.coreDataMetadata()["NSStoreUUID"] as? String)
        try store.setVersionHashes(from: info)
        let metadata = try store.coreDataMetadata()
        #expect(
            metadata["NSStoreModelVersionHashes"] as? [String: Data] == ["Car": Self.hash(2), "Person": Self.hash(3)])
        #expect(metadata["NSStoreModelVersionChecksumKey"] as? String == "c2VjcmV0LWNoZWNrc3Vt")
        #expect(metadata["NSStoreModelVersionHashesDigest"] == nil)
        #expect(metadata["AppKey"] as? String == "kept" && metadata["NSStoreUUID"] as? String == uuid)
        // The store still opens with its model (matched by schema, not by these hashes).
        let reopened = try PersistentStore(coreDataStoreAt: URL(fileURLWithPath: store.path!), model: store.model)
        #expect(try reopened.coreDataMetadata()["NSStoreModelVersionHashes"] as? [String: Data] != nil)
    }

    @Test func aVersionThatIsNotTheModelsOrABadPlistIsAClearError() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let store = try Self.store(in: folder)
        let info = try CoreDataVersionInfo(contentsOf: try Self.momd(in: folder))
        let old = #expect(throws: StoreError.self) { try store.setVersionHashes(from: info, version: "Garage") }
        #expect(old?.kind == .modelMismatch)
        #expect(old?.failures.map(\.message) == ["version 'Garage' has no hash for entity 'Person'"])
        let unknown = #expect(throws: StoreError.self) { try store.setVersionHashes(from: info, version: "Garage 9") }
        #expect(unknown?.message.contains("no version 'Garage 9'") == true)
        // Nothing was written by the failures.
        #expect((try store.coreDataMetadata()["NSStoreModelVersionHashes"] as? [String: Data])?.isEmpty == true)
        let extra = try CoreDataVersionInfo(
            contentsOf: try Self.momd(in: folder, ["Car": Self.hash(2), "Person": Self.hash(3), "Boat": Self.hash(4)]))
        let more = #expect(throws: StoreError.self) { try store.setVersionHashes(from: extra) }
        #expect(more?.message.contains("entity 'Boat', which the store's model does not") == true)
        let short = #expect(throws: StoreError.self) {
            try CoreDataVersionInfo(contentsOf: try Self.momd(in: folder, ["Car": Data([1, 2])]))
        }
        #expect(short?.message.contains("is not 32 bytes") == true)
        let plain = folder.root.appendingPathComponent("Other.plist")
        try PropertyListSerialization.data(fromPropertyList: ["a": 1], format: .xml, options: 0).write(to: plain)
        let notInfo = #expect(throws: StoreError.self) { try CoreDataVersionInfo(contentsOf: plain) }
        #expect(notInfo?.message.contains("not a VersionInfo.plist") == true)
    }
}
