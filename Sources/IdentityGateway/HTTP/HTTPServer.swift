import CMicroHTTPD
import CMicroHTTPDShim
import Foundation
import IdentityKit

/// libmicrohttpd with an epoll thread pool. A request's body is collected across MHD's calls;
/// then `dispatch` answers it at once or, for commands, suspends the connection and resumes it
/// from whichever thread produces the answer, so a slow worker never holds an HTTP thread.
///
/// Hostile input is stopped here, before any route: ambiguous body framing is refused on the
/// first call (`RequestFraming`), connections are limited in all and per peer and held to
/// header and body deadlines (`ConnectionGuard`), and the client's address is resolved through
/// the trusted proxies only (`TrustedProxies`).
///
/// It stops by draining (`stop(grace:)`): no request that reached it is cut short, and every
/// suspended connection is resumed before the daemon stops, as libmicrohttpd requires.
final class HTTPServer: @unchecked Sendable {
    /// The largest body accepted (64 KiB, larger → 413: docs/api-contract.md, "Conventions for
    /// every endpoint").
    static let maximumBody = 64 * 1024
    /// Bulk admin calls whose bodies may be larger: a user import carries up to 1,000 users.
    static let largeBodyPaths: [String: Int] = ["/v1/admin/users/import": 2 << 20]

    static func maximumBody(forPath path: String) -> Int { largeBodyPaths[path] ?? maximumBody }
    /// Descriptors kept back from the connection limit for everything else the process opens:
    /// the database pool, the broker, epoll and pipes per thread, logs.
    static let reservedDescriptors = 256
    /// After the drain's deadline, how long the last answers (the 503s) get to be written
    /// before the daemon closes what is left.
    static let lastAnswersSeconds = 1.0

    private let dispatch: @Sendable (HTTPRequest) -> RouteResult
    // Written once in start() before MHD's threads exist; read by them and by stop().
    private var daemon: OpaquePointer?
    private var trustedProxies = TrustedProxies.none
    fileprivate var connections: ConnectionGuard?
    private let suspensions = SuspendedConnections()
    /// Set when the drain begins: every answer from then on closes its connection.
    private let draining = Locked(false)

    init(dispatch: @escaping @Sendable (HTTPRequest) -> RouteResult) {
        self.dispatch = dispatch
    }

    func start(host: String, port: UInt16, threads: Int, limits requested: ConnectionLimits,
               trustedProxies: TrustedProxies) throws {
        var limits = requested
        // The connection limit is only real if the process may open that many sockets: a
        // process out of descriptors fails accept() in a loop instead of refusing politely.
        var soft: UInt64 = 0, hard: UInt64 = 0
        let wanted = UInt64(limits.maxConnections + Self.reservedDescriptors)
        if cmhdshim_raise_open_files_limit(wanted, &soft, &hard) == 0, soft < wanted {
            let reachable = max(1, Int(clamping: soft) - Self.reservedDescriptors)
            Log.warning("open-files limit below the connection limit; lowering the connection limit",
                        ["nofile_soft": soft, "nofile_hard": hard,
                         "max_connections": limits.maxConnections, "lowered_to": reachable])
            limits.maxConnections = reachable
        }
        self.trustedProxies = trustedProxies
        let connections = ConnectionGuard(limits: limits, trusted: trustedProxies,
                                          cutSocket: { cmhdshim_shutdown_socket($0) })
        self.connections = connections
        let context = Unmanaged.passUnretained(self).toOpaque()
        let settings = cmhdshim_settings(port: port, threads: UInt32(threads),
                                         idle_timeout_seconds: UInt32(limits.headerTimeoutSeconds),
                                         connection_limit: UInt32(limits.maxConnections))
        daemon = cmhdshim_start(host, settings, accessHandler, context, requestCompleted, context,
                                connectionNotified, context)
        guard daemon != nil else { throw BusError("cannot listen on \(host):\(port)") }
        connections.start()
        ConnectionGuard.exportGauges(connections, maxConnections: limits.maxConnections)
        Log.info("http limits", ["max_connections": limits.maxConnections,
                                 "max_connections_per_ip": limits.maxConnectionsPerIP,
                                 "header_timeout_s": limits.headerTimeoutSeconds,
                                 "body_timeout_s": limits.bodyTimeoutSeconds,
                                 "trusted_proxies": trustedProxies.ranges.map(\.description).joined(separator: ","),
                                 "nofile_soft": soft])
    }

