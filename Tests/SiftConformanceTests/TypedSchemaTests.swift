// Integration tests of the SQL back-end on a hand-written, Core Data-style *typed* schema (the JSON
// store only ever produces `any` columns): string/integer/double/boolean/decimal/data attributes,
// dates in all three storage encodings, a to-one chain (`employer.boss.name`), a to-many through a
// foreign key in the child, a many-to-many through a join table, and value tables with and without
// a count column. The same people exist twice — as SQLite rows and as nested in-memory dictionaries
// — and every predicate in the table must select exactly the rows for which the in-memory evaluator
// (the ground truth) returns true, alone and in seeded random AND/OR/NOT trees; sort keys (a table
// and seeded random lists) must give the same order as `sorted(by:)`; and the forms the lowering
// cannot express must be rejected with the right kind and location. Cases where the back-ends are
// known to disagree sit in `knownDivergences`, which asserts they still do.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite
import SiftSyntax
import SiftTestSupport
import Testing

// MARK: - The data, written once and turned into both rows and dictionaries

/// A date from an ISO-8601 string in UTC (whole milliseconds, so every encoding is exact).
private func day(_ text: String) -> Date {
    let f = ISO8601DateFormatter()
    f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    if let d = f.date(from: text) { return d }
    f.formatOptions = [.withInternetDateTime]
    if let d = f.date(from: text) { return d }
    return f.date(from: text + "T00:00:00Z")!
}

/// 2024-05-01T12:00:00.000Z plus a fraction of a millisecond: between two values an ISO-8601
/// column (whole milliseconds) can hold.
private func subMillisecond(_ seconds: Double) -> Date {
    day("2024-05-01T12:00:00.000Z").addingTimeInterval(seconds)
}

private struct PersonRow {
    var id: Int64
    var name: String?
    var age: Int64?
    var score: Double?
    var active: Bool?
    var born: Date?
    var updated: Date?
    var balance: Decimal?
    var photo: [UInt8]?
    var employer: Int64?
    var friends: [Int64] = []
    var nicknames: [String] = []
    /// nil: the collection itself is nil (the count column is NULL).
    var tags: [String]? = nil
    /// A decimal kept as canonical TEXT (equality only): derived from the id so every row has one.
    var price: Decimal? {
        switch id % 5 {
        case 0: nil
        case 1: Decimal(string: "3.5")
        case 2: Decimal(id) / 4
        case 3: Decimal(string: "0.1000000000000000001")
        default: Decimal(-id)
        }
    }
    /// A to-many of dates kept as ISO-8601 text in a value table.
    var visits: [Date] {
        switch id % 4 {
        case 0: []
        case 1: [day("2024-05-01T12:00:00.000Z"), day("2023-01-01")]
        case 2: [day("2024-05-01T12:00:00.001Z")]
        default: [day("1999-12-31T23:59:59.999Z"), day("2024-05-01T12:00:00.000Z"), day("2024-06-01")]
        }
    }
}

private struct CompanyRow {
    var id: Int64
    var name: String?
    var founded: Date?
    var boss: Int64?
}

private struct PetRow {
    var id: Int64
    var owner: Int64?
    var name: String?
    var species: String?
    var age: Int64?
    var weight: Double?
}

