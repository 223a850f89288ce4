import CMicroHTTPD
import CMicroHTTPDShim
import Foundation

/// The small HTTP listener every process runs on `IDENTITY_METRICS_PORT` (libmicrohttpd, two
/// threads): `GET /metrics` (Prometheus text), `GET /healthz` (the process is alive) and
/// `GET /readyz` (200 when every readiness check passes, else 503, with each check named).
/// It serves nothing else and reads no body, so it is safe to expose to the cluster's
/// scraper and kubelet; it is not meant for the public internet (the traffic shape it shows).
public final class OperationsListener: @unchecked Sendable {
    /// A named readiness condition (`store`, `broker`): true when it holds.
    public typealias Check = (name: String, check: @Sendable () -> Bool)

    private let host: String
    private let port: UInt16
    private let checks: [Check]
    private let metrics: Metrics
    // Written once in start() before MHD's thread exists; read by stop().
    private var daemon: OpaquePointer?

    public init(host: String, port: UInt16, checks: [Check], metrics: Metrics = .shared) {
        self.host = host
        self.port = port
        self.checks = checks
        self.metrics = metrics
    }

    public func start() throws {
        let context = Unmanaged.passUnretained(self).toOpaque()
        // Two threads: the shim always asks for a thread pool, and libmicrohttpd complains on
        // stderr (outside the log format) about a pool of one.
        let settings = cmhdshim_settings(port: port, threads: 2, idle_timeout_seconds: 10, connection_limit: 64)
        daemon = cmhdshim_start(host, settings, operationsAccess, context, nil, nil, nil, nil)
        guard daemon != nil else { throw BusError("cannot listen on \(host):\(port) for /metrics") }
        Log.info("operations listener", ["host": host, "port": port])
    }

    public func stop() {
        if let daemon { MHD_stop_daemon(daemon) }
        daemon = nil
    }

    /// The answer to one request: status, content type, body.
    func answer(method: String, path: String) -> (Int, String, String) {
        guard method == "GET" || method == "HEAD" else { return (405, "text/plain; charset=utf-8", "method not allowed\n") }
        switch path {
        case "/metrics":
            return (200, Metrics.contentType, metrics.render())
        case "/healthz":
            return (200, "application/json", #"{"status":"ok"}"#)
        case "/readyz":
            let results = checks.map { ($0.name, $0.check()) }
            let ready = results.allSatisfy(\.1)
            let fields = results.map { "\"\($0.0)\":\"\($0.1 ? "ok" : "down")\"" }.joined(separator: ",")
            return (ready ? 200 : 503, "application/json", "{\(fields)}")
        default:
            return (404, "text/plain; charset=utf-8", "not found\n")
        }
    }

    fileprivate func handle(_ connection: OpaquePointer, method: String, path: String,
                            state: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                            uploadSize: UnsafeMutablePointer<Int>) -> Bool {
        // First call: headers only. Mark the request and wait for the body (none is read).
        guard state.pointee != nil else {
            state.pointee = UnsafeMutableRawPointer(bitPattern: 1)
            return true
        }
        if uploadSize.pointee > 0 {
            uploadSize.pointee = 0
            return true
        }
        let (status, type, body) = answer(method: method, path: path)
        let headers = ["Content-Type", type, "Cache-Control", "no-store"]
        let cStrings = headers.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        let constStrings: [UnsafePointer<CChar>?] = cStrings.map { $0.map { UnsafePointer($0) } }
        let bytes = Array(body.utf8)
        let sent = bytes.withUnsafeBytes { raw in
            constStrings.withUnsafeBufferPointer { headerArray in
                cmhdshim_respond(connection, UInt32(status), raw.baseAddress?.assumingMemoryBound(to: CChar.self),
                                 raw.count, headerArray.baseAddress, headers.count / 2)
            }
        }
        return sent == 1
    }
}

private func operationsAccess(_ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                              _ url: UnsafePointer<CChar>?, _ method: UnsafePointer<CChar>?,
                              _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
                              _ uploadSize: UnsafeMutablePointer<Int>?,
                              _ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> MHD_Result {
    guard let context, let connection, let url, let method, let uploadSize, let state else { return MHD_Result.NO }
    let listener = Unmanaged<OperationsListener>.fromOpaque(context).takeUnretainedValue()
    let ok = listener.handle(connection, method: String(cString: method), path: String(cString: url),
                             state: state, uploadSize: uploadSize)
    return ok ? MHD_Result.YES : MHD_Result.NO
}
