// A context's registry: one object per ID, looked up for every row a fetch reads and every object
// a save renames. Swift's `Dictionary` hashes each key with SipHash (a seeded, attack-resistant
// hash) and was a large share of a fetch's cost; primary keys and temporary counters are small
// integers chosen by the store, not by an attacker, so an open-addressing table keyed by the
// integer with a multiplicative hash does the same job for a fraction of the work.

/// Objects by the integer part of their ID: permanent keys in one table, temporary ones in another.
struct ObjectRegistry {
    private var permanent = IntTable()
    private var temporary = IntTable()

    subscript(key: ObjectID.Key) -> ManagedObject? {
        get {
            switch key {
            case .permanent(let k): permanent.find(k)
            case .temporary(let k): temporary.find(k)
            }
        }
        set {
            switch key {
            case .permanent(let k):
                if let newValue { permanent.insert(k, newValue) } else { permanent.remove(k) }
            case .temporary(let k):
                if let newValue { temporary.insert(k, newValue) } else { temporary.remove(k) }
            }
        }
    }

    /// The permanent object with primary key `k`.
    func permanent(_ k: Int64) -> ManagedObject? { permanent.find(k) }

    /// Registers `o` under primary key `k`, which must not be registered yet.
    mutating func addPermanent(_ k: Int64, _ o: ManagedObject) { permanent.insert(k, o) }

    /// Room for `n` more permanent objects without growing on the way.
    mutating func reservePermanent(_ n: Int) { permanent.reserve(permanent.count + n) }

    var count: Int { permanent.count + temporary.count }

    /// Every registered object (in no particular order).
    var values: [ManagedObject] { permanent.values + temporary.values }
}

/// Int64 → object, open addressing with linear probing and backward-shift deletion (no
/// tombstones), at most half full.
private struct IntTable {
    private struct Slot {
        var key: Int64
        var object: ManagedObject?
    }
    private var slots: [Slot] = []
    /// `slots.count - 1`; slots.count is a power of two (or zero).
    private var mask = 0
    /// 64 - log2(slots.count): a key's home is the top bits of its product.
    private var shift: UInt64 = 63
    private(set) var count = 0

    @inline(__always)
    private static func home(_ k: Int64, _ shift: UInt64) -> Int {
        // Fibonacci hashing: the product's top bits spread consecutive keys over the table.
        Int(truncatingIfNeeded: (UInt64(bitPattern: k) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    func find(_ k: Int64) -> ManagedObject? {
        guard count > 0 else { return nil }
        let mask = mask, shift = shift
        return slots.withUnsafeBufferPointer { s in
            var i = Self.home(k, shift)
            while let o = s[i].object {
                if s[i].key == k { return o }
                i = (i + 1) & mask
            }
            return nil
        }
    }

    mutating func reserve(_ n: Int) {
        var capacity = max(16, slots.count)
        while capacity < n * 2 { capacity *= 2 }
        if capacity > slots.count { rehash(capacity) }
    }

    /// Sets the object for `k` (replacing one already there).
    mutating func insert(_ k: Int64, _ o: ManagedObject) {
        if (count + 1) * 2 > slots.count { reserve(count + 1) }
        let mask = mask, shift = shift
        let added: Bool = slots.withUnsafeMutableBufferPointer { s in
            var i = Self.home(k, shift)
            while s[i].object != nil {
                if s[i].key == k { s[i].object = o; return false }
                i = (i + 1) & mask
            }
            s[i] = Slot(key: k, object: o)
            return true
        }
        if added { count += 1 }
    }

    mutating func remove(_ k: Int64) {
        guard count > 0 else { return }
        let mask = mask, shift = shift
        let removed: Bool = slots.withUnsafeMutableBufferPointer { s in
            var i = Self.home(k, shift)
            while true {
                guard s[i].object != nil else { return false }
                if s[i].key == k { break }
                i = (i + 1) & mask
            }
            // Shift later members of the run back into the hole when their home allows it, so
            // every key stays reachable from its home without gaps.
            var hole = i
            var j = i
            while true {
                j = (j + 1) & mask
                guard s[j].object != nil else { break }
                let h = Self.home(s[j].key, shift)
                let between = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j)
                if !between {
                    s[hole] = s[j]
                    hole = j
                }
            }
            s[hole] = Slot(key: 0, object: nil)
            return true
        }
        if removed { count -= 1 }
    }

    var values: [ManagedObject] {
        var out: [ManagedObject] = []
        out.reserveCapacity(count)
        for s in slots { if let o = s.object { out.append(o) } }
        return out
    }

    private mutating func rehash(_ capacity: Int) {
        let old = slots
        slots = Array(repeating: Slot(key: 0, object: nil), count: capacity)
        mask = capacity - 1
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        count = 0
        for s in old { if let o = s.object { insert(s.key, o) } }
    }
}