private enum Data0 {
    // Text is written NFC except where the decomposed form is the NFC form ("q\u{303}", no precomposed q̃).
    static let people: [PersonRow] = [
        PersonRow(
            id: 1, name: "Alice", age: 34, score: 88.5, active: true, born: day("1990-03-01"),
            updated: day("2024-05-01T12:00:00.000Z"), balance: Decimal(string: "100.25"), photo: [1, 2, 3],
            employer: 1, friends: [2, 3], nicknames: ["Ali", "Al"], tags: ["x", "y"]),
        PersonRow(
            id: 2, name: "bob", age: 17, score: 42, active: false, born: day("2007-06-15"),
            updated: day("2023-01-01"), balance: Decimal(string: "-3.5"), photo: nil,
            employer: 2, friends: [1], nicknames: [], tags: []),
        PersonRow(
            id: 3, name: "Zoë", age: 25, score: nil, active: true, born: nil,
            updated: day("2024-05-01T12:00:00.500Z"), balance: 0, photo: [],
            employer: nil, friends: [1, 4, 5], nicknames: ["zoe"], tags: nil),
        PersonRow(
            id: 4, name: nil, age: nil, score: nil, active: nil, born: nil, updated: nil, balance: nil,
            photo: nil, employer: nil, friends: [], nicknames: [], tags: nil),
        PersonRow(
            id: 5, name: "", age: 0, score: 0, active: false, born: day("2001-01-01"),
            updated: nil, balance: nil, photo: [0], employer: 3, friends: [], nicknames: [""], tags: [""]),
        PersonRow(
            id: 6, name: "josé", age: 61, score: 99.75, active: true, born: day("1963-11-22"),
            updated: day("2022-12-31T23:59:59.999Z"), balance: 1_000_000, photo: nil,
            employer: 4, friends: [7], nicknames: ["Pepe", "pepe"], tags: ["a"]),
        PersonRow(
            id: 7, name: "JOSÉ", age: 45, score: 55.5, active: nil, born: day("1979-07-04"),
            updated: nil, balance: Decimal(string: "250.75"), photo: nil,
            employer: 1, friends: [6, 8], nicknames: [], tags: ["b", "a"]),
        PersonRow(
            id: 8, name: "Ångström", age: 80, score: -1.5, active: true, born: day("1944-02-29"),
            updated: day("2020-02-29T00:00:00.000Z"), balance: nil, photo: nil,
            employer: 5, friends: [], nicknames: ["Ång"], tags: []),
        PersonRow(
            id: 9, name: "straße", age: 29, score: 70, active: false, born: day("1995-05-05"),
            updated: day("2021-06-01"), balance: 42, photo: [9, 9],
            employer: 2, friends: [10, 11], nicknames: ["Strasse"], tags: nil),
        PersonRow(
            id: 10, name: "Eva", age: 33, score: 64.25, active: true, born: day("1991-01-01"),
            updated: day("2024-05-01T11:59:59.999Z"), balance: Decimal(string: "0.5"), photo: nil,
            employer: 6, friends: [11, 12], nicknames: ["Evi"], tags: ["x"]),
        PersonRow(
            id: 11, name: "eva", age: 33, score: nil, active: false, born: day("1991-01-01"),
            updated: nil, balance: nil, photo: nil, employer: nil, friends: [10], nicknames: [], tags: nil),
        PersonRow(
            id: 12, name: "Éva", age: nil, score: 12.5, active: true, born: nil,
            updated: day("2019-09-09"), balance: -1, photo: nil, employer: 1, friends: [], nicknames: ["Evi", "Évi"],
            tags: ["É"]),
        PersonRow(
            id: 13, name: "q\u{303}uiz", age: 22, score: 10, active: nil, born: day("2002-02-02"),
            updated: nil, balance: nil, photo: nil, employer: nil, friends: [14], nicknames: ["q"], tags: []),
        PersonRow(
            id: 14, name: "q", age: 19, score: 19, active: false, born: day("2005-05-05"),
            updated: nil, balance: 7, photo: nil, employer: 3, friends: [13], nicknames: [], tags: nil),
        PersonRow(
            id: 15, name: "O'Brien", age: 50, score: 50, active: true, born: day("1974-04-04"),
            updated: day("2024-01-01"), balance: 50, photo: nil, employer: 2, friends: [1, 2, 3, 4], nicknames: ["OB"],
            tags: ["x"]),
        PersonRow(
            id: 16, name: "50%_off", age: 3, score: nil, active: nil, born: day("2021-03-03"),
            updated: nil, balance: nil, photo: nil, employer: nil, friends: [], nicknames: [], tags: nil),
        PersonRow(
            id: 17, name: "a*b?c", age: 40, score: 40.5, active: false, born: nil,
            updated: nil, balance: 3, photo: [1, 2], employer: 6, friends: [], nicknames: [], tags: []),
        PersonRow(
            id: 18, name: "Ali", age: 34, score: 88.5, active: true, born: day("1990-03-01"),
            updated: day("2024-05-01T12:00:00.000Z"), balance: Decimal(string: "100.25"), photo: [1, 2, 3],
            employer: 1, friends: [1], nicknames: ["Alice"], tags: ["y"]),
        PersonRow(
            id: 19, name: "alice", age: 35, score: nil, active: nil, born: nil, updated: nil,
            balance: nil, photo: nil, employer: 4, friends: [], nicknames: [], tags: nil),
        PersonRow(
            id: 20, name: "Zoe", age: 25, score: 77, active: true, born: day("1999-12-31"),
            updated: day("2000-01-01"), balance: 12, photo: nil, employer: 5, friends: [3, 21], nicknames: ["Zo"],
            tags: ["z"]),
        PersonRow(
            id: 21, name: "ZOË", age: 26, score: 78, active: false, born: day("1998-08-08"),
            updated: nil, balance: nil, photo: nil, employer: nil, friends: [3, 20], nicknames: [], tags: nil),
        PersonRow(
            id: 22, name: "日本", age: 70, score: 1, active: true, born: day("1954-06-06"),
            updated: day("2018-08-08"), balance: 8, photo: nil, employer: 2, friends: [], nicknames: ["にほん"], tags: []),
        PersonRow(
            id: 23, name: "Émile", age: 12, score: 95, active: false, born: day("2012-12-12"),
            updated: nil, balance: nil, photo: nil, employer: nil, friends: [24], nicknames: [], tags: nil),
        PersonRow(
            id: 24, name: "emile", age: 12, score: 95, active: true, born: day("2012-12-12"),
            updated: nil, balance: nil, photo: nil, employer: 3, friends: [23], nicknames: ["Emi"], tags: ["e"]),
        PersonRow(
            id: 25, name: nil, age: 44, score: 44, active: true, born: day("1980-01-01"),
            updated: day("2024-06-01"), balance: 44, photo: [4], employer: 2, friends: [26], nicknames: [], tags: []),
        PersonRow(
            id: 26, name: "Bob", age: 66, score: nil, active: false, born: day("1958-01-01"),
            updated: nil, balance: nil, photo: nil, employer: 1, friends: [], nicknames: ["Bobby", "Rob"], tags: nil),
        PersonRow(
            id: 27, name: "Carol", age: 28, score: 28, active: nil, born: nil,
            updated: day("2022-02-22"), balance: 28, photo: nil, employer: nil, friends: [28], nicknames: [],
            tags: ["c"]),
        PersonRow(
            id: 28, name: "carol", age: 28, score: 28.5, active: true, born: day("1996-06-06"),
            updated: nil, balance: nil, photo: nil, employer: 4, friends: [27, 29, 30], nicknames: ["Caz"], tags: []),
        PersonRow(
            id: 29, name: "Dave", age: nil, score: 0.5, active: false, born: day("1985-05-05"),
            updated: nil, balance: 0, photo: nil, employer: 6, friends: [], nicknames: [], tags: nil),
        PersonRow(
            id: 30, name: "dave", age: 18, score: 18, active: true, born: day("2008-08-08"),
            updated: day("2024-05-02"), balance: 18, photo: nil, employer: nil, friends: [29], nicknames: ["D"],
            tags: ["d"]),
        // Beyond the BMP and fullwidth letters (UTF-8 order = scalar order ≠ UTF-16 order), a big
        // integer that a double cannot hold, a decimal that is not a binary fraction, an old date.
        PersonRow(
            id: 31, name: "\u{1D49C}lpha", age: 9_007_199_254_740_993, score: 1e300, active: true,
            born: day("0999-09-09"),
            updated: day("0999-09-09T09:09:09.009Z"), balance: Decimal(string: "0.1"), photo: [255],
            employer: 6, friends: [32], nicknames: ["\u{1D49C}lpha", "ｚ"], tags: ["𝒜"]),
        PersonRow(
            id: 32, name: "ｚeta", age: -5, score: -0.0, active: false, born: day("1969-12-31T23:59:59.999Z"),
            updated: day("1969-12-31T23:59:59.999Z"), balance: Decimal(string: "-0.1"), photo: nil,
            employer: 5, friends: [31, 1], nicknames: ["ｚeta", "Zeta"], tags: []),
        PersonRow(
            id: 33, name: "Emi", age: 9_007_199_254_740_992, score: 9_007_199_254_740_992, active: true,
            born: day("2001-01-01T00:00:00.001Z"),
            updated: day("2024-05-01T12:00:00.001Z"), balance: Decimal(string: "0.30"), photo: [1, 2, 3, 0],
            employer: 2, friends: [24], nicknames: ["Emi", "emi"], tags: ["Emi"]),
        // Integers near the Int64 limits: sums and products overflow (memory wraps, as NSNumber
        // arithmetic on Int64 does in the evaluator).
        PersonRow(
            id: 34, name: "Max", age: 3_000_000_000_000_000_000, score: 3e18, active: true, born: nil,
            updated: nil, balance: nil, photo: nil, employer: 7, friends: [], nicknames: [], tags: nil),
        PersonRow(
            id: 35, name: "Maxi", age: 3_000_000_000_000_000_000, score: nil, active: nil, born: nil,
            updated: nil, balance: nil, photo: nil, employer: 7, friends: [34, 36], nicknames: [], tags: nil),
        PersonRow(
            id: 36, name: "Min", age: Int64.min, score: -9.3e18, active: false, born: nil,
            updated: nil, balance: nil, photo: nil, employer: nil, friends: [], nicknames: [], tags: nil),
        PersonRow(
            id: 37, name: "Many", age: Int64.max, score: 9.3e18, active: true, born: nil,
            updated: nil, balance: nil, photo: nil, employer: nil, friends: [34, 35, 37], nicknames: [], tags: nil),
        // Orders after "Zoe" by scalars of the NFC form, before the decomposed "Zoe\u{308}" by raw scalars.
        PersonRow(
            id: 38, name: "Zof", age: 31, score: 31, active: true, born: day("1993-03-03"),
            updated: day("2024-05-01T12:00:00.002Z"), balance: 31, photo: [1, 3], employer: 7, friends: [38],
            nicknames: ["Zof", "zof"], tags: ["Zof"]),
        // Prefixes whose last scalar cannot simply be incremented (U+D7FF → U+E000, U+10FFFF), an
        // embedded NUL, a name ending in a combining mark.
        PersonRow(
            id: 39, name: "\u{D7FF}x", age: 1, score: nil, active: nil, born: nil, updated: nil, balance: nil,
            photo: nil, employer: nil, friends: [], nicknames: [], tags: nil),
        PersonRow(
            id: 40, name: "\u{E000}y", age: 2, score: nil, active: nil, born: nil, updated: nil, balance: nil,
            photo: nil, employer: nil, friends: [], nicknames: [], tags: nil),
        PersonRow(
            id: 41, name: "\u{10FFFF}z", age: 3, score: nil, active: nil, born: nil, updated: nil, balance: nil,
            photo: nil, employer: nil, friends: [], nicknames: ["\u{10FFFF}"], tags: nil),
        PersonRow(
            id: 42, name: "nul\u{0}byte", age: 4, score: nil, active: nil, born: nil, updated: nil, balance: nil,
            photo: nil, employer: nil, friends: [], nicknames: ["nul\u{0}"], tags: nil),
        PersonRow(
            id: 43, name: "aq\u{303}", age: 5, score: nil, active: nil, born: nil, updated: nil, balance: nil,
            photo: nil, employer: nil, friends: [], nicknames: [], tags: nil),
        // Friends whose ages sum past -2^63 (twice Int64.min through a duplicated friendship, and
        // Int64.min - 5): memory's @sum wraps.
        PersonRow(
            id: 44, name: "Wrap", age: 44, score: nil, active: nil, born: nil, updated: nil, balance: nil,
            photo: nil, employer: nil, friends: [36, 36, 2], nicknames: [], tags: nil),
        PersonRow(
            id: 45, name: "Wrap2", age: 45, score: nil, active: nil, born: nil, updated: nil, balance: nil,
            photo: nil, employer: nil, friends: [36, 32], nicknames: [], tags: nil),
    ]

    static let companies: [CompanyRow] = [
        CompanyRow(id: 1, name: "Acme", founded: day("1990-01-01"), boss: 1),
        CompanyRow(id: 2, name: "Globex", founded: day("2005-05-05"), boss: 6),
        CompanyRow(id: 3, name: "Initech", founded: nil, boss: nil),
        CompanyRow(id: 4, name: nil, founded: day("1970-01-01"), boss: 3),
        CompanyRow(id: 5, name: "Ümlaut GmbH", founded: day("2010-10-10"), boss: 4),
        CompanyRow(id: 6, name: "acme", founded: nil, boss: 30),
        // Founded on a date whose seconds since 1970 are a whole number, for constants a few
        // nanoseconds away that round onto it when converted to seconds since 1970.
        CompanyRow(id: 7, name: "Epoch", founded: Date(timeIntervalSince1970: 1_000_000_000), boss: 37),
    ]

    static let pets: [PetRow] = [
        PetRow(id: 1, owner: 1, name: "Rex", species: "dog", age: 5, weight: 30.5),
        PetRow(id: 2, owner: 1, name: "Tom", species: "cat", age: 3, weight: 4.25),
        PetRow(id: 3, owner: 2, name: "Nemo", species: "fish", age: nil, weight: 0.125),
        PetRow(id: 4, owner: 3, name: nil, species: "cat", age: 12, weight: nil),
        PetRow(id: 5, owner: 6, name: "Fido", species: "dog", age: 1, weight: 12),
        PetRow(id: 6, owner: 6, name: "Émile", species: "cat", age: 7, weight: 5),
        PetRow(id: 7, owner: 7, name: "rex", species: "Dog", age: 2, weight: nil),
        PetRow(id: 8, owner: 9, name: "Bello", species: "dog", age: 5, weight: 25),
        PetRow(id: 9, owner: 9, name: "Mimi", species: "cat", age: 5, weight: 3),
        PetRow(id: 10, owner: 9, name: "Kiki", species: "bird", age: 1, weight: 0.0625),
        PetRow(id: 11, owner: nil, name: "Ghost", species: "dog", age: 4, weight: 10),
        PetRow(id: 12, owner: 12, name: "Zoë", species: "cat", age: 0, weight: 4),
        PetRow(id: 13, owner: 13, name: "", species: nil, age: nil, weight: nil),
        PetRow(id: 14, owner: 18, name: "Rex", species: "dog", age: 9, weight: 31),
        PetRow(id: 15, owner: 25, name: "Max", species: "dog", age: 14, weight: 40),
        PetRow(id: 16, owner: 28, name: "Tom", species: nil, age: 3, weight: 4.25),
    ]
}

// MARK: - The schema

