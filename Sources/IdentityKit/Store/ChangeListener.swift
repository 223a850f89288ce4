import CPostgres
import Foundation

/// One dedicated connection that `LISTEN`s on a channel and hands each notification's payload to
/// `received`, on its own thread (poll() on the connection's socket). PostgreSQL sends a
/// notification when its transaction commits, to every listening connection.
///
/// What it holds in memory must fail closed, so the listener says when it can be trusted:
/// `listening()` once the `LISTEN` is in place (after every connect and reconnect: the caller
/// starts from empty, since notifications sent while it was away are lost), and `lost()` the moment
/// the connection fails or stops answering. It asks the server for a round trip (`SELECT 1`)
/// after `heartbeatSeconds` of silence, so a connection that is gone without a word (a dropped
/// network) is noticed within that time and one more.
public final class ChangeListener: Sendable {
    /// The name the connection shows in `pg_stat_activity.application_name`.
    public static let applicationName = "identity-gateway-listener"

    private let url: String
    private let channel: String
    private let heartbeatSeconds: Double
    private let received: @Sendable (String) -> Void
    private let listening: @Sendable () -> Void
    private let lost: @Sendable () -> Void
    private let running = Locked(true)
    private let finished = DispatchGroup()

    /// `channel`: a plain lowercase identifier (it is written into the `LISTEN` statement).
    public init(url: String, channel: String, heartbeatSeconds: Double = 5,
                received: @escaping @Sendable (String) -> Void,
                listening: @escaping @Sendable () -> Void,
                lost: @escaping @Sendable () -> Void) {
        precondition(channel.utf8.allSatisfy { (0x61...0x7A).contains($0) || $0 == 0x5F }, "channel: a-z and _ only")
        self.url = url
        self.channel = channel
        self.heartbeatSeconds = heartbeatSeconds
        self.received = received
        self.listening = listening
        self.lost = lost
    }

    public func start() {
        finished.enter()
        let thread = Thread { [self] in
            self.run()
            self.finished.leave()
        }
        thread.name = "change-listener"
        thread.start()
    }

    /// Stops at the next poll timeout (at most a second) and joins the thread.
    public func stop(timeout: Double = 5) {
        running.withLock { $0 = false }
        _ = finished.wait(timeout: .now() + timeout)
    }

    private var isRunning: Bool { running.withLock { $0 } }

    private func run() {
        var delay = 0.1
        while isRunning {
            if let connection = connect() {
                delay = 0.1
                listening()
                Log.info("listening for store changes", ["channel": channel])
                let reason = serve(connection)
                lost()
                PQfinish(connection)
                if isRunning { Log.warning("store change listener lost; reading the store until it is back", ["error": reason]) }
            }
            guard isRunning else { return }
            Thread.sleep(forTimeInterval: delay)
            delay = min(delay * 2, 2)
        }
    }

    /// A connection with the `LISTEN` in place, or nil (logged).
    private func connect() -> OpaquePointer? {
        // The URL is expanded as a connection string; the later keywords override what it says.
        let keywords = ["dbname", "application_name", "keepalives_idle", "keepalives_interval", "keepalives_count"]
        let values = [url, Self.applicationName, "5", "2", "2"]
        let connection = withCStrings(keywords) { keys in
            withCStrings(values) { vals in PQconnectdbParams(keys, vals, 1) }
        }
        guard let connection else { return nil }
        guard PQstatus(connection) == CONNECTION_OK, execute("LISTEN \(channel)", on: connection) else {
            Log.warning("store change listener not connected; retrying",
                        ["error": String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)])
            PQfinish(connection)
            return nil
        }
        return connection
    }

    /// Hands over notifications until the connection fails or the listener stops; the reason.
    private func serve(_ connection: OpaquePointer) -> String {
        let socket = PQsocket(connection)
        var quietSince = Date()
        while isRunning {
            var fds = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&fds, 1, 1000)
            if ready < 0 && errno != EINTR { return "poll failed (errno \(errno))" }
            if ready > 0 {
                guard PQconsumeInput(connection) == 1 else { return Self.error(connection) }
                quietSince = Date()
            } else if Date().timeIntervalSince(quietSince) >= heartbeatSeconds {
                // Silence: prove the connection still answers (notifications that arrive
                // meanwhile are kept by libpq and handed over below).
                guard execute("SELECT 1", on: connection) else { return Self.error(connection) }
                quietSince = Date()
            }
            drain(connection)
            if PQstatus(connection) != CONNECTION_OK { return Self.error(connection) }
        }
        return "stopped"
    }

    private func drain(_ connection: OpaquePointer) {
        while let notification = PQnotifies(connection) {
            let payload = String(cString: notification.pointee.extra)
            PQfreemem(notification)
            received(payload)
        }
    }

    private func execute(_ sql: String, on connection: OpaquePointer) -> Bool {
        guard let result = PQexec(connection, sql) else { return false }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK
    }

    private static func error(_ connection: OpaquePointer) -> String {
        let message = String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
        return message.isEmpty ? "connection closed" : message
    }
}

/// `const char * const *` for libpq, kept alive for the call.
private func withCStrings<R>(_ values: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let storage = values.map { strdup($0) }
    defer { for pointer in storage { free(pointer) } }
    return body(storage.map { UnsafePointer($0) } + [nil])
}
