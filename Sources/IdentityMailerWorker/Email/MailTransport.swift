import Foundation
import IdentityKit
import IdentityOutbound

/// Where rendered mail goes: an SMTP relay, or `.eml` files for development.
protocol MailTransport: Sendable {
    func deliver(from: String, to: String, message: String, messageId: String) throws(SMTPClient.Failure)
}

struct SMTPTransport: MailTransport {
    let client: SMTPClient

    func deliver(from: String, to: String, message: String, messageId: String) throws(SMTPClient.Failure) {
        try client.send(from: from, to: to, message: message)
    }
}

/// Writes each message to `<directory>/<message id>.eml` (open it with any mail client).
struct FileTransport: MailTransport {
    let directory: String

    func deliver(from: String, to: String, message: String, messageId: String) throws(SMTPClient.Failure) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let safeName = messageId.filter { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
            try Data(message.utf8).write(to: URL(fileURLWithPath: directory).appendingPathComponent(safeName + ".eml"))
        } catch {
            throw .transient("cannot write \(directory): \(error)")
        }
    }
}
