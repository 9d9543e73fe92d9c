// The streaming import's objects without the context's bookkeeping: `sift store import` makes
// hundreds of thousands of objects that no fetch, undo, notification or merge will ever see, so
// they are not registered, and a batch of them is written by what a save runs for its inserts,
// in the same order: validation (`validate`, the rules and uniqueness among the batch), keys from
// the store's counter, uniqueness against the stored rows (earlier batches included) and the rows
// themselves (`RowWriter`, the one place save SQL is made). Values are set through the context
// (`setValue`), so coercion and inverse relationships follow the same rules as any insert.

import Foundation
import SiftSQLite

extension StoreImporter {
    /// A new object of `entity` with the model's defaults, owned by the context but not
    /// registered in it; an abstract entity is the context's insert error.
    mutating func newObject(_ entity: String) throws(StoreError) -> ManagedObject {
        let info: EntityInfo
        if let known = infos[entity] {
            info = known
        } else {
            info = try context.store.info(entity)
            infos[entity] = info
        }
        if info.entity.description.isAbstract { return try context.insert(entity) }
        let id = ObjectID(info.names, key: .temporary(ManagedObjectContext.nextTemporaryNumber()))
        let o = ManagedObject.make(id: id, info: info, context: context, fault: false)
        if !info.initialAttributesAreNil { o.attributes = info.initialAttributes }
        o.links = info.initialLinks
        // Inserted: setting its values records no snapshot.
        o.pendingInsert = true
        return o
    }

    /// Validates and writes `objects` (in insertion order) inside the import's transaction; a
    /// refusal names their records.
    func writeBatch(_ objects: [ManagedObject]) throws(JSONImportError) {
        let store = context.store
        do throws(StoreError) {
            // New objects: their derived values are set as they are, with nothing to record.
            try context.deriveValues(from: objects, deleted: []) { (o, i, v) throws(StoreError) in o.attributes[i] = v }
            try context.validate(objects, others: [], deleted: [])
            try store.writeTransaction { () throws(StoreError) in
                do throws(SQLiteError) {
                    let keys = try store.allocateKeys(for: objects.map(\.info))
                    for (n, o) in objects.enumerated() { o.assignedKey = keys[n] }
                } catch {
                    throw error.storeError
                }
                try context.checkStoredUniqueness(inserted: objects, updated: [])
                do throws(SQLiteError) {
                    _ = try RowWriter(store: store).write(inserted: objects, updated: [], deleted: [])
                } catch {
                    throw error.storeError
                }
            }
        } catch {
            throw refused(error)
        }
    }
}
