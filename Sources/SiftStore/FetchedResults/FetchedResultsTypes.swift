// The values a fetched results controller hands out: index paths, sections, the kinds of change
// its delegate hears of, the delegate protocol itself and the snapshots of its change stream.
// Linux Foundation's `IndexPath` has no `section`/`item`, hence a small index path of its own.

import Foundation

/// The place of an object in a controller's results: its section and its place in the section.
///
/// ```swift
/// let first = ResultIndexPath(item: 0, section: 0)
/// let item = controller.object(at: first)
/// ```
public struct ResultIndexPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The section's index.
    public var section: Int
    /// The object's index in its section.
    public var item: Int
    /// The index path of `item` in `section`.
    public init(item: Int, section: Int) {
        self.item = item
        self.section = section
    }
    /// Section first, then item.
    public static func < (a: Self, b: Self) -> Bool { (a.section, a.item) < (b.section, b.item) }
    /// `[section, item]`, as Foundation prints an index path.
    public var description: String { "[\(section), \(item)]" }
}

/// One section of a controller's results: the objects with one value of the section key path
/// (one section holds everything when the controller has no section key path).
///
/// ```swift
/// for section in controller.sections { print(section.name, section.numberOfObjects) }
/// ```
public struct FetchedResultsSection {
    /// The section key path's value as text (`""` for nil, and for a controller without sections).
    public let name: String
    /// The objects of the section, in the request's order.
    public let objects: [ManagedObject]
    /// The section's index title: the first letter of its name, upper-cased (nil for no name).
    public var indexTitle: String? { FetchedResultsSection.indexTitle(of: name) }
    /// The number of objects in the section.
    public var numberOfObjects: Int { objects.count }

    static func indexTitle(of name: String) -> String? { name.first.map { String($0).uppercased() } }
}

/// What happened to an object or a section.
///
/// ```swift
/// if type == .move { print("moved from", indexPath!, "to", newIndexPath!) }
/// ```
public enum FetchedResultsChangeType: String, Sendable, Hashable {
    /// It entered the results (new, or it now matches the predicate).
    case insert
    /// It left the results (deleted, or it no longer matches).
    case delete
    /// It changed place (its section or its order); its contents may have changed too.
    case move
    /// Its contents changed and it kept its place.
    case update
}

/// Told of the changes of a controller's results, between `controllerWillChangeContent` and
/// `controllerDidChangeContent`. Every method has an empty default.
///
/// ```swift
/// final class ListScreen: FetchedResultsControllerDelegate {
///     func controller(
///         _ controller: FetchedResultsController, didChange object: ManagedObject,
///         at indexPath: ResultIndexPath?, for type: FetchedResultsChangeType, newIndexPath: ResultIndexPath?
///     ) { print(type, indexPath as Any, newIndexPath as Any) }
/// }
/// ```
public protocol FetchedResultsControllerDelegate: AnyObject {
    /// Changes follow.
    func controllerWillChangeContent(_ controller: FetchedResultsController)
    /// A section appeared (`.insert`, at its new index) or went (`.delete`, at its old index).
    func controller(
        _ controller: FetchedResultsController, didChangeSection name: String, atSectionIndex index: Int,
        for type: FetchedResultsChangeType)
    /// An object changed: `indexPath` is its old place (delete, move, update), `newIndexPath` its
    /// new one (insert, move, update).
    func controller(
        _ controller: FetchedResultsController, didChange object: ManagedObject, at indexPath: ResultIndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: ResultIndexPath?)
    /// The changes are all told; the controller's results are the new ones.
    func controllerDidChangeContent(_ controller: FetchedResultsController)
    /// A change could not be taken in (the predicate or a sort key raised on a changed object,
    /// or sections would no longer group): the results stay as they were, and the objects are
    /// judged again with the next change.
    func controller(_ controller: FetchedResultsController, didFailWith error: StoreError)
}

extension FetchedResultsControllerDelegate {
    /// Does nothing.
    public func controllerWillChangeContent(_ controller: FetchedResultsController) {}
    /// Does nothing.
    public func controller(
        _ controller: FetchedResultsController, didChangeSection name: String, atSectionIndex index: Int,
        for type: FetchedResultsChangeType
    ) {}
    /// Does nothing.
    public func controller(
        _ controller: FetchedResultsController, didChange object: ManagedObject, at indexPath: ResultIndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: ResultIndexPath?
    ) {}
    /// Does nothing.
    public func controllerDidChangeContent(_ controller: FetchedResultsController) {}
    /// Does nothing.
    public func controller(_ controller: FetchedResultsController, didFailWith error: StoreError) {}
}

/// The results as object IDs by section, after a change, with the IDs whose contents changed.
///
/// ```swift
/// for await snapshot in controller.snapshots {
///     print(snapshot.sectionIdentifiers, snapshot.reloadedItemIdentifiers.count)
/// }
/// ```
public struct FetchedResultsSnapshot: Sendable {
    /// One section: its name and its objects' IDs in order.
    public struct Section: Sendable, Hashable {
        /// The section's name.
        public var name: String
        /// The IDs of its objects, in order.
        public var objectIDs: [ObjectID]
    }
    /// The sections, in order.
    public var sections: [Section]
    /// IDs present before and after the change whose contents changed (redraw these rows).
    public var reloadedItemIdentifiers: Set<ObjectID>
    /// Why the last change could not be taken in, when it could not (``sections`` are then the
    /// last good results).
    public var failure: StoreError?
    /// The section names, in order.
    public var sectionIdentifiers: [String] { sections.map(\.name) }
    /// Every ID, section after section.
    public var itemIdentifiers: [ObjectID] { sections.flatMap(\.objectIDs) }
    /// The IDs of the section named `name` (empty when there is none).
    public func itemIdentifiers(inSection name: String) -> [ObjectID] {
        sections.first { $0.name == name }?.objectIDs ?? []
    }
}