private let typedSchema: Schema = {
    let person = Schema.Entity(
        name: "Person", table: "person",
        attributes: [
            Schema.Attribute(name: "name", type: .string),
            Schema.Attribute(name: "age", type: .integer),
            Schema.Attribute(name: "score", type: .double),
            Schema.Attribute(name: "active", type: .boolean),
            Schema.Attribute(name: "born", column: "born_at", type: .date, encoding: .secondsSince2001),
            Schema.Attribute(name: "updated", column: "updated_at", type: .date, encoding: .iso8601),
            Schema.Attribute(name: "balance", type: .decimal),
            Schema.Attribute(name: "photo", type: .data),
            Schema.Attribute(name: "price", type: .decimal, encoding: .text),
        ],
        relationships: [
            Schema.Relationship(name: "employer", toOne: "Company", foreignKey: "employer_id"),
            Schema.Relationship(name: "pets", toMany: "Pet", foreignKey: "owner_id"),
            Schema.Relationship(
                name: "friends", toMany: "Person",
                joinTable: .init(table: "friendship", source: "person_id", destination: "friend_id")),
            Schema.Relationship(name: "nicknames", values: .init(table: "nickname", owner: "person_id", type: .string)),
            Schema.Relationship(
                name: "tags", values: .init(table: "tag", owner: "person_id", column: "tag", type: .string),
                countColumn: "tag_count"),
            Schema.Relationship(
                name: "visits",
                values: .init(table: "visit", owner: "person_id", column: "at", type: .date, encoding: .iso8601)),
        ])
    let company = Schema.Entity(
        name: "Company", table: "company",
        attributes: [
            Schema.Attribute(name: "name", type: .string),
            Schema.Attribute(name: "founded", type: .date, encoding: .secondsSince1970),
        ],
        relationships: [Schema.Relationship(name: "boss", toOne: "Person", foreignKey: "boss_id")])
    let pet = Schema.Entity(
        name: "Pet", table: "pet",
        attributes: [
            Schema.Attribute(name: "name", type: .string),
            Schema.Attribute(name: "species", type: .string),
            Schema.Attribute(name: "age", type: .integer),
            Schema.Attribute(name: "weight", type: .double),
        ])
    return try! Schema(entities: [person, company, pet])
}()

// MARK: - The store and the in-memory objects

private func opt<T>(_ v: T?, _ f: (T) -> SQLValue) -> SQLValue { v.map(f) ?? .null }

private func isoText(_ d: Date) -> String {
    let f = ISO8601DateFormatter()
    f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return f.string(from: d)
}

/// The SQLite database holding `Data0`, with Sift's functions registered.
private func makeStore() throws -> SQLiteConnection {
    let db = try SQLiteConnection()
    try SQLiteFunctions.register(on: db.handle)
    try db.execute(
        """
        CREATE TABLE company (id INTEGER PRIMARY KEY, name TEXT, founded REAL, boss_id INTEGER);
        CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT, age INTEGER, score REAL, active INTEGER,
            born_at REAL, updated_at TEXT, balance REAL, photo BLOB, employer_id INTEGER REFERENCES company(id),
            tag_count INTEGER, price TEXT);
        CREATE TABLE pet (id INTEGER PRIMARY KEY, owner_id INTEGER REFERENCES person(id), name TEXT,
            species TEXT, age INTEGER, weight REAL);
        CREATE TABLE friendship (person_id INTEGER NOT NULL, friend_id INTEGER NOT NULL);
        CREATE TABLE nickname (person_id INTEGER NOT NULL, value TEXT);
        CREATE TABLE tag (person_id INTEGER NOT NULL, tag TEXT);
        CREATE TABLE visit (person_id INTEGER NOT NULL, at TEXT);
        CREATE INDEX person_name ON person(name);
        CREATE INDEX pet_owner ON pet(owner_id);
        """)
    for c in Data0.companies {
        _ = try db.query(
            "INSERT INTO company VALUES (?, ?, ?, ?)",
            [
                .integer(c.id), opt(c.name) { .text($0.precomposedStringWithCanonicalMapping) },
                opt(c.founded) { .double($0.timeIntervalSince1970) }, opt(c.boss) { .integer($0) },
            ])
    }
    for p in Data0.people {
        _ = try db.query(
            "INSERT INTO person VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                .integer(p.id), opt(p.name) { .text($0.precomposedStringWithCanonicalMapping) },
                opt(p.age) { .integer($0) }, opt(p.score) { .double($0) }, opt(p.active) { .integer($0 ? 1 : 0) },
                opt(p.born) { .double($0.timeIntervalSinceReferenceDate) }, opt(p.updated) { .text(isoText($0)) },
                opt(p.balance) { .double(NSDecimalNumber(decimal: $0).doubleValue) }, opt(p.photo) { .blob($0) },
                opt(p.employer) { .integer($0) }, opt(p.tags) { .integer(Int64($0.count)) },
                opt(p.price) { .text($0.description) },
            ])
        for f in p.friends { _ = try db.query("INSERT INTO friendship VALUES (?, ?)", [.integer(p.id), .integer(f)]) }
        for n in p.nicknames {
            _ = try db.query(
                "INSERT INTO nickname VALUES (?, ?)", [.integer(p.id), .text(n.precomposedStringWithCanonicalMapping)])
        }
        for at in p.visits {
            _ = try db.query("INSERT INTO visit VALUES (?, ?)", [.integer(p.id), .text(isoText(at))])
        }
        for t in p.tags ?? [] {
            _ = try db.query(
                "INSERT INTO tag VALUES (?, ?)", [.integer(p.id), .text(t.precomposedStringWithCanonicalMapping)])
        }
    }
    for p in Data0.pets {
        _ = try db.query(
            "INSERT INTO pet VALUES (?, ?, ?, ?, ?, ?)",
            [
                .integer(p.id), opt(p.owner) { .integer($0) }, opt(p.name) { .text($0) }, opt(p.species) { .text($0) },
                opt(p.age) { .integer($0) }, opt(p.weight) { .double($0) },
            ])
    }
    return db
}

private func v<T>(_ x: T?, _ f: (T) -> Value) -> Value { x.map(f) ?? .null }

/// A person as the in-memory evaluator sees it. The object graph has cycles (friends, bosses), so
/// related people are built to `depth` levels; every predicate below reads at most three levels.
private func personValue(_ id: Int64, depth: Int) -> Value {
    let p = Data0.people.first { $0.id == id }!
    var d: [String: Value] = [
        "id": .integer(p.id),
        "name": v(p.name) { .string($0.precomposedStringWithCanonicalMapping) },
        "age": v(p.age) { .integer($0) },
        "score": v(p.score) { .double($0) },
        "active": v(p.active) { .bool($0) },
        "born": v(p.born) { .date($0) },
        "updated": v(p.updated) { .date($0) },
        "balance": v(p.balance) { .decimal($0) },
        "photo": v(p.photo) { .data(Data($0)) },
        "price": v(p.price) { .decimal($0) },
    ]
    guard depth > 0 else { return .dictionary(d) }
    d["employer"] = v(p.employer) { companyValue($0, depth: depth - 1) }
    d["pets"] = .array(Data0.pets.filter { $0.owner == id }.map(petValue))
    d["friends"] = .array(p.friends.map { personValue($0, depth: depth - 1) })
    d["nicknames"] = .array(p.nicknames.map { .string($0.precomposedStringWithCanonicalMapping) })
    d["tags"] = v(p.tags) { .array($0.map { .string($0.precomposedStringWithCanonicalMapping) }) }
    d["visits"] = .array(p.visits.map { .date($0) })
    return .dictionary(d)
}

private func companyValue(_ id: Int64, depth: Int) -> Value {
    let c = Data0.companies.first { $0.id == id }!
    var d: [String: Value] = [
        "name": v(c.name) { .string($0.precomposedStringWithCanonicalMapping) },
        "founded": v(c.founded) { .date($0) },
    ]
    d["boss"] = v(c.boss) { personValue($0, depth: depth) }
    return .dictionary(d)
}

private func petValue(_ p: PetRow) -> Value {
    .dictionary([
        "name": v(p.name) { .string($0) }, "species": v(p.species) { .string($0) },
        "age": v(p.age) { .integer($0) }, "weight": v(p.weight) { .double($0) },
    ])
}

/// The people in id order (the order the SQL tie-break `t0.id ASC` also gives).
private let memoryPeople: [Value] = Data0.people.map { personValue($0.id, depth: 3) }

// MARK: - The predicate table

/// One predicate with its `%@` arguments and `$VAR` bindings.
struct TypedCase: Hashable, Sendable, CustomTestStringConvertible {
    var format: String
    var arguments: [LiteralValue] = []
    var variables: [String: LiteralValue] = [:]
    var testDescription: String {
        format + (arguments.isEmpty ? "" : " with \(arguments)") + (variables.isEmpty ? "" : " vars \(variables)")
    }
}

private func c(_ f: String, _ args: LiteralValue..., vars: [String: LiteralValue] = [:]) -> TypedCase {
    TypedCase(format: f, arguments: args, variables: vars)
}

