// Parent and child contexts: the three-layer stack of the seed articles (a writer context on the
// store ← the main context ← a worker), where a child's save reaches only its parent and each
// fetch sees every unsaved change above it, for every result type; deletes and relationships
// across the layers; permanent IDs; automatic merging; and conflicts between a child's push and
// changes its parent took in since the child read an object.

import Foundation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct ParentContextTests {
    /// Items with a to-one owner, owners with their to-many items (inverse of each other).
    static func model() throws -> ManagedObjectModel { try Fixtures.itemsModel() }

    @discardableResult
    func item(_ c: ManagedObjectContext, _ name: String, _ price: Int, owner: ManagedObject? = nil) throws
        -> ManagedObject
    {
        let o = try c.insert("Item")
        try o.setValue(name, forKey: "name")
        try o.setValue(price, forKey: "price")
        if let owner { try o.setValue(owner, forKey: "owner") }
        return o
    }

    /// The names of the items `c` fetches with `format`, in price order.
    func names(_ c: ManagedObjectContext, _ format: String = "TRUEPREDICATE") throws -> [String] {
        var r = try FetchRequest("Item", predicate: format)
        r.sortDescriptors = [try SiftSortDescriptor("price")]
        return try c.fetch(r).map { try $0.get("name", as: String.self) ?? "" }
    }

    /// Every result type of `format` in `c`: names (objects), ID count, count, dictionary names
    /// and the sum of prices.
    func view(_ c: ManagedObjectContext, _ format: String) throws -> (
        names: [String], ids: Int, count: Int, dictionaries: [String], sum: Value?
    ) {
        var r = try FetchRequest("Item", predicate: format)
        r.sortDescriptors = [try SiftSortDescriptor("price")]
        var d = r
        d.propertiesToFetch = ["name"]
        var sums = try FetchRequest("Item", predicate: format)
        sums.aggregates = [FetchRequest.Aggregate(name: "total", function: .sum, keyPath: "price")]
        return (
            try names(c, format), try c.fetchObjectIDs(r).count, try c.count(for: r),
            try c.fetchDictionaries(d).map { $0["name"]?.description ?? "" },
            try c.fetchDictionaries(sums).first?["total"]
        )
    }

    /// The conflicts a child's save reports (it must fail with `merge-conflict`).
    func conflicts(saving c: ManagedObjectContext) -> [MergeConflict] {
        do {
            try c.save()
        } catch {
            #expect(error.kind == .mergeConflict && error.id == "merge-conflict")
            return error.conflicts
        }
        Issue.record("the save went through")
        return []
    }

    @Test func threeLayerStackSavesOneLayerAtATime() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let writer = ManagedObjectContext(store: s)
        try item(writer, "b", 5)
        try writer.save()
        let main = ManagedObjectContext(parent: writer)
        let worker = ManagedObjectContext(parent: main)
        #expect(worker.store === s && worker.parent === main)
        let a = try item(worker, "a", 20)
        let b = try worker.fetch(FetchRequest("Item"))[0]
        try b.setValue(50, forKey: "price")
        try worker.save()
        #expect(!worker.hasChanges && main.hasChanges && !writer.hasChanges)
        // Nothing reached the store.
        #expect(try view(ManagedObjectContext(store: s), "price > 10").count == 0)
        let expected = (names: ["a", "b"], ids: 2, count: 2, dictionaries: ["\"a\"", "\"b\""])
        for c in [main, worker] {
            let v = try view(c, "price > 10")
            #expect(v.names == expected.names && v.ids == expected.ids && v.count == expected.count)
            #expect(v.dictionaries == expected.dictionaries && v.sum == .integer(70))
        }
        #expect(main.updatedObjects.count == 1 && main.insertedObjects.count == 1)
        try main.save()
        #expect(try view(writer, "price > 10").names == ["a", "b"])
        #expect(try view(ManagedObjectContext(store: s), "price > 10").count == 0)
        #expect(a.objectID.isTemporaryID)
        try writer.save()
        let fresh = ManagedObjectContext(store: s)
        #expect(try view(fresh, "price > 10").names == ["a", "b"])
        // The permanent ID reaches every layer; the worker's object is the one it inserted.
        let saved = try fresh.fetchObjectIDs(FetchRequest("Item", predicate: "name == 'a'"))[0]
        #expect(!a.objectID.isTemporaryID && a.objectID == saved)
        #expect(try worker.object(with: saved) === a)
        #expect(try main.object(with: saved).objectID == saved)
        #expect(try worker.fetch(FetchRequest("Item", predicate: "name == 'a'")) == [a])
    }

    @Test func deletesAndRelationshipsCrossTheLayers() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let writer = ManagedObjectContext(store: s)
        let o = try writer.insert("Owner")
        try o.setValue("O", forKey: "name")
        try item(writer, "i1", 1, owner: o)
        try item(writer, "i2", 2, owner: o)
        try writer.save()
        let main = ManagedObjectContext(parent: writer)
        let worker = ManagedObjectContext(parent: main)
        let wo = try worker.object(with: o.objectID)
        let members = try #require(try wo.get("items", as: [ManagedObject].self))
        let i1 = try #require(members.first { try $0.get("name", as: String.self) == "i1" })
        let i2 = try #require(members.first { try $0.get("name", as: String.self) == "i2" })
        try worker.delete(i1)
        try item(worker, "i3", 3, owner: wo)
        let o2 = try worker.insert("Owner")
        try o2.setValue("O2", forKey: "name")
        try i2.setValue(o2, forKey: "owner")
        try worker.save()
        for c in [main, worker] {
            #expect(try names(c, "owner.name == 'O'") == ["i3"])
            #expect(try names(c, "owner.name == 'O2'") == ["i2"])
            #expect(try names(c) == ["i2", "i3"])
        }
        let mo = try main.object(with: o.objectID)
        #expect(try mo.get("items", as: [ManagedObject].self)?.map { try $0.get("name", as: String.self) } == ["i3"])
        try main.save()
        try writer.save()
        let fresh = ManagedObjectContext(store: s)
        #expect(try names(fresh) == ["i2", "i3"])
        #expect(try names(fresh, "owner.name == 'O'") == ["i3"])
        #expect(try names(fresh, "owner.name == 'O2'") == ["i2"])
        #expect(try fresh.count(for: FetchRequest("Owner")) == 2)
    }

    @Test func childFetchSeesEveryPendingChangeAbove() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let root = ManagedObjectContext(store: s)
        let x = try root.insert("Owner")
        try x.setValue("X", forKey: "name")
        let a = try item(root, "a", 1)
        let b = try item(root, "b", 2, owner: x)
        let c = try item(root, "c", 3)
        let d = try item(root, "d", 4)
        try root.save()
        let child = ManagedObjectContext(parent: root)
        #expect(try view(child, "price >= 3").names == ["c", "d"])
        try item(root, "e", 10)  // inserted: matches
        try a.setValue(11, forKey: "price")  // edited to match
        try c.setValue(0, forKey: "price")  // edited to no longer match
        try root.delete(d)  // deleted
        try x.setValue("Y", forKey: "name")  // reached through a relationship
        _ = b
        let grandchild = ManagedObjectContext(parent: child)
        for ctx in [child, grandchild] {
            let v = try view(ctx, "price >= 3")
            #expect(v.names == ["e", "a"] && v.ids == 2 && v.count == 2)
            #expect(v.dictionaries == ["\"e\"", "\"a\""] && v.sum == .integer(21))
            #expect(try names(ctx, "owner.name == 'Y'") == ["b"])
            #expect(try names(ctx, "owner.name == 'X'") == [])
        }
        // The child's own pending changes on top of the parent's.
        try item(child, "f", 5)
        let ce = try #require(try child.fetch(FetchRequest("Item", predicate: "name == 'e'")).first)
        try ce.setValue(1, forKey: "price")
        let v = try view(child, "price >= 3")
        #expect(v.names == ["f", "a"] && v.ids == 2 && v.count == 2 && v.sum == .integer(16))
        // The grandchild sees them too (they are its parent's pending changes); the root does not.
        #expect(try view(grandchild, "price >= 3").names == ["f", "a"])
        #expect(try view(root, "price >= 3").names == ["e", "a"])
        // The store is untouched.
        #expect(try names(ManagedObjectContext(store: s), "price >= 3") == ["c", "d"])
    }

    @Test func childReadsTheParentsCurrentValues() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let root = ManagedObjectContext(store: s)
        let a = try item(root, "a", 1)
        try root.save()
        try a.setValue("edited", forKey: "name")
        let fresh = try item(root, "new", 2)
        let child = ManagedObjectContext(parent: root)
        #expect(try child.object(with: a.objectID).get("name", as: String.self) == "edited")
        #expect(try child.object(with: fresh.objectID).get("name", as: String.self) == "new")
        #expect(try child.existingObject(with: fresh.objectID).objectID == fresh.objectID)
        // An object the parent does not hold comes from the store.
        let other = ManagedObjectContext(store: s)
        let z = try item(other, "z", 3)
        try other.save()
        #expect(try child.object(with: z.objectID).get("name", as: String.self) == "z")
        // A temporary ID no context of the stack made is not found.
        let stranger = try item(ManagedObjectContext(store: s), "s", 4)
        #expect(throws: StoreError.self) { try child.object(with: stranger.objectID) }
    }

    @Test func obtainPermanentIDsBeforeTheSave() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let writer = ManagedObjectContext(store: s)
        let x = try item(writer, "x", 1)
        try writer.obtainPermanentIDs(for: [x])
        let id = x.objectID
        #expect(!id.isTemporaryID && id.primaryKey != nil)
        #expect(try writer.object(with: id) === x && x.isInserted)
        try writer.save()
        #expect(x.objectID == id)
        #expect(try ManagedObjectContext(store: s).existingObject(with: id).get("name", as: String.self) == "x")
        // The row saves again with version checks.
        try x.setValue(2, forKey: "price")
        try writer.save()
        #expect(try ManagedObjectContext(store: s).existingObject(with: id).get("price", as: Int.self) == 2)
        // In a stack: the worker's insert keeps its permanent ID up to the store.
        let main = ManagedObjectContext(parent: writer)
        let worker = ManagedObjectContext(parent: main)
        let y = try item(worker, "y", 3)
        let z = try item(worker, "z", 4)
        try worker.obtainPermanentIDs(for: [y])
        let yid = y.objectID
        #expect(!yid.isTemporaryID && z.objectID.isTemporaryID)
        try worker.save()
        #expect(try main.object(with: yid).isInserted)
        try main.save()
        try writer.save()
        let fresh = ManagedObjectContext(store: s)
        #expect(try fresh.existingObject(with: yid).get("name", as: String.self) == "y")
        #expect(try names(fresh) == ["x", "y", "z"])
        // A parent's unsaved insert, given its ID from a child, is renamed in every layer.
        let w = try item(main, "w", 5)
        let ww = try worker.object(with: w.objectID)
        try worker.obtainPermanentIDs(for: [ww])
        #expect(!w.objectID.isTemporaryID && w.objectID == ww.objectID)
        try main.save()
        try writer.save()
        #expect(try ManagedObjectContext(store: s).existingObject(with: w.objectID).get("price", as: Int.self) == 5)
    }

    @Test func automaticallyMergesChangesFromParent() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let writer = ManagedObjectContext(store: s)
        let x = try item(writer, "x", 1)
        let y = try item(writer, "y", 2)
        try writer.save()
        let main = ManagedObjectContext(parent: writer)
        main.automaticallyMergesChangesFromParent = true
        let other = ManagedObjectContext(parent: writer)
        let mx = try main.existingObject(with: x.objectID)
        let my = try main.existingObject(with: y.objectID)
        let ox = try other.existingObject(with: x.objectID)
        try mx.setValue("mine", forKey: "name")  // an unsaved edit in main
        try x.setValue(7, forKey: "price")
        try writer.delete(y)
        try writer.save()
        #expect(try mx.get("price", as: Int.self) == 7 && mx.get("name", as: String.self) == "mine")
        #expect(mx.isUpdated && !my.isUpdated)
        #expect(throws: StoreError.self) { try my.setValue("gone", forKey: "name") }
        #expect(try ox.get("price", as: Int.self) == 1)  // merges only when asked
        // A sibling's push reaches the children that merge automatically.
        let w1 = ManagedObjectContext(parent: main)
        let w2 = ManagedObjectContext(parent: main)
        w2.automaticallyMergesChangesFromParent = true
        let x1 = try w1.existingObject(with: x.objectID)
        let x2 = try w2.existingObject(with: x.objectID)
        try x1.setValue(9, forKey: "price")
        try w1.save()
        #expect(try x2.get("price", as: Int.self) == 9 && x2.get("name", as: String.self) == "mine")
        #expect(try mx.get("price", as: Int.self) == 9)
        // Main saves with the merged state: nothing of either side is lost.
        try main.save()
        try writer.save()
        let stored = try ManagedObjectContext(store: s).existingObject(with: x.objectID)
        #expect(try stored.get("price", as: Int.self) == 9 && stored.get("name", as: String.self) == "mine")
    }

    /// A child that read item x (name "orig", price 1), the parent's later change of x's price to
    /// 100 (unsaved), and the child's rename.
    func pushConflict(_ policy: MergePolicy) throws -> (ManagedObjectContext, ManagedObject, ManagedObject) {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let parent = ManagedObjectContext(store: s)
        let x = try item(parent, "orig", 1)
        try parent.save()
        let child = ManagedObjectContext(parent: parent)
        child.mergePolicy = policy
        let cx = try child.existingObject(with: x.objectID)
        try x.setValue(100, forKey: "price")
        try cx.setValue("renamed", forKey: "name")
        return (child, cx, x)
    }

    @Test func pushConflictsFollowTheMergePolicy() throws {
        let (child, cx, x) = try pushConflict(.error)
        let found = conflicts(saving: child)
        #expect(found.map(\.objectID) == [x.objectID] && found.first?.changedKeys == ["name"])
        #expect(found.first?.stored?["price"] == .integer(100) && found.first?.snapshot["price"] == .integer(1))
        #expect(try x.get("name", as: String.self) == "orig" && child.hasChanges)

        let (c1, _, x1) = try pushConflict(.mergeByPropertyObjectTrump)
        try c1.save()
        #expect(try x1.get("name", as: String.self) == "renamed" && x1.get("price", as: Int.self) == 100)

        let (c2, cx2, x2) = try pushConflict(.mergeByPropertyStoreTrump)
        try cx2.setValue(5, forKey: "price")  // changed on both sides: the parent's wins
        try c2.save()
        #expect(try x2.get("name", as: String.self) == "renamed" && x2.get("price", as: Int.self) == 100)
        #expect(try cx2.get("price", as: Int.self) == 100)

        let (c3, _, x3) = try pushConflict(.overwrite)
        try c3.save()
        #expect(try x3.get("name", as: String.self) == "renamed" && x3.get("price", as: Int.self) == 1)

        let (c4, cx4, x4) = try pushConflict(.rollback)
        try c4.save()
        #expect(try x4.get("name", as: String.self) == "orig" && x4.get("price", as: Int.self) == 100)
        #expect(try cx4.get("name", as: String.self) == "orig" && !c4.hasChanges)
        _ = cx
    }

    @Test func pushOntoAnObjectTheParentDeleted() throws {
        let (child, cx, x) = try pushConflict(.error)
        let parent = try #require(child.parent)
        try parent.delete(x)
        #expect(conflicts(saving: child).first?.stored == nil)
        #expect(x.isDeleted)
        child.mergePolicy = .mergeByPropertyObjectTrump
        try child.save()
        // The child's object wins: the parent's object is back, with every value of the child's.
        #expect(!x.isDeleted && x.isUpdated)
        #expect(try x.get("name", as: String.self) == "renamed" && x.get("price", as: Int.self) == 1)
        let (c2, cx2, x2) = try pushConflict(.mergeByPropertyStoreTrump)
        try c2.parent!.delete(x2)
        try c2.save()
        #expect(x2.isDeleted && !c2.registeredObjects.contains(cx2))
        _ = cx
    }

    @Test func pushOntoAnInsertTheParentDropped() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let parent = ManagedObjectContext(store: s)
        let child = ManagedObjectContext(parent: parent)
        let n = try item(parent, "new", 1)
        let cn = try child.object(with: n.objectID)
        try cn.setValue(2, forKey: "price")
        try parent.delete(n)  // never saved: it simply leaves the parent
        #expect(conflicts(saving: child).first.map { $0.objectID == n.objectID && $0.stored == nil } == true)
        child.mergePolicy = .mergeByPropertyObjectTrump
        try child.save()
        // The child's object goes back into the parent as an insert, with the child's values.
        let back = try parent.object(with: cn.objectID)
        #expect(back.isInserted && back !== n)
        #expect(try back.get("price", as: Int.self) == 2 && back.get("name", as: String.self) == "new")
        try parent.save()
        #expect(try names(ManagedObjectContext(store: s)) == ["new"])
    }

    /// The kind and message of the error `body` throws (it must throw).
    func failure(_ body: () throws(StoreError) -> Void) -> (StoreError.Kind, String)? {
        do { try body() } catch { return (error.kind, error.message) }
        Issue.record("no error")
        return nil
    }

    /// A to-one link a child reads for the first time, to an object an ancestor deleted (its
    /// delete rules not run yet), leads to no live object.
    @Test func linksToObjectsDeletedAboveLeadNowhere() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let root = ManagedObjectContext(store: s)
        let owner = try root.insert("Owner")
        try owner.setValue("ann", forKey: "name")
        let i = try item(root, "x", 1, owner: owner)
        try root.save()
        for layers in 1...2 {
            try root.delete(owner)
            var c = ManagedObjectContext(parent: root)
            if layers == 2 { c = ManagedObjectContext(parent: c) }
            let ci = try c.existingObject(with: i.objectID)
            let linked = try ci.get("owner", as: ManagedObject.self)
            #expect(linked == nil || linked!.isDeleted, "layers \(layers)")
            if let linked {
                #expect(
                    failure { () throws(StoreError) in _ = try linked.get("name", as: String.self) }?.0
                        == .objectNotFound)
            }
            #expect(try c.fetch(FetchRequest("Owner")).isEmpty)
            root.rollback()
        }
    }

    @Test func objectsDeletedAboveAreDeletedBelow() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let root = ManagedObjectContext(store: s)
        let (x, y, z) = (try item(root, "x", 1), try item(root, "y", 2), try item(root, "z", 3))
        try root.save()
        let child = ManagedObjectContext(parent: root)
        let grandchild = ManagedObjectContext(parent: child)
        // Held before the delete: x in both layers, z with an unsaved edit in the child.
        let cx = try child.existingObject(with: x.objectID)
        let gx = try grandchild.existingObject(with: x.objectID)
        let cz = try child.existingObject(with: z.objectID)
        try cz.setValue("edited", forKey: "name")
        for o in [x, y, z] { try root.delete(o) }
        #expect(cx.isDeleted && gx.isDeleted)
        let read = failure { () throws(StoreError) in _ = try cx.get("name", as: String.self) }
        #expect(read?.0 == .objectNotFound && read?.1.contains("deleted in a parent context") == true)
        #expect(failure { () throws(StoreError) in try gx.setValue(5, forKey: "price") }?.0 == .objectNotFound)
        // Looked up after the delete, in either layer.
        for c in [child, grandchild] {
            #expect(try c.object(with: y.objectID).isDeleted && c.object(with: x.objectID).isDeleted)
            let e = failure { () throws(StoreError) in _ = try c.existingObject(with: y.objectID) }
            #expect(e?.0 == .objectNotFound && e?.1.contains("deleted in a parent context") == true)
            #expect(try names(c).isEmpty)
        }
        // Unsaved edits keep the object; its push meets the delete. The grandchild sees the edit.
        #expect(try !cz.isDeleted && cz.get("name", as: String.self) == "edited")
        #expect(try grandchild.existingObject(with: z.objectID).get("name", as: String.self) == "edited")
        #expect(conflicts(saving: child).map(\.objectID) == [z.objectID])
        // Taken back above, the object reads again (as a new object of the child).
        root.rollback()
        let again = try child.existingObject(with: x.objectID)
        #expect(try again !== cx && !again.isDeleted && again.get("name", as: String.self) == "x")
    }

    /// After a delete above is taken back, a grandchild's edit goes up through the child, which
    /// holds a new object for it (its old one stays deleted), and reaches the store.
    @Test func aGrandchildsEditAfterADeleteAboveIsTakenBackReachesTheStore() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let root = ManagedObjectContext(store: s)
        let x = try item(root, "x", 1)
        try root.save()
        let child = ManagedObjectContext(parent: root)
        let grandchild = ManagedObjectContext(parent: child)
        let cx = try child.existingObject(with: x.objectID)
        try root.delete(x)
        #expect(cx.isDeleted)
        root.rollback()
        let gx = try grandchild.existingObject(with: x.objectID)
        try gx.setValue("edited", forKey: "name")
        try grandchild.save()
        let again = try child.object(with: x.objectID)
        #expect(cx.isDeleted && cx.context == nil && again !== cx)
        #expect(try !again.isDeleted && again.isUpdated && again.get("name", as: String.self) == "edited")
        try child.save()
        try root.save()
        let stored = try ManagedObjectContext(store: s).existingObject(with: x.objectID)
        #expect(try stored.get("name", as: String.self) == "edited")
    }

    @Test func anInsertDroppedAboveIsDeletedBelow() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let root = ManagedObjectContext(store: s)
        let w = try item(root, "w", 1)
        let child = ManagedObjectContext(parent: root)
        let cw = try child.existingObject(with: w.objectID)
        #expect(try cw.get("name", as: String.self) == "w")
        try root.delete(w)
        #expect(cw.isDeleted)
        #expect(failure { () throws(StoreError) in _ = try cw.get("price", as: Int.self) }?.0 == .objectNotFound)
        #expect(throws: StoreError.self) { try child.existingObject(with: w.objectID) }
    }

    /// An insert the root dropped, put back by two children's pushes: the second push meets the
    /// object the first put back, as an update under its policy (an insert's changes are all its
    /// values), and the root saves one row (it used to hold two objects with one ID, two rows).
    @Test(arguments: MergePolicy.allCases)
    func anObjectTwoChildrenPutBackIsOneObject(_ policy: MergePolicy) throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let root = ManagedObjectContext(store: s)
        let w = try item(root, "w", 1)
        let child = ManagedObjectContext(parent: root)
        let grandchild = ManagedObjectContext(parent: child)
        let sibling = ManagedObjectContext(parent: root)
        (grandchild.mergePolicy, sibling.mergePolicy, child.mergePolicy) = (.overwrite, .overwrite, policy)
        try grandchild.existingObject(with: w.objectID).setValue(5, forKey: "price")
        try sibling.existingObject(with: w.objectID).setValue("s", forKey: "name")
        root.rollback()
        try grandchild.save()  // gone above: the child holds it again, as its insert ("w", 5)
        let cw = try child.existingObject(with: w.objectID)
        #expect(try cw.isInserted && cw.get("price", as: Int.self) == 5)
        try sibling.save()  // the root holds it again, as its insert ("s", 1)
        let childWins = policy == .overwrite || policy == .mergeByPropertyObjectTrump
        if policy == .error {
            #expect(conflicts(saving: child).map(\.objectID) == [w.objectID])
        } else {
            try child.save()
        }
        #expect(root.insertedObjects.count == 1)
        let rw = try #require(root.insertedObjects.first)
        let expected = childWins ? "w/5" : "s/1"
        func values(_ o: ManagedObject) throws -> String {
            "\(try o.get("name", as: String.self) ?? "")/\(try o.get("price", as: Int.self) ?? -1)"
        }
        #expect(try rw.objectID == w.objectID && values(rw) == expected)
        // The child holds what the root holds, its insert pushed, unless the push threw.
        #expect(cw.isInserted == (policy == .error) && child.hasChanges == (policy == .error))
        if policy != .error { #expect(try values(cw) == expected) }
        try root.save()
        let rows = try ManagedObjectContext(store: s).fetch(FetchRequest("Item"))
        #expect(try rows.map(values) == [expected])
    }

    @Test func rollbackPolicyKeepsAChildsDeleteItTakesBack() throws {
        // The child deleted x, the parent changed it: under `.rollback` the child's delete is
        // undone and its object holds the parent's values (it used to leave the child).
        let (child, cx, x) = try pushConflict(.rollback)
        child.rollback()
        try child.delete(cx)
        try child.save()
        #expect(!cx.isDeleted && cx.context === child && child.registeredObjects.contains(cx))
        #expect(try cx.get("price", as: Int.self) == 100 && !x.isDeleted)
    }

    @Test func anUndeleteFromAChildBringsBackTheObjectAlone() throws {
        // Owners cascade to their items. The parent deletes an owner (and, through its delete
        // rule, its items); a child that renamed the owner takes it back under object trump.
        let s = try PersistentStore.inMemory(model: try Fixtures.itemsModel(itemsRule: .cascade))
        let parent = ManagedObjectContext(store: s)
        let o = try parent.insert("Owner")
        try o.setValue("O", forKey: "name")
        let (i1, i2) = (try item(parent, "i1", 1, owner: o), try item(parent, "i2", 2, owner: o))
        try parent.save()
        let child = ManagedObjectContext(parent: parent)
        child.mergePolicy = .mergeByPropertyObjectTrump
        let co = try child.existingObject(with: o.objectID)
        #expect(try co.get("items", as: [ManagedObject].self)?.count == 2)
        try co.setValue("renamed", forKey: "name")
        try parent.delete(o)
        try parent.processPendingChanges()  // the cascade: both items deleted in the parent
        #expect(i1.isDeleted && i2.isDeleted)
        try child.save()
        // The owner is back with the child's name; its items stay deleted, and nothing names them.
        #expect(!o.isDeleted && i1.isDeleted && i2.isDeleted)
        #expect(try o.get("name", as: String.self) == "renamed" && o.get("items", as: [ManagedObject].self) == [])
        try parent.save()
        let fresh = ManagedObjectContext(store: s)
        #expect(try fresh.count(for: FetchRequest("Item")) == 0)
        let stored = try fresh.existingObject(with: o.objectID)
        #expect(
            try stored.get("name", as: String.self) == "renamed" && stored.get("items", as: [ManagedObject].self) == [])
    }

    @Test func rootContextsAreUnchanged() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let c = ManagedObjectContext(store: s)
        #expect(c.parent == nil && !c.automaticallyMergesChangesFromParent)
        let x = try item(c, "x", 1)
        try c.save()
        #expect(!x.objectID.isTemporaryID)
        #expect(try names(c, "price == 1") == ["x"])
    }
}
