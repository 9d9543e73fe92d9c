// `sift store query`'s printing from stored rows (`printStoredRows`) against printing fetched
// objects (`fetch`, then `StoreRenderer.render`): the same bytes on a varied file (nested objects,
// arrays of objects and of scalars, nulls and missing keys, escapes and non-ASCII text, 1.0 beside
// 1, dates, transformable and mixed values, documents), for predicates, sorts, pages and --nulls;
// the object path is kept where memory judges part of the request or the graph has sub-entities.
// The tables below the root are read by key or scanned whole: both give the object path's bytes.

import Foundation
import SiftJSON
import SiftStore
import Testing

/// Records whose keys take every shape the inference knows, varied by record.
private let varied = (0..<17).map { i -> String in
    let kids = (0..<(i % 4)).map { k in
        #"{"name":"k\#(k)","age":\#(k + i % 7),"toys":["t\#(k)"],"pet":{"kind":"cat \#(k)"}}"#
    }
    let mixed = i % 3 == 0 ? #""s\#(i)""# : i % 3 == 1 ? "\(i)" : #"{"$date":\#(i * 1000)}"#
    let loose = i % 4 == 0 ? #"{"b":[1,{"c":null}],"a":"x"}"# : i % 4 == 1 ? "[1,\"two\"]" : "\(i).0"
    let address = i % 5 == 4 ? "null" : #"{"city":"Çity \#(i % 3) 日本","zip":"0\#(i)","geo":{"lat":\#(i).5}}"#
    let extra = i % 2 == 0 ? #","note":"tab\there \"q\" back\\slash \u0001""# : ""
    let nulls = i % 3 == 0 ? #","opt":null"# : #","opt":"o\#(i)""#
    return
        #"{"id":\#(i),"name":"user \#(i)","score":\#(i % 2 == 0 ? "1.0" : "2.25"),"when":{"$date":\#(i * 86400)},"m":\#(mixed),"loose":\#(loose),"address":\#(address),"kids":[\#(kids.joined(separator: ","))],"tags":["a\#(i % 2)","b"],"nums":[\#(i),1.5]\#(extra)\#(nulls)}"#
}.joined(separator: "\n")

private func imported(_ text: String, document: Bool = false) throws -> PersistentStore {
    let records = try JSONReader(text).parseSequence()
    let entities =
        document
        ? [EntityDescription("Record", document: DocumentInference.describe(records))]
        : try ModelInference.infer(records, entity: "Record").entities
    let store = try PersistentStore.inMemory(model: try ManagedObjectModel(entities: entities))
    var stream = RecordStream(MappedInput(copying: Array(text.utf8)), name: "<test>")
    var importer = StoreImporter(context: ManagedObjectContext(store: store))
    _ = try importer.run(&stream, entity: "Record", batchSize: 5)
    return store
}

/// The lines the object path prints.
private func objectPath(_ context: ManagedObjectContext, _ request: FetchRequest<ManagedObject>, _ r: StoreRenderer)
    throws -> String
{
    var request = request
    request.relationshipKeyPathsForPrefetching = r.printedPaths(of: request.entityName)
    var out = ""
    for o in try context.fetch(request) {
        try r.render(o).write(into: &out)
        out += "\n"
    }
    return out
}

/// The lines printed from the rows, nil when the request took the object path.
private func rowPath(
    _ context: ManagedObjectContext, _ request: FetchRequest<ManagedObject>, _ r: StoreRenderer,
    reading: StoredRowReading = .automatic
) throws -> String? {
    var bytes: [UInt8] = []
    guard try context.printStoredRows(request, renderer: r, reading: reading, into: { bytes += $0 }) else {
        #expect(bytes.isEmpty)
        return nil
    }
    return String(decoding: bytes, as: UTF8.self)
}

