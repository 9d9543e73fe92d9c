// Xcode model folders written by the tests from the documented format (an `.xcdatamodeld` bundle of
// versions, each a folder with its `contents` XML, and `.xccurrentversion`; or a bare
// `.xcdatamodel`), shared by the store's tests and the command line's.

import Foundation

/// Model folders written into a temporary directory.
package struct XcodeModelFolder {
    package let root: URL

    package init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("sift-xcdatamodel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    package func remove() { try? FileManager.default.removeItem(at: root) }

    /// A bundle `name.xcdatamodeld` with `versions` (name → contents) and, when given, the
    /// `.xccurrentversion` naming `current`.
    @discardableResult
    package func bundle(_ name: String, _ versions: [String: String], current: String? = nil) throws -> URL {
        let bundle = root.appendingPathComponent(name + ".xcdatamodeld")
        for (version, contents) in versions {
            try write(contents, to: bundle.appendingPathComponent(version + ".xcdatamodel/contents"))
        }
        if let current {
            try write(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                \t<key>_XCCurrentVersionName</key>
                \t<string>\(current).xcdatamodel</string>
                </dict>
                </plist>

                """, to: bundle.appendingPathComponent(".xccurrentversion"))
        }
        return bundle
    }

    /// A bare `name.xcdatamodel` folder.
    package func bare(_ name: String, _ contents: String) throws -> URL {
        let folder = root.appendingPathComponent(name + ".xcdatamodel")
        try write(contents, to: folder.appendingPathComponent("contents"))
        return folder
    }

    package func write(_ text: String, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }
}

/// A `contents` document around `body`, as Xcode writes it.
package func xcodeContents(_ body: String) -> String {
    """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23B81" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
    \(body)
    </model>

    """
}