    /// Stops without cutting a request short:
    /// 1. stop listening: new connections are refused, and those the kernel already completed
    ///    are still served (`cmhdshim_quiesce`);
    /// 2. answers from now on close their connection, and idle keep-alive connections are
    ///    closed (at once, or as their request ends);
    /// 3. wait at most `grace` seconds for every connection to get its answer and close;
    /// 4. then answer 503 `auth/unavailable` to requests still waiting for a worker, close the
    ///    connections no answer is coming for, and give the last answers a moment to go out;
    /// 5. stop the daemon (joining its threads; nothing is suspended any more) and close the
    ///    listening socket.
    func stop(grace: Double) {
        guard let daemon, let connections else { return }
        let started = DispatchTime.now().uptimeNanoseconds
        draining.withLock { $0 = true }
        let openedBefore = connections.openedCount
        var adopted: UInt32 = 0
        let listener = cmhdshim_quiesce(daemon, &adopted)
        if listener < 0 { Log.warning("http: could not stop listening; draining anyway") }
        let idleClosed = connections.beginDraining()
        Log.info("http draining", ["open": Self.describe(connections.phases()), "adopted_from_backlog": adopted,
                                   "idle_closed": idleClosed, "grace_ms": Int(grace * 1000)])
        // The connections handed over from the backlog count only once MHD reports them open.
        let expected = openedBefore + Int(adopted)
        var answered503 = 0, cut = 0
        if !waitUntilDrained(until: started + Self.nanoseconds(grace), expectedOpened: expected) {
            let left = Self.describe(connections.phases())
            answered503 = suspensions.resumeAll { requestId in
                .problem(.unavailable, requestId: requestId, headers: [("Connection", "close")])
            }
            cut = connections.cutUnanswered()
            Log.warning("http drain deadline passed", ["open": left, "answered_503": answered503,
                                                       "cut": cut])
            _ = waitUntilDrained(until: DispatchTime.now().uptimeNanoseconds + Self.nanoseconds(Self.lastAnswersSeconds),
                                 expectedOpened: 0)
        }
        let remaining = connections.openCount
        connections.stop()
        // Drained or not, no connection may stay suspended through MHD_stop_daemon (it aborts
        // the process), and none may be suspended after: refuse suspensions from here on.
        answered503 += suspensions.resumeAll { .problem(.unavailable, requestId: $0, headers: [("Connection", "close")]) }
        ServiceMetrics.unavailable.inc("draining", by: Double(answered503))
        MHD_stop_daemon(daemon)
        self.daemon = nil
        cmhdshim_close_socket(listener)
        Log.info("http stopped", ["took_ms": (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000,
                                  "answered_503_at_deadline": answered503, "cut_at_deadline": cut,
                                  "closed_by_stop": remaining])
    }

    /// Polls until no connection is open (and every one handed over from the backlog has been
    /// seen) or `deadline` passes; true when drained.
    private func waitUntilDrained(until deadline: UInt64, expectedOpened: Int) -> Bool {
        guard let connections else { return true }
        while true {
            if connections.openCount == 0, suspensions.count == 0, connections.openedCount >= expectedOpened { return true }
            if DispatchTime.now().uptimeNanoseconds >= deadline { return false }
            usleep(20_000)
        }
    }

    private static func describe(_ phases: [ConnectionGuard.Phase: Int]) -> String {
        phases.isEmpty ? "0" : phases.map { "\($0.key):\($0.value)" }.sorted().joined(separator: ",")
    }

    private static func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(max(0, seconds) * 1_000_000_000) }

