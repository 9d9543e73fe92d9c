// `sift store query`'s printing from stored rows (`printStoredRows`) against printing fetched
// objects (`fetch`, then `StoreRenderer.render`): the same bytes on a varied file (nested objects,
// arrays of objects and of scalars, nulls and missing keys, escapes and non-ASCII text, 1.0 beside
// 1, dates, transformable and mixed values, documents), for predicates, sorts, pages and --nulls;
// the object path is kept where memory judges part of the request or the graph has sub-entities.
// The tables below the root are read by key or scanned whole: both give the object path's bytes.
// Every row, unsorted, streams (each table scanned beside the root, nothing held) when every table
// is stored in the order it prints in; a table out of that order is read whole first, as before.

import Foundation
import SiftJSON
import SiftSQLite
import Testing

// The store's connection, to break a stored row behind the store's back.
@testable import SiftStore

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
    guard try context.printStoredRows(request, renderer: r, reading: reading, into: { bytes += $0 }).printed else {
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
        var first = FetchRequest("Record")
        first.fetchLimit = 5
        for nils in [false, true] {
            for order in [[:], keyOrder] {
                let renderer = StoreRenderer(model: store.model, keyOrder: order, printsNils: nils)
                // Every row streams (as imported, every table is in order); a predicate, a sort,
                // a limit or an offset reads the tables whole first.
                let context = ManagedObjectContext(store: store)
                #expect(try context.streamsStoredRows(requests[0], renderer: renderer))
                for request in requests.dropFirst() + [paged, first] {
                    #expect(try !context.streamsStoredRows(request, renderer: renderer), "\(request.predicate as Any)")
                }
                for request in requests + [paged, first] {
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
        // The late toy is out of its owner's order: every owner is read whole first, not streamed.
        #expect(try !ManagedObjectContext(store: store).streamsStoredRows(requests[0].0, renderer: renderer))
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

/// Owners with toys (ordered; `toyCount(i)` for the i-th, `i % 3` unless said), a pet each but the
/// fourth (a to-one), and a collar on every other pet (a to-one below a to-one), saved in order;
/// then `change` breaks (or keeps) that order.
private func pets(
    owners: Int = 60, name: String = "", toyCount: (Int) -> Int = { $0 % 3 },
    _ change: (ManagedObjectContext, [ManagedObject]) throws -> Void
) throws -> PersistentStore {
    let store = try PersistentStore.inMemory(
        model: try ManagedObjectModel(entities: [
            EntityDescription(
                "Collar", attributes: [AttributeDescription("color", .string)],
                relationships: [RelationshipDescription("pets", to: "Pet", toMany: true, inverse: "collar")]),
            EntityDescription(
                "Pet", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("owners", to: "Owner", toMany: true, inverse: "pet"),
                    RelationshipDescription("collar", to: "Collar", inverse: "pets"),
                ]),
            EntityDescription(
                "Toy", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("owner", to: "Owner", inverse: "toys")]),
            EntityDescription(
                "Owner", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("pet", to: "Pet", inverse: "owners"),
                    RelationshipDescription("toys", to: "Toy", toMany: true, ordered: true, inverse: "owner"),
                ]),
        ]))
    let context = ManagedObjectContext(store: store)
    var all: [ManagedObject] = []
    for i in 0..<owners {
        let owner = try context.insert("Owner")
        try owner.setValue("o\(i)\(name)", forKey: "name")
        if i % 4 != 3 {
            let pet = try context.insert("Pet")
            try pet.setValue("p\(i)", forKey: "name")
            try owner.setValue(pet, forKey: "pet")
            if i % 2 == 0 {
                let collar = try context.insert("Collar")
                try collar.setValue("c\(i)", forKey: "color")
                try pet.setValue(collar, forKey: "collar")
            }
        }
        var toys: [ManagedObject] = []
        for t in 0..<toyCount(i) {
            let toy = try context.insert("Toy")
            try toy.setValue("t\(i).\(t)", forKey: "name")
            toys.append(toy)
        }
        try owner.setValue(toys, forKey: "toys")
        all.append(owner)
    }
    try context.save()
    try change(context, all)
    try context.save()
    return store
}

/// The renderer printing nils, for the pets.
private func nilsRenderer(_ store: PersistentStore) -> StoreRenderer {
    StoreRenderer(model: store.model, keyOrder: [:], printsNils: true)
}

/// What printing `request` from the rows did, after checking it printed the object path's bytes.
private func printedOwners(
    _ store: PersistentStore, _ request: FetchRequest<ManagedObject> = FetchRequest("Owner"),
    holding: Int = StoredRowsPrinted.holding
) throws -> StoredRowsPrinted {
    let renderer = nilsRenderer(store)
    let objects = try objectPath(ManagedObjectContext(store: store), request, renderer)
    #expect(!objects.isEmpty)
    var bytes: [UInt8] = []
    let printed = try ManagedObjectContext(store: store).printStoredRows(
        request, renderer: renderer, holding: holding, into: { bytes += $0 })
    #expect(String(decoding: bytes, as: UTF8.self) == objects, "\(printed)")
    return printed
}

@Suite struct StreamedRowPrintingTests {
    /// Whether every owner streams, after checking the rows print the object path's bytes.
    private func streams(_ store: PersistentStore, nils: Bool = true) throws -> Bool {
        let renderer = StoreRenderer(model: store.model, keyOrder: [:], printsNils: nils)
        var request = FetchRequest<ManagedObject>("Owner")
        let objects = try objectPath(ManagedObjectContext(store: store), request, renderer)
        #expect(try rowPath(ManagedObjectContext(store: store), request, renderer) == objects)
        request.fetchLimit = 7
        let first = try objectPath(ManagedObjectContext(store: store), request, renderer)
        #expect(try rowPath(ManagedObjectContext(store: store), request, renderer) == first)
        #expect(first.split(separator: "\n").count == 7)
        return try ManagedObjectContext(store: store).streamsStoredRows(FetchRequest("Owner"), renderer: renderer)
    }

    @Test func inOrderTablesStream() throws {
        let store = try pets { _, _ in }
        #expect(try streams(store))
        #expect(try streams(store, nils: false))
        // Not vacuous: ordered toys, a chain of to-ones, and owners without either are printed.
        let renderer = StoreRenderer(model: store.model, keyOrder: [:], printsNils: true)
        let all = try #require(try rowPath(ManagedObjectContext(store: store), FetchRequest("Owner"), renderer))
        for part in [
            #"{"name":"o2","pet":{"name":"p2","collar":{"color":"c2"}},"toys":[{"name":"t2.0"},{"name":"t2.1"}]}"#,
            #"{"name":"o3","pet":null,"toys":[]}"#, #""collar":null"#,
        ] {
            #expect(all.contains(part), "\(part)")
        }
    }

    /// Each change leaves one table out of the order it prints in: the rows are read whole
    /// first, and print the same bytes.
    @Test func outOfOrderTablesAreReadWholeFirst() throws {
        let changes: [(String, (ManagedObjectContext, [ManagedObject]) throws -> Void)] = [
            // An owner's toys reordered: the order column falls.
            (
                "toys reordered",
                { _, owners in
                    let toys = try #require(try owners[5].get("toys", as: [ManagedObject].self))
                    try owners[5].setValue(Array(toys.reversed()), forKey: "toys")
                }
            ),
            // A toy made last, given to an early owner: its toys are apart.
            (
                "toy apart",
                { context, owners in
                    let toy = try context.insert("Toy")
                    try toy.setValue("late", forKey: "name")
                    try toy.setValue(owners[1], forKey: "owner")
                }
            ),
            // A pet made last, given to the first owner: the to-one keys do not rise with the owners'.
            (
                "pet late",
                { context, owners in
                    let pet = try context.insert("Pet")
                    try pet.setValue("late", forKey: "name")
                    try owners[0].setValue(pet, forKey: "pet")
                }
            ),
            // Two owners share a pet: a to-one key named twice.
            (
                "pet shared",
                { _, owners in try owners[1].setValue(try owners[0].get("pet", as: ManagedObject.self), forKey: "pet") }
            ),
            // A collar made last, on the first pet: the order breaks a level down.
            (
                "collar late",
                { context, owners in
                    let collar = try context.insert("Collar")
                    try collar.setValue("late", forKey: "color")
                    let pet = try #require(try owners[0].get("pet", as: ManagedObject.self))
                    try pet.setValue(collar, forKey: "collar")
                }
            ),
        ]
        for (label, change) in changes {
            let store = try pets(change)
            #expect(try !streams(store), "\(label)")
        }
        // Changes that keep the order: still streamed.
        let kept = try pets { context, owners in
            try owners[4].setValue(nil, forKey: "pet")
            let toy = try context.insert("Toy")
            try toy.setValue("last", forKey: "name")
            try toy.setValue(owners[owners.count - 1], forKey: "owner")
        }
        #expect(try streams(kept))
    }

    /// A stored to-one naming no row: with nothing printed yet the object path takes over; after
    /// a block of lines went out, the error says how many were printed (none is cut silently).
    @Test func aBrokenStoreAfterPrintingIsAnError() throws {
        let long = String(repeating: "x", count: 700)
        let store = try pets(owners: 1_800, name: long) { _, _ in }
        let renderer = StoreRenderer(model: store.model, keyOrder: [:], printsNils: false)
        #expect(try ManagedObjectContext(store: store).streamsStoredRows(FetchRequest("Owner"), renderer: renderer))
        // The last owner's pet key names nothing (written behind the store's back).
        try store.connection.execute(
            "UPDATE Owner SET pet = 999999 WHERE Z_PK = (SELECT max(Z_PK) FROM Owner)")
        var bytes: [UInt8] = []
        // Held up to 1 MB: then the order checks let the blocks out.
        let error = try #require(throws: StoreError.self) {
            _ = try ManagedObjectContext(store: store).printStoredRows(
                FetchRequest("Owner"), renderer: renderer, holding: 1 << 20, into: { bytes += $0 })
        }
        let lines = bytes.split(separator: UInt8(ascii: "\n")).count
        #expect(bytes.count >= 1 << 20 && lines < 1_800)
        #expect(error.message.hasSuffix("(after \(lines) lines were printed)"), "\(error.message)")
        // The first owner's instead: nothing printed yet, so the row path declines.
        let small = try pets { _, _ in }
        try small.connection.execute("UPDATE Owner SET pet = 999999 WHERE Z_PK = (SELECT min(Z_PK) FROM Owner)")
        var none: [UInt8] = []
        let printed = try ManagedObjectContext(store: small).printStoredRows(
            FetchRequest("Owner"), renderer: renderer, into: { none += $0 })
        #expect(printed == .declined && none.isEmpty)
        // Held whole (under the default 32 MB), the big store's last owner declines the same way.
        var held: [UInt8] = []
        let whole = try ManagedObjectContext(store: store).printStoredRows(
            FetchRequest("Owner"), renderer: renderer, into: { held += $0 })
        #expect(whole == .declined && held.isEmpty)
    }

    /// Printing every owner without checking the order first: a table met out of order, at the
    /// first, a middle or the last line (or only by the order checks once `holding` bytes are
    /// held), is read whole before anything is printed; each way prints the object path's bytes.
    @Test func disorderMetWhileStreamingIsReadWhole() throws {
        for at in [0, 30, 59] {
            // Owner `at`'s two toys reversed: the order column falls at its line.
            let store = try pets(toyCount: { _ in 2 }) { _, owners in
                let toys = try #require(try owners[at].get("toys", as: [ManagedObject].self))
                try owners[at].setValue(Array(toys.reversed()), forKey: "toys")
            }
            #expect(try printedOwners(store) == .readWhole(outOfOrderAt: at), "toys of owner \(at)")
            #expect(
                try !ManagedObjectContext(store: store).streamsStoredRows(
                    FetchRequest("Owner"), renderer: nilsRenderer(store)))
            for request in [
                FetchRequest("Owner", sortDescriptors: [try SiftSortDescriptor("name", ascending: false)]),
                try FetchRequest("Owner", predicate: "ANY toys.name ENDSWITH '.1' AND pet.collar != nil"),
            ] {
                #expect(try printedOwners(store, request) == .readWhole(outOfOrderAt: nil))
            }
        }
        let late: [(String, Int, (ManagedObjectContext, [ManagedObject]) throws -> Void)] = [
            // A toy made last, given to the second owner: the line printed without it is long out
            // when the scan meets it, at the last owner's toys.
            (
                "toy apart", 59,
                { context, owners in
                    let toy = try context.insert("Toy")
                    try toy.setValue("late", forKey: "name")
                    try toy.setValue(owners[1], forKey: "owner")
                }
            ),
            // A collar made last on the first pet (a to-one below a to-one): the next collar asked
            // (the third owner's pet's) is below it.
            (
                "collar late", 2,
                { context, owners in
                    let collar = try context.insert("Collar")
                    try collar.setValue("late", forKey: "color")
                    let pet = try #require(try owners[0].get("pet", as: ManagedObject.self))
                    try pet.setValue(collar, forKey: "collar")
                }
            ),
            // Two owners share a pet: the second owner asks for the key the first did.
            (
                "pet shared", 1,
                { _, owners in try owners[1].setValue(try owners[0].get("pet", as: ManagedObject.self), forKey: "pet") }
            ),
        ]
        for (label, at, change) in late {
            let store = try pets(change)
            #expect(try printedOwners(store) == .readWhole(outOfOrderAt: at), "\(label)")
        }
        // In order: streamed, the order known from the scans alone.
        #expect(try printedOwners(try pets { _, _ in }) == .streamed(checked: false))
    }

    /// A table read by key is read in the keys' order, each owner's rows in its index's order,
    /// unsorted, checking as it goes that each owner's come in the relationship's order; where
    /// they do not (owners' toys reversed), it is read again sorted. A to-one key asked twice (a
    /// shared pet) is read once. Every way of reading prints the object path's bytes.
    @Test func readsInKeyOrderCheckEachOwnersOrder() throws {
        let reversed = try pets(toyCount: { _ in 3 }) { _, owners in
            for at in [0, 30, 59] {
                let toys = try #require(try owners[at].get("toys", as: [ManagedObject].self))
                try owners[at].setValue(Array(toys.reversed()), forKey: "toys")
            }
        }
        let shared = try pets { _, owners in
            try owners[1].setValue(try owners[0].get("pet", as: ManagedObject.self), forKey: "pet")
        }
        for (store, visible) in [(reversed, #""toys":[{"name":"t0.2"},{"name":"t0.1"}"#), (shared, #""p0""#)] {
            let renderer = nilsRenderer(store)
            for request in [
                try FetchRequest("Owner", predicate: "name BEGINSWITH 'o'"),
                try FetchRequest("Owner", predicate: "ANY toys.name ENDSWITH '.1' OR pet != nil"),
                FetchRequest("Owner", sortDescriptors: [try SiftSortDescriptor("name", ascending: false)]),
            ] {
                let objects = try objectPath(ManagedObjectContext(store: store), request, renderer)
                #expect(objects.contains(visible), "\(objects.prefix(300))")
                for reading in [StoredRowReading.keyed, .scanned, .automatic] {
                    let rows = try rowPath(ManagedObjectContext(store: store), request, renderer, reading: reading)
                    #expect(rows == objects, "\(request.predicate as Any), \(reading)")
                }
            }
        }
    }

    /// Past `holding` bytes the order checks run (once) and the blocks go out as they fill: in
    /// order, the lines stream; out of order (an owner's toys reversed after the first block), the
    /// checks find it and the tables are read whole, nothing printed before.
    @Test func pastTheHeldBytesTheOrderIsChecked() throws {
        let long = String(repeating: "x", count: 700)
        let ordered = try pets(owners: 1_800, name: long) { _, _ in }
        #expect(try printedOwners(ordered, holding: 1 << 20) == .streamed(checked: true))
        #expect(try printedOwners(ordered) == .streamed(checked: false))
        let reversed = try pets(owners: 1_800, name: long) { _, owners in
            let toys = try #require(try owners[1_700].get("toys", as: [ManagedObject].self))
            try owners[1_700].setValue(Array(toys.reversed()), forKey: "toys")
        }
        #expect(try printedOwners(reversed, holding: 1 << 20) == .readWhole(outOfOrderAt: nil))
        #expect(try printedOwners(reversed) == .readWhole(outOfOrderAt: 1_700))
    }

}
