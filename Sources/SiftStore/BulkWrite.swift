// One transaction around many saves: `sift store import` saves its records in batches (so the
// objects of one batch are all it holds in memory) and wants them all or none. Inside `bulkWrite`
// the saves of any context on this store object write into the one `BEGIN IMMEDIATE` transaction
// (the store's lock is held throughout, so no other thread writes in between); it commits when the
// body returns and rolls back every save when it throws.

import Foundation

extension PersistentStore {
    /// Runs `body` in one write transaction that every save inside it joins: all or nothing.
    package func bulkWrite<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        try writeTransaction { () throws(StoreError) -> R in
            inBulkWrite = true
            defer { inBulkWrite = false }
            return try body()
        }
    }
}
