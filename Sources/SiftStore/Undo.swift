// Undo and redo for a context. Foundation's `UndoManager` does not exist on Linux, so the store has
// its own, shaped like it (groups, undo/redo stacks, grouping by event). What it records are the
// context's own operations with the values they replaced — an attribute's old value, a
// relationship's old destinations, an insert, a delete with the object's values — and undoing
// one performs its inverse through the ordinary editing paths, which keep inverses in step and
// record the redo. So an undo after a save is an ordinary edit that the next save writes. A
// context without an undo manager (the default, as on iOS) pays one nil check per change.

import Foundation
import SiftEvaluation

/// Records a context's changes in groups and undoes or redoes them a group at a time. Give one to
/// a context (``ManagedObjectContext/undoManager``) to make it record; by default changes are
/// grouped per event — every `processPendingChanges()` (which `save()` runs; fetches do not) closes
/// the group — and `beginUndoGrouping()`/`endUndoGrouping()` make explicit groups.
///
/// Named with the `Sift` prefix because Foundation's `UndoManager` (Apple platforms only) has
/// the same name.
///
/// ```swift
/// let context = ManagedObjectContext(store: store)
/// context.undoManager = SiftUndoManager()
/// try item.setValue("draft", forKey: "name")
/// try context.processPendingChanges()        // one group
/// try context.undoManager?.undo()            // the name is back to what it was
/// try context.undoManager?.redo()            // "draft" again
/// ```
public final class SiftUndoManager {
    /// One recorded operation, with what it replaced.
    enum Step {
        /// Attribute `index` of the object held `old`.
        case attribute(ManagedObject, index: Int, old: Value)
        /// Relationship `index` of the object held `old`.
        case relationship(ManagedObject, index: Int, old: RelationshipValue)
        /// The object was inserted (or brought back by an undo).
        case insert(ManagedObject)
        /// The object was deleted; its attributes and relationships then.
        case delete(ManagedObject, attributes: [Value], relationships: [RelationshipValue])
    }

    /// A relationship's destinations, as objects.
    enum RelationshipValue {
        case one(ManagedObject?)
        case many([ManagedObject])
        case nilMany
    }

    enum Mode { case recording, undoing, redoing }

    /// The context whose changes are recorded (set when the manager is given to it).
    weak var context: ManagedObjectContext?
    private var undoStack: [[Step]] = []
    private var redoStack: [[Step]] = []
    /// The group being recorded; nil when none is open.
    private var open: [Step]?
    /// Nesting of explicit groups (0: none open; an event group may then be open).
    private var explicitDepth = 0
    private var disabled = 0
    private(set) var mode = Mode.recording

    /// Whether a group closes at every `processPendingChanges()` (true by default).
    public var groupsByEvent = true
    /// How many groups are kept (0: no limit); the oldest go first.
    public var levelsOfUndo = 0

    /// A manager with empty stacks.
    ///
    /// ```swift
    /// context.undoManager = SiftUndoManager()
    /// ```
    public init() {}

    /// Whether a group can be undone (an open group with changes counts).
    public var canUndo: Bool { !undoStack.isEmpty || !(open?.isEmpty ?? true) }
    /// Whether an undone group can be redone.
    public var canRedo: Bool { !redoStack.isEmpty }
    /// Whether changes are recorded (see `disableUndoRegistration()`).
    public var isUndoRegistrationEnabled: Bool { disabled == 0 }
    /// Whether an undo or a redo is running.
    public var isUndoing: Bool { mode == .undoing }
    /// Whether a redo is running.
    public var isRedoing: Bool { mode == .redoing }
    /// The number of explicit groups open.
    public var groupingLevel: Int { explicitDepth }

    /// Opens a group; changes until the matching `endUndoGrouping()` undo together (nested groups
    /// are part of the outermost one).
    ///
    /// ```swift
    /// undo.beginUndoGrouping()
    /// try a.setValue(1, forKey: "price"); try b.setValue(2, forKey: "price")
    /// undo.endUndoGrouping()                     // one undo reverts both
    /// ```
    public func beginUndoGrouping() {
        if explicitDepth == 0 { closeGroup() }
        explicitDepth += 1
        if open == nil { open = [] }
    }

    /// Closes the group `beginUndoGrouping()` opened.
    public func endUndoGrouping() {
        guard explicitDepth > 0 else { return }
        explicitDepth -= 1
        if explicitDepth == 0 { closeGroup() }
    }

    /// Stops recording until `enableUndoRegistration()` (calls nest).
    public func disableUndoRegistration() { disabled += 1 }
    /// Resumes recording.
    public func enableUndoRegistration() { disabled = max(0, disabled - 1) }

