// Reading an Xcode model: finding the version to read in an `.xcdatamodeld` bundle (the one its
// `.xccurrentversion` property list names, the only one, or one by name) or taking a bare
// `.xcdatamodel` folder, then mapping its `contents` XML (ModelXML.swift) and validating the
// entities as every model is. Errors and warnings carry the `contents` file and `line:column`, so
// a tool can point at them; a bundle from before Xcode 4 (binary `elements`/`layout`, no
// `contents`) and a compiled `.momd`/`.mom` are refused with a message saying so.

import Foundation
import SiftSyntax

/// Something an Xcode model holds that Sift did not keep, or did not keep exactly: an element or
/// attribute it does not map (a newer Xcode's, or one Sift does not support yet). The model is
/// usable; the warning says what it lacks.
///
/// ```swift
/// let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "Shop.xcdatamodeld"))
/// for w in model.warnings { print(w) }   // …/contents:12:9: warning: Item.price: … not kept
/// ```
public struct ModelWarning: Hashable, Sendable, CustomStringConvertible {
    /// The `contents` file the warning is about.
    public var file: String
    /// Where in it.
    public var location: SourceLocation
    /// The entity or property it is about (`Item`, `Item.price`; empty for the model itself).
    public var path: String
    /// What was left out, and why.
    public var message: String

    /// A warning about `path` at `location` of `file`.
    public init(file: String, location: SourceLocation, path: String, message: String) {
        self.file = file
        self.location = location
        self.path = path
        self.message = message
    }

    /// `file:line:column: warning: path: message`.
    public var description: String {
        "\(file):\(location): warning: " + (path.isEmpty ? "" : path + ": ") + message
    }
}

extension ManagedObjectModel {
    /// Reads an Xcode model: an `.xcdatamodeld` bundle (its current version, as its
    /// `.xccurrentversion` names it, or its only version; `version` picks one by name) or a bare
    /// `.xcdatamodel` folder; the model's ``version`` is the version's name (its folder's name
    /// without `.xcdatamodel`). Entities, attributes of every type with their options, relationships,
    /// uniqueness constraints and fetch request templates map onto Sift's model (the
    /// CoreDataModels article lists each element); what does not map is in ``warnings``, and is an
    /// error only where leaving it out would change what the store holds. Errors name the
    /// `contents` file and the `line:column` at fault.
    ///
    /// ```swift
    /// let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "App/Shop.xcdatamodeld"))
    /// let store = try PersistentStore.inMemory(model: model)
    /// let older = try ManagedObjectModel(contentsOf: bundleURL, version: "Shop 2")
    /// ```
    public init(contentsOf url: URL, version: String? = nil, classes: [ManagedObject.Type] = []) throws(ModelError) {
        let contents = try XcodeModelBundle.contentsFile(of: url, version: version)
        let bytes: [UInt8]
        do { bytes = Array(try Data(contentsOf: contents)) } catch {
            throw ModelError(.unreadable, "\(contents.path): cannot read the model (\(error.localizedDescription))")
        }
        let read = try ModelXML.read(bytes, file: contents.path)
        do throws(ModelError) {
            try self.init(entities: read.entities, classes: classes, configurations: read.configurations)
        } catch {
            throw read.located(error)
        }
        warnings = read.warnings
        fetchRequestTemplates = read.templates
        // The version's folder name, as `version:` takes it ("Shop 2" for "Shop 2.xcdatamodel").
        let folder = contents.deletingLastPathComponent().lastPathComponent
        let suffix = XcodeModelBundle.versionSuffix
        self.version = folder.hasSuffix(suffix) ? String(folder.dropLast(suffix.count)) : folder
    }
}

/// Finding the `contents` file of the version to read.
enum XcodeModelBundle {
    static let bundleSuffix = ".xcdatamodeld"
    static let versionSuffix = ".xcdatamodel"