    /// Called by MHD (through `accessHandler`) for each step of a request.
    fileprivate func handle(connection: OpaquePointer, url: String, method: String, version: String,
                            uploadData: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
                            state statePointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Bool {
        let key = Self.key(connection)
        guard let existing = statePointer.pointee else {
            // First call: the header block is complete and no body byte has been read.
            connections?.headersComplete(key)
            let lines = Self.headerLines(of: connection)
            let headers = lines.combined
            let state = ExchangeState(requestId: Self.requestId(from: headers["x-request-id"]), headers: headers,
                                      maximumBody: Self.maximumBody(forPath: url))
            statePointer.pointee = Unmanaged.passRetained(state).toOpaque()
            switch RequestFraming.check(lines, httpVersion: version) {
            case .refused(let reason):
                // Whatever follows on this connection cannot be framed either: close it.
                Log.debug("request refused", ["reason": reason, "peer": Self.peerAddress(of: connection),
                                              "request_id": state.requestId])
                return queue(.problem(.badRequest, requestId: state.requestId, headers: [("Connection", "close")]),
                             state: state, on: connection)
            case .acceptable(let length):
                // Refuse a declared oversized body before reading it.
                if let length, length > state.maximumBody {
                    return queue(.problem(.payloadTooLarge, requestId: state.requestId), state: state, on: connection)
                }
                return true
            }
        }
        let state = Unmanaged<ExchangeState>.fromOpaque(existing).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            if let uploadData, state.body.count + uploadSize.pointee <= state.maximumBody {
                state.body.append(UnsafeRawPointer(uploadData).assumingMemoryBound(to: UInt8.self), count: uploadSize.pointee)
            } else {
                state.tooLarge = true
            }
            uploadSize.pointee = 0
            return true
        }
        // The body is complete, or the connection was resumed with an answer.
        if let ready = state.takeResponse() {
            return queue(ready, state: state, on: connection)
        }
        if state.tooLarge {
            return queue(.problem(.payloadTooLarge, requestId: state.requestId), state: state, on: connection)
        }
        if state.dispatched { return true }
        state.dispatched = true
        let peer = Self.peerAddress(of: connection)
        let request = HTTPRequest(method: method, path: url, headers: state.headers, body: state.body,
                                  clientIP: trustedProxies.clientAddress(peer: peer, forwardedFor: state.headers["x-forwarded-for"]),
                                  peerIP: peer, requestId: state.requestId, query: Self.queryArguments(of: connection))
        switch dispatch(request) {
        case .now(let response):
            return queue(response, state: state, on: connection)
        case .later(let work):
            // No deadline while a worker answers: the command has its own (503 when missed).
            connections?.suspended(key)
            let resumable = ResumableConnection(connection: connection)
            let ticket = suspensions.suspend(key, requestId: state.requestId, deliver: { response in
                state.setResponse(response)
                MHD_resume_connection(resumable.connection)
            }, suspend: { MHD_suspend_connection(connection) })
            guard let ticket else {
                // The drain's deadline has passed: no command is sent any more.
                return queue(.problem(.unavailable, requestId: state.requestId), state: state, on: connection)
            }
            let suspensions = self.suspensions
            // Once only, and never after the drain answered this connection itself.
            work { response in suspensions.resume(ticket, with: response) }
            return true
        }
    }

    /// MHD tells us of every connection accepted and closed (`MHD_OPTION_NOTIFY_CONNECTION`).
    fileprivate func connectionChanged(_ connection: OpaquePointer, started: Bool) {
        guard let connections else { return }
        if started {
            connections.opened(Self.key(connection), fd: cmhdshim_connection_fd(connection),
                               peer: Self.peerAddress(of: connection))
        } else {
            connections.closed(Self.key(connection))
        }
    }

    /// One pass over every header line (repeated names included).
    private static func headerLines(of connection: OpaquePointer) -> HeaderLines {
        var lines = HeaderLines()
        withUnsafeMutablePointer(to: &lines) { pointer in
            _ = cmhdshim_each_header(connection, visitHeader, pointer)
        }
        return lines
    }

    /// The query string's arguments, decoded; a name given twice keeps its first value.
    private static func queryArguments(of connection: OpaquePointer) -> [String: String] {
        var lines = HeaderLines()
        withUnsafeMutablePointer(to: &lines) { pointer in
            _ = cmhdshim_each_argument(connection, visitHeader, pointer)
        }
        var arguments: [String: String] = [:]
        for (name, value) in lines.lines where arguments[name] == nil { arguments[name] = value }
        return arguments
    }

