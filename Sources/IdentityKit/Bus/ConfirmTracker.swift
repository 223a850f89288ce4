/// Publisher-confirm bookkeeping for one channel in confirm mode: which message (by the caller's
/// id) each delivery tag stands for, and which of them the broker has acked or nacked so far.
///
/// The broker numbers publishes on a channel 1, 2, 3… and answers each with `basic.ack` or
/// `basic.nack`; with `multiple` set, one answer settles every outstanding tag up to and
/// including its own. Answers may cover tags in any grouping, so nothing may be inferred from
/// "the highest tag seen": only the tags an answer covers are settled, each exactly once.
struct ConfirmTracker<ID: Hashable> {
    private var outstanding: [UInt64: ID] = [:]
    /// Settled so far, in the order the answers came.
    private(set) var acked: [ID] = []
    private(set) var nacked: [ID] = []

    /// Publishes the broker has not answered yet.
    var pendingCount: Int { outstanding.count }

    /// Records that the message `id` went out as delivery tag `tag`.
    mutating func published(tag: UInt64, id: ID) {
        outstanding[tag] = id
    }

    /// Applies one `basic.ack` (`acked`) or `basic.nack` and returns the ids it settled, in tag
    /// order. With `multiple`, every outstanding tag up to `tag` is settled (tag 0 with
    /// `multiple`: all of them, as AMQP defines it); without, only `tag` itself. A tag that is
    /// not outstanding (never published here, or settled already) settles nothing.
    @discardableResult
    mutating func settle(tag: UInt64, multiple: Bool, acked isAck: Bool) -> [ID] {
        let tags: [UInt64]
        if multiple {
            tags = outstanding.keys.filter { tag == 0 || $0 <= tag }.sorted()
        } else {
            tags = outstanding[tag] == nil ? [] : [tag]
        }
        let ids = tags.compactMap { outstanding.removeValue(forKey: $0) }
        if isAck { acked += ids } else { nacked += ids }
        return ids
    }

    /// Hands over what was settled so far and forgets it (outstanding tags are kept).
    mutating func takeSettled() -> (acked: [ID], nacked: [ID]) {
        defer {
            acked = []
            nacked = []
        }
        return (acked, nacked)
    }
}