private let typedCases: [TypedCase] = [
    // Strings: every operator, options, nil, NOT.
    c("name == 'Alice'"), c("name != 'Alice'"), c("NOT name == 'Alice'"),
    c("name ==[c] 'alice'"), c("name !=[c] 'alice'"), c("name ==[cd] 'eva'"), c("NOT name ==[cd] 'eva'"),
    c("name ==[d] 'zoe'"), c("name ==[n] 'Zoë'"),
    c("name == nil"), c("name != nil"), c("nil == name"), c("NOT name == nil"),
    c("name < 'M'"), c("name >= 'b'"), c("NOT name < 'M'"), c("name <[c] 'M'"), c("NOT name >[cd] 'e'"),
    c("name BEGINSWITH 'A'"), c("NOT name BEGINSWITH 'A'"), c("name BEGINSWITH 'q'"), c("name BEGINSWITH ''"),
    c("name BEGINSWITH[c] 'a'"), c("name BEGINSWITH[cd] 'e'"), c("NOT name BEGINSWITH[cd] 'e'"),
    c("name ENDSWITH 'e'"), c("NOT name ENDSWITH[c] 'E'"), c("name CONTAINS 'o'"), c("name CONTAINS[cd] 'O'"),
    c("NOT name CONTAINS 'a'"), c("name LIKE '*li*'"), c("name LIKE[c] 'a?i*'"), c("NOT name LIKE 'e*'"),
    c("name LIKE '50%_off'"), c("name LIKE 'a\\\\*b*'"),
    c("name MATCHES '[A-Z].*'"), c("NOT name MATCHES[c] 'e.a'"), c("name MATCHES '.*ß.*'"),
    c("name IN {'Alice', 'bob', nil}"), c("NOT name IN {'Alice', 'bob'}"), c("name IN[c] {'ALICE', 'BOB'}"),
    c("name IN %@", .array([.string("Eva"), .string("Zoë"), .null])), c("name IN {}"), c("NOT name IN {}"),
    c("name IN 'Alice and bob'"), c("name == %@", .string("Zoe\u{308}")), c("name ==[n] %@", .string("Zoe\u{308}")),
    // Numbers: integer, double, decimal, arithmetic, BETWEEN.
    c("age == 34"), c("age != 34"), c("NOT age != 34"), c("age > 30"), c("NOT age > 30"), c("age <= 25.5"),
    c("age < nil"), c("NOT age < nil"), c("age == nil"), c("score == 88.5"), c("score != 88.5"),
    c("score >= age"), c("NOT score >= age"), c("score == age"), c("score != age"),
    c("age BETWEEN {18, 40}"), c("NOT age BETWEEN {18, 40}"),
    c("age BETWEEN %@", .array([.integer(12), .integer(12)])),
    c("age IN {12, 33, 99}"), c("NOT age IN {12, 33, nil}"), c("age != nil AND age + 1 == 35"),
    c("score != nil AND age != nil AND age * 2 > score"),
    c("age != nil AND age - 10 < 10"), c("age != nil AND score != nil AND NOT age + score > 100"),
    // The same arithmetic away from the Int64 limits (the cases above diverge on rows 34–37).
    c("age BETWEEN {-1000000, 1000000} AND score != nil AND age * 2 > score"),
    c("age BETWEEN {-1000000, 1000000} AND age - 10 < 10"), c("age BETWEEN {-1000000, 1000000} AND -age < -30"),
    c("NOT (age == nil OR NOT age BETWEEN {-1000000, 1000000} OR age * 3 - 1 >= 50)"),
    c("age != nil AND age / 2 == 6"), c("age != nil AND -age < -30"), c("balance != nil AND abs(balance) > 40"),
    c("NOT (age == nil OR age * 3 - 1 >= 50)"),
    c("balance == %@", .decimal(Decimal(string: "100.25")!)), c("balance > 10"), c("NOT balance > 10"),
    c("balance < %@", .decimal(0)), c("balance == 0"), c("balance == age"), c("NOT balance BETWEEN {0, 50}"),
    // Booleans.
    c("active == YES"), c("active != YES"), c("active == NO"), c("NOT active == NO"), c("active == nil"),
    c("active == %@", .bool(true)), c("active != %@", .bool(false)), c("active == 1"), c("active IN {YES}"),
    // Dates in all three encodings.
    c("born < %@", .date(day("1990-01-01"))), c("NOT born < %@", .date(day("1990-01-01"))),
    c("born == %@", .date(day("1991-01-01"))), c("born != %@", .date(day("1991-01-01"))),
    c("born BETWEEN %@", .array([.date(day("1990-01-01")), .date(day("2000-01-01"))])),
    c("born >= %@", .date(day("2001-01-01"))), c("born == nil"),
    c("updated > %@", .date(day("2024-05-01T12:00:00.000Z"))),
    c("updated >= %@", .date(day("2024-05-01T12:00:00.000Z"))),
    c("updated == %@", .date(day("2024-05-01T12:00:00.000Z"))),
    c("NOT updated <= %@", .date(day("2022-12-31T23:59:59.999Z"))),
    c("updated != nil AND updated < %@", .date(day("2021-01-01"))),
    c("employer.founded < %@", .date(day("2000-01-01"))), c("NOT employer.founded < %@", .date(day("2000-01-01"))),
    c("employer.founded == %@", .date(Date(timeIntervalSince1970: 0))), c("employer.founded == nil"),
    c("born IN %@", .array([.date(day("1990-03-01")), .date(day("2012-12-12"))])),
    // Dates in two encodings compared, and date arithmetic: memory's own comparison and operator,
    // asked from SQL.
    c("employer.founded < updated"), c("NOT employer.founded < born"), c("born == updated"),
    c("born != nil AND born + 86400 > %@", .date(day("1990-03-01"))),
    c("updated != nil AND born != nil AND updated - 0.5 < born"),
    c("born != nil AND updated != nil AND updated - born > 1e9"),
    // Data.
    c("photo == %@", .data(Data([1, 2, 3]))), c("photo != %@", .data(Data([1, 2, 3]))), c("photo == nil"),
    // To-one paths, two levels, nil at each level.
    c("employer == nil"), c("employer != nil"), c("NOT employer == nil"), c("employer.name == 'Acme'"),
    c("employer.name != 'Acme'"), c("employer.name ==[c] 'acme'"), c("employer.name == nil"),
    c("employer.boss.name != 'x'"), c("employer.boss.name == 'Alice'"), c("employer.boss.name == nil"),
    c("employer.boss == nil"), c("employer.boss.age > age"), c("NOT employer.boss.age > age"),
    c("employer.boss.employer.name == 'Acme'"), c("employer.name BEGINSWITH[cd] 'u'"),
    c("employer.boss.name == name"), c("employer.boss.name != name"),
    // To-many: pets (FK), friends (join table), nicknames and tags (value tables).
    c("ANY pets.species == 'dog'"), c("NOT ANY pets.species == 'dog'"), c("ALL pets.species == 'dog'"),
    c("NOT ALL pets.species == 'dog'"), c("NONE pets.species == 'dog'"), c("NOT NONE pets.species == 'dog'"),
    c("ANY pets.name ==[c] 'rex'"), c("ALL pets.age > 2"), c("ANY pets.weight < 1"), c("ALL pets.name != nil"),
    c("ANY pets.name == nil"), c("SOME pets.age BETWEEN {4, 6}"), c("ANY pets.age IN {1, 14}"),
    c("ANY friends.name BEGINSWITH 'A'"), c("ALL friends.age >= 18"), c("NONE friends.active == YES"),
    c("ANY friends.employer.name == 'Acme'"), c("ALL friends.employer.name != 'Acme'"), c("ANY friends.age > age"),
    c("ANY friends.employer == nil"),
    c("ANY nicknames == 'Evi'"), c("ANY nicknames ==[cd] 'evi'"), c("ALL nicknames BEGINSWITH 'E'"),
    c("NONE nicknames == ''"), c("ANY nicknames LIKE[c] 'p*'"), c("'Al' IN nicknames"), c("NOT 'Al' IN nicknames"),
    c("nicknames CONTAINS 'zoe'"), c("ANY nicknames IN {'q', 'D'}"),
    c("ANY tags == 'x'"), c("ALL tags == 'x'"), c("NOT ALL tags == 'x'"), c("NONE tags == 'a'"), c("'a' IN tags"),
    c("tags == nil"), c("tags != nil"), c("NOT tags == nil"),
    // Collection operators.
    c("pets.@count == 0"), c("pets.@count > 1"), c("NOT pets.@count > 1"), c("friends.@count >= 2"),
    c("nicknames.@count == 0"), c("nicknames.@count == 2"), c("tags.@count == 0"), c("NOT tags.@count == 0"),
    c("tags.@count == nil"), c("tags.@count > 0"),
    c("pets.@sum.age > 5"), c("pets.@sum.age == 0"), c("NOT pets.@sum.age == 0"), c("pets.@avg.weight > 10"),
    c("pets.@avg.weight == nil"), c("pets.@min.age <= 1"), c("pets.@max.weight > 30"), c("pets.@max.age == nil"),
    c("friends.@sum.age > 100"), c("friends.@max.age > age"), c("friends.@min.score < 20"),
    c("pets.@count == friends.@count"),
    // SUBQUERY.
    c("SUBQUERY(pets, $p, $p.species == 'dog' AND $p.age > 4).@count > 0"),
    c("SUBQUERY(pets, $p, $p.species == 'cat').@count == 0"),
    c("NOT SUBQUERY(pets, $p, NOT $p.name BEGINSWITH 'R').@count >= 1"),
    c("SUBQUERY(friends, $f, $f.age > 30 OR $f.employer == nil)[SIZE] == 2"),
    c("SUBQUERY(nicknames, $n, $n BEGINSWITH[c] 'e').@count > 0"),
    // Variables and arguments.
    c("age > $MIN", vars: ["MIN": .integer(30)]), c("NOT name ==[c] $N", vars: ["N": .string("EVA")]),
    c("born < $D", vars: ["D": .date(day("1980-01-01"))]), c("active == $B", vars: ["B": .bool(false)]),
    c("ANY pets.species IN $S", vars: ["S": .array([.string("fish"), .string("bird")])]),
    c("%K == %@", .string("age"), .integer(33)),
    // Compounds, NOT around compounds, constants.
    c("age > 20 AND name BEGINSWITH[c] 'a'"), c("NOT (age > 20 AND name BEGINSWITH[c] 'a')"),
    c("age < 18 OR active == NO OR employer == nil"), c("NOT (age < 18 OR active == NO OR employer == nil)"),
    c("NOT (NOT (score > 50) OR ANY pets.species == 'cat')"),
    c("(name == nil OR age == nil) AND NOT (balance == nil)"),
    c("TRUEPREDICATE"), c("FALSEPREDICATE"), c("NOT TRUEPREDICATE"), c("1 == 1 AND name == 'bob'"),
    c("NOT (1 == 2) OR age == 3"), c("age > 10 AND FALSEPREDICATE"),
    // Harder corners: scalar order, big integers, decimals, sub-millisecond dates, column vs column.
    c("name < 'ｚ'"), c("name > %@", .string("\u{FFFD}")), c("name >= '\u{1D49C}'"), c("NOT name <= 'Zoë'"),
    c("age == 9007199254740992.0"), c("age > 9007199254740992.0"), c("age == 9007199254740993"),
    c("age >= score"), c("score == 0"), c("score < 0"),
    c("balance == 0.1"), c("balance == %@", .decimal(Decimal(string: "0.1")!)), c("balance > 0.1"),
    c("balance == 0.3"), c("balance <= %@", .decimal(Decimal(string: "-0.1")!)),
    c("balance IN %@", .array([.decimal(Decimal(string: "0.1")!), .decimal(50), .integer(42)])),
    c("updated >= %@", .date(subMillisecond(0.0004))),
    c("updated > %@", .date(subMillisecond(0.0004))),
    c("updated == %@", .date(subMillisecond(0.0004))),
    c("updated <= %@", .date(subMillisecond(0.0006))),
    c("updated BETWEEN %@", .array([.date(subMillisecond(0.0004)), .date(subMillisecond(0.0016))])),
    c("updated IN %@", .array([.date(subMillisecond(0.0004)), .date(day("2024-01-01"))])),
    c("NOT updated == %@", .date(subMillisecond(0.0004))), c("updated < %@", .date(subMillisecond(0.0006))),
    c("updated < %@", .date(day("1970-01-01"))), c("born < %@", .date(day("1970-01-01"))),
    c("born > %@", .date(Date(timeIntervalSinceReferenceDate: 0.0005))),
    c("employer.founded > %@", .date(Date(timeIntervalSince1970: -0.5))),
    c("active > 0"), c("active < 1"), c("active == 0.5"), c("active == 2"), c("active >= age"),
    c("age BETWEEN {40, 18}"), c("age BETWEEN %@", .array([.null, .integer(5)])), c("NOT age BETWEEN {40, 18}"),
    c("score IN {88.5, 42, 0}"), c("NOT score IN {88.5, 42, 0}"),
    c("name BEGINSWITH employer.name"), c("name CONTAINS[c] employer.boss.name"), c("employer.name ==[cd] name"),
    c("name < employer.name"), c("NOT name >= employer.boss.name"), c("name IN nicknames"), c("name IN[c] nicknames"),
    c("NOT name IN nicknames"), c("ANY nicknames ==[c] name"), c("ALL nicknames !=[cd] name"),
    c("name ==[l] 'alice'"), c("name LIKE ''"), c("name MATCHES ''"), c("name ENDSWITH ''"), c("name CONTAINS ''"),
    c("name ==[c] 'STRASSE'"), c("name CONTAINS[c] 'SS'"), c("name ENDSWITH %@", .string("\u{303}uiz")),
    c("name BEGINSWITH %@", .string("q\u{303}")), c("name BEGINSWITH 'Ali'"), c("name BEGINSWITH '\u{1D49C}'"),
    c("friends.@avg.score > 50"), c("friends.@sum.score > 100"), c("friends.@avg.age == nil"),
    c("pets.@min.name == 'Rex'"), c("pets.@max.name == 'Tom'"), c("pets.@min.name == ''"), c("pets.@avg.age < 5"),
    c("nicknames.@count == tags.@count"), c("ANY tags == nil"), c("NOT ANY tags == nil"), c("ALL tags != nil"),
    c("nicknames.@max == name"), c("tags.@min <= 'b'"),
    c("SUBQUERY(friends, $f, $f.employer.boss.name == 'Alice').@count >= 1"),
    c("SUBQUERY(friends, $f, $f.name ==[c] name).@count > 0"),
    c("SUBQUERY(friends, $f, $f.age > age).@count == 0"),
    c("SUBQUERY(tags, $t, $t ==[cd] 'e').@count == nil"),
    c("ANY friends.employer.boss.name BEGINSWITH 'A'"),
    c("ALL friends.employer.founded < %@", .date(day("2000-01-01"))),
    c("age != nil AND age * 4 < 0"), c("age != nil AND age + 9000000000000000000 < 0"), c("age != nil AND -age > 0"),
    c("age != nil AND age - 1 > age"), c("friends.@sum.age < 0"), c("friends.@sum.age > 0"),
    c("age != nil AND age / -1 > 0"), c("age != nil AND abs(age) < 0"), c("age != nil AND age / 0 == 0"),
    c("age != nil AND age * age * age > 0"), c("age != nil AND -(age * 7) / 3 + 1 < 0"),
    c("friends.@sum.age == 17"), c("friends.@sum.age == 9223372036854775803"),
    c("friends.@sum.age > 9000000000000000000"),
    c("NOT friends.@sum.age < 100"), c("pets.@sum.age == friends.@sum.age"),
    c("friends.@sum.age == 9007199254741027"), c("friends.@avg.age == 4503599627370513"),
    c("friends.@avg.age > 4503599627370513"),
    c("friends.@max.age == 9223372036854775807"), c("age == 9223372036854775807"), c("age > 9.2233720368547e18"),
    c("score > age"), c("age < score"),
    c("employer.founded < %@", .date(Date(timeIntervalSinceReferenceDate: 1_000_000_000 - 978_307_200 + 4e-9))),
    c("employer.founded == %@", .date(Date(timeIntervalSinceReferenceDate: 1_000_000_000 - 978_307_200 + 4e-9))),
    c("employer.founded >= %@", .date(Date(timeIntervalSinceReferenceDate: 1_000_000_000 - 978_307_200 - 4e-9))),
    c("employer.founded == %@", .date(Date(timeIntervalSince1970: 1_000_000_000))),
    c(
        "employer.founded BETWEEN %@",
        .array([
            .date(Date(timeIntervalSinceReferenceDate: 1_000_000_000 - 978_307_200 - 4e-9)),
            .date(Date(timeIntervalSinceReferenceDate: 1_000_000_000 - 978_307_200 + 4e-9)),
        ])),
    c(
        "employer.founded IN %@",
        .array([.date(Date(timeIntervalSinceReferenceDate: 1_000_000_000 - 978_307_200 + 4e-9))])),
    c(
        "NOT employer.founded IN %@",
        .array([
            .date(Date(timeIntervalSinceReferenceDate: 1_000_000_000 - 978_307_200 + 4e-9)),
            .date(day("1990-01-01")),
        ])),
    c("employer.founded <= %@", .date(Date(timeIntervalSinceReferenceDate: 1_000_000_000 - 978_307_200 - 4e-9))),
    c("employer.founded > %@", .date(Date(timeIntervalSinceReferenceDate: 1_000_000_000 - 978_307_200 - 4e-9))),
    c("name < %@", .string("Zoe\u{308}")), c("name >= %@", .string("Zoe\u{308}")),
    c("name <[n] %@", .string("Zoe\u{308}")),
    c("name >[n] %@", .string("Zoe\u{308}")), c("name BEGINSWITH[n] %@", .string("Zoe\u{308}")),
    c("name CONTAINS[n] %@", .string("e\u{301}")),
    c("name BEGINSWITH %@", .string("Zoe\u{308}")), c("name BETWEEN {'A', 'M'}"), c("NOT name BETWEEN {'a', 'z'}"),
    c("employer.founded BETWEEN %@", .array([.date(day("1970-01-01")), .date(day("2001-09-09"))])),
    c("updated BETWEEN %@", .array([.date(day("2024-01-01")), .date(day("2024-05-01T12:00:00.001Z"))])),
    c("balance > age"), c("balance == score"), c("NOT balance < score"),
    c("employer.boss.pets.@count > 0"), c("employer.boss.pets.@count == nil"), c("employer.boss.pets.@count == 0"),
    c("ANY employer.boss.pets.species == 'dog'"), c("ALL employer.boss.pets.species == 'dog'"),
    c("NOT ALL employer.boss.pets.species == 'dog'"), c("NONE employer.boss.pets.species == 'cat'"),
    c("employer.boss.nicknames.@count == 0"), c("employer.boss.tags == nil"), c("employer.boss.tags.@count == nil"),
    c("ANY employer.boss.tags == 'x'"), c("'a' IN employer.boss.tags"), c("employer.boss.pets.@sum.age == 0"),
    c("employer.boss.pets.@sum.age > 5"), c("employer.boss.pets.@max.age == nil"),
    c("SUBQUERY(employer.boss.pets, $p, $p.age > 3).@count == 0"),
    c("SUBQUERY(employer.boss.pets, $p, $p.age > 3).@count == nil"),
    c("name IN friends.name"), c("NOT name IN friends.name"), c("name IN[c] friends.name"),
    c("ANY nicknames BEGINSWITH[c] name"),
    c("%@ IN friends.name", .string("Alice")), c("NOT %@ IN friends.age", .integer(34)),
    c("SUBQUERY(pets, $p, $p.age > age).@count > 0"), c("SUBQUERY(pets, $p, $p.name == name).@count > 0"),
    c("SUBQUERY(pets, $p, $p.species == 'dog').@count == pets.@count"),
    c("NOT (ANY pets.species == 'dog' AND ALL friends.age > 20)"),
    c("updated < $D", vars: ["D": .date(subMillisecond(0.0015))]),
    c("name IN $L", vars: ["L": .array([.string("Zof"), .null, .string("q")])]),
    c("name BEGINSWITH '\u{D7FF}'"), c("name BEGINSWITH '\u{10FFFF}'"), c("NOT name BEGINSWITH '\u{10FFFF}'"),
    c("name >= '\u{D7FF}'"), c("name < '\u{E000}'"), c("name > '\u{10FFFF}'"),
    c("name == %@", .string("nul\u{0}byte")), c("name == 'nul'"), c("name BEGINSWITH 'nul'"),
    c("name BEGINSWITH %@", .string("nul\u{0}")),
    c("name CONTAINS %@", .string("\u{0}")), c("name ENDSWITH 'byte'"), c("name LIKE 'nul*'"),
    c("name ==[c] %@", .string("NUL\u{0}BYTE")),
    c("name < %@", .string("nul\u{0}c")), c("ANY nicknames == %@", .string("nul\u{0}")), c("name MATCHES 'nul.byte'"),
    c("name CONTAINS 'q'"), c("name ENDSWITH 'q'"), c("name ENDSWITH '\u{303}'"), c("name ENDSWITH 'q\u{303}'"),
    c("name BEGINSWITH 'a'"), c("name BEGINSWITH 'aq'"), c("name LIKE '*q'"), c("name LIKE '*q?'"),
    c("name MATCHES '.*q'"),
    c("name LIKE '*'"), c("name MATCHES '.*'"), c("name ==[c] 'Q\u{303}UIZ'"),
    c("balance == %@", .decimal(Decimal(string: "0.1000000000000000001")!)),
    c("balance < %@", .decimal(Decimal(string: "0.1000000000000000001")!)),
    c("balance > %@", .decimal(Decimal(string: "0.0999999999999999999")!)),
    c("SUBQUERY(pets, $p, $p.age > $MIN).@count > 0", vars: ["MIN": .integer(4)]),
    c("name == %@", .null), c("age > %@", .null), c("NOT age >= %@", .null), c("age != %@", .null),
    c("age IN %@", .array([.integer(33), .double(34.0), .decimal(12)])), c("active IN {YES, NO}"),
    c("NOT active IN {NO}"),
    c("NOT (employer.boss.name != 'Alice')"), c("ANY friends.employer.boss.employer.name == 'Acme'"),
    c("born > $D AND updated < $D", vars: ["D": .date(day("2001-01-01"))]),
    c("ANY visits > %@", .date(subMillisecond(0.0004))), c("ANY visits >= %@", .date(subMillisecond(0.0004))),
    c("ANY visits == %@", .date(subMillisecond(0))), c("ANY visits == %@", .date(subMillisecond(0.0004))),
    c("%@ IN visits", .date(subMillisecond(0.0004))), c("NOT %@ IN visits", .date(subMillisecond(0.0004))),
    c("%@ IN visits", .date(subMillisecond(0.001))), c("ALL visits < %@", .date(subMillisecond(0.0006))),
    c("NONE visits <= %@", .date(subMillisecond(0.0006))), c("visits.@max > %@", .date(subMillisecond(0.0004))),
    c("visits.@max >= %@", .date(subMillisecond(0.0004))), c("visits.@min <= %@", .date(subMillisecond(0.0002))),
    c("visits.@min == nil"), c("visits.@count == 3"), c("visits.@max == %@", .date(subMillisecond(0.001))),
    c("SUBQUERY(visits, $v, $v >= %@).@count == 2", .date(subMillisecond(-0.0001))),
    c("ANY visits BETWEEN %@", .array([.date(subMillisecond(-0.0004)), .date(subMillisecond(0.0004))])),
    c("visits.@max > updated"), c("ANY visits == updated"),
    c("updated BETWEEN %@", .array([.date(subMillisecond(0.0002)), .date(subMillisecond(0.0008))])),
    c("NOT updated BETWEEN %@", .array([.date(subMillisecond(0.0002)), .date(subMillisecond(0.0008))])),
    c("name LIKE employer.name"), c("name LIKE[c] employer.name"), c("employer.name MATCHES[c] name"),
    c("'Alice' BEGINSWITH name"), c("NOT 'Alice' BEGINSWITH name"), c("'Alice and bob' CONTAINS name"),
    c("'axxbyc' LIKE name"), c("'ALICE' LIKE[c] name"), c("'Zoë' ENDSWITH[d] name"), c("'strasse' ==[c] name"),
    c("name ==[cd] employer.boss.name"), c("name !=[c] employer.boss.name"), c("NOT name ==[cd] employer.boss.name"),
    c("name <[c] employer.name"), c("NOT name >=[cd] employer.name"), c("name BEGINSWITH[c] employer.boss.name"),
    c("employer.boss.name ENDSWITH[cd] name"), c("ANY friends.name ==[c] employer.boss.name"),
    c("balance == YES"), c("active == balance"), c("NOT active != score"), c("balance == -1"),
    c("age == $X", vars: ["X": .null]), c("NOT age == $X", vars: ["X": .null]), c("name IN $L", vars: ["L": .null]),
    c("NOT name IN $L", vars: ["L": .null]), c("SELF.name == 'Alice'"),
    c("employer.boss.employer.boss.name == 'Alice'"),
    c("employer.boss.employer.boss == nil"), c("NOT (SUBQUERY(pets, $p, $p.weight > 10).@count > 0)"),
    c("ANY pets.name IN {'Rex', nil, 'Tom'}"), c("NONE pets.name IN {'Rex'}"), c("ALL pets.name IN {'Rex', 'Tom'}"),
    c("updated > %@", .date(.distantPast)), c("updated < %@", .date(.distantFuture)),
    c("born > %@", .date(.distantPast)),
    c("employer.founded > %@", .date(.distantPast)), c("ANY visits < %@", .date(.distantFuture)),
    c("updated > %@", .date(day("1500-06-01T00:00:00.000Z").addingTimeInterval(0.0004))),
    c("price == %@", .decimal(Decimal(string: "3.50")!)), c("price != %@", .decimal(Decimal(string: "3.5")!)),
    c("price == 3"), c("price == -4"), c("NOT price == -4"), c("price == nil"), c("price != nil"),
    c("price IN %@", .array([.decimal(Decimal(string: "0.5")!), .decimal(Decimal(string: "5.5")!), .integer(-9)])),
    c("NOT price IN %@", .array([.decimal(Decimal(string: "0.5")!), .null])),
    c("price == %@", .decimal(Decimal(string: "0.1000000000000000001")!)),
    c("price == %@", .decimal(Decimal(string: "0.1")!)),
    c("NOT price == %@", .decimal(Decimal(string: "0.1")!)),
    c("photo == %@", .data(Data([1, 2, 3, 0]))), c("photo > %@", .data(Data([1, 2]))),
    c("photo != nil AND NOT photo == %@", .data(Data())),
]

