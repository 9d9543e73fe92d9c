// Date constants that a column's encoding cannot hold exactly (between two milliseconds of an
// ISO-8601 column, or finer than a seconds-since-1970 double) must not be bound rounded onto a
// storable date: equality is constant, orderings and BETWEEN bounds move to the storable date on
// the side that keeps the comparison exact, and IN drops them. (TypedSchemaTests checks the rows.)

import Foundation
import SiftSQL
import SiftSyntax
import Testing

@Suite struct StorableDateTests {
    /// 2024-05-01T12:00:00.000Z.
    let noon = Date(timeIntervalSince1970: 1_714_564_800)

    private func lowered(_ format: String, _ date: Date) throws -> (String, [SQLValue]) {
        let q = try Fixture.lower(format, [date])
        let w = q.sql.range(of: " WHERE ").map { String(q.sql[$0.upperBound...]) } ?? ""
        return (w.components(separatedBy: " ORDER BY ")[0], q.bindings)
    }

    @Test func isoOrderingsSnapToTheRightSide() throws {
        let between = noon.addingTimeInterval(0.0004)  // between .000 and .001
        #expect(try lowered("bornISO >= %@", between) == (#"t0."bornISO" >= ?"#, [.text("2024-05-01T12:00:00.001Z")]))
        #expect(try lowered("bornISO < %@", between) == (#"t0."bornISO" < ?"#, [.text("2024-05-01T12:00:00.001Z")]))
        #expect(try lowered("bornISO > %@", between) == (#"t0."bornISO" > ?"#, [.text("2024-05-01T12:00:00.000Z")]))
        #expect(try lowered("bornISO <= %@", between) == (#"t0."bornISO" <= ?"#, [.text("2024-05-01T12:00:00.000Z")]))
        // A storable constant is bound as it is.
        #expect(try lowered("bornISO >= %@", noon) == (#"t0."bornISO" >= ?"#, [.text("2024-05-01T12:00:00.000Z")]))
    }

    @Test func isoEqualityAndMembershipWithUnstorableDates() throws {
        let between = noon.addingTimeInterval(0.0006)
        #expect(try lowered("bornISO == %@", between).0 == "0")
        #expect(try lowered("bornISO != %@", between).0 == "")
        #expect(try lowered("NOT bornISO == %@", between).0 == "")
        let q = try Fixture.lower("bornISO IN %@", [[between, noon]])
        #expect(q.bindings == [.text("2024-05-01T12:00:00.000Z")])
        #expect(try Fixture.whereClause("bornISO IN %@", [[between]]) == "0")
    }

    @Test func isoBetweenBoundsMoveInwards() throws {
        let q = try Fixture.lower(
            "bornISO BETWEEN %@", [[noon.addingTimeInterval(-0.0004), noon.addingTimeInterval(0.0016)]])
        #expect(q.bindings == [.text("2024-05-01T12:00:00.000Z"), .text("2024-05-01T12:00:00.001Z")])
        // Both bounds inside one millisecond: lo snaps above hi, and BETWEEN selects nothing, as in memory.
        let r = try Fixture.lower(
            "bornISO BETWEEN %@", [[noon.addingTimeInterval(0.0002), noon.addingTimeInterval(0.0008)]])
        #expect(r.bindings == [.text("2024-05-01T12:00:00.001Z"), .text("2024-05-01T12:00:00.000Z")])
    }

    @Test func secondsSince1970Snap() throws {
        let onGrid = Date(timeIntervalSince1970: 1_000_000_000)
        let above = Date(timeIntervalSinceReferenceDate: onGrid.timeIntervalSinceReferenceDate + 4e-9)
        #expect(Date(timeIntervalSince1970: above.timeIntervalSince1970) != above, "the constant must be unstorable")
        #expect(try lowered("born70 == %@", above).0 == "0")
        let (w, b) = try lowered("born70 < %@", above)
        #expect(w == #"t0."born70" < ?"#)
        guard case .double(let bound)? = b.first else {
            Issue.record("\(b)")
            return
        }
        #expect(bound > 1_000_000_000, "< must keep the row at exactly 1e9 s")
        let (w2, b2) = try lowered("born70 > %@", above)
        #expect(w2 == #"t0."born70" > ?"#)
        #expect(b2 == [.double(1_000_000_000)])
        // Seconds since 2001 hold every Date: nothing moves.
        #expect(try lowered("born < %@", above).1 == [.double(above.timeIntervalSinceReferenceDate)])
    }
}
