// Exact SQL for the forms that read a to-many collection as a whole (issue 12): a key mapped over
// the elements and counted (`kids.age.@count`), the objects of an ordered to-many against `{}` or a
// constant, a SUBQUERY's result against nil or a constant list, and `mode:` of values read from
// the row. Each in both polarities; rows are checked by the corpus and the differential test.

import Foundation
import SiftSQL
import SiftSyntax
import Testing

/// A schema whose to-many collections are ordered (arrays in memory), with and without a count
/// column, one behind a to-one relationship.
private let schema: Schema = {
    try! Schema(entities: [
        Schema.Entity(
            name: "Person", table: "person",
            attributes: [
                Schema.Attribute(name: "name", type: .string), Schema.Attribute(name: "age", type: .integer),
            ],
            relationships: [
                Schema.Relationship(name: "address", toOne: "Address", foreignKey: "address_id"),
                Schema.Relationship(name: "kids", toMany: "Kid", foreignKey: "parent_id", orderColumn: "pos"),
                Schema.Relationship(
                    name: "pets", toMany: "Kid", foreignKey: "owner_id", countColumn: "pet_count", orderColumn: "pos"),
                Schema.Relationship(
                    name: "friends", toMany: "Person",
                    joinTable: .init(table: "friendship", source: "person_id", destination: "friend_id")),
                Schema.Relationship(
                    name: "tags", values: .init(table: "person_tag", owner: "person_id", column: "tag", type: .string),
                    countColumn: "tag_count", orderColumn: "pos"),
            ]),
        Schema.Entity(
            name: "Address", table: "address", attributes: [Schema.Attribute(name: "city", type: .string)],
            relationships: [
                Schema.Relationship(name: "residents", toMany: "Person", foreignKey: "address_id", orderColumn: "pos")
            ]),
        Schema.Entity(
            name: "Kid", table: "kid",
            attributes: [Schema.Attribute(name: "name", type: .string), Schema.Attribute(name: "age", type: .integer)],
            relationships: [
                Schema.Relationship(name: "address", toOne: "Address", foreignKey: "address_id"),
                Schema.Relationship(name: "toys", values: .init(table: "toy", owner: "kid_id", type: .string)),
            ]),
    ])
}()

/// `f` lowered; `guarded` false leaves out the row guard (which refuses a call into memory next to
/// a relationship: no row alone tells where memory raises).
private func lower(_ f: String, guarded: Bool = true) throws -> SQLQuery {
    var lowering = try SQLLowering(schema: schema, entity: "Person")
    lowering.guardsRows = guarded
    return try lowering.select(try PredicateSyntax.parse(f), source: f)
}

/// The WHERE clause alone ("" when there is none).
private func w(_ f: String, guarded: Bool = true) throws -> String {
    let sql = try lower(f, guarded: guarded).sql
    guard let a = sql.range(of: " WHERE "), let o = sql.range(of: " ORDER BY ", options: .backwards) else { return "" }
    return String(sql[a.upperBound..<o.lowerBound])
}

private func rejection(_ f: String) -> SQLLoweringError.Kind? {
    do {
        _ = try lower(f)
        return nil
    } catch let e as SQLLoweringError { return e.kind } catch { return nil }
}

