// External binary data: Core Data keeps large values of an attribute that allows external storage
// in files of a hidden folder beside the store (`.<StoreName>_SUPPORT/_EXTERNAL_DATA/`) and only a
// reference in the row. What that reference looks like is not documented, so Sift cannot follow
// it; reading the row's bytes as the value would give a wrong value without an error. A store
// with such files is refused when it opens, naming the folder and how many files it holds.

import Foundation

enum ExternalData {
    /// The folder Core Data keeps a store's external values in.
    static func folder(ofStoreAt url: URL) -> URL {
        let name = url.deletingPathExtension().lastPathComponent
        return url.deletingLastPathComponent().appendingPathComponent(".\(name)_SUPPORT")
            .appendingPathComponent("_EXTERNAL_DATA")
    }

    /// Refuses a store whose external-data folder holds files.
    static func check(storeAt url: URL) throws(StoreError) {
        let folder = folder(ofStoreAt: url)
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter {
            !$0.hasPrefix(".")
        }
        guard !files.isEmpty else { return }
        throw StoreError(
            .invalidOperation,
            "'\(url.path)' keeps \(files.count) value\(files.count == 1 ? "" : "s") of external binary data in '\(folder.path)', which Sift cannot read: where Core Data's rows point at those files is not documented, and reading the rows alone would give wrong values"
        )
    }
}
