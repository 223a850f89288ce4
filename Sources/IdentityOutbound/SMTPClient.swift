import CCurl
import CCurlShim
import Foundation

/// Sends mail over SMTP through libcurl: STARTTLS (required), implicit TLS or plain, with
/// optional login. Blocking, on the calling worker thread.
public struct SMTPClient: Sendable {
    public enum Security: String, Sendable {
        case starttls, implicit, none
    }

    public struct Settings: Sendable {
        public var host: String
        public var port: Int
        public var security: Security
        public var username: String?
        public var password: String?
        public var timeoutMilliseconds: Int
        public init(host: String, port: Int, security: Security, username: String?, password: String?,
                    timeoutMilliseconds: Int) {
            self.host = host
            self.port = port
            self.security = security
            self.username = username
            self.password = password
            self.timeoutMilliseconds = timeoutMilliseconds
        }
    }

    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// The server refused for good (5xx): retrying cannot help.
        case permanent(String)
        /// The server could not be reached or asked to try later (4xx): retry.
        case transient(String)

        public var description: String {
            switch self {
            case .permanent(let reason): "permanent: \(reason)"
            case .transient(let reason): "transient: \(reason)"
            }
        }
    }

    public let settings: Settings

    public init(settings: Settings) { self.settings = settings }

    public func send(from: String, to recipient: String, message: String) throws(Failure) {
        let scheme = settings.security == .implicit ? "smtps" : "smtp"
        let url = "\(scheme)://\(settings.host):\(settings.port)"
        var replyCode = 0
        var errorBuffer = [CChar](repeating: 0, count: 256)
        let bytes = Array(message.utf8)
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { payload in
                ccurlshim_smtp_send(url, settings.username, settings.password, settings.security == .starttls ? 1 : 0,
                                    "<\(from)>", "<\(recipient)>", payload.baseAddress, payload.count,
                                    settings.timeoutMilliseconds, &replyCode, &errorBuffer, errorBuffer.count)
            }
        }
        guard status != 0 else { return }
        let reason = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if (500...599).contains(replyCode) { throw .permanent("\(replyCode) \(reason)") }
        throw .transient(replyCode > 0 ? "\(replyCode) \(reason)" : reason)
    }
}