/// Cases where the SQL back-end is known to select different rows from memory (empty = none known).
/// The test asserts each still diverges, so a fix shows up as a failure to remove it from here.
private let knownDivergences: [TypedCase] = [
    // A TEXT-encoded decimal compares as text (exact), memory compares decimals as doubles:
    // 0.1000000000000000001 (stored) equals 0.1 in memory, not in SQL.
    c("price == %@", .decimal(Decimal(string: "0.1")!)), c("NOT price == %@", .decimal(Decimal(string: "0.1")!)),
]

// MARK: - Running both back-ends

private enum Harness {
    static let store: Result<SQLiteConnection, any Error> = Result { try makeStore() }

    /// The lowered query (a rejection fails the test: every case in the table must lower).
    static func lower(_ k: TypedCase) throws -> SQLQuery {
        let syntax = try PredicateSyntax.parse(k.format, literals: k.arguments)
        let lowering = try SQLLowering(schema: typedSchema, entity: "Person")
        return try lowering.select(syntax, source: k.format, variables: k.variables)
    }

    /// The ids SQL selects.
    static func sqlRows(_ k: TypedCase) throws -> Set<Int64> { try run(try lower(k)) }

    static func run(_ q: SQLQuery) throws -> Set<Int64> {
        let rows = try store.get().query(q.sql, q.bindings)
        return Set(
            rows.map { row -> Int64 in
                if case .integer(let i) = row[0] { return i }
                return -1
            })
    }

