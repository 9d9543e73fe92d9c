// Which version of an Xcode model bundle is read (the one `.xccurrentversion` names, the only one,
// one by name, names with spaces), the bundles that are refused (several versions and no current
// one, an unknown name, Xcode 3's binary files, a compiled model), warnings for what Sift does not
// keep, at their line, errors at their place, and fetch request templates.

import Foundation
import SiftStoreTestSupport
import SiftSyntax
import Testing

@testable import SiftStore

@Suite struct XcodeModelBundleTests {
    /// A model with one entity named `entity`.
    func single(_ entity: String) -> String {
        xcodeContents(
            "    <entity name=\"\(entity)\" syncable=\"YES\"><attribute name=\"x\" attributeType=\"String\"/></entity>")
    }

    /// The error reading `url` (with `version`) is refused with.
    func refusal(_ url: URL, version: String? = nil, sourceLocation: Testing.SourceLocation = #_sourceLocation)
        -> ModelError?
    {
        do {
            _ = try ManagedObjectModel(contentsOf: url, version: version)
            Issue.record("the model was accepted", sourceLocation: sourceLocation)
        } catch { return error }
        return nil
    }

    @Test func theCurrentVersionOrTheOnlyOneOrOneByNameIsRead() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let versions = ["Shop": single("A"), "Shop 2": single("B"), "Shop 3": single("C")]
        let bundle = try folder.bundle("Shop", versions, current: "Shop 2")
        #expect(try ManagedObjectModel(contentsOf: bundle).entities.map(\.name) == ["B"])
        #expect(try ManagedObjectModel(contentsOf: bundle, version: "Shop 3").entities.map(\.name) == ["C"])
        #expect(try ManagedObjectModel(contentsOf: bundle, version: "Shop.xcdatamodel").entities.map(\.name) == ["A"])
        // The model's version is the version's name, whichever way it was chosen.
        #expect(try ManagedObjectModel(contentsOf: bundle).version == "Shop 2")
        #expect(try ManagedObjectModel(contentsOf: bundle, version: "Shop.xcdatamodel").version == "Shop")
        let wrong = refusal(bundle, version: "Shop 4")
        #expect(wrong?.message == "\(bundle.path) has no version 'Shop 4'; its versions: 'Shop', 'Shop 2', 'Shop 3'")
        #expect(wrong?.kind == .unreadable)

        let only = try folder.bundle("Only", ["Only v1": single("D")])
        #expect(try ManagedObjectModel(contentsOf: only).entities.map(\.name) == ["D"])
        let several = try folder.bundle("Several", ["One": single("E"), "Two": single("F")])
        #expect(
            refusal(several)?.message
                == "\(several.path) has several versions and no .xccurrentversion to say which is current; choose one by name: 'One', 'Two'"
        )
        let stale = try folder.bundle("Stale", ["One": single("E")], current: "Gone")
        #expect(refusal(stale)?.message.contains(".xccurrentversion names version 'Gone'") == true)

