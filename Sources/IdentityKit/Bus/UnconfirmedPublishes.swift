import Foundation

/// What an `AMQPLink` published that the broker has not confirmed yet, by delivery tag. When
/// the connection is lost before the confirm (the node stopped or failed), these messages are
/// published again on the next connection, to another node, so a follow-up mail command or a
/// gateway's command is not lost with the node (replies are not tracked: `AMQPLink`). A
/// message may then arrive twice (the node had taken it): it carries `republished`, which the
/// worker treats as a redelivery, and commands are idempotent by command id (docs/architecture.md:
/// "Redelivered commands"). Owned by the link's I/O thread.
struct UnconfirmedPublishes {
    private struct Entry {
        let tag: UInt64
        let message: OutgoingMessage
        let sentAt: UInt64
    }

    /// In delivery-tag order (tags only grow on a channel).
    private var entries: [Entry] = []
    /// Delivery tags count publishes on channel 1 from 1, per connection.
    private var lastTag: UInt64 = 0

    var count: Int { entries.count }

    mutating func published(_ message: OutgoingMessage, now: UInt64 = DispatchTime.now().uptimeNanoseconds) {
        lastTag += 1
        entries.append(Entry(tag: lastTag, message: message, sentAt: now))
    }

    /// A basic.ack or basic.nack: forgets the messages it settles and returns the nacked ones.
    mutating func settle(tag: UInt64, multiple: Bool, acked: Bool) -> [OutgoingMessage] {
        let settled = entries.filter { multiple ? $0.tag <= tag : $0.tag == tag }
        guard !settled.isEmpty else { return [] }
        entries.removeAll { multiple ? $0.tag <= tag : $0.tag == tag }
        return acked ? [] : settled.map(\.message)
    }

    /// For a new connection (whose delivery tags start again at 1): the messages to publish
    /// again, each with what is left of its expiration; those whose expiration has passed (their
    /// caller has had its 503) are dropped.
    mutating func takeForResend(now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> [OutgoingMessage] {
        defer {
            entries.removeAll()
            lastTag = 0
        }
        return entries.compactMap { entry in
            var message = entry.message
            message.republished = true
            guard let expiration = message.expirationMilliseconds else { return message }
            let left = expiration - Int((now - entry.sentAt) / 1_000_000)
            guard left > 0 else { return nil }
            message.expirationMilliseconds = left
            return message
        }
    }
}
