// A context's registry: one object per ID, looked up for every row a fetch reads and every object
// a save renames. Swift's `Dictionary` hashes each key with SipHash (a seeded, attack-resistant
// hash) and was a large share of a fetch's cost; primary keys and temporary counters are small
// integers chosen by the store, not by an attacker, so an open-addressing table keyed by the
// integer with a multiplicative hash does the same job for a fraction of the work.
// The registry holds its objects strongly (a weak reference allocates a side table per object and
// costs an atomic load per lookup, on the path every fetched row takes); a streamed fetch lets go
// of the unchanged objects only the registry still holds with `forgetUnreferenced`, so the objects
// a consumer drops are freed batch by batch.

/// Objects by the integer part of their ID: permanent keys in one table per key space (one for
/// Sift's stores, one per hierarchy for Core Data's, whose keys repeat across hierarchies),
/// temporary ones (unique in the process) in another.
/// A reference type: a context holds one and replaces it whole when it forgets everything.
final class ObjectRegistry {
    /// Indexed by key space; made as spaces are first used.
    private var permanent: [IntTable] = [IntTable()]
    private let temporary = IntTable()

    /// The table of key space `space` (made when new).
    @inline(__always)
    private func table(_ space: UInt32) -> IntTable {
        let i = Int(space)
        if i < permanent.count { return permanent[i] }
        while permanent.count <= i { permanent.append(IntTable()) }
        return permanent[i]
    }

    subscript(id: ObjectID) -> ManagedObject? {
        get { self[id.key, id.names.space] }
        set { self[id.key, id.names.space] = newValue }
    }

    /// The object under `key` in key space `space` (temporary keys have one space).
    subscript(key: ObjectID.Key, space: UInt32) -> ManagedObject? {
        get {
            switch key {
            case .permanent(let k): table(space).find(k)
            case .temporary(let k): temporary.find(k)
            }
        }
        set {
            switch key {
            case .permanent(let k):
                if let newValue { table(space).insert(k, newValue) } else { table(space).remove(k) }
            case .temporary(let k):
                if let newValue { temporary.insert(k, newValue) } else { temporary.remove(k) }
            }
        }
    }

    /// The permanent object with primary key `k` in key space `space`.
    func permanent(_ k: Int64, _ space: UInt32) -> ManagedObject? { table(space).find(k) }

    /// Registers `o` under primary key `k` of its key space; `k` must not be registered yet.
    func addPermanent(_ k: Int64, _ o: ManagedObject) { table(o.objectID.names.space).insert(k, o) }

    /// Room for `n` more permanent objects of key space `space` without growing on the way.
    func reservePermanent(_ n: Int, _ space: UInt32 = 0) {
        let t = table(space)
        t.reserve(t.count + n)
    }

    var count: Int { permanent.reduce(temporary.count) { $0 + $1.count } }

    /// Forgets the permanent objects among `keys` that nothing but the registry holds, then the
    /// objects only those held (their loaded relationships), and so on; returns how many went.
    /// Such an object is unchanged (a context holds its changed objects in its change lists) and
    /// no one can reach it, so forgetting it is invisible but for `registeredObjects`: the next
    /// fetch or `object(with:)` makes a new one from the row. Objects in a cycle of links (both
    /// sides of an inverse loaded) hold each other and stay, as in Core Data.
    func forgetUnreferenced(_ ids: [ObjectID]) -> Int {
        var pending = ids
        var forgotten = 0
        while let id = pending.popLast() {
            guard let k = id.primaryKey, let o = table(id.names.space).takeIfUnreferenced(k) else { continue }
            forgotten += 1
            for link in o.links {
                switch link {
                case .one(let t?)?: pending.append(t.objectID)
                case .many(let members)?: for t in members { pending.append(t.objectID) }
                default: break
                }
            }
            // `o` is released here, and its links with it.
        }
        return forgotten
    }

    /// Every registered object (in no particular order).
    var values: [ManagedObject] { permanent.flatMap(\.values) + temporary.values }
}

/// What the temporary IDs of a context's saved objects became (by its saves, by
/// `obtainPermanentIDs`, or by an ancestor's save for a child), so that `object(with:)` on an old
/// temporary ID finds the saved object. The most recent `limit` renames are kept (bounded memory:
/// at most 1.6 MB); older ones are forgotten half at a time.
struct TemporaryRenames {
    static let limit = 100_000
    private var pairs: [(temporary: Int64, permanent: Int64)] = []