    private static func peerAddress(of connection: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard cmhdshim_client_ip(connection, &buffer, buffer.count) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    fileprivate static func key(_ connection: OpaquePointer) -> ConnectionGuard.Key {
        Int(bitPattern: connection)
    }

    private func queue(_ response: HTTPResponse, state: ExchangeState, on connection: OpaquePointer) -> Bool {
        connections?.responding(Self.key(connection))
        var pairs = response.headers
        pairs.append(("X-Request-Id", state.requestId))
        // A stopping server takes no further request on this connection: say so, and MHD
        // closes it once the answer is written.
        if draining.withLock({ $0 }), !pairs.contains(where: { $0.0.lowercased() == "connection" }) {
            pairs.append(("Connection", "close"))
        }
        var cStrings: [UnsafeMutablePointer<CChar>?] = []
        for (name, value) in pairs {
            cStrings.append(strdup(name))
            cStrings.append(strdup(value))
        }
        defer { cStrings.forEach { free($0) } }
        let constStrings = cStrings.map { UnsafePointer($0) }
        let queued = response.body.withUnsafeBytes { body in
            constStrings.withUnsafeBufferPointer { headerArray in
                cmhdshim_respond(connection, UInt32(response.status),
                                 body.baseAddress?.assumingMemoryBound(to: CChar.self), body.count,
                                 headerArray.baseAddress, pairs.count)
            }
        }
        return queued == 1
    }

    /// The client's request id when it is sane (1–128 of `[A-Za-z0-9._:-]`), else a new one.
    static func requestId(from candidate: String?) -> String {
        if let candidate, (1...128).contains(candidate.utf8.count),
           candidate.utf8.allSatisfy({ isIdCharacter($0) }) {
            return candidate
        }
        return "req_" + Identifiers.nowULID()
    }

    private static func isIdCharacter(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 46 || c == 95 || c == 58 || c == 45
    }
}

/// What one request accumulates between MHD's calls. Only the answer crosses threads (set by
/// the completing thread, taken by MHD's), so only it is behind a lock.
private final class ExchangeState: @unchecked Sendable {
    let requestId: String
    /// Collected on the first call, while MHD's header memory is certainly valid.
    let headers: [String: String]
    var body = Data()
    var tooLarge = false
    var dispatched = false
    /// The body cap of the request's path (`HTTPServer.maximumBody(forPath:)`).
    let maximumBody: Int
    private let response = Locked<HTTPResponse?>(nil)

    init(requestId: String, headers: [String: String], maximumBody: Int) {
        self.requestId = requestId
        self.headers = headers
        self.maximumBody = maximumBody
    }

    func setResponse(_ value: HTTPResponse) { response.withLock { $0 = value } }
    func takeResponse() -> HTTPResponse? { response.withLock { value in defer { value = nil }; return value } }
}

/// A suspended MHD connection handed to the thread that will resume it; MHD allows
/// MHD_resume_connection from any thread.
private struct ResumableConnection: @unchecked Sendable {
    let connection: OpaquePointer
}

// C callbacks: plain functions, never closures capturing actor-isolated state.

private func accessHandler(_ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                           _ url: UnsafePointer<CChar>?, _ method: UnsafePointer<CChar>?,
                           _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
                           _ uploadSize: UnsafeMutablePointer<Int>?,
                           _ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> MHD_Result {
    guard let context, let connection, let url, let method, let uploadSize, let state else { return mhdNo }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    let ok = server.handle(connection: connection, url: String(cString: url), method: String(cString: method),
                           version: version.map { String(cString: $0) } ?? "",
                           uploadData: uploadData, uploadSize: uploadSize, state: state)
    return ok ? mhdYes : mhdNo
}

private func requestCompleted(_ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                              _ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                              _ reason: MHD_RequestTerminationCode) {
    // The response is written (or the request abandoned): on a keep-alive connection the next
    // header block is due within the header timeout from now.
    if let context, let connection {
        Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().connections?
            .requestEnded(HTTPServer.key(connection))
    }
    guard let state, let pointer = state.pointee else { return }
    Unmanaged<ExchangeState>.fromOpaque(pointer).release()
    state.pointee = nil
}

private func connectionNotified(_ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                                _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                _ code: MHD_ConnectionNotificationCode) {
    guard let context, let connection else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
        .connectionChanged(connection, started: code == .CONNECTION_NOTIFY_STARTED)
}

/// Appends one header line to the `HeaderLines` that `context` points at.
private func visitHeader(_ context: UnsafeMutableRawPointer?, _ name: UnsafePointer<CChar>?,
                         _ value: UnsafePointer<CChar>?) {
    guard let context, let name, let value else { return }
    context.assumingMemoryBound(to: HeaderLines.self).pointee
        .append(name: String(cString: name), value: String(cString: value))
}

private let mhdYes = MHD_Result.YES
private let mhdNo = MHD_Result.NO
