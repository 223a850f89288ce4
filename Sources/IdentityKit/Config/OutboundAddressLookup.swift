import Foundation

/// The save-time look at where an app's URL resolves (`OutboundAddressPolicy`). Run where a
/// setting is written (the token worker, identityctl), never in the gateway, whose HTTP threads
/// must not wait on DNS.
extension OutboundAddressPolicy {
    /// What is wrong with where `text`'s host resolves now: any refused address among its
    /// answers (a name with one private answer among public ones is refused too). A name that
    /// does not resolve, or not within `waitMilliseconds`, is not refused: the token worker may
    /// sit where public DNS is not reachable, and the mailer checks every address again at
    /// connect, which is what keeps a request from reaching one; this check only tells the app
    /// at once.
    /// The message names neither the address nor the kind of range: the name's owner learns
    /// that it is refused, and nobody learns through it where a name resolves (a DNS oracle
    /// into the operator's network).
    ///
    /// The wait gives the worker's slot back (`WorkerSlots`): a slow resolver holds no slot,
    /// and at most `maximumLookups` lookups are under way in a process (beyond that, the URL is
    /// not looked up here, as when the lookup is slow).
    public func lookupProblem(url text: String, waitMilliseconds: Int = 2000) -> String? {
        guard !allowPrivate, let host = URL(string: text)?.host.map(Self.hostName), !host.isEmpty,
              Self.literalAddress(host) == nil else { return nil }
        let answers = WorkerSlots.waitingOutside { Self.resolve(host, waitMilliseconds: waitMilliseconds) }
        guard answers.contains(where: { Self.refusal(of: $0) != nil }) else { return nil }
        return "must reach a public address: \(host) resolves to an address that is not public"
    }

    /// Lookups under way at once in this process, at most.
    static let maximumLookups = 8
    private static let lookups = Locked(0)

    /// getaddrinfo on a thread of its own: it has no timeout, so the caller waits at most
    /// `waitMilliseconds` and a slow lookup finishes (and is dropped) on its own; none when
    /// `maximumLookups` are under way already (slow ones among them).
    static func resolve(_ host: String, waitMilliseconds: Int) -> [[UInt8]] {
        guard lookups.withLock({ count -> Bool in
            guard count < maximumLookups else { return false }
            count += 1
            return true
        }) else { return [] }
        let answer = Locked<[[UInt8]]>([])
        let done = DispatchSemaphore(value: 0)
        Thread {
            let found = addresses(of: host)
            answer.withLock { $0 = found }
            lookups.withLock { $0 -= 1 }
            done.signal()
        }.start()
        guard done.wait(timeout: .now() + .milliseconds(waitMilliseconds)) == .success else { return [] }
        return answer.withLock { $0 }
    }

    private static func addresses(of host: String) -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0 else { return [] }
        defer { freeaddrinfo(list) }
        var found: [[UInt8]] = []
        var entry = list
        while let current = entry?.pointee {
            if current.ai_family == AF_INET, let address = current.ai_addr {
                found.append(address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                })
            } else if current.ai_family == AF_INET6, let address = current.ai_addr {
                found.append(address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                })
            }
            entry = current.ai_next
        }
        return found
    }
}