    /// The ids memory selects; an evaluation error is a failed test (the comparison must be meaningful).
    static func memoryRows(_ k: TypedCase) throws -> Set<Int64> {
        let syntax = try PredicateSyntax.parse(k.format, literals: k.arguments)
        let predicate = SiftPredicate(syntax, source: k.format)
        let vars = k.variables.mapValues(Value.init)
        var out = Set<Int64>()
        for (i, p) in memoryPeople.enumerated() where try predicate.evaluate(with: p, variables: vars) {
            out.insert(Data0.people[i].id)
        }
        return out
    }
}

@Suite struct TypedSchemaTests {
    @Test func theTableIsLargeAndDiscriminating() throws {
        #expect(typedCases.count >= 80)
        #expect(Set(typedCases).count == typedCases.count, "duplicate predicates")
        // Most predicates must split the people; a table of always-true/false cases proves little.
        var split = 0
        for k in typedCases {
            let n = try Harness.memoryRows(k).count
            if n > 0 && n < Data0.people.count { split += 1 }
        }
        #expect(split >= typedCases.count * 3 / 4, "\(split) of \(typedCases.count) split the data")
    }

    @Test(arguments: typedCases)
    func sqlSelectsWhatMemoryDoes(_ k: TypedCase) throws {
        let memory = try Harness.memoryRows(k)
        if knownDivergences.contains(k) {
            // A query that fails in SQL where memory answers is a divergence too.
            let query = try Harness.lower(k)
            let sql = try? Harness.run(query)
            #expect(sql != memory, "\(k.testDescription) no longer diverges: remove it from knownDivergences")
        } else {
            let sql = try Harness.sqlRows(k)
            // The COUNT(*) form counts the same rows.
            let syntax = try PredicateSyntax.parse(k.format, literals: k.arguments)
            let countQuery = try SQLLowering(schema: typedSchema, entity: "Person").count(
                syntax, source: k.format, variables: k.variables)
            #expect(
                try Harness.store.get().query(countQuery) == [[.integer(Int64(memory.count))]],
                "\(k.testDescription): count")
            #expect(
                sql == memory,
                "\(k.testDescription): sql-only \(sql.subtracting(memory).sorted()), memory-only \(memory.subtracting(sql).sorted()), both \(sql.intersection(memory).sorted())"
            )
        }
    }

    @Test func knownDivergencesAreInTheTable() {
        for k in knownDivergences { #expect(typedCases.contains(k), "\(k.testDescription)") }
    }

    @Test func storeMatchesTheData() throws {
        let db = try Harness.store.get()
        #expect(try db.query("SELECT COUNT(*) FROM person") == [[.integer(Int64(Data0.people.count))]])
        #expect(try db.query("SELECT updated_at FROM person WHERE id = 3") == [[.text("2024-05-01T12:00:00.500Z")]])
        #expect(try db.query("SELECT born_at FROM person WHERE id = 5") == [[.double(0)]])
        #expect(try db.query("SELECT founded FROM company WHERE id = 4") == [[.double(0)]])
        #expect(
            try db.query("SELECT tag_count FROM person WHERE id IN (2, 3) ORDER BY id") == [[.integer(0)], [.null]])
    }
}

