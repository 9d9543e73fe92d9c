// Ordered many-to-many relationships (issue 31): a join table keeps the order of each ordered side
// in the pair's row, `Z_SRC_ORD`/`Z_DST_ORD` in Sift's layout and `Z_FOK_` + the name of the
// column holding the keys it orders in Core Data's. Both sides, one side, reorders, removals,
// deletes and a fresh context reading the order back; predicates through the store against memory
// over the same objects; the Core Data join table's columns; an inferred migration that orders an
// unordered many-to-many.

import Foundation
import SiftEvaluation
import SiftSQLite
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct OrderedManyToManyTests {
    enum Layout: CaseIterable { case sift, coreData }

    /// Playlist.songs ⇄ Song.playlists, each side ordered or not.
    static func model(songsOrdered: Bool = true, playlistsOrdered: Bool = true) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Playlist", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription(
                        "songs", to: "Song", toMany: true, ordered: songsOrdered, inverse: "playlists")
                ]),
            EntityDescription(
                "Song", attributes: [AttributeDescription("title", .string)],
                relationships: [
                    RelationshipDescription(
                        "playlists", to: "Playlist", toMany: true, ordered: playlistsOrdered, inverse: "songs")
                ]),
        ])
    }

    static func store(_ layout: Layout, _ model: ManagedObjectModel, at path: String) throws -> PersistentStore {
        switch layout {
        case .sift: try PersistentStore(model: model, path: path)
        case .coreData:
            try PersistentStore(
                coreDataStoreAt: URL(fileURLWithPath: path), model: model,
                create: !FileManager.default.fileExists(atPath: path))
        }
    }

    /// The names of `key`'s members of the object of `entity` whose `attribute` is `name`, in order.
    static func members(
        _ c: ManagedObjectContext, _ entity: String, _ attribute: String, _ name: String, _ key: String,
        _ memberAttribute: String
    ) throws -> [String] {
        let o = try #require(
            try c.fetch(FetchRequest(entity, predicate: try SiftPredicate("\(attribute) == %@", name))).first)
        return try (o.get(key, as: [ManagedObject].self) ?? []).map {
            try $0.get(memberAttribute, as: String.self) ?? ""
        }
    }

    static func songs(_ c: ManagedObjectContext, _ playlist: String) throws -> [String] {
        try members(c, "Playlist", "name", playlist, "songs", "title")
    }

    static func playlists(_ c: ManagedObjectContext, _ song: String) throws -> [String] {
        try members(c, "Song", "title", song, "playlists", "name")
    }

    @Test(arguments: Layout.allCases) func bothSidesKeepTheirOrder(layout: Layout) throws {
        let model = try Self.model()
        let path = Fixtures.temporaryPath()
        do {
            let c = ManagedObjectContext(store: try Self.store(layout, model, at: path))
            var songs: [String: ManagedObject] = [:]
            for title in ["a", "b", "c", "d"] {
                let s = try c.insert("Song")
                try s.setValue(title, forKey: "title")
                songs[title] = s
            }
            let p1 = try c.insert("Playlist")
            try p1.setValue("P1", forKey: "name")
            let p2 = try c.insert("Playlist")
            try p2.setValue("P2", forKey: "name")
            try p1.setValue([songs["c"]!, songs["a"]!, songs["b"]!], forKey: "songs")
            try p2.setValue([songs["b"]!, songs["d"]!], forKey: "songs")
            // b's playlists were appended P1 then P2; reversed here, on the other side.
            try songs["b"]!.setValue([p2, p1], forKey: "playlists")
            try c.save()
        }
        var c = ManagedObjectContext(store: try Self.store(layout, model, at: path))
        #expect(try Self.songs(c, "P1") == ["c", "a", "b"])
        #expect(try Self.songs(c, "P2") == ["b", "d"])
        #expect(try Self.playlists(c, "b") == ["P2", "P1"])
        #expect(try Self.playlists(c, "a") == ["P1"])
        #expect(try Self.playlists(c, "d") == ["P2"])

        // A removal, an append (on the other side too), a reorder that adds a member.
        let p1 = try #require(try c.fetch(FetchRequest("Playlist", predicate: "name == 'P1'")).first)
        let p2 = try #require(try c.fetch(FetchRequest("Playlist", predicate: "name == 'P2'")).first)
        let all = try c.fetch(FetchRequest("Song"))
        let song = { (t: String) in all.first { (try? $0.get("title", as: String.self)) ?? nil == t }! }
        try p1.remove(song("a"), from: "songs")
        try p1.add(song("d"), to: "songs")
        try p2.setValue([song("d"), song("b"), song("c")], forKey: "songs")
        try c.save()
        c = ManagedObjectContext(store: try Self.store(layout, model, at: path))
        #expect(try Self.songs(c, "P1") == ["c", "b", "d"])
        #expect(try Self.songs(c, "P2") == ["d", "b", "c"])
        #expect(try Self.playlists(c, "d") == ["P2", "P1"])
        #expect(try Self.playlists(c, "c") == ["P1", "P2"])
        #expect(try Self.playlists(c, "b") == ["P2", "P1"])
        #expect(try Self.playlists(c, "a") == [])

        // Deleting a song takes it out of both lists; the others keep their order.
        try c.delete(try #require(try c.fetch(FetchRequest("Song", predicate: "title == 'b'")).first))
        try c.save()
        c = ManagedObjectContext(store: try Self.store(layout, model, at: path))
        #expect(try Self.songs(c, "P1") == ["c", "d"])
        #expect(try Self.songs(c, "P2") == ["d", "c"])
        try Self.expectStoreAgreesWithMemory(c)
        let db = try SQLiteConnection(path: path)
        #expect(try db.query("PRAGMA integrity_check") == [[.text("ok")]])
    }

    /// Predicates over the ordered sides (indexes follow the order) select what memory selects.
    static func expectStoreAgreesWithMemory(_ c: ManagedObjectContext) throws {
        for (entity, format) in [
            ("Playlist", "songs[FIRST].title == 'c'"), ("Playlist", "songs[LAST].title == 'c'"),
            ("Playlist", "songs[1].title == 'd'"), ("Playlist", "ANY songs.title == 'd'"),
            ("Playlist", "songs.@count == 2"), ("Song", "playlists[FIRST].name == 'P2'"),
            ("Song", "playlists[SIZE] == 0"), ("Song", "SUBQUERY(playlists, $p, $p.name == 'P1').@count == 1"),
        ] {
            let predicate = try SiftPredicate(format: format, arguments: [])
            let everything = try c.fetch(FetchRequest(entity))
            let inMemory = try everything.filter { try predicate.evaluate(with: $0) }.map(\.objectID)
            let inStore = try c.fetch(FetchRequest(entity, predicate: predicate)).map(\.objectID)
            #expect(Set(inStore) == Set(inMemory), "\(format)")
            #expect(!inMemory.isEmpty, "\(format) selects nothing")
        }
    }

    @Test(arguments: Layout.allCases) func oneOrderedSideKeepsItsOrder(layout: Layout) throws {
        let model = try Self.model(songsOrdered: true, playlistsOrdered: false)
        let path = Fixtures.temporaryPath()
        do {
            let c = ManagedObjectContext(store: try Self.store(layout, model, at: path))
            var songs: [ManagedObject] = []
            for title in ["a", "b", "c"] {
                let s = try c.insert("Song")
                try s.setValue(title, forKey: "title")
                songs.append(s)
            }
            for (name, order) in [("P1", [2, 0, 1]), ("P2", [1, 2])] {
                let p = try c.insert("Playlist")
                try p.setValue(name, forKey: "name")
                try p.setValue(order.map { songs[$0] }, forKey: "songs")
            }
            try c.save()
        }
        let c = ManagedObjectContext(store: try Self.store(layout, model, at: path))
        #expect(try Self.songs(c, "P1") == ["c", "a", "b"])
        #expect(try Self.songs(c, "P2") == ["b", "c"])
        #expect(try Set(Self.playlists(c, "c")) == ["P1", "P2"])
        #expect(try Self.playlists(c, "a") == ["P1"])
    }

    /// Core Data's join table: named by the side with the lower entity number (Playlist is 1), a
    /// column per side, and a `Z_FOK_` column beside the keys each ordered side orders.
    @Test func coreDataJoinTableHasAnOrderColumnPerOrderedSide() throws {
        let path = Fixtures.temporaryPath()
        for (songsOrdered, playlistsOrdered, columns) in [
            (true, true, ["Z_1PLAYLISTS", "Z_2SONGS", "Z_FOK_1PLAYLISTS", "Z_FOK_2SONGS"]),
            (true, false, ["Z_1PLAYLISTS", "Z_2SONGS", "Z_FOK_2SONGS"]),
            (false, false, ["Z_1PLAYLISTS", "Z_2SONGS"]),
        ] {
            try? FileManager.default.removeItem(atPath: path)
            let model = try Self.model(songsOrdered: songsOrdered, playlistsOrdered: playlistsOrdered)
            let c = ManagedObjectContext(store: try Self.store(.coreData, model, at: path))
            let p = try c.insert("Playlist")
            let songs = try (0..<3).map { _ in try c.insert("Song") }
            try p.setValue([songs[2], songs[0], songs[1]], forKey: "songs")
            try c.save()
            let db = try SQLiteConnection(path: path)
            let names = try db.query("SELECT name FROM pragma_table_info('Z_1SONGS')").map { $0[0] }
            #expect(names == columns.map { .text($0) })
            if songsOrdered {
                // The songs' keys in the playlist's order.
                #expect(
                    try db.query("SELECT Z_2SONGS FROM Z_1SONGS WHERE Z_1PLAYLISTS = 1 ORDER BY Z_FOK_2SONGS")
                        == [[.integer(3)], [.integer(1)], [.integer(2)]])
            }
        }
    }

    /// An Xcode model with an ordered many-to-many loads, and its Core Data store orders the
    /// album's assets in `Z_FOK_2ASSETS` beside `Z_2ASSETS` (Album is entity 1, Asset 2).
    @Test func anXcodeModelsOrderedManyToManyLaysOutAsCoreDataDoes() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let url = try folder.bare(
            "Photos",
            xcodeContents(
                """
                    <entity name="Album" representedClassName="Album" syncable="YES">
                        <attribute name="title" optional="YES" attributeType="String"/>
                        <relationship name="assets" optional="YES" toMany="YES" deletionRule="Nullify" ordered="YES" destinationEntity="Asset" inverseName="albums" inverseEntity="Asset"/>
                    </entity>
                    <entity name="Asset" representedClassName="Asset" syncable="YES">
                        <attribute name="file" optional="YES" attributeType="String"/>
                        <relationship name="albums" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Album" inverseName="assets" inverseEntity="Album"/>
                    </entity>
                """))
        let model = try ManagedObjectModel(contentsOf: url)
        let path = Fixtures.temporaryPath()
        let c = ManagedObjectContext(store: try Self.store(.coreData, model, at: path))
        let album = try c.insert("Album")
        let assets = try ["x", "y", "z"].map { f -> ManagedObject in
            let a = try c.insert("Asset")
            try a.setValue(f, forKey: "file")
            return a
        }
        try album.setValue([assets[1], assets[2], assets[0]], forKey: "assets")
        try c.save()
        let db = try SQLiteConnection(path: path)
        #expect(
            try db.query("SELECT name FROM pragma_table_info('Z_1ASSETS')").map { $0[0] } == [
                .text("Z_1ALBUMS"), .text("Z_2ASSETS"), .text("Z_FOK_2ASSETS"),
            ])
        #expect(
            try db.query("SELECT Z_2ASSETS FROM Z_1ASSETS ORDER BY Z_FOK_2ASSETS") == [
                [.integer(2)], [.integer(3)], [.integer(1)],
            ])
    }

    /// A Core Data store of an unordered album ⇄ asset many-to-many, migrated through its bundle to
    /// a version that orders both sides: the pairs are kept, each side numbered by key in its
    /// `Z_FOK_` column.
    @Test func aCoreDataMigrationOrdersAManyToMany() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        func contents(_ ordered: Bool) -> String {
            let flag = ordered ? #" ordered="YES""# : ""
            return xcodeContents(
                """
                    <entity name="Album" representedClassName="Album" syncable="YES">
                        <attribute name="title" optional="YES" attributeType="String"/>
                        <relationship name="assets" optional="YES" toMany="YES" deletionRule="Nullify"\(flag) destinationEntity="Asset" inverseName="albums" inverseEntity="Asset"/>
                    </entity>
                    <entity name="Asset" representedClassName="Asset" syncable="YES">
                        <attribute name="file" optional="YES" attributeType="String"/>
                        <relationship name="albums" optional="YES" toMany="YES" deletionRule="Nullify"\(flag) destinationEntity="Album" inverseName="assets" inverseEntity="Album"/>
                    </entity>
                """)
        }
        let bundle = try folder.bundle(
            "Photos", ["Photos": contents(false), "Photos 2": contents(true)], current: "Photos 2")
        let url = folder.root.appendingPathComponent("Photos.sqlite")
        do {
            let c = ManagedObjectContext(
                store: try PersistentStore(
                    coreDataStoreAt: url, model: try ManagedObjectModel(contentsOf: bundle, version: "Photos"),
                    create: true))
            let albums = try ["A", "B"].map { t -> ManagedObject in
                let a = try c.insert("Album")
                try a.setValue(t, forKey: "title")
                return a
            }
            let assets = try ["x", "y", "z"].map { f -> ManagedObject in
                let a = try c.insert("Asset")
                try a.setValue(f, forKey: "file")
                return a
            }
            try albums[0].setValue([assets[2], assets[0]], forKey: "assets")
            try albums[1].setValue([assets[0], assets[1], assets[2]], forKey: "assets")
            try c.save()
        }
        let plan = try MigrationPlan(versionsOf: bundle)
        let store = try PersistentStore(coreDataStoreAt: url, model: plan.versions.last!, migration: .plan(plan))
        let c = ManagedObjectContext(store: store)
        #expect(try Self.members(c, "Album", "title", "A", "assets", "file") == ["x", "z"])
        #expect(try Self.members(c, "Album", "title", "B", "assets", "file") == ["x", "y", "z"])
        #expect(try Self.members(c, "Asset", "file", "x", "albums", "title") == ["A", "B"])
        #expect(try Self.members(c, "Asset", "file", "z", "albums", "title") == ["A", "B"])
        let db = try SQLiteConnection(path: url.path)
        #expect(
            try db.query("SELECT count(*), count(Z_FOK_1ALBUMS), count(Z_FOK_2ASSETS) FROM Z_1ASSETS") == [
                [.integer(5), .integer(5), .integer(5)]
            ])
        #expect(try db.query("PRAGMA integrity_check") == [[.text("ok")]])
    }

    /// A store Core Data wrote, laid out here by hand: order keys spaced as an application's may be,
    /// read back in their order.
    @Test func aCoreDataStoreWithSpacedOrderKeysReadsInOrder() throws {
        let model = try Self.model()
        let path = Fixtures.temporaryPath()
        do {
            let c = ManagedObjectContext(store: try Self.store(.coreData, model, at: path))
            let p = try c.insert("Playlist")
            try p.setValue("P", forKey: "name")
            for title in ["a", "b", "c"] {
                let s = try c.insert("Song")
                try s.setValue(title, forKey: "title")
                try p.add(s, to: "songs")
            }
            try c.save()
        }
        let db = try SQLiteConnection(path: path)
        // c first, then a, then b: keys 3, 1, 2 at 1024, 2048, 3072.
        for (key, place) in [(3, 1024), (1, 2048), (2, 3072)] {
            try db.execute("UPDATE Z_1SONGS SET Z_FOK_2SONGS = \(place) WHERE Z_2SONGS = \(key)")
        }
        let c = ManagedObjectContext(store: try Self.store(.coreData, model, at: path))
        #expect(try Self.songs(c, "P") == ["c", "a", "b"])
        let first = try c.fetch(FetchRequest("Playlist", predicate: "songs[FIRST].title == 'c'"))
        #expect(first.count == 1)
    }

    /// An inferred migration that orders both sides of a many-to-many keeps every pair, numbered
    /// by key; one that unorders them keeps the pairs.
    @Test func migrationOrdersAndUnordersAManyToMany() throws {
        let path = Fixtures.temporaryPath()
        let unordered = try Self.model(songsOrdered: false, playlistsOrdered: false)
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: unordered, path: path))
            let songs = try ["a", "b", "c"].map { t -> ManagedObject in
                let s = try c.insert("Song")
                try s.setValue(t, forKey: "title")
                return s
            }
            let p = try c.insert("Playlist")
            try p.setValue("P", forKey: "name")
            try p.setValue([songs[2], songs[0], songs[1]], forKey: "songs")
            try c.save()
        }
        let ordered = try Self.model()
        var c = ManagedObjectContext(
            store: try PersistentStore(model: ordered, path: path, migration: .inferred))
        #expect(try Self.songs(c, "P") == ["a", "b", "c"])
        #expect(try Self.playlists(c, "c") == ["P"])
        // Both sides' orders written (the join table is named by Playlist.songs, which sorts first).
        let db = try SQLiteConnection(path: path)
        #expect(
            try db.query("SELECT count(*), count(Z_SRC_ORD), count(Z_DST_ORD) FROM Z_Playlist_songs") == [
                [.integer(3), .integer(3), .integer(3)]
            ])
        let p = try #require(try c.fetch(FetchRequest("Playlist")).first)
        let songs = try #require(try p.get("songs", as: [ManagedObject].self))
        try p.setValue([songs[1], songs[2], songs[0]], forKey: "songs")
        try c.save()
        c = ManagedObjectContext(store: try PersistentStore(model: ordered, path: path))
        #expect(try Self.songs(c, "P") == ["b", "c", "a"])
        c = ManagedObjectContext(store: try PersistentStore(model: unordered, path: path, migration: .inferred))
        #expect(try Set(Self.songs(c, "P")) == ["a", "b", "c"])
    }
}