@Suite struct StoredRowPrintingTests {
    @Test func rowsPrintTheBytesObjectsPrint() throws {
        let store = try imported(varied)
        // Not vacuous: the inference made values of every kind (transformable or mixed included).
        let types = Set(try #require(store.model.entity(named: "Record")).attributes.map(\.type))
        #expect(types.isSuperset(of: [.string, .double, .date, .integer64]))
        #expect(types.contains(.transformable) && types.contains(.mixed), "\(types)")
        let keyOrder = [
            "Record": ["id", "name", "score", "when", "m", "loose", "address", "kids", "tags", "nums", "note"]
        ]
        let requests: [FetchRequest<ManagedObject>] = [
            FetchRequest("Record"),
            try FetchRequest("Record", predicate: "ANY kids.age > 3 OR address.city BEGINSWITH 'Ç'"),
            FetchRequest(
                "Record", predicate: try SiftPredicate("score == 1"),
                sortDescriptors: [try SiftSortDescriptor("name", ascending: false)]),
            try FetchRequest("Record", predicate: "address == nil OR opt == nil"),
        ]
        var paged = FetchRequest("Record", sortDescriptors: [try SiftSortDescriptor("id", ascending: false)])
        paged.fetchLimit = 4
        paged.fetchOffset = 3
        for nils in [false, true] {
            for order in [[:], keyOrder] {
                let renderer = StoreRenderer(model: store.model, keyOrder: order, printsNils: nils)
                for request in requests + [paged] {
                    let objects = try objectPath(ManagedObjectContext(store: store), request, renderer)
                    #expect(!objects.isEmpty)
                    for reading in [StoredRowReading.automatic, .keyed, .scanned] {
                        let context = ManagedObjectContext(store: store)
                        let rows = try #require(
                            try rowPath(context, request, renderer, reading: reading), "\(request.predicate as Any)")
                        #expect(rows == objects, "\(request.predicate as Any), nulls \(nils), \(reading)")
                    }
                }
            }
        }
        // Not vacuous: the file has what the comparison is about.
        let all = try #require(
            try rowPath(
                ManagedObjectContext(store: store), FetchRequest("Record"),
                StoreRenderer(model: store.model, keyOrder: [:], printsNils: false)))
        for part in [#""score":1.0"#, #""kids":[]"#, #"\t"#, #"\u0001"#, "日本", #""$date""#, #""pet":{"#, #""loose":["#]
        {
            #expect(all.contains(part), "\(part)")
        }
        #expect(all.split(separator: "\n").count == 17)
    }

    @Test func documentsPrintTheBytesObjectsPrint() throws {
        let store = try imported(varied, document: true)
        let renderer = StoreRenderer(model: store.model, keyOrder: ["Record": ["name", "id"]], printsNils: false)
        for p in ["TRUEPREDICATE", "id > 5", "ANY kids.age == 2"] {
            let request = FetchRequest("Record", predicate: try SiftPredicate(p))
            let rows = try #require(try rowPath(ManagedObjectContext(store: store), request, renderer))
            #expect(rows == (try objectPath(ManagedObjectContext(store: store), request, renderer)), "\(p)")
            #expect(rows.hasPrefix(#"{"name":"user "#))
        }
    }

    @Test func memoryAndPendingChangesKeepTheObjectPath() throws {
        let store = try imported(varied)
        let renderer = StoreRenderer(model: store.model, keyOrder: [:], printsNils: false)
        // A function SQL does not have: judged in memory.
        let residual = try FetchRequest("Record", predicate: "FUNCTION(name, 'uppercaseString') == 'USER 3'")
        #expect(try rowPath(ManagedObjectContext(store: store), residual, renderer) == nil)
        let context = ManagedObjectContext(store: store)
        _ = try context.insert("Record")
        #expect(try rowPath(context, FetchRequest("Record"), renderer) == nil)
    }

    @Test func subEntitiesKeepTheObjectPath() throws {
        let animal = EntityDescription("Animal", attributes: [AttributeDescription("name", .string)])
        let dog = EntityDescription("Dog", parent: "Animal", attributes: [AttributeDescription("bark", .string)])
        let store = try PersistentStore.inMemory(model: try ManagedObjectModel(entities: [animal, dog]))
        let context = ManagedObjectContext(store: store)
        try context.insert("Animal").setValue("a", forKey: "name")
        let d = try context.insert("Dog")
        try d.setValue("d", forKey: "name")
        try d.setValue("woof", forKey: "bark")
        try context.save()
        let renderer = StoreRenderer(model: store.model, keyOrder: [:], printsNils: false)
        #expect(try rowPath(ManagedObjectContext(store: store), FetchRequest("Animal"), renderer) == nil)
        let dogs = try #require(try rowPath(ManagedObjectContext(store: store), FetchRequest("Dog"), renderer))
        #expect(dogs == #"{"name":"d","bark":"woof"}"# + "\n")
        #expect(dogs == (try objectPath(ManagedObjectContext(store: store), FetchRequest("Dog"), renderer)))
    }