    /// Forgets every group, undo and redo.
    public func removeAllActions() {
        undoStack = []
        redoStack = []
        open = explicitDepth > 0 ? [] : nil
    }

    /// Reverts the last group (closing the open one first) and makes it redoable.
    ///
    /// ```swift
    /// try context.undoManager?.undo()
    /// ```
    public func undo() throws(StoreError) {
        if explicitDepth == 0 { closeGroup() }
        guard explicitDepth == 0, let group = undoStack.popLast() else { return }
        let reverted = try run(group, as: .undoing)
        if !reverted.isEmpty { redoStack.append(reverted) }
    }

    /// Performs the last undone group again.
    ///
    /// ```swift
    /// try context.undoManager?.redo()
    /// ```
    public func redo() throws(StoreError) {
        guard explicitDepth == 0, let group = redoStack.popLast() else { return }
        let redone = try run(group, as: .redoing)
        if !redone.isEmpty { push(redone) }
    }

    // MARK: Recording (called by the context)

    var isRecording: Bool { disabled == 0 }

    func record(_ step: Step) {
        guard disabled == 0 else { return }
        if open == nil { open = [] }
        open!.append(step)
        if mode == .recording, !redoStack.isEmpty { redoStack = [] }
    }

    /// Closes an event group (the context's `processPendingChanges`).
    func closeEventGroup() {
        if groupsByEvent, explicitDepth == 0, mode == .recording { closeGroup() }
    }

    private func closeGroup() {
        guard mode == .recording, let group = open else { return }
        open = nil
        if !group.isEmpty { push(group) }
    }

    private func push(_ group: [Step]) {
        undoStack.append(group)
        if levelsOfUndo > 0, undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
    }

    /// Performs the inverse of every step of `group`, last first, recording the inverses'
    /// own inverses (the group that undoes this one).
    private func run(_ group: [Step], as mode: Mode) throws(StoreError) -> [Step] {
        guard let context else { return [] }
        self.mode = mode
        open = []
        defer {
            self.mode = .recording
            open = nil
        }
        for step in group.reversed() { try context.invert(step) }
        return open ?? []
    }
}

extension ManagedObjectContext {
    /// Undoes the last group of the context's undo manager (nothing without one).
    ///
    /// ```swift
    /// try context.undo()
    /// ```
    public func undo() throws(StoreError) { try undoManager?.undo() }

    /// Redoes the last undone group of the context's undo manager.
    ///
    /// ```swift
    /// try context.redo()
    /// ```
    public func redo() throws(StoreError) { try undoManager?.redo() }

    // MARK: Hooks (each behind `undoManager != nil`)

    func recordAttribute(_ o: ManagedObject, _ i: Int) throws(StoreError) {
        guard let u = undoManager, u.isRecording else { return }
        try o.fire()
        u.record(.attribute(o, index: i, old: o.attributes[i]))
    }

    /// Records relationship `i` of `o` before a change that makes it hold `adding`. A destination
    /// whose inverse is a to-one leaves its previous partner: that link is recorded too, so the
    /// undo gives it back.
    func recordRelationship(_ o: ManagedObject, _ i: Int, adding: [ManagedObject] = []) throws(StoreError) {
        guard let u = undoManager, u.isRecording else { return }
        u.record(.relationship(o, index: i, old: try relationshipValue(o, i)))
        guard let inverse = o.info.entity.relationships[i].inverse else { return }
        for t in adding where t.context === self {
            guard let j = t.info.entity.relationshipIndex[inverse], !t.info.entity.relationships[j].isToMany,
                let partner = try t.one(j), partner !== o
            else { continue }
            u.record(.relationship(t, index: j, old: .one(partner)))
        }
    }

    /// The objects a relationship value passed to `setValue` names.
    static func objects(in value: Any?) -> [ManagedObject] {
        switch value {
        case let m as ManagedObject: [m]
        case let a as [ManagedObject]: a
        case let s as Set<ManagedObject>: Array(s)
        default: []
        }
    }

    func recordInsert(_ o: ManagedObject) {
        guard let u = undoManager, u.isRecording else { return }
        u.record(.insert(o))
    }

    func recordDelete(_ o: ManagedObject) throws(StoreError) {
        guard let u = undoManager, u.isRecording else { return }
        try o.fire()
        let relationships = try o.info.entity.relationships.indices.map { (i) throws(StoreError) in
            try relationshipValue(o, i)
        }
        u.record(.delete(o, attributes: o.attributes, relationships: relationships))
    }

