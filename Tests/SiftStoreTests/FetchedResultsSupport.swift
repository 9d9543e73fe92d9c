// What the fetched results controller tests share: a small model (items in groups), a delegate
// that records every change, and the check that the recorded changes, applied to the previous
// results as a table view applies them, give exactly a fresh fetch's results.

import Foundation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

enum ResultsFixtures {
    /// Item (name, category, price, weight) —group→ Group (title), inverse items.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Item",
                attributes: [
                    AttributeDescription("name", .string), AttributeDescription("category", .string),
                    AttributeDescription("price", .integer64), AttributeDescription("weight", .double),
                ],
                relationships: [RelationshipDescription("group", to: "Group", inverse: "items")]),
            EntityDescription(
                "Group", attributes: [AttributeDescription("title", .string)],
                relationships: [RelationshipDescription("items", to: "Item", toMany: true, inverse: "group")]),
        ])
    }

    /// Results as sections of objects.
    typealias Sections = [(name: String, objects: [ManagedObject])]

    /// A fresh fetch of `controller`'s request, in sections as the controller groups them.
    static func freshSections(_ controller: FetchedResultsController) throws -> Sections {
        let objects = try controller.context.fetch(controller.fetchRequest)
        var out: Sections = []
        for o in objects {
            let name =
                try controller.sectionNameKeyPath.map { p in
                    FetchedResultsController.sectionName(try SiftSortDescriptor(p).key(of: o.evaluationRoot))
                } ?? ""
            if out.last?.name == name { out[out.count - 1].objects.append(o) } else { out.append((name, [o])) }
        }
        return out
    }

    static func current(_ controller: FetchedResultsController) -> Sections {
        controller.sections.map { ($0.name, $0.objects) }
    }

    static func same(_ a: Sections, _ b: Sections) -> Bool {
        a.count == b.count
            && zip(a, b).allSatisfy { x, y in
                x.name == y.name && x.objects.count == y.objects.count
                    && zip(x.objects, y.objects).allSatisfy { $0 === $1 }
            }
    }

    static func describe(_ s: Sections) -> String {
        s.map { "\($0.name): \($0.objects.map { "\($0.objectID)" }.joined(separator: ","))" }.joined(separator: " | ")
    }
}

/// Records a controller's changes, one batch per will/did pair.
final class ChangeRecorder: FetchedResultsControllerDelegate {
    struct ObjectChange {
        let object: ManagedObject
        let type: FetchedResultsChangeType
        let old: ResultIndexPath?
        let new: ResultIndexPath?
    }
    var objects: [ObjectChange] = []
    var sections: [(name: String, index: Int, type: FetchedResultsChangeType)] = []
    var batches = 0
    var open = false
    var failures: [StoreError] = []
    /// The changes of each will/did pair since `clear()`, in order (the changes above are all of
    /// them together).
    var rounds: [(objects: [ObjectChange], sections: [(name: String, index: Int, type: FetchedResultsChangeType)])] =
        []
    private var roundStart = (objects: 0, sections: 0)

    func controllerWillChangeContent(_ controller: FetchedResultsController) {
        #expect(!open)
        open = true
    }
    func controller(
        _ controller: FetchedResultsController, didChangeSection name: String, atSectionIndex index: Int,
        for type: FetchedResultsChangeType
    ) { sections.append((name, index, type)) }
    func controller(
        _ controller: FetchedResultsController, didChange object: ManagedObject, at indexPath: ResultIndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: ResultIndexPath?
    ) { objects.append(ObjectChange(object: object, type: type, old: indexPath, new: newIndexPath)) }
    func controllerDidChangeContent(_ controller: FetchedResultsController) {
        #expect(open)
        open = false
        batches += 1
        rounds.append((Array(objects[roundStart.objects...]), Array(sections[roundStart.sections...])))
        roundStart = (objects.count, sections.count)
    }
    func controller(_ controller: FetchedResultsController, didFailWith error: StoreError) { failures.append(error) }

    func clear() {
        objects = []
        sections = []
        rounds = []
        roundStart = (0, 0)
    }

    /// `previous` with each will/did pair's changes applied in turn (`applied(to:)` for each).
    func appliedRoundByRound(to previous: ResultsFixtures.Sections) -> (ResultsFixtures.Sections?, String) {
        var s = previous
        for round in rounds {
            let one = ChangeRecorder()
            one.objects = round.objects
            one.sections = round.sections
            let (next, why) = one.applied(to: s)
            guard let next else { return (nil, why) }
            s = next
        }
        return (s, "")
    }

    /// `previous` with the recorded changes applied as a table view's batch update applies them:
    /// rows deleted and moved out at their old paths, empty sections deleted, sections inserted,
    /// rows inserted and moved in at their new paths. Nil, with a reason, when they do not apply
    /// (an update or move that breaks the rules included).
    func applied(to previous: ResultsFixtures.Sections) -> (ResultsFixtures.Sections?, String) {
        var s = previous
        let outs = objects.filter { $0.type == .delete || $0.type == .move }.sorted { $0.old! > $1.old! }
        for c in outs {
            guard let p = c.old, p.section < s.count, p.item < s[p.section].objects.count,
                s[p.section].objects[p.item] === c.object
            else { return (nil, "\(c.type) at \(c.old.map { "\($0)" } ?? "nil") names another object") }
            s[p.section].objects.remove(at: p.item)
        }
        for c in objects where c.type == .update {
            guard let p = c.old, p.section < previous.count, p.item < previous[p.section].objects.count,
                previous[p.section].objects[p.item] === c.object
            else { return (nil, "update at \(c.old.map { "\($0)" } ?? "nil") names another object") }
        }
        for d in sections.filter({ $0.type == .delete }).sorted(by: { $0.index > $1.index }) {
            guard d.index < s.count, s[d.index].name == d.name, s[d.index].objects.isEmpty else {
                return (nil, "section delete \(d.name) at \(d.index) does not apply")
            }
            s.remove(at: d.index)
        }
        for i in sections.filter({ $0.type == .insert }).sorted(by: { $0.index < $1.index }) {
            guard i.index <= s.count else { return (nil, "section insert \(i.name) at \(i.index) out of range") }
            s.insert((i.name, []), at: i.index)
        }
        let ins = objects.filter { $0.type == .insert || $0.type == .move }.sorted { $0.new! < $1.new! }
        for c in ins {
            guard let p = c.new, p.section < s.count, p.item <= s[p.section].objects.count else {
                return (nil, "\(c.type) to \(c.new.map { "\($0)" } ?? "nil") out of range")
            }
            s[p.section].objects.insert(c.object, at: p.item)
        }
        for c in objects where c.type == .update {
            guard let p = c.new, p.section < s.count, p.item < s[p.section].objects.count,
                s[p.section].objects[p.item] === c.object
            else { return (nil, "update's new path \(c.new.map { "\($0)" } ?? "nil") names another object") }
        }
        for c in objects where c.type == .move && c.old == c.new {
            if previous[c.old!.section].name == s[c.new!.section].name { return (nil, "a move to its own place") }
        }
        return (s, "")
    }
}
