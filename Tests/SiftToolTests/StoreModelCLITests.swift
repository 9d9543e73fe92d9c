// `sift store model` run as a subprocess on Xcode model bundles written here: the JSON it prints
// reads back (`ManagedObjectModel(json:)`) to the model `ManagedObjectModel(contentsOf:)` reads,
// and `sift store create` takes it; warnings go to standard error at `contents:line:column`;
// `--version` picks a version; `--templates` lists the fetch request templates; an unreadable model
// exits 1 with the place of the fault.

import Foundation
import SiftStore
import Testing

@Suite struct StoreModelCLITests {
    let contents = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23B81" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Book" representedClassName="Book" syncable="YES">
                <attribute name="title" attributeType="String" indexed="YES" spotlightIndexingEnabled="YES"/>
                <attribute name="pages" optional="YES" attributeType="Integer 32" minValueString="1" defaultValueString="100" usesScalarValueType="YES"/>
                <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
            </entity>
            <entity name="Author" representedClassName="Author" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="books" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
            </entity>
            <fetchRequest name="long" entity="Book" predicateString="pages &gt;= $MIN" fetchLimit="5"/>
            <fetchRequest name="everyone" entity="Author"/>
        </model>

        """

    @Test func printsTheModelAsJSONWithWarningsAndTemplates() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sift-store-model-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let bundle = dir.appendingPathComponent("Library.xcdatamodeld")
        let v1 = bundle.appendingPathComponent("Library.xcdatamodel")
        let v2 = bundle.appendingPathComponent("Library 2.xcdatamodel")
        for v in [v1, v2] { try FileManager.default.createDirectory(at: v, withIntermediateDirectories: true) }
        try Data(contents.utf8).write(to: v2.appendingPathComponent("contents"))
        try Data(contents.replacingOccurrences(of: "Book", with: "Novel").utf8).write(
            to: v1.appendingPathComponent("contents"))
        try Data(
            "<plist version=\"1.0\"><dict><key>_XCCurrentVersionName</key><string>Library 2.xcdatamodel</string></dict></plist>"
                .utf8
        ).write(to: bundle.appendingPathComponent(".xccurrentversion"))

        let run = try runSift(["store", "model", bundle.path])
        #expect(run.status == 0, "\(run.stderr)")
        let file = v2.appendingPathComponent("contents").path
        #expect(
            run.stderr
                == "\(file):4:70: warning: Book.title: the attribute spotlightIndexingEnabled=\"YES\" is not read by Sift; ignored\n"
        )
        let printed = try ManagedObjectModel(json: Data(run.stdout.utf8))
        let read = try ManagedObjectModel(contentsOf: bundle)
        #expect(printed == read)
        // The templates are in the JSON ('fetchRequests') and come back from it, options and all.
        #expect(printed.jsonString + "\n" == run.stdout)
        func summary(_ m: ManagedObjectModel) -> [String] {
            m.fetchRequestTemplates.map {
                "\($0.name) \($0.entityName) \($0.predicateFormat ?? "-") \($0.request.fetchLimit ?? 0) \($0.variableNames)"
            }
        }
        #expect(summary(printed) == ["long Book pages >= $MIN 5 [\"MIN\"]", "everyone Author - 0 []"])
        #expect(summary(printed) == summary(read))
        let long = try printed.fetchRequestTemplate("long", substitutionVariables: ["MIN": 300])
        #expect(long.predicate?.description == "pages >= 300" && long.fetchLimit == 5)
        #expect(printed.entities.map(\.name) == ["Book", "Author"])
        #expect(
            printed.entity(named: "Book")?.attributes[1]
                == AttributeDescription("pages", .integer32, defaultValue: .integer(100), minValue: 1))

        // The JSON is a model file `sift store create` takes.
        let json = dir.appendingPathComponent("library.json").path
        try Data(run.stdout.utf8).write(to: URL(fileURLWithPath: json))
        let db = dir.appendingPathComponent("library.sqlite").path
        let create = try runSift(["store", "create", db, "--model", json])
        #expect(create.status == 0, "\(create.stderr)")

        let older = try runSift(["store", "model", bundle.path, "--version", "Library"])
        #expect(try ManagedObjectModel(json: Data(older.stdout.utf8)).entities.map(\.name) == ["Novel", "Author"])

        let templates = try runSift(["store", "model", bundle.path, "--templates"])
        #expect(templates.status == 0)
        #expect(
            templates.stdout.split(separator: "\n") == [
                #"{"entity":"Book","fetchLimit":5,"name":"long","predicate":"pages >= $MIN","variables":["MIN"]}"#,
                #"{"entity":"Author","name":"everyone","variables":[]}"#,
            ])
    }

    @Test func anUnreadableModelExitsOneWithThePlace() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sift-store-model-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let version = dir.appendingPathComponent("Broken.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Data(
            "<model>\n  <entity name=\"A\">\n    <attribute name=\"x\" attributeType=\"Colour\"/>\n  </entity>\n</model>\n"
                .utf8
        )
        .write(to: version.appendingPathComponent("contents"))
        let run = try runSift(["store", "model", version.path])
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        #expect(
            run.stderr
                == "\(version.path)/contents:3:25: error: A.x: attributeType \"Colour\" is not a type Sift knows\n")
        let missing = try runSift(["store", "model", version.path, "--version", "Other"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "error: \(version.path) is the one version 'Broken'; there is no version 'Other'\n")
    }
}