// MARK: - Random compounds of the table's predicates

extension TypedSchemaTests {
    /// Seeded random AND/OR/NOT trees (up to three levels) whose leaves are the table's predicates
    /// (those without `$VAR`s and not known to diverge): pushing NOT through quantifiers, collection
    /// operators and folded constants must keep both back-ends in agreement.
    @Test func randomCompoundsAgree() throws {
        let leaves = typedCases.filter { $0.variables.isEmpty && !knownDivergences.contains($0) }
        var rng = SplitMix64(seed: 0x5EED_7A9E)
        func tree(_ depth: Int) -> TypedCase {
            if depth == 0 || Int.random(in: 0..<3, using: &rng) == 0 {
                return leaves[Int.random(in: 0..<leaves.count, using: &rng)]
            }
            switch Int.random(in: 0..<3, using: &rng) {
            case 0:
                let k = tree(depth - 1)
                return TypedCase(format: "NOT (\(k.format))", arguments: k.arguments)
            default:
                let parts = (0..<Int.random(in: 2...3, using: &rng)).map { _ in tree(depth - 1) }
                let joiner = Bool.random(using: &rng) ? " AND " : " OR "
                return TypedCase(
                    format: parts.map { "(\($0.format))" }.joined(separator: joiner),
                    arguments: parts.flatMap(\.arguments))
            }
        }
        var failures: [String] = []
        var nontrivial = 0
        var refused = 0
        for _ in 0..<1500 {
            let k = tree(3)
            let memory = try Harness.memoryRows(k)
            let sql: Set<Int64>
            do { sql = try Harness.sqlRows(k) } catch let e as SQLLoweringError where e.kind == .unsupported {
                // Arithmetic that may meet nil next to a relationship: no row alone answers it, so
                // SQLite refuses it (a store judges it in memory); each part alone is lowered.
                refused += 1
                continue
            }
            if memory.count > 0 && memory.count < Data0.people.count { nontrivial += 1 }
            if sql != memory, failures.count < 5 {
                failures.append(
                    "\(k.testDescription): sql-only \(sql.subtracting(memory).sorted()), memory-only \(memory.subtracting(sql).sorted())"
                )
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        #expect(nontrivial > 750)
        #expect(refused < 500, "\(refused) compounds refused")
    }
}

// MARK: - Sort keys

/// Sort keys (key path, ascending, options) checked against `sorted(by:)`; every list includes
/// keys with nil values for some people.
private let sortCases: [[SQLSortKey]] = [
    [SQLSortKey(keyPath: "name")],
    [SQLSortKey(keyPath: "name", ascending: false)],
    [SQLSortKey(keyPath: "name", options: .caseInsensitive)],
    [SQLSortKey(keyPath: "name", options: [.caseInsensitive, .diacriticInsensitive])],
    [SQLSortKey(keyPath: "name", ascending: false, options: [.caseInsensitive, .diacriticInsensitive])],
    [SQLSortKey(keyPath: "name", options: .diacriticInsensitive)],
    [SQLSortKey(keyPath: "age"), SQLSortKey(keyPath: "name", ascending: false)],
    [SQLSortKey(keyPath: "age", ascending: false), SQLSortKey(keyPath: "score")],
    [SQLSortKey(keyPath: "born", ascending: false)],
    [SQLSortKey(keyPath: "updated")],
    [SQLSortKey(keyPath: "balance"), SQLSortKey(keyPath: "name", options: .caseInsensitive)],
    [SQLSortKey(keyPath: "active"), SQLSortKey(keyPath: "score", ascending: false)],
    [SQLSortKey(keyPath: "employer.name", options: .caseInsensitive), SQLSortKey(keyPath: "age", ascending: false)],
    [SQLSortKey(keyPath: "employer.boss.name", ascending: false)],
    [SQLSortKey(keyPath: "employer.founded")],
    [SQLSortKey(keyPath: "visits.@max", ascending: false), SQLSortKey(keyPath: "visits.@min")],
    [SQLSortKey(keyPath: "name", options: .normalized)],
    [SQLSortKey(keyPath: "friends.@avg.score", ascending: false), SQLSortKey(keyPath: "nicknames.@count")],
    [
        SQLSortKey(keyPath: "employer.boss.name", options: [.caseInsensitive, .diacriticInsensitive]),
        SQLSortKey(keyPath: "name", ascending: false, options: .diacriticInsensitive),
    ],
    [SQLSortKey(keyPath: "photo"), SQLSortKey(keyPath: "name", ascending: false, options: .caseInsensitive)],
    [SQLSortKey(keyPath: "pets.@count", ascending: false)],
    [SQLSortKey(keyPath: "tags.@count"), SQLSortKey(keyPath: "born")],
    [SQLSortKey(keyPath: "friends.@max.age")],
    [SQLSortKey(keyPath: "employer.boss.pets.@count", ascending: false), SQLSortKey(keyPath: "employer.boss.name")],
    [SQLSortKey(keyPath: "score", ascending: false), SQLSortKey(keyPath: "updated", ascending: false)],
]

extension TypedSchemaTests {
    @Test(arguments: sortCases.indices)
    func orderByMatchesSortedBy(_ i: Int) throws {
        let keys = sortCases[i]
        let lowering = try SQLLowering(schema: typedSchema, entity: "Person")
        let q = try lowering.select(try PredicateSyntax.parse("TRUEPREDICATE"), sortedBy: keys)
        let sqlOrder = try Harness.store.get().query(q.sql, q.bindings).map { $0[0] }
        let descriptors = try keys.map { k throws(SyntaxError) in
            try SiftSortDescriptor(k.keyPath, ascending: k.ascending, options: k.options)
        }
        let memoryOrder = try memoryPeople.sortedIndices(by: descriptors).map { SQLValue.integer(Data0.people[$0].id) }
        #expect(sqlOrder == memoryOrder, "\(descriptors)")
    }

    /// Seeded random sort-key lists (one to three keys, random directions and string options) from
    /// every sortable shape of the schema, each filtered by a random predicate of the table.
    @Test func randomSortsAgree() throws {
        let paths = [
            "name", "age", "score", "active", "born", "updated", "balance", "photo", "employer.name",
            "employer.boss.name", "employer.founded", "employer.boss.age", "pets.@count", "tags.@count",
            "friends.@max.age", "friends.@avg.score", "visits.@max", "nicknames.@count", "pets.@sum.age",
        ]
        let optionSets: [ComparisonOptions] = [
            [], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive],
        ]
        let filters = typedCases.filter { $0.variables.isEmpty && !knownDivergences.contains($0) }
        var rng = SplitMix64(seed: 0x50_27)
        let lowering = try SQLLowering(schema: typedSchema, entity: "Person")
        var failures: [String] = []
        for _ in 0..<300 {
            let keys = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                SQLSortKey(
                    keyPath: paths[Int.random(in: 0..<paths.count, using: &rng)], ascending: Bool.random(using: &rng),
                    options: optionSets[Int.random(in: 0..<optionSets.count, using: &rng)])
            }
            let filter = filters[Int.random(in: 0..<filters.count, using: &rng)]
            let syntax = try PredicateSyntax.parse(filter.format, literals: filter.arguments)
            let q = try lowering.select(syntax, source: filter.format, sortedBy: keys)
            let sqlOrder = try Harness.store.get().query(q).map { $0[0] }
            let predicate = SiftPredicate(syntax, source: filter.format)
            let kept = try memoryPeople.filter { p throws(EvaluationError) in try predicate.evaluate(with: p) }
            let descriptors = try keys.map { k throws(SyntaxError) in
                try SiftSortDescriptor(k.keyPath, ascending: k.ascending, options: k.options)
            }
            let memoryOrder = try kept.sorted(by: descriptors).map { p -> SQLValue in
                if case .dictionary(let d) = p, case .integer(let id)? = d["id"] { return .integer(id) }
                return .null
            }
            if sqlOrder != memoryOrder, failures.count < 5 {
                failures.append(
                    "\(filter.testDescription) sorted by \(descriptors): sql \(sqlOrder) memory \(memoryOrder)")
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test func orderByWithAPredicate() throws {
        // Filtering and ordering together: the filtered rows in the sorted order.
        let format = "employer != nil AND age != nil"
        let keys = [
            SQLSortKey(keyPath: "employer.name", ascending: false, options: [.caseInsensitive, .diacriticInsensitive]),
            SQLSortKey(keyPath: "age"),
        ]
        let q = try SQLLowering(schema: typedSchema, entity: "Person")
            .select(try PredicateSyntax.parse(format), source: format, sortedBy: keys)
        let sqlOrder = try Harness.store.get().query(q.sql, q.bindings).map { $0[0] }
        let predicate = try SiftPredicate(format)
        let kept = try memoryPeople.filter { p throws(EvaluationError) in try predicate.evaluate(with: p) }
        let descriptors = try keys.map { k throws(SyntaxError) in
            try SiftSortDescriptor(k.keyPath, ascending: k.ascending, options: k.options)
        }
        let memoryOrder = try kept.sorted(by: descriptors).map { p -> SQLValue in
            if case .dictionary(let d) = p, case .integer(let id)? = d["id"] { return .integer(id) }
            return .null
        }
        #expect(sqlOrder.count > 5)
        #expect(sqlOrder == memoryOrder)
    }
}

extension TypedSchemaTests {
    /// `columns:` reads attributes through to-one paths, NULL where memory reads nil.
    @Test func selectedColumnsAreTheMemoryValues() throws {
        let q = try SQLLowering(schema: typedSchema, entity: "Person")
            .select(try PredicateSyntax.parse("age > 20"), columns: ["name", "age", "employer.boss.name", "score"])
        let sqlRows = try Harness.store.get().query(q)
        let predicate = try SiftPredicate("age > 20")
        var expected: [[SQLValue]] = []
        for p in memoryPeople where try predicate.evaluate(with: p) {
            guard case .dictionary(let d) = p else { continue }
            var bossName = SQLValue.null
            if case .dictionary(let company)? = d["employer"], case .dictionary(let boss)? = company["boss"],
                case .string(let n)? = boss["name"]
            {
                bossName = .text(n)
            }
            func sql(_ v: Value?) -> SQLValue {
                switch v {
                case .string(let s)?: .text(s)
                case .integer(let i)?: .integer(i)
                case .double(let x)?: .double(x)
                default: .null
                }
            }
            expected.append([sql(d["name"]), sql(d["age"]), bossName, sql(d["score"])])
        }
        #expect(expected.count > 10)
        #expect(sqlRows == expected)
    }
}

extension TypedSchemaTests {
    /// On the typed schema too, equality, ranges, IN and case-sensitive BEGINSWITH search the index
    /// on `person.name`, and ANY over `pets` searches the index on the foreign key.
    @Test(arguments: [
        "name == 'Alice'", "name >= 'M' AND name < 'N'", "name BETWEEN {'A', 'C'}", "name IN {'Eva', 'Zoë'}",
        "name BEGINSWITH 'Al'", "ANY pets.species == 'dog'",
    ])
    func usesIndexes(_ format: String) throws {
        let q = try SQLLowering(schema: typedSchema, entity: "Person").select(
            try PredicateSyntax.parse(format), source: format)
        let plan = try Harness.store.get().queryPlan(q).joined(separator: " | ")
        let index = format.hasPrefix("ANY") ? "pet_owner" : "person_name"
        #expect(plan.contains("SEARCH") && plan.contains(index), "\(format): \(plan)")
    }
}

// MARK: - Rejections

/// Predicates the lowering must refuse on this schema: the kind and where it points.
private let rejections: [(format: String, kind: SQLLoweringError.Kind, location: String)] = [
    ("name == 5", .typeMismatch, "1:1"),
    ("age > 20 AND name < 3.5", .typeMismatch, "1:14"),
    ("age == 'x'", .typeMismatch, "1:1"),
    ("born < 'yesterday'", .typeMismatch, "1:1"),
    ("updated == 'x'", .typeMismatch, "1:1"),
    ("born == name", .typeMismatch, "1:1"),
    ("photo == 'abc'", .typeMismatch, "1:1"),
    ("age BEGINSWITH '1'", .typeMismatch, "1:1"),
    ("age CONTAINS '1'", .notACollection, "1:1"),
    ("employer == 'Acme'", .typeMismatch, "1:1"),
    ("employer.boss.name == 3", .typeMismatch, "1:1"),
    ("nme == 'x'", .unknownKey, "1:1"),
    ("employer.nme == 'x'", .unknownKey, "1:1"),
    ("age > 1 OR employer.boss.salary > 3", .unknownKey, "1:12"),
    ("ANY pets.colour == 'red'", .unknownKey, "1:5"),
    ("pets.name == 'Rex'", .toManyKeyPath, "1:1"),
    ("friends.age > 30", .toManyKeyPath, "1:1"),
    ("nicknames == 'Al'", .toManyKeyPath, "1:1"),
    ("ANY friends.pets.name == 'Rex'", .toManyKeyPath, "1:5"),
    ("ANY name == 'x'", .notACollection, "1:5"),
    ("ALL employer.name == 'x'", .notACollection, "1:5"),
    ("age > $MAX", .unboundVariable, "1:7"),
    ("SUBQUERY(pets, $p, $p.name == 5).@count > 0", .typeMismatch, "1:20"),
    ("SUBQUERY(friends, $f, $f.tags.@count > 0).@count > 0", .toManyKeyPath, "1:23"),
    ("born * 2 > 0", .typeMismatch, "1:1"),
    ("balance BETWEEN {score, 3}", .unsupported, "1:17"),
    ("friends == nil OR friends.@count == 1 OR friends == 3", .toManyKeyPath, "1:42"),
    ("employer.boss == employer.boss", .typeMismatch, "1:1"),
    ("active == 'YES'", .typeMismatch, "1:1"),
    ("born > 0", .typeMismatch, "1:1"),
    ("photo BEGINSWITH 'a'", .typeMismatch, "1:1"),
    ("ANY visits == 'x'", .typeMismatch, "1:1"),
    ("name == nil OR\n  tags == 'x'", .toManyKeyPath, "2:3"),
    ("price < 3", .unsupported, "1:1"),
    ("price == 3.5", .unsupported, "1:1"),
    ("price == balance", .unsupported, "1:1"),
    ("age * age * age * age * age * age == 1", .unsupported, "1:1"),
    ("nicknames[0] == 'Al'", .unsupported, "1:1"),
    ("random() < age", .unsupported, "1:1"),
]

extension TypedSchemaTests {
    @Test func badSortKeysAndColumns() throws {
        let lowering = try SQLLowering(schema: typedSchema, entity: "Person")
        let t = try PredicateSyntax.parse("TRUEPREDICATE")
        for (key, kind) in [
            ("nme", SQLLoweringError.Kind.unknownKey), ("pets.name", .unsupported), ("employer.nme", .unknownKey),
        ] {
            do {
                _ = try lowering.select(t, sortedBy: [SQLSortKey(keyPath: key)])
                Issue.record("sorted by \(key)")
            } catch {
                #expect(error.kind == kind, "\(key): \(error)")
            }
        }
        do {
            _ = try lowering.select(t, columns: ["nme"])
            Issue.record("selected nme")
        } catch {
            #expect(error.kind == .unknownKey, "\(error)")
        }
    }

    @Test func unknownEntity() {
        do {
            _ = try SQLLowering(schema: typedSchema, entity: "Pets")
            Issue.record("lowered")
        } catch {
            #expect(error.kind == .unknownEntity)
            #expect(error.message.contains("Pets"))
        }
    }

    @Test(arguments: rejections.indices)
    func rejected(_ i: Int) throws {
        let (format, kind, location) = rejections[i]
        let syntax = try PredicateSyntax.parse(format)
        let lowering = try SQLLowering(schema: typedSchema, entity: "Person")
        do {
            let q = try lowering.select(syntax, source: format)
            Issue.record("\(format) was lowered to \(q)")
        } catch {
            #expect(error.kind == kind, "\(format): \(error)")
            #expect(error.location?.description == location, "\(format): \(error)")
            #expect(error.description.hasPrefix("\(location): error: "), "\(format): \(error)")
        }
    }
}