    /// Owners with a dog (a sub-entity, its table shared with other animals) and ordered toys (one
    /// toy has no owner), keys dense and far apart: reading by key and scanning print the same.
    @Test func scannedAndKeyedReadsPrintTheSameRows() throws {
        let store = try PersistentStore.inMemory(
            model: try ManagedObjectModel(entities: [
                EntityDescription("Animal", attributes: [AttributeDescription("name", .string)]),
                EntityDescription(
                    "Dog", parent: "Animal", attributes: [AttributeDescription("bark", .string)],
                    relationships: [RelationshipDescription("owners", to: "Owner", toMany: true, inverse: "dog")]),
                EntityDescription(
                    "Toy", attributes: [AttributeDescription("name", .string)],
                    relationships: [RelationshipDescription("owner", to: "Owner", inverse: "toys")]),
                EntityDescription(
                    "Owner", attributes: [AttributeDescription("name", .string)],
                    relationships: [
                        RelationshipDescription("dog", to: "Dog", inverse: "owners"),
                        RelationshipDescription("toys", to: "Toy", toMany: true, ordered: true, inverse: "owner"),
                    ]),
            ]))
        let context = ManagedObjectContext(store: store)
        for i in 0..<1_200 {
            let owner = try context.insert("Owner")
            try owner.setValue("o\(i)", forKey: "name")
            // Animals that are not dogs, in the dogs' table: a scan of it skips them.
            try context.insert("Animal").setValue("a\(i)", forKey: "name")
            if i % 3 == 0 {
                let dog = try context.insert("Dog")
                try dog.setValue("d\(i)", forKey: "name")
                try dog.setValue("woof \(i)", forKey: "bark")
                try owner.setValue(dog, forKey: "dog")
            }
            for t in 0..<(i % 3) {
                let toy = try context.insert("Toy")
                try toy.setValue("t\(i).\(t)", forKey: "name")
                try toy.setValue(owner, forKey: "owner")
            }
        }
        // A toy nobody owns: reading the toys by owner leaves it out either way.
        try context.insert("Toy").setValue("lost", forKey: "name")
        try context.save()
        // A toy given to an owner of two toys last: a scan of the toys meets that owner's toys apart,
        // out of order (and reads them again by key).
        let first = try #require(try context.fetch(FetchRequest("Owner", predicate: "name == 'o2'")).first)
        let late = try context.insert("Toy")
        try late.setValue("late", forKey: "name")
        try late.setValue(first, forKey: "owner")
        try context.save()
        let renderer = StoreRenderer(model: store.model, keyOrder: [:], printsNils: true)
        // Every owner (automatic scans: all keys asked), one, and three far apart (automatic reads
        // by key; the keys' range is too wide for a flat index).
        let requests = [
            (FetchRequest<ManagedObject>("Owner"), 1_200),
            (try FetchRequest("Owner", predicate: "name == 'o3'"), 1),
            (try FetchRequest("Owner", predicate: "name IN {'o0', 'o601', 'o1199'}"), 3),
        ]
        #expect(StoredRowReading.scans(asked: 1_200, of: 1_200) && !StoredRowReading.scans(asked: 3, of: 1_200))
        // The count stops at `countLimit`: the decision on a count cut there is the decision on
        // the whole count, whatever the table's size.
        for asked in [1, 2, 3, 10, 400, 1_200] {
            for rows in [0, 1, 2, 3, 4, 9, 29, 30, 31, 1_199, 1_200, 3_600, 3_601, 1_000_000] as [Int64] {
                let counted = min(rows, StoredRowReading.countLimit(asked))
                #expect(
                    StoredRowReading.scans(asked: asked, of: counted) == StoredRowReading.scans(asked: asked, of: rows),
                    "asked \(asked) of \(rows) rows")
            }
        }
        for (request, count) in requests {
            let objects = try objectPath(ManagedObjectContext(store: store), request, renderer)
            #expect(objects.split(separator: "\n").count == count)
            for reading in [StoredRowReading.automatic, .keyed, .scanned] {
                let rows = try #require(
                    try rowPath(ManagedObjectContext(store: store), request, renderer, reading: reading))
                #expect(rows == objects, "\(request.predicate as Any), \(reading)")
            }
        }
        // Not vacuous: dogs, toys in order, and owners without either are printed.
        let all = try objectPath(ManagedObjectContext(store: store), requests[0].0, renderer)
        for part in [
            #""dog":{"#, #""bark":"woof 3""#, #"[{"name":"t5.0"},{"name":"t5.1"}]"#, #""dog":null"#, #""toys":[]"#,
            #"{"name":"o2","dog":null,"toys":[{"name":"t2.0"},{"name":"t2.1"},{"name":"late"}]}"#,
        ] {
            #expect(all.contains(part), "\(part)")
        }
        #expect(!all.contains("lost") && !all.contains(#""a1""#))
    }
}
