import COpenSSL

/// The one funnel for OpenSSL failures: the library's error queue is drained into a message
/// for logs; callers see a typed error and clients see `auth/internal`.
public struct CryptoError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let reason: String

    public var description: String { "\(operation): \(reason)" }

    package init(operation: String, reason: String) {
        self.operation = operation
        self.reason = reason
    }

    package static func openSSL(_ operation: String) -> CryptoError {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return CryptoError(operation: operation, reason: reasons.isEmpty ? "failed" : reasons.joined(separator: "; "))
    }

    /// Throws unless an OpenSSL call returned 1 (its success value).
    package static func check(_ result: Int32, _ operation: String) throws {
        if result != 1 { throw openSSL(operation) }
    }
}
