import CMicroHTTPD
import CMicroHTTPDShim
import Foundation
import IdentityKit

/// libmicrohttpd with an epoll thread pool. A request's body is collected across MHD's calls;
/// then `dispatch` answers it at once or, for commands, suspends the connection and resumes it
/// from whichever thread produces the answer, so a slow worker never holds an HTTP thread.
final class HTTPServer: @unchecked Sendable {
    /// The largest body accepted (PRODUCT.md: 64 KiB, larger → 413).
    static let maximumBody = 64 * 1024

    private let dispatch: @Sendable (HTTPRequest) -> RouteResult
    // Written once in start() before any request, read by stop().
    private var daemon: OpaquePointer?

    init(dispatch: @escaping @Sendable (HTTPRequest) -> RouteResult) {
        self.dispatch = dispatch
    }

    func start(host: String, port: UInt16, threads: Int) throws {
        let context = Unmanaged.passUnretained(self).toOpaque()
        daemon = cmhdshim_start(host, port, UInt32(threads), 30, accessHandler, context, requestCompleted, nil)
        guard daemon != nil else { throw BusError("cannot listen on \(host):\(port)") }
    }

    func stop() {
        if let daemon { MHD_stop_daemon(daemon) }
        daemon = nil
    }

    /// Called by MHD (through `accessHandler`) for each step of a request.
    fileprivate func handle(connection: OpaquePointer, url: String, method: String,
                            uploadData: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
                            state statePointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Bool {
        guard let existing = statePointer.pointee else {
            // First call: headers only. Refuse a declared oversized body before reading it.
            let state = ExchangeState(requestId: Self.requestId(from: header(connection, "x-request-id")))
            statePointer.pointee = Unmanaged.passRetained(state).toOpaque()
            if let length = header(connection, "content-length").flatMap(Int.init), length > Self.maximumBody {
                return queue(.problem(.payloadTooLarge, requestId: state.requestId), state: state, on: connection)
            }
            return true
        }
        let state = Unmanaged<ExchangeState>.fromOpaque(existing).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            if let uploadData, state.body.count + uploadSize.pointee <= Self.maximumBody {
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
        var headers: [String: String] = [:]
        for name in RequestHeaders.names {
            if let value = header(connection, name) { headers[name] = value }
        }
        var ipBuffer = [CChar](repeating: 0, count: 64)
        let clientIP = cmhdshim_client_ip(connection, &ipBuffer, ipBuffer.count) == 0
            ? String(decoding: ipBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        let request = HTTPRequest(method: method, path: url, headers: headers, body: state.body,
                                  clientIP: clientIP, requestId: state.requestId)
        switch dispatch(request) {
        case .now(let response):
            return queue(response, state: state, on: connection)
        case .later(let work):
            MHD_suspend_connection(connection)
            let resumable = ResumableConnection(connection: connection)
            work { response in
                state.setResponse(response)
                MHD_resume_connection(resumable.connection)
            }
            return true
        }
    }

    private func queue(_ response: HTTPResponse, state: ExchangeState, on connection: OpaquePointer) -> Bool {
        var pairs = response.headers
        pairs.append(("X-Request-Id", state.requestId))
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

    private func header(_ connection: OpaquePointer, _ name: String) -> String? {
        cmhdshim_header(connection, name).map { String(cString: $0) }
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
    var body = Data()
    var tooLarge = false
    var dispatched = false
    private let response = Locked<HTTPResponse?>(nil)

    init(requestId: String) { self.requestId = requestId }

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
                           uploadData: uploadData, uploadSize: uploadSize, state: state)
    return ok ? mhdYes : mhdNo
}

private func requestCompleted(_ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                              _ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                              _ reason: MHD_RequestTerminationCode) {
    guard let state, let pointer = state.pointee else { return }
    Unmanaged<ExchangeState>.fromOpaque(pointer).release()
    state.pointee = nil
}

private let mhdYes = MHD_Result.YES
private let mhdNo = MHD_Result.NO
