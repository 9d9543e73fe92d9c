// Persistent history in one process: saves, batch updates and batch deletes each record one
// transaction (token, author, context name, the changed objects and keys) in their own write
// transaction; tracking is opt-in and remembered by the file; `history(after:)` reads what followed
// a token, `purgeHistory` forgets old transactions, and `mergeChanges(fromHistory:)` brings another
// context's objects up to date (unsaved edits kept, deleted objects gone).

import Foundation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct HistoryTests {
    static func model() throws -> ManagedObjectModel { try Fixtures.itemsModel() }

    /// A store tracking history with one saved item (name "orig", price 1) by author "app".
    func store(path: String? = nil) throws -> (PersistentStore, ManagedObjectContext, ManagedObject) {
        let s =
            try path.map { try PersistentStore(model: try Self.model(), path: $0, historyTracking: true) }
            ?? PersistentStore.inMemory(model: try Self.model(), historyTracking: true)
        let a = ManagedObjectContext(store: s)
        a.transactionAuthor = "app"
        a.name = "main"
        let x = try a.insert("Item")
        try x.setValue("orig", forKey: "name")
        try x.setValue(1, forKey: "price")
        try a.save()
        return (s, a, x)
    }

    @Test func savesRecordTransactionsWithTheirChanges() throws {
        let (s, a, x) = try store()
        let before = Date()
        let owner = try a.insert("Owner")
        try owner.setValue("Ann", forKey: "name")
        try x.setValue(5, forKey: "price")
        try x.setValue(owner, forKey: "owner")
        try a.save()
        let gone = try a.insert("Item")
        try a.save()
        try a.delete(gone)
        try a.save()

        let all = try s.history(after: nil)
        #expect(all.map(\.token) == all.map(\.token).sorted() && Set(all.map(\.token)).count == 4)
        #expect(all.allSatisfy { $0.author == "app" && $0.contextName == "main" })
        #expect(all[0].changes.map(\.kind) == [.insert] && all[0].changes[0].objectID == x.objectID)
        let second = all[1]
        #expect(second.timestamp >= before.addingTimeInterval(-0.001) && second.timestamp <= Date())
        #expect(second.changes.count == 2)
        let inserted = try #require(second.changes.first { $0.kind == .insert })
        #expect(inserted.objectID == owner.objectID && inserted.updatedKeys.isEmpty)
        let updated = try #require(second.changes.first { $0.kind == .update })
        #expect(updated.objectID == x.objectID && updated.updatedKeys == ["price", "owner"])
        #expect(all[3].changes == [HistoryChange(objectID: gone.objectID, kind: .delete, updatedKeys: [])])
        // After a token: only what followed it.
        #expect(try s.history(after: all[1].token).map(\.token) == [all[2].token, all[3].token])
        #expect(try s.history(after: all[3].token).isEmpty)
    }

    @Test func aSaveThatChangesNothingRecordsNothing() throws {
        let (s, a, x) = try store()
        try x.setValue(2, forKey: "price")
        try x.setValue(1, forKey: "price")
        try a.save()
        #expect(try s.history(after: nil).count == 1)
    }

    @Test func batchRequestsRecordTheirRowsAndCascades() throws {
        let (s, a, x) = try store()
        let owner = try a.insert("Owner")
        try x.setValue(owner, forKey: "owner")
        try a.save()
        let last = try #require(try s.history(after: nil).last?.token)
        let b = ManagedObjectContext(store: s)
        b.transactionAuthor = "batch"
        var raise = BatchUpdateRequest("Item")
        raise.propertiesToUpdate = ["price": .expression("price * 10")]
        #expect(try b.execute(raise).count == 1)
        #expect(try b.execute(BatchDeleteRequest("Owner")).count == 1)
        let news = try s.history(after: last)
        #expect(news.count == 2 && news.allSatisfy { $0.author == "batch" && $0.contextName == nil })
        #expect(news[0].changes == [HistoryChange(objectID: x.objectID, kind: .update, updatedKeys: ["price"])])
        // The owner's delete nullifies the item's link: both are in the transaction.
        #expect(news[1].changes.contains(HistoryChange(objectID: owner.objectID, kind: .delete, updatedKeys: [])))
        #expect(news[1].changes.contains { $0.objectID == x.objectID && $0.kind == .update })
    }

    @Test func trackingIsOffByDefaultAndRememberedOnceOn() throws {
        let path = Fixtures.temporaryPath("history.sqlite")
        do {
            let plain = try PersistentStore(model: try Self.model(), path: path)
            #expect(!plain.tracksHistory)
            let c = ManagedObjectContext(store: plain)
            _ = try c.insert("Item")
            try c.save()
            #expect(throws: StoreError.self) { try plain.history(after: nil) }
            let tables = try plain.connection.query("SELECT name FROM sqlite_master WHERE name LIKE 'A%'")
            #expect(tables.isEmpty)
        }
        do {
            let on = try PersistentStore(path: path, historyTracking: true)
            #expect(on.tracksHistory)
            #expect(try on.history(after: nil).isEmpty)
        }
        // Opened again without the option: still recording.
        let again = try PersistentStore(path: path)
        #expect(again.tracksHistory)
        let c = ManagedObjectContext(store: again)
        _ = try c.insert("Owner")
        try c.save()
        #expect(try again.history(after: nil).map { $0.changes.map(\.kind) } == [[.insert]])
        let names = try again.connection.query(
            "SELECT Z_ENT, count(*) FROM ATRANSACTION GROUP BY Z_ENT UNION ALL SELECT Z_ENT, count(*) FROM ACHANGE GROUP BY Z_ENT"
        )
        #expect(names == [[.integer(16002), .integer(1)], [.integer(16001), .integer(1)]])
    }

    @Test func aModelTableNamedLikeAHistoryTableIsRefused() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription("ACHANGE", attributes: [])])
        #expect {
            _ = try PersistentStore.inMemory(model: model, historyTracking: true)
        } throws: { ($0 as? StoreError)?.kind == .invalidOperation }
    }

    @Test func purgeForgetsOldTransactionsAndTokensKeepGrowing() throws {
        let (s, a, x) = try store()
        for p in 2...4 {
            try x.setValue(p, forKey: "price")
            try a.save()
        }
        let all = try s.history(after: nil)
        #expect(all.count == 4)
        #expect(try s.purgeHistory(before: all[2].token) == 2)
        #expect(try s.history(after: nil).map(\.token) == [all[2].token, all[3].token])
        let changes = try s.connection.query("SELECT count(*) FROM ACHANGE")
        #expect(changes == [[.integer(2)]])
        #expect(try s.purgeHistory(before: Date().addingTimeInterval(1)) == 2)
        #expect(try s.history(after: nil).isEmpty)
        // Every transaction purged: the next token is still past the old ones.
        try x.setValue(9, forKey: "price")
        try a.save()
        let next = try #require(try s.history(after: nil).first)
        #expect(next.token > all[3].token)
        #expect(try s.purgeHistory(before: Date().addingTimeInterval(-3600)) == 0)
    }

    @Test func mergingFromHistoryRefreshesKeepsEditsAndDropsDeleted() throws {
        let (s, a, x) = try store()
        let y = try a.insert("Item")
        try y.setValue("y", forKey: "name")
        try a.save()
        let start = try #require(try s.history(after: nil).last?.token)
        // B holds both items and has an unsaved edit of x's name.
        let b = ManagedObjectContext(store: s)
        let xb = try b.existingObject(with: x.objectID)
        let yb = try b.existingObject(with: y.objectID)
        try xb.setValue("mine", forKey: "name")
        #expect(try yb.get("name", as: String.self) == "y")
        let notes = Notes()
        let token = b.observe { notes.add($0) }
        // A changes x's price and deletes y.
        try x.setValue(100, forKey: "price")
        try a.delete(y)
        try a.save()
        try b.mergeChanges(fromHistory: try s.history(after: start))
        token.cancel()
        #expect(notes.all == [.objectsDidChange(ChangeSet(updated: [x.objectID], deleted: [y.objectID]))])
        #expect(try xb.get("price", as: Int64.self) == 100)
        #expect(try xb.get("name", as: String.self) == "mine")
        #expect(xb.changedValues.keys.sorted() == ["name"])
        #expect(!b.registeredObjects.contains { $0 === yb })
        #expect(throws: StoreError.self) { try b.existingObject(with: y.objectID) }
        // The merge brought B's version up to date: its edit saves without a conflict.
        try b.save()
        let c = ManagedObjectContext(store: s)
        let stored = try c.existingObject(with: x.objectID)
        #expect(try stored.get("price", as: Int64.self) == 100 && stored.get("name", as: String.self) == "mine")
    }

    @Test func historyPersistsInTheFile() throws {
        let path = Fixtures.temporaryPath("history.sqlite")
        let tokens: [HistoryToken]
        do {
            let (s, a, x) = try store(path: path)
            try x.setValue(2, forKey: "price")
            try a.save()
            tokens = try s.history(after: nil).map(\.token)
        }
        let reopened = try PersistentStore(path: path)
        let read = try reopened.history(after: nil)
        #expect(read.map(\.token) == tokens && read.allSatisfy { $0.author == "app" })
        #expect(read.last?.changes.first?.updatedKeys == ["price"])
    }
}

/// Notifications collected by an observer callback.
private final class Notes: @unchecked Sendable {
    private let lock = NSLock()
    private var notes: [ContextNotification] = []
    func add(_ n: ContextNotification) { lock.withLock { notes.append(n) } }
    var all: [ContextNotification] { lock.withLock { notes } }
}