@Suite struct WholeCollectionLoweringTests {
    @Test func mappedKeyCountIsTheCollectionsCount() throws {
        #expect(
            try w("kids.age.@count == 2") == #"(SELECT COUNT(*) FROM "kid" AS t2 WHERE t2."parent_id" = t0."id") = ?"#)
        #expect(
            try w("NOT kids.age.@count == 2")
                == #"(SELECT COUNT(*) FROM "kid" AS t2 WHERE t2."parent_id" = t0."id") IS NOT ?"#)
        // A count column (NULL when nil) and a collection behind a to-one object (nil without it).
        #expect(try w("pets.address.city.@count > 1") == #"t0."pet_count" > ?"#)
        #expect(
            try w("address.residents.name.@count == 0")
                == #"CASE WHEN t1."id" IS NULL THEN NULL ELSE (SELECT COUNT(*) FROM "person" AS t3 WHERE t3."address_id" = t1."id") END = ?"#
        )
        // Memory raises on a key of a value, and a to-many inside a to-many stays rejected.
        #expect(rejection("kids.age.x.@count == 1") == .unknownKey)
        #expect(rejection("kids.toys.@count == 1") == .toManyKeyPath)
        #expect(rejection("tags.x.@count == 1") == .unknownKey)
    }

    @Test func objectsAgainstTheEmptyList() throws {
        let exists = #"EXISTS (SELECT 1 FROM "kid" AS t1 WHERE t1."parent_id" = t0."id")"#
        #expect(try w("kids == {}") == "NOT " + exists)
        #expect(try w("{} == kids") == "NOT " + exists)
        #expect(try w("NOT kids == {}") == exists)
        #expect(try w("kids != {}") == exists)
        #expect(try w("NOT kids != {}") == "NOT " + exists)
        // The count column is NULL for a nil collection: IS keeps both forms two-valued.
        #expect(try w("pets == {}") == #"t0."pet_count" IS ?"#)
        #expect(try w("pets != {}") == #"t0."pet_count" IS NOT ?"#)
        #expect(try lower("pets == {}").bindings == [.integer(0)])
        // Behind a to-one object: nil when the object is missing.
        let residents = #"EXISTS (SELECT 1 FROM "person" AS t2 WHERE t2."address_id" = t1."id")"#
        #expect(try w("address.residents == {}") == #"NOT t1."id" IS NULL AND NOT "# + residents)
        #expect(try w("NOT address.residents == {}") == #"t1."id" IS NULL OR "# + residents)
    }

    @Test func objectsAgainstPlainValues() throws {
        // A dictionary equals no plain value: a list of them, or one value, matches no row.
        #expect(try lower("kids == {'a', 1}").sql.contains(" WHERE 0 "))
        #expect(try w("kids != {'a'}") == "")
        #expect(try w("kids == 5") == "0")
        #expect(try w("NOT kids == 5") == "")
        // A nil element could be a null element (kept as an object of NULLs), and a set is not an array.
        #expect(rejection("kids == {nil}") == .toManyKeyPath)
        #expect(rejection("friends == {}") == .toManyKeyPath)
        #expect(rejection("kids < {}") == .toManyKeyPath)
    }

    @Test func subqueryAgainstNil() throws {
        // Never nil without a count column or an owner that may be missing.
        #expect(try w("SUBQUERY(kids, $k, $k.age > 3) == nil") == "0")
        #expect(try w("SUBQUERY(kids, $k, $k.age > 3) != nil") == "")
        #expect(try w("SUBQUERY(pets, $k, $k.age > 3) == nil") == #"t0."pet_count" IS NULL"#)
        #expect(try w("nil == SUBQUERY(pets, $k, $k.age > 3)") == #"t0."pet_count" IS NULL"#)
        #expect(try w("NOT SUBQUERY(pets, $k, $k.age > 3) == nil") == #"NOT t0."pet_count" IS NULL"#)
        #expect(try w("SUBQUERY(pets, $k, $k.age > 3).name != nil") == #"NOT t0."pet_count" IS NULL"#)
    }

    @Test func subqueryAgainstTheEmptyList() throws {
        let kept = #"EXISTS (SELECT 1 FROM "kid" AS t1 WHERE t1."owner_id" = t0."id" AND (t1."age" > ?))"#
        #expect(try w("SUBQUERY(pets, $k, $k.age > 3) == {}") == #"NOT t0."pet_count" IS NULL AND NOT "# + kept)
        #expect(try w("NOT SUBQUERY(pets, $k, $k.age > 3) == {}") == #"t0."pet_count" IS NULL OR "# + kept)
        #expect(try w("SUBQUERY(pets, $k, $k.age > 3) != {}") == #"t0."pet_count" IS NULL OR "# + kept)
        #expect(try lower("SUBQUERY(pets, $k, $k.age > 3) == {}").bindings == [.integer(3)])
        #expect(
            try w("SUBQUERY(kids, $k, $k.age > 3) != {}")
                == #"EXISTS (SELECT 1 FROM "kid" AS t1 WHERE t1."parent_id" = t0."id" AND (t1."age" > ?))"#)
        // No element is kept: only nil is not empty.
        #expect(try w("SUBQUERY(pets, $k, FALSEPREDICATE) == {}") == #"NOT t0."pet_count" IS NULL"#)
        #expect(try w("SUBQUERY(kids, $k, FALSEPREDICATE) == {}") == "")
    }

    @Test func subqueryAgainstAList() throws {
        // Objects equal no plain value; values are collected in order and compared by memory.
        #expect(try w("SUBQUERY(kids, $k, $k.age > 3) == {1}") == "0")
        #expect(try w("SUBQUERY(kids, $k, $k.age > 3) != {1}") == "")
        let tags =
            #"sift_call(?, ?, (CASE WHEN t0."tag_count" IS NULL THEN NULL ELSE (SELECT sift_collect(?, sift_element) FROM (SELECT t1."tag" AS sift_element FROM "person_tag" AS t1 WHERE t1."person_id" = t0."id" AND (t1."tag" IS NOT ?) ORDER BY t1."pos")) END), ?)"#
        #expect(try w("SUBQUERY(tags, $t, $t != 'a') ==[c] {'b'}") == tags + " = 1")
        #expect(try w("NOT SUBQUERY(tags, $t, $t != 'a') ==[c] {'b'}") == tags + " = 0")
        let q = try lower("SUBQUERY(tags, $t, $t != 'a') ==[c] {'b'}")
        #expect(
            q.bindings == [
                .text("compare:1:=="), .text("cc"), .text("v"), .text("a"),
                .blob([7, 1, 0, 0, 0, 0, 0, 0, 0, 5, 1, 0, 0, 0, 0, 0, 0, 0, 0x62]),
            ])  // the list as `ValueCodec` writes an array
        let names =
            #"sift_call(?, ?, (SELECT sift_collect(?, sift_element) FROM (SELECT t1."name" AS sift_element FROM "kid" AS t1 WHERE t1."parent_id" = t0."id" AND (t1."age" > ?) ORDER BY t1."pos")), ?)"#
        #expect(try w("SUBQUERY(kids, $k, $k.age > 3).name != {'a'}") == names + " = 1")
        #expect(rejection("SUBQUERY(kids, $k, $k.age > 3) == {nil}") == .unsupported)
        #expect(rejection("SUBQUERY(friends, $f, $f.age > 3).name == {'a'}") == .unsupported)
        #expect(rejection("SUBQUERY(friends, $f, $f.age > 3) == friends") == .unsupported)
        #expect(rejection("SUBQUERY(kids, $k, $k.age > 3) == pets") == .unsupported)
    }

    @Test func subqueryAgainstItsOwnCollection() throws {
        // A subsequence equals the whole when nothing was dropped (P false for no element), or both are nil.
        let dropped =
            #"EXISTS (SELECT 1 FROM "kid" AS t1 WHERE t1."parent_id" = t0."id" AND ((t1."age" <= ? OR t1."age" IS NULL)))"#
        #expect(try w("SUBQUERY(kids, $k, $k.age > 3) == kids") == "NOT " + dropped)
        #expect(try w("kids != SUBQUERY(kids, $k, $k.age > 3)") == dropped)
        #expect(try w("NOT SUBQUERY(kids, $k, $k.age > 3) == kids") == dropped)
        let pets =
            #"EXISTS (SELECT 1 FROM "kid" AS t1 WHERE t1."owner_id" = t0."id" AND ((t1."age" <= ? OR t1."age" IS NULL)))"#
        #expect(try w("SUBQUERY(pets, $k, $k.age > 3) == pets") == #"t0."pet_count" IS NULL OR NOT "# + pets)
        #expect(try w("SUBQUERY(pets, $k, $k.age > 3) != pets") == #"NOT t0."pet_count" IS NULL AND "# + pets)
        #expect(try w("SUBQUERY(pets, $k, TRUEPREDICATE) == pets") == "")
    }

    @Test func modeOfRowValues() throws {
        // A call into memory over a to-many: with the row guard, refused (memory may raise where
        // SQL computes NULL, and no row alone tells); its SQL without the guard follows.
        #expect(SiftSQLTests.rejection("mode:(kids.age) == {1}") == .unsupported)
        #expect(SiftSQLTests.rejection("length:(name) > 1 AND kids.@count > 0") == .unsupported)
        func w(_ f: String) throws -> String { try SiftSQLTests.w(f, guarded: false) }
        func lower(_ f: String) throws -> SQLQuery { try SiftSQLTests.lower(f, guarded: false) }
        func rejection(_ f: String) -> SQLLoweringError.Kind? {
            do {
                _ = try lower(f)
                return nil
            } catch let e as SQLLoweringError { return e.kind } catch { return nil }
        }
        let mode =
            #"sift_call(?, ?, (SELECT sift_collect(?, sift_element) FROM (SELECT t1."age" AS sift_element FROM "kid" AS t1 WHERE t1."parent_id" = t0."id" ORDER BY t1."pos")))"#
        #expect(try w("mode:(kids.age) == {1}") == "sift_call(?, ?, \(mode), ?) = 1")
        #expect(try w("NOT mode:(kids.age) == {1}") == "sift_call(?, ?, \(mode), ?) = 0")
        #expect(
            try lower("mode:(kids.age) == {1}").bindings.prefix(4) == [
                .text("compare:0:=="), .text("cc"), .text("mode:"), .text("c"),
            ])
        #expect(try w("ANY mode:(kids.age) > 1") == "sift_call(?, ?, \(mode), ?) = 1")
        #expect(try lower("ALL mode:(kids.age) > 1").bindings.prefix(2) == [.text("quantified:ALL:0:>"), .text("cv")])
        #expect(try w("NOT ALL mode:(kids.age) > 1") == "sift_call(?, ?, \(mode), ?) = 0")
        #expect(try w("1 IN mode:(kids.age)") == "sift_call(?, ?, ?, \(mode)) = 1")
        #expect(try lower("1 IN mode:(kids.age)").bindings.prefix(2) == [.text("compare:0:IN"), .text("vc")])
        for counted in ["mode:(kids.age)[SIZE]", "mode:(kids.age).@count", "count:(mode:(kids.age))"] {
            #expect(try w("\(counted) == 1") == "sift_call(?, ?, \(mode)) = ?")
            #expect(try lower("\(counted) == 1").bindings.prefix(2) == [.text("count:"), .text("c")])
        }
        // Its elements, a TERNARY of it, a sort by it, and the mode of a set have no exact SQL.
        #expect(rejection("mode:(kids.age)[0] == 1") == .unsupported)
        #expect(rejection("TERNARY(age > 1, mode:(kids.age), mode:(tags)) == {1}") == .unsupported)
        #expect(rejection("mode:(friends.age) == {1}") == .unsupported)
        let p = try PredicateSyntax.parse("TRUEPREDICATE")
        #expect(throws: SQLLoweringError.self) {
            try SQLLowering(schema: schema, entity: "Person").select(
                p, sortedBy: [SQLSortKey(keyPath: "mode:(kids.age)")])
        }
    }
}