        let bare = try folder.bare("Bare", single("G"))
        #expect(try ManagedObjectModel(contentsOf: bare).entities.map(\.name) == ["G"])
        #expect(try ManagedObjectModel(contentsOf: bare).version == "Bare")
        #expect(refusal(bare, version: "Other")?.message.contains("there is no version 'Other'") == true)
    }

    @Test func oldAndCompiledAndMissingModelsAreRefusedSayingWhy() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let old = folder.root.appendingPathComponent("Old.xcdatamodeld/Old.xcdatamodel")
        try folder.write("binary", to: old.appendingPathComponent("elements"))
        try folder.write("binary", to: old.appendingPathComponent("layout"))
        let e = refusal(folder.root.appendingPathComponent("Old.xcdatamodeld"))
        #expect(e?.message.contains("was saved by Xcode 3 or earlier (binary 'elements' and 'layout' files") == true)
        let momd = folder.root.appendingPathComponent("App.momd")
        try folder.write("x", to: momd.appendingPathComponent("VersionInfo.plist"))
        #expect(refusal(momd)?.message.contains("a compiled model (binary) cannot be read") == true)
        #expect(
            refusal(folder.root.appendingPathComponent("None.xcdatamodeld"))?.message.contains("no model folder")
                == true)
        let empty = folder.root.appendingPathComponent("Empty.xcdatamodeld")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect(refusal(empty)?.message.contains("holds no version") == true)
    }

    @Test func whatSiftDoesNotKeepIsAWarningAtItsLine() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let text = xcodeContents(
            """
                <entity name="Song" representedClassName="Song" elementID="Track" syncable="YES">
                    <attribute name="title" attributeType="String" indexed="YES" spotlightIndexingEnabled="YES"/>
                    <attribute name="cover" optional="YES" attributeType="Transformable" valueTransformerName="ImageTransformer" customClassName="UIImage"/>
                    <attribute name="length" optional="YES" attributeType="Double" usesScalarValueType="YES">
                        <userInfo>
                            <entry key="unit" value="s"/>
                        </userInfo>
                    </attribute>
                    <attribute name="scratch" optional="YES" transient="YES"/>
                    <attribute name="released" optional="YES" attributeType="Date" minDateTimeInterval="0"/>
                    <fetchedProperty name="similar" optional="YES">
                        <fetchRequest name="fetchedPropertyFetchRequest" entity="Song" predicateString="title == $FETCH_SOURCE.title" fetchLimit="5"/>
                    </fetchedProperty>
                    <compoundIndexes>
                        <compoundIndex>
                            <index value="title"/>
                        </compoundIndex>
                    </compoundIndexes>
                    <fetchIndex name="byTitle">
                        <fetchIndexElement property="title" type="Binary" order="ascending"/>
                    </fetchIndex>
                    <fetchIndex name="byPlace">
                        <fetchIndexElement property="length" type="RTree" order="ascending"/>
                    </fetchIndex>
                    <sparkle level="9"/>
                </entity>
                <configuration name="Cloud" usedWithCloudKit="YES">
                    <memberEntity name="Song"/>
                </configuration>
                <elements>
                    <element name="Song" positionX="0" positionY="0" width="128" height="74"/>
                </elements>
            """)
        let url = try folder.bare("Songs", text)
        let model = try ManagedObjectModel(contentsOf: url)
        let file = url.appendingPathComponent("contents").path
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        /// `line:column` of the first `needle` on the line holding `anchor`.
        func at(_ needle: String, after anchor: String? = nil) -> String {
            let n = lines.firstIndex { $0.contains(anchor ?? needle) }!
            let line = lines[n]
            return "\(n + 1):\(line.distance(from: line.startIndex, to: line.range(of: needle)!.lowerBound) + 1)"
        }
        let expected = [
            "\(at("spotlightIndexingEnabled")): warning: Song.title: the attribute spotlightIndexingEnabled=\"YES\" is not read by Sift; ignored",
            "\(at("customClassName")): warning: Song.cover: customClassName=\"UIImage\": the value class is not kept (a transformable's values are what its transformer makes)",
            "\(at("minDateTimeInterval")): warning: Song.released: the attribute minDateTimeInterval=\"0\" is not read by Sift; ignored",
            "\(at("fetchLimit")): warning: Song.similar: the attribute fetchLimit=\"5\" is not read by Sift; ignored",
            "\(at("<fetchIndexElement", after: "RTree")): warning: Song: fetch index 'byPlace' over an index of type RTree is not created (only plain indexes on properties are)",
            "\(at("<sparkle")): warning: Song: the element <sparkle> is not read by Sift; ignored",
        ]
        #expect(model.warnings.map(\.description) == expected.map { "\(file):\($0)" })
        #expect(
            model.entities[0].indexes == [
                IndexDescription(elements: [.init("title")]),
                IndexDescription(name: "byTitle", elements: [.init("title")]),
            ])
        #expect(model.entities[0].attributes[0].isIndexed)
        #expect(model.entities[0].attributes[2].userInfo == ["unit": "s"])
        #expect(model.entities[0].renamingIdentifier == "Track")
        #expect(
            model.entities[0].fetchedProperties == [
                FetchedPropertyDescription("similar", entity: "Song", predicate: "title == $FETCH_SOURCE.title")
            ])
        #expect(model.configurations == [ConfigurationDescription("Cloud", entities: ["Song"])])
        // What is kept is still the model.
        #expect(model.entities[0].attributes.map(\.name) == ["title", "cover", "length", "scratch", "released"])
        // A transient attribute without a type holds any value (transformable), kept out of the store.
        #expect(model.entities[0].attributes[3].isTransient && model.entities[0].attributes[3].type == .transformable)
    }

    @Test func errorsNameTheFileAndTheLine() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        /// The failures of a bare model of `body`, as printed, with the file left out.
        func failures(_ body: String) throws -> [String] {
            let url = try folder.bare("M\(UUID().uuidString.prefix(8))", xcodeContents(body))
            let prefix = url.appendingPathComponent("contents").path + ":"
            return refusal(url)?.failures.map { String($0.description.dropFirst(prefix.count)) } ?? []
        }
        let found = try failures(
            """
                <entity name="A">
                    <attribute name="shape" attributeType="Composite"/>
                    <attribute name="n" attributeType="Integer 16" defaultValueString="seven" minValueString="9" maxValueString="1"/>
                    <attribute name="b" attributeType="Boolean" optional="maybe"/>
                    <relationship name="r" deletionRule="Explode" destinationEntity="A"/>
                </entity>
            """)
        #expect(
            found == [
                "4:33: error: A.shape: composite attributes are not supported",
                "5:56: error: A.n: defaultValueString=\"seven\" is not an integer16 value",
                "5:83: error: A.n: the minimum 9.0 is above the maximum 1.0",
                "6:53: error: A.b: optional=\"maybe\" is not YES or NO",
                "7:32: error: A.r: deletionRule=\"Explode\" is not Nullify, Cascade, Deny or No Action",
            ], "\(found)")
        // A model that does not hold together: the message's first name places it.
        #expect(
            try failures(
                """
                    <entity name="A"/>
                    <entity name="B" parentEntity="Nope"/>
                """) == ["4:5: error: entity 'B' has unknown parent 'Nope'"])
        // Malformed XML: the reader's place.
        let broken = try folder.bare("Broken", "<model>\n  <entity name=\"A\">\n</model>\n")
        let e = refusal(broken)
        #expect(
            e?.failures.map(\.description) == [
                broken.appendingPathComponent("contents").path
                    + ":3:1: error: invalid XML: end tag 'model' does not match start tag 'entity' at 2:3"
            ])
    }

    @Test func fetchRequestTemplatesSubstituteTheirVariables() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let model = try ManagedObjectModel(contentsOf: try folder.bundle("Company", ["Company": companyContents]))
        #expect(model.fetchRequestTemplates.map(\.name) == ["byName", "wellPaid", "allPets"])
        let paid = model.fetchRequestTemplates[1]
        #expect(paid.entityName == "Employee" && paid.variableNames == ["MIN"])
        #expect(paid.predicateFormat == "salary > $MIN AND name != \"nobody\"")
        #expect(paid.request.fetchLimit == 2)
        let request = try model.fetchRequestTemplate("wellPaid", substitutionVariables: ["MIN": 10.5])
        #expect(request.predicate?.description == "salary > 10.5 AND name != \"nobody\"")
        #expect(request.fetchLimit == 2 && request.entityName == "Employee")
        #expect(try model.fetchRequestTemplate("allPets").predicate == nil)
        do {
            _ = try model.fetchRequestTemplate("wellPaid")
            Issue.record("a missing variable was accepted")
        } catch {
            #expect(error.kind == .invalidOperation)
            #expect(error.message.contains("needs a value for $MIN"), "\(error)")
        }
        do {
            _ = try model.fetchRequestTemplate("nope")
            Issue.record("an unknown template was accepted")
        } catch {
            #expect(
                error.message
                    == "the model has no fetch request template 'nope'; its templates: 'byName', 'wellPaid', 'allPets'")
        }
        // A predicate that does not parse is an error at load naming the template and its line.
        let bad = try folder.bare(
            "Bad",
            xcodeContents(
                """
                    <entity name="A"><attribute name="x" optional="YES" attributeType="String"/></entity>
                    <fetchRequest name="broken" entity="A" predicateString="x == == 1"/>
                    <fetchRequest name="lost" entity="Nope"/>
                """))
        let e = refusal(bad)
        let lines = e?.failures.map { $0.description.split(separator: "/").last.map(String.init) ?? "" }
        #expect(lines?.count == 2)
        #expect(
            lines?.first?.hasPrefix("contents:4:44: error: fetch request 'broken': the predicate does not parse: 1:6: ")
                == true, "\(lines ?? [])")
        #expect(lines?.last == "contents:5:31: error: fetch request 'lost': the model has no entity 'Nope'")
    }
}
