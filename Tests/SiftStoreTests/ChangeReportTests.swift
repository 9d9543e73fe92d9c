// Objects-did-change lists every object changed since the last report: an object changed again
// after a report that listed it (as updated or as inserted) is listed again, once per report,
// and a rollback's forgotten changes are not reported later.

import Foundation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct ChangeReportTests {
    /// A context on a store holding one saved item, its observer, and the item.
    static func setUp() throws -> (ManagedObjectContext, Heard, ManagedObject, ObservationToken) {
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: try Fixtures.itemsModel()))
        let item = try c.insert("Item")
        try item.setValue(1, forKey: "price")
        try c.save()
        let heard = Heard()
        let token = c.observe { heard.append($0) }
        return (c, heard, item, token)
    }

    @Test func aSavedObjectChangedAgainAfterAReportIsReportedAgain() throws {
        let (c, heard, item, token) = try Self.setUp()
        defer { token.cancel() }
        try item.setValue(2, forKey: "price")
        try item.setValue(3, forKey: "price")  // the same report: listed once
        try c.processPendingChanges()
        try item.setValue(4, forKey: "price")
        try c.processPendingChanges()
        try c.processPendingChanges()  // nothing changed: no report
        #expect(heard.changes.map(\.updated) == [[item.objectID], [item.objectID]])
    }

    @Test func anInsertedObjectChangedAfterItsInsertWasReportedIsAnUpdate() throws {
        let (c, heard, _, token) = try Self.setUp()
        defer { token.cancel() }
        let fresh = try c.insert("Item")
        try fresh.setValue(5, forKey: "price")  // same report as the insert: only inserted
        try c.processPendingChanges()
        try fresh.setValue(6, forKey: "price")
        try c.processPendingChanges()
        #expect(heard.changes.map(\.inserted) == [[fresh.objectID], []])
        #expect(heard.changes.map(\.updated) == [[], [fresh.objectID]])
    }

    @Test func changesARollbackForgotAreNotReported() throws {
        let (c, heard, item, token) = try Self.setUp()
        defer { token.cancel() }
        try item.setValue(7, forKey: "price")
        c.rollback()
        try c.processPendingChanges()
        #expect(heard.changes.isEmpty)
        try item.setValue(8, forKey: "price")  // a new round after the rollback: reported
        try c.processPendingChanges()
        #expect(heard.changes.map(\.updated) == [[item.objectID]])
    }
}
