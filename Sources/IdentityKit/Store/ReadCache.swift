import Foundation

/// Rows read from the store, kept in memory for as long as something tells us of every change to
/// them (a `ChangeListener` on the store's notifications). Bounded: at most `capacity` entries,
/// evicted by CLOCK (a second chance for each entry read since the hand last passed it), and
/// none served once older than `maximumAge` seconds, whatever the notifications say.
///
/// Fails closed: until `startUsing()` (the listener is connected and listening), every lookup
/// misses and nothing is stored; `stopUsing()` (the connection is lost) goes back to that, and the
/// next `startUsing()` starts from empty, since notifications may have been missed meanwhile.
///
/// A read of the store races a change's notification: a request that read a row before the change
/// committed could store it after the notification was handled, and keep serving a dead row. So a
/// caller takes a `Ticket` before it reads the store and stores only with it: any invalidation of
/// the same keys (or a clear) since the ticket was taken refuses the store.
public final class ReadCache<Value: Sendable>: Sendable {
    /// What the store saw when the caller's read began: the epoch (cleared or not used since?)
    /// and the invalidation counts of its keys' stripes.
    public struct Ticket: Sendable {
        fileprivate let epoch: UInt64
        fileprivate let stripes: [(stripe: Int, count: UInt64)]
        /// The keys themselves: a stripe is shared by many keys (hashes are seeded per process),
        /// so the stripe alone would let another key of it be stored with this ticket.
        fileprivate let keys: [String]
    }

    private struct Slot {
        var key: String
        var value: Value
        var stored: Double
        var referenced: Bool
    }

    private struct State {
        var slots: [Slot?] = []
        var index: [String: Int] = [:]
        var free: [Int] = []
        var hand = 0
        var epoch: UInt64 = 0
        var invalidations = [UInt64](repeating: 0, count: readCacheStripes)
        var usable = false
    }

    public let capacity: Int
    public let maximumAge: Double
    private let state = Locked(State())

    public init(capacity: Int, maximumAge: Double) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.maximumAge = maximumAge
    }

    /// Whether lookups may hit (the notifications are being received).
    public var isUsable: Bool { state.withLock { $0.usable } }

    public var count: Int { state.withLock { $0.index.count } }

    /// The values of both keys, only when both are held and fresh: nil on any miss, and always
    /// while the cache is not in use.
    public func values(_ first: String, _ second: String, now: Double) -> (Value, Value)? {
        state.withLock { state in
            guard state.usable, let a = Self.lookup(first, now: now, maximumAge: maximumAge, in: &state),
                  let b = Self.lookup(second, now: now, maximumAge: maximumAge, in: &state) else { return nil }
            return (a, b)
        }
    }

    /// The value of one key, fresh, or nil.
    public func value(_ key: String, now: Double) -> Value? {
        state.withLock { state in
            guard state.usable else { return nil }
            return Self.lookup(key, now: now, maximumAge: maximumAge, in: &state)
        }
    }

    /// Taken before reading the store for `keys`; nil while the cache is not in use (read, store nothing).
    public func ticket(_ keys: String...) -> Ticket? {
        state.withLock { state in
            guard state.usable else { return nil }
            return Ticket(epoch: state.epoch, stripes: keys.map { key in
                let stripe = Self.stripe(key)
                return (stripe, state.invalidations[stripe])
            }, keys: keys)
        }
    }

    /// Stores what a read begun at `ticket` found, unless one of its keys was invalidated (or the
    /// cache cleared or left unused) since. Only the ticket's own keys may be stored with it.
    @discardableResult
    public func store(_ entries: [(key: String, value: Value)], ticket: Ticket, now: Double) -> Bool {
        state.withLock { state in
            guard state.usable, state.epoch == ticket.epoch else { return false }
            for entry in entries {
                guard ticket.keys.contains(entry.key) else { return false }
                let stripe = Self.stripe(entry.key)
                guard let taken = ticket.stripes.first(where: { $0.stripe == stripe }),
                      taken.count == state.invalidations[stripe] else { return false }
            }
            for entry in entries { Self.put(entry.key, entry.value, now: now, capacity: capacity, in: &state) }
            return true
        }
    }

    /// A change to `key` was committed: forget it, and refuse reads of it already in flight.
    public func invalidate(_ key: String) {
        state.withLock { state in
            state.invalidations[Self.stripe(key)] &+= 1
            Self.remove(key, in: &state)
        }
    }

    /// Starts serving, from empty (whatever was held may have changed unheard).
    public func startUsing() {
        state.withLock { state in
            Self.clear(&state)
            state.usable = true
        }
    }

    /// Forgets everything held (and refuses reads in flight), still in use.
    public func forgetAll() {
        state.withLock { Self.clear(&$0) }
    }

    /// Stops serving and storing: every lookup misses until `startUsing()`.
    public func stopUsing() {
        state.withLock { state in
            Self.clear(&state)
            state.usable = false
        }
    }

    private static func stripe(_ key: String) -> Int {
        Int(UInt(bitPattern: key.hashValue) % UInt(readCacheStripes))
    }

    private static func clear(_ state: inout State) {
        state.slots.removeAll(keepingCapacity: true)
        state.index.removeAll(keepingCapacity: true)
        state.free.removeAll()
        state.hand = 0
        state.epoch &+= 1
    }

    private static func lookup(_ key: String, now: Double, maximumAge: Double, in state: inout State) -> Value? {
        guard let slot = state.index[key], let entry = state.slots[slot] else { return nil }
        guard now - entry.stored < maximumAge, now >= entry.stored else {
            remove(key, in: &state)
            return nil
        }
        state.slots[slot]?.referenced = true
        return entry.value
    }

    private static func remove(_ key: String, in state: inout State) {
        guard let slot = state.index.removeValue(forKey: key) else { return }
        state.slots[slot] = nil
        state.free.append(slot)
    }

    private static func put(_ key: String, _ value: Value, now: Double, capacity: Int, in state: inout State) {
        let entry = Slot(key: key, value: value, stored: now, referenced: false)
        if let slot = state.index[key] {
            state.slots[slot] = entry
        } else if let slot = state.free.popLast() {
            state.slots[slot] = entry
            state.index[key] = slot
        } else if state.slots.count < capacity {
            state.slots.append(entry)
            state.index[key] = state.slots.count - 1
        } else {
            // Full (no free slot): the hand clears referenced bits until it finds an entry not
            // read since its last pass, and that one goes.
            while true {
                let slot = state.hand
                state.hand = (state.hand + 1) % capacity
                guard let held = state.slots[slot] else { continue }
                if held.referenced {
                    state.slots[slot]?.referenced = false
                    continue
                }
                state.index.removeValue(forKey: held.key)
                state.slots[slot] = entry
                state.index[key] = slot
                return
            }
        }
    }
}

/// Invalidations are counted per stripe of keys, so a change to one user does not refuse every
/// read in flight.
private let readCacheStripes = 64