    /// Records that temporary key `t` became primary key `pk` (nothing for a permanent key).
    mutating func add(_ key: ObjectID.Key, _ pk: Int64) {
        guard case .temporary(let t) = key else { return }
        if pairs.count >= Self.limit { pairs.removeFirst(Self.limit / 2) }
        pairs.append((t, pk))
    }

    /// The primary key temporary key `t` became, when it is still remembered. A linear search:
    /// only `object(with:)` on a temporary ID no object holds any more asks.
    func permanent(for key: ObjectID.Key) -> Int64? {
        guard case .temporary(let t) = key else { return nil }
        return pairs.last { $0.temporary == t }?.permanent
    }
}

/// Int64 → object, open addressing with linear probing and backward-shift deletion (no
/// tombstones), at most half full. The slots are raw memory: growing moves the objects into the
/// new slots without a retain and release each, which an array's copy would cost.
private final class IntTable {
    private struct Slot {
        var key: Int64
        var object: ManagedObject?
    }
    private var slots: UnsafeMutablePointer<Slot>
    private var capacity = 0
    /// `capacity - 1`; capacity is a power of two (or zero).
    private var mask = 0
    /// 64 - log2(capacity): a key's home is the top bits of its product.
    private var shift: UInt64 = 63
    private(set) var count = 0

    init() { slots = UnsafeMutablePointer<Slot>.allocate(capacity: 0) }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    @inline(__always)
    private func home(_ k: Int64) -> Int {
        // Fibonacci hashing: the product's top bits spread consecutive keys over the table.
        Int(truncatingIfNeeded: (UInt64(bitPattern: k) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    func find(_ k: Int64) -> ManagedObject? {
        guard count > 0 else { return nil }
        var i = home(k)
        while let o = slots[i].object {
            if slots[i].key == k { return o }
            i = (i + 1) & mask
        }
        return nil
    }

    func reserve(_ n: Int) {
        var c = max(16, capacity)
        while c < n * 2 { c *= 2 }
        if c > capacity { rehash(c) }
    }

    /// Sets the object for `k` (replacing one already there).
    func insert(_ k: Int64, _ o: ManagedObject) {
        if (count + 1) * 2 > capacity { reserve(count + 1) }
        var i = home(k)
        while slots[i].object != nil {
            if slots[i].key == k {
                slots[i].object = o
                return
            }
            i = (i + 1) & mask
        }
        slots[i] = Slot(key: k, object: o)
        count += 1
    }

    /// Takes `k`'s object out when the table holds the only strong reference to it (nil when it
    /// is not there or someone else holds it).
    func takeIfUnreferenced(_ k: Int64) -> ManagedObject? {
        guard count > 0 else { return nil }
        var i = home(k)
        while slots[i].object != nil {
            if slots[i].key == k {
                guard isKnownUniquelyReferenced(&slots[i].object) else { return nil }
                let o = slots[i].object
                remove(k)
                return o
            }
            i = (i + 1) & mask
        }
        return nil
    }

    func remove(_ k: Int64) {
        guard count > 0 else { return }
        var i = home(k)
        while true {
            guard slots[i].object != nil else { return }
            if slots[i].key == k { break }
            i = (i + 1) & mask
        }
        // Shift later members of the run back into the hole when their home allows it, so every
        // key stays reachable from its home without gaps.
        var hole = i
        var j = i
        while true {
            j = (j + 1) & mask
            guard slots[j].object != nil else { break }
            let h = home(slots[j].key)
            let between = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j)
            if !between {
                slots[hole] = slots[j]
                hole = j
            }
        }
        slots[hole] = Slot(key: 0, object: nil)
        count -= 1
    }

    var values: [ManagedObject] {
        var out: [ManagedObject] = []
        out.reserveCapacity(count)
        for i in 0..<capacity { if let o = slots[i].object { out.append(o) } }
        return out
    }

    private func rehash(_ newCapacity: Int) {
        let old = slots
        let oldCapacity = capacity
        slots = UnsafeMutablePointer<Slot>.allocate(capacity: newCapacity)
        slots.initialize(repeating: Slot(key: 0, object: nil), count: newCapacity)
        capacity = newCapacity
        mask = newCapacity - 1
        shift = UInt64(64 - newCapacity.trailingZeroBitCount)
        for j in 0..<oldCapacity where old[j].object != nil {
            var i = home(old[j].key)
            while slots[i].object != nil { i = (i + 1) & mask }
            // Moved over an empty slot (nothing to release there): the reference passes to the
            // new slot as it is, and the old memory is freed without releasing it.
            (slots + i).moveInitialize(from: old + j, count: 1)
        }
        old.deallocate()
    }
}
