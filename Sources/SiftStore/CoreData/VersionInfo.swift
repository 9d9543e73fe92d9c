// A compiled model's version information (`VersionInfo.plist` in the `.momd` folder Xcode builds
// from an `.xcdatamodeld`): Apple's entity version hashes for each model version, which Sift cannot
// compute (their recipe is not documented). Written into a Core Data store's metadata, they let Core
// Data open a store Sift laid out, or migrated, as a store of that version, without a migration.
// The keys (`NSManagedObjectModel_CurrentVersionName`, `NSManagedObjectModel_VersionHashes`,
// `NSManagedObjectModel_VersionChecksums`) are the ones Xcode's model compiler writes.

import Foundation

/// The version hashes of a compiled Core Data model (`VersionInfo.plist` in its `.momd` folder).
///
/// ```swift
/// let info = try CoreDataVersionInfo(contentsOf: appBundle.appendingPathComponent("Garage.momd"))
/// let store = try PersistentStore(coreDataStoreAt: storeURL, model: model, create: true)
/// try store.setVersionHashes(from: info)    // the current version's hashes
/// ```
public struct CoreDataVersionInfo: Sendable, Hashable {
    /// The version Xcode marked current (`NSManagedObjectModel_CurrentVersionName`), if given.
    public var currentVersionName: String?
    /// Each version's entity hashes: version name → entity name → hash (32 bytes).
    public var versionHashes: [String: [String: Data]]
    /// Each version's model checksum (`NSManagedObjectModel_VersionChecksums`), where given.
    public var versionChecksums: [String: String]

    /// Reads `VersionInfo.plist`, given the file itself or the `.momd` folder holding it.
    public init(contentsOf url: URL) throws(StoreError) {
        var file = url
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            file = url.appendingPathComponent("VersionInfo.plist")
        }
        let plist: [String: Any]
        do {
            let data = try Data(contentsOf: file)
            guard let p = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] else {
                throw StoreError(.model, "\(file.path): not a dictionary property list")
            }
            plist = p
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.model, "cannot read '\(file.path)': \(error.localizedDescription)")
        }
        try self.init(plist: plist, path: file.path)
    }

    /// The information in a `VersionInfo.plist` read as a dictionary.
    init(plist: [String: Any], path: String) throws(StoreError) {
        guard let versions = plist["NSManagedObjectModel_VersionHashes"] as? [String: Any] else {
            throw StoreError(
                .model, "\(path): no NSManagedObjectModel_VersionHashes dictionary (not a VersionInfo.plist)")
        }
        var hashes: [String: [String: Data]] = [:]
        for (version, entities) in versions {
            guard let entities = entities as? [String: Any] else {
                throw StoreError(.model, "\(path): version '\(version)' has no dictionary of entity hashes")
            }
            var out: [String: Data] = [:]
            for (entity, hash) in entities {
                guard let hash = hash as? Data, hash.count == 32 else {
                    throw StoreError(
                        .model,
                        "\(path): the hash of entity '\(entity)' in version '\(version)' is not 32 bytes of data")
                }
                out[entity] = hash
            }
            hashes[version] = out
        }
        versionHashes = hashes
        currentVersionName = plist["NSManagedObjectModel_CurrentVersionName"] as? String
        versionChecksums = (plist["NSManagedObjectModel_VersionChecksums"] as? [String: Any] ?? [:])
            .compactMapValues { $0 as? String }
    }

    /// The name of `version`, or of the current version when nil (the only one, when none is
    /// marked current).
    func versionName(_ version: String?) throws(StoreError) -> String {
        if let version {
            guard versionHashes[version] != nil else {
                let known = versionHashes.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
                throw StoreError(.model, "VersionInfo.plist has no version '\(version)' (it has \(known))")
            }
            return version
        }
        if let current = currentVersionName, versionHashes[current] != nil { return current }
        if versionHashes.count == 1, let only = versionHashes.keys.first { return only }
        throw StoreError(.model, "VersionInfo.plist names no current version: pass the version's name")
    }
}

extension PersistentStore {
    /// Writes Apple's version hashes of a model version into a Core Data store's metadata
    /// (`NSStoreModelVersionHashes`, and `NSStoreModelVersionChecksumKey` when the version
    /// information has the version's checksum), so that Core Data opens the store as one of that
    /// version without a migration. The version's entities must be exactly the store's model's
    /// (a ``StoreError/Kind/modelMismatch`` error names each difference); every other metadata key
    /// is kept, except `NSStoreModelVersionHashesDigest`, a digest of the old hashes whose recipe
    /// is not documented, which is removed.
    ///
    /// ```swift
    /// try store.setVersionHashes(from: try CoreDataVersionInfo(contentsOf: momd), version: "Garage 2")
    /// ```
    public func setVersionHashes(from info: CoreDataVersionInfo, version: String? = nil) throws(StoreError) {
        guard model.layout == .coreData else {
            throw StoreError(.invalidOperation, "the store is not a Core Data store (it has no Z_METADATA)")
        }
        let name = try info.versionName(version)
        let hashes = info.versionHashes[name] ?? [:]
        let modelEntities = Set(model.entities.map(\.name))
        let differences =
            modelEntities.subtracting(hashes.keys).sorted().map { "version '\(name)' has no hash for entity '\($0)'" }
            + Set(hashes.keys).subtracting(modelEntities).sorted().map {
                "version '\(name)' has entity '\($0)', which the store's model does not"
            }
        guard differences.isEmpty else {
            throw StoreError(
                .modelMismatch,
                "the version hashes are not the store's model's: \(differences.joined(separator: "; "))",
                failures: differences)
        }
        try setCoreDataMetadata([
            "NSStoreModelVersionHashes": hashes, "NSStoreModelVersionHashesVersion": 3,
            "NSStoreModelVersionChecksumKey": info.versionChecksums[name], "NSStoreModelVersionHashesDigest": nil,
        ])
    }
}
