// Context notifications: objects-did-change (when pending changes are processed, and before a
// save), will-save and did-save, each carrying the inserted, updated and deleted object IDs
// (`Sendable`, unlike the objects). Delivered to callbacks and to `AsyncStream`s.

import Foundation

/// The IDs of the objects a change touched, as a ``ContextNotification`` carries them.
///
/// ```swift
/// let token = context.observe { note in
///     if case .didSave(let changes) = note { print(changes.inserted.count, "inserted") }
/// }
/// ```
public struct ChangeSet: Sendable, Hashable {
    /// The objects inserted (after a save, their permanent IDs).
    public var inserted: [ObjectID] = []
    /// The objects changed.
    public var updated: [ObjectID] = []
    /// The objects deleted.
    public var deleted: [ObjectID] = []
    /// For each updated object of a did-save, the names of the attributes and relationships the
    /// save changed (filled when the context has observers; empty otherwise and for other
    /// notifications).
    public var updatedKeys: [ObjectID: [String]] = [:]
    /// A change set; empty by default.
    public init(
        inserted: [ObjectID] = [], updated: [ObjectID] = [], deleted: [ObjectID] = [],
        updatedKeys: [ObjectID: [String]] = [:]
    ) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.updatedKeys = updatedKeys
    }
    /// Whether no object was touched.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

/// What a context tells its observers, through ``ManagedObjectContext/observe(_:)`` or
/// ``ManagedObjectContext/notifications``.
///
/// ```swift
/// for await note in context.notifications {
///     switch note {
///     case .objectsDidChange(let c): print("pending:", c.updated)
///     case .willSave: break
///     case .didSave(let c): print("saved:", c.inserted)
///     }
/// }
/// ```
public enum ContextNotification: Sendable, Hashable {
    /// Objects were inserted, changed or deleted (not saved yet).
    case objectsDidChange(ChangeSet)
    /// A save is about to validate and write these changes.
    case willSave(ChangeSet)
    /// A save wrote these changes (inserted IDs are the new permanent ones).
    case didSave(ChangeSet)
}

/// Keeps an observation alive; dropping it (or calling `cancel()`) stops the callbacks.
///
/// ```swift
/// let token = context.observe { print($0) }
/// try context.save()   // the callback sees the save's notifications, .didSave last
/// token.cancel()       // no more callbacks
/// ```
public final class ObservationToken {
    let cancelAction: () -> Void
    init(_ cancel: @escaping () -> Void) { cancelAction = cancel }
    /// Stops the callbacks.
    public func cancel() { cancelAction() }
    deinit { cancelAction() }
}

extension ManagedObjectContext {
    /// Calls `callback` with every notification until the token is cancelled or released.
    ///
    /// ```swift
    /// let token = context.observe { note in if case .didSave(let c) = note { print(c.inserted) } }
    /// ```
    public func observe(_ callback: @escaping @Sendable (ContextNotification) -> Void) -> ObservationToken {
        let id = UUID()
        observers[id] = callback
        return ObservationToken { [weak self] in self?.observers[id] = nil }
    }

    /// The notifications as an `AsyncStream`; it ends when the context is released.
    ///
    /// ```swift
    /// for await note in context.notifications { … }
    /// ```
    public var notifications: AsyncStream<ContextNotification> {
        let (stream, continuation) = AsyncStream<ContextNotification>.makeStream()
        let id = UUID()
        observers[id] = { continuation.yield($0) }
        streamFinishers[id] = { continuation.finish() }
        return stream
    }

    /// Tells the observers; a did-save of a context on a store (a save that committed) also goes
    /// to the store's other contexts that merge automatically.
    func post(_ n: ContextNotification) {
        for callback in observers.values { callback(n) }
        if hasResultTaps, case .didSave(let saved) = n { tapSaved(saved) }
        if !isChild, case .didSave(let saved) = n { store.contextDidSave(saved, by: self) }
    }

    /// Runs delete rules for objects deleted so far (the save does this itself) and reports the
    /// changes since the last report as objects-did-change. A confined context on a store that
    /// merges automatically first takes in the other contexts' saves made since its last call.
    ///
    /// ```swift
    /// try context.processPendingChanges()   // observers hear of the pending changes now
    /// ```
    public func processPendingChanges() throws(StoreError) {
        if automaticallyMergesChangesFromParent, concurrencyType == .confined, !isChild { takeCollectedSaves() }
        try propagateDeletes()
        undoManager?.closeEventGroup()
        guard !unreported.isEmpty else { return tapEdits(ChangeSet()) }
        let changes = takeUnreported()
        post(.objectsDidChange(changes))
        tapEdits(changes)
    }
}
