import CPostgres
import Foundation

/// One libpq connection. Not thread-safe: the pool hands it to one caller at a time.
/// Statements are prepared once per connection and reused, which saves the server a parse and
/// plan per query on hot paths.
public final class PGConnection {
    private var handle: OpaquePointer?
    private let url: String
    private var prepared: [String: String] = [:]

    init(url: String) throws {
        self.url = url
        try connect()
    }

    deinit { if let handle { PQfinish(handle) } }

    private func connect() throws {
        if let handle { PQfinish(handle) }
        prepared = [:]
        handle = PQconnectdb(url)
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            let message = handle.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            throw StoreError.unavailable(message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Reconnects when the server closed the connection (a database restart), so callers
    /// survive a restart without a restart of ours.
    func ensureConnected() throws {
        if let handle, PQstatus(handle) == CONNECTION_OK { return }
        try connect()
    }

    var isHealthy: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Runs one statement with text parameters (`$1`, `$2`, …) and returns its rows.
    @discardableResult
    public func query(_ sql: String, _ parameters: [String?] = []) throws -> [PGRow] {
        guard let handle else { throw StoreError.unavailable("not connected") }
        // libpq takes C strings: a NUL would silently end a parameter early (an identifier
        // "jane@example.com\0junk" would be looked up as jane's). Refused, never cut.
        if parameters.contains(where: { $0?.utf8.contains(0) == true }) {
            throw StoreError.failed(sqlState: "22021", message: "a parameter contains a NUL character")
        }
        let name = try statementName(for: sql, parameterCount: parameters.count, handle: handle)
        let result = withCStrings(parameters) { pointers in
            PQexecPrepared(handle, name, Int32(parameters.count), pointers, nil, nil, 0)
        }
        return try collect(result, handle: handle)
    }

    /// Runs SQL without parameters, possibly several statements (migrations, BEGIN/COMMIT).
    public func execute(_ sql: String) throws {
        guard let handle else { throw StoreError.unavailable("not connected") }
        _ = try collect(PQexec(handle, sql), handle: handle)
    }

    private func statementName(for sql: String, parameterCount: Int, handle: OpaquePointer) throws -> String {
        if let name = prepared[sql] { return name }
        let name = "s\(prepared.count)"
        let result = PQprepare(handle, name, sql, Int32(parameterCount), nil)
        _ = try collect(result, handle: handle)
        prepared[sql] = name
        return name
    }

    private func collect(_ result: OpaquePointer?, handle: OpaquePointer) throws -> [PGRow] {
        guard let result else {
            throw StoreError.unavailable(String(cString: PQerrorMessage(handle)))
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY else {
            if PQstatus(handle) != CONNECTION_OK {
                throw StoreError.unavailable(String(cString: PQerrorMessage(handle)))
            }
            let state = field(result, diagSQLState)
            if state == "23505" {
                throw StoreError.uniqueViolation(constraint: field(result, diagConstraint))
            }
            // 57P01 admin shutdown, 08xxx connection exceptions: the server is going away.
            if state.hasPrefix("08") || state == "57P01" {
                throw StoreError.unavailable(field(result, diagMessage))
            }
            throw StoreError.failed(sqlState: state, message: field(result, diagMessage))
        }
        let rowCount = Int(PQntuples(result))
        guard rowCount > 0 else { return [] }
        let columnCount = Int(PQnfields(result))
        var columns: [String: Int] = [:]
        for column in 0..<columnCount {
            columns[String(cString: PQfname(result, Int32(column)))] = column
        }
        var rows: [PGRow] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
                    values.append(nil)
                } else {
                    values.append(String(cString: PQgetvalue(result, Int32(row), Int32(column))))
                }
            }
            rows.append(PGRow(values: values, columns: columns))
        }
        return rows
    }

    private func field(_ result: OpaquePointer, _ code: Int32) -> String {
        guard let value = PQresultErrorField(result, code) else { return "" }
        return String(cString: value)
    }
}

/// Passes Swift strings to C as a `const char * const *` array kept alive for the call.
private func withCStrings<R>(_ values: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let storage: [UnsafeMutablePointer<CChar>?] = values.map { $0.map { strdup($0) } ?? nil }
    defer { for pointer in storage { free(pointer) } }
    return body(storage.map { UnsafePointer($0) })
}

// libpq's PG_DIAG_* codes are C character literals, which Swift does not import.
private let diagSQLState = Int32(UInt8(ascii: "C"))
private let diagMessage = Int32(UInt8(ascii: "M"))
private let diagConstraint = Int32(UInt8(ascii: "n"))