    /// The `contents` file of `url`'s version `version` (nil: the current one).
    static func contentsFile(of url: URL, version: String?) throws(ModelError) -> URL {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ModelError(.unreadable, "\(url.path): no model folder here (an .xcdatamodeld or .xcdatamodel)")
        }
        let name = url.lastPathComponent
        if name.hasSuffix(".momd") || name.hasSuffix(".mom") {
            throw ModelError(
                .unreadable,
                "\(url.path): a compiled model (binary) cannot be read; give the .xcdatamodeld source it was compiled from"
            )
        }
        let isBare = name.hasSuffix(versionSuffix) || (!name.hasSuffix(bundleSuffix) && hasFile(url, "contents"))
        if isBare {
            let own = String(name.dropLast(name.hasSuffix(versionSuffix) ? versionSuffix.count : 0))
            if let version, version != own, version != name {
                throw ModelError(
                    .unreadable, "\(url.path) is the one version '\(own)'; there is no version '\(version)'")
            }
            return try versionContents(url)
        }
        let versions = versionNames(in: url)
        guard !versions.isEmpty else {
            throw ModelError(.unreadable, "\(url.path): the bundle holds no version (no *.xcdatamodel folder)")
        }
        let listed = versions.map { "'\($0)'" }.joined(separator: ", ")
        let chosen: String
        if let version {
            let wanted = version.hasSuffix(versionSuffix) ? String(version.dropLast(versionSuffix.count)) : version
            guard versions.contains(wanted) else {
                throw ModelError(.unreadable, "\(url.path) has no version '\(version)'; its versions: \(listed)")
            }
            chosen = wanted
        } else if let current = try currentVersion(of: url) {
            guard versions.contains(current) else {
                throw ModelError(
                    .unreadable,
                    "\(url.path): .xccurrentversion names version '\(current)', which the bundle does not hold; its versions: \(listed)"
                )
            }
            chosen = current
        } else if versions.count == 1 {
            chosen = versions[0]
        } else {
            throw ModelError(
                .unreadable,
                "\(url.path) has several versions and no .xccurrentversion to say which is current; choose one by name: \(listed)"
            )
        }
        return try versionContents(url.appendingPathComponent(chosen + versionSuffix))
    }

    /// The version names of a bundle (folder names without `.xcdatamodel`), sorted.
    static func versionNames(in bundle: URL) -> [String] {
        let items = (try? FileManager.default.contentsOfDirectory(atPath: bundle.path)) ?? []
        return items.filter { $0.hasSuffix(versionSuffix) }.map { String($0.dropLast(versionSuffix.count)) }.sorted()
    }

    static func hasFile(_ folder: URL, _ name: String) -> Bool {
        FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path)
    }

    /// A version folder's `contents`; a folder of Xcode 3's binary files is refused.
    static func versionContents(_ folder: URL) throws(ModelError) -> URL {
        if hasFile(folder, "contents") { return folder.appendingPathComponent("contents") }
        if hasFile(folder, "elements") || hasFile(folder, "layout") {
            throw ModelError(
                .unreadable,
                "\(folder.path) was saved by Xcode 3 or earlier (binary 'elements' and 'layout' files, no 'contents'), which Sift cannot read; open and save the model in Xcode 4 or later first"
            )
        }
        throw ModelError(.unreadable, "\(folder.path): no 'contents' file in the model version")
    }

    /// The version `.xccurrentversion` names (without `.xcdatamodel`), nil without the file.
    static func currentVersion(of bundle: URL) throws(ModelError) -> String? {
        let file = bundle.appendingPathComponent(".xccurrentversion")
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        let plist: XMLTreeElement
        do { plist = try XMLReader.parse(Array(data)) } catch {
            throw ModelError(
                .unreadable,
                failures: [.init(path: "", location: error.location, message: error.message, file: file.path)])
        }
        // <plist><dict><key>_XCCurrentVersionName</key><string>Name.xcdatamodel</string></dict></plist>
        let items = plist.children("dict").first?.children ?? []
        for (k, item) in items.enumerated() where item.name == "key" && item.text == "_XCCurrentVersionName" {
            guard k + 1 < items.count, items[k + 1].name == "string" else { break }
            let value = items[k + 1].text.trimmingCharacters(in: .whitespacesAndNewlines)
            return value.hasSuffix(versionSuffix) ? String(value.dropLast(versionSuffix.count)) : value
        }
        throw ModelError(
            .unreadable,
            failures: [
                .init(
                    path: "", location: plist.location,
                    message: "no _XCCurrentVersionName string in the property list", file: file.path)
            ])
    }
}