    func relationshipValue(_ o: ManagedObject, _ i: Int) throws(StoreError) -> SiftUndoManager.RelationshipValue {
        switch try o.link(i) {
        case .one(let t): .one(t)
        case .many(let m): .many(m)
        case .nilMany: .nilMany
        case .oneKey, .subEntityKey: preconditionFailure("link(_:) resolves foreign keys")
        }
    }

    // MARK: Inverses

    /// Performs the inverse of `step` through the ordinary editing paths (which record it).
    func invert(_ step: SiftUndoManager.Step) throws(StoreError) {
        switch step {
        case .attribute(let o, let i, let old):
            guard o.context === self else { return }
            try setAttribute(old, i, forKey: o.info.entity.attributes[i].name, of: o)
        case .relationship(let o, let i, let old):
            guard o.context === self else { return }
            try set(alive(old), forKey: o.info.entity.relationships[i].name, of: o)
        case .insert(let o):
            guard o.context === self, !deletedSet.contains(o) else { return }
            try delete(o)
        case .delete(let o, let attributes, let relationships):
            try restore(o, attributes: attributes, relationships: relationships)
        }
    }

    /// The destinations of `value` that can still be linked (not merged away, still here).
    private func alive(_ value: SiftUndoManager.RelationshipValue) -> Any? {
        switch value {
        case .one(let t): return t.flatMap { $0.context === self && !$0.isGone ? $0 : nil }
        case .many(let m): return m.filter { $0.context === self && !$0.isGone }
        case .nilMany: return nil
        }
    }

    /// Brings a deleted object back: a pending delete is withdrawn; an object that left the
    /// context (an unsaved insert deleted, or a delete that was saved) is inserted again, with a
    /// new temporary ID, its attributes and its relationships.
    private func restore(
        _ o: ManagedObject, attributes: [Value], relationships: [SiftUndoManager.RelationshipValue]
    ) throws(StoreError) {
        if o.context === self, deletedSet.contains(o) {
            deletedSet.remove(o)
            if let s = o.snapshot,
                o.attributes.indices.allSatisfy({ o.attributes[$0].isIdentical(to: s.attributes[$0]) }),
                o.links.indices.allSatisfy({ Link.same(o.links[$0], s.links[$0]) })
            {
                o.snapshot = nil
            } else {
                updatedSet.insert(o)
            }
            recordInsert(o)
            // Delete rules cleared the other sides of its relationships: link them again.
            try relink(o, relationships)
            return
        }
        guard o.context == nil else { return }
        reinsert(o, attributes: attributes)
        for (i, value) in relationships.enumerated() {
            try set(alive(value), forKey: o.info.entity.relationships[i].name, of: o)
        }
    }

    /// Makes every other side of `o`'s relationships hold `o` again.
    private func relink(_ o: ManagedObject, _ relationships: [SiftUndoManager.RelationshipValue]) throws(StoreError) {
        for (i, rel) in o.info.entity.relationships.enumerated() {
            let targets: [ManagedObject]
            switch relationships[i] {
            case .one(let t): targets = t.map { [$0] } ?? []
            case .many(let m): targets = m
            case .nilMany: targets = []
            }
            o.links[i] = relationships[i].link
            guard let inverse = rel.inverse else { continue }
            for t in targets where t.context === self && !t.isGone {
                guard let j = t.info.entity.relationshipIndex[inverse] else { continue }
                let holds: Bool
                switch try t.link(j) {
                case .one(let x): holds = x === o
                case .many(let m): holds = m.contains { $0 === o }
                default: holds = false
                }
                if !holds {
                    try recordRelationship(t, j)
                    try link(o, into: t, inverse: inverse)
                }
            }
        }
    }

    /// Registers a detached object as a new insert with `attributes` and no relationships.
    private func reinsert(_ o: ManagedObject, attributes: [Value]) {
        o.objectID = ObjectID(o.info.names, key: .temporary(Self.nextTemporaryNumber()))
        o.context = self
        o.isGone = false
        o.isFault = false
        o.batch = nil
        o.snapshot = nil
        o.version = 0
        o.attributes = attributes
        o.links = o.info.initialLinks
        registry[o.objectID] = o
        insertedList.append(o)
        o.pendingInsert = true
        unreported.inserted.append(o.objectID)
        recordInsert(o)
    }
}

extension SiftUndoManager.RelationshipValue {
    var link: Link {
        switch self {
        case .one(let t): .one(t)
        case .many(let m): .many(m)
        case .nilMany: .nilMany
        }
    }
}
