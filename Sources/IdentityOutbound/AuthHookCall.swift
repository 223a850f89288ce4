import CCurl
import CCurlShim
import Foundation
import IdentityKit

/// One call of an app's auth hook: the payload POSTed as JSON, signed per Standard Webhooks
/// with the hook's secret, to a URL held to the outbound address rules at connect (as
/// `OutboundHTTP.postForm(_:fields:policy:)` does), within the hook's timeout, no redirect
/// followed, and an answer past 16 KiB refused, without holding the worker's slot while it
/// waits. What the answer means is the caller's
/// (`AuthHook.parseAnswer`); here only whether one came.
public struct AuthHookCall: Sendable {
    public let policy: OutboundAddressPolicy

    public init(policy: OutboundAddressPolicy) { self.policy = policy }

    public enum Outcome: Sendable, Equatable {
        /// A 2xx answer's body.
        case answered(Data)
        /// Why no usable answer came: the timeout, a refused address, a status, a size.
        case failed(String)
    }

    /// `payload` gets `type` (the kind) and `timestamp`; the message id is `webhook-id`.
    public func call(url: String, secret: String, kind: AuthHook.Kind, payload: [String: JSONValue],
                     timeoutMilliseconds: Int) -> Outcome {
        guard let key = StandardWebhookSignature.key(ofSecret: secret) else { return .failed("the hook's secret is unreadable") }
        let scheme = url.split(separator: ":", maxSplits: 1).first?.lowercased()
        guard policy.allowInsecure || scheme == "https" else { return .failed("refused: a hook's URL must be https") }
        let id = "msg_" + Identifiers.nowULID()
        let timestamp = Timestamp.nowSeconds()
        var document = payload
        document["type"] = .string(kind.rawValue)
        document["timestamp"] = .string(Timestamp.rfc3339(microsecondsSinceEpoch: timestamp * 1_000_000))
        let body = JSONValue.object(document).serialized
        let headers = [("Content-Type", "application/json")]
            + StandardWebhookSignature.headers(id: id, timestamp: timestamp, body: Array(body.utf8), keys: [key])
        let lines = headers.map { "\($0.0): \($0.1)" }.joined(separator: "\n")
        let check: ccurlshim_address_check? = policy.allowPrivate ? nil : { address, length in
            guard let address else { return 0 }
            return OutboundAddressPolicy.refusal(of: Array(UnsafeBufferPointer(start: address, count: length))) == nil ? 1 : 0
        }
        var response = ccurlshim_response()
        // A wait on the app's backend: the worker's slot is free meanwhile (`WorkerSlots`).
        let code = WorkerSlots.waitingOutside {
            body.withCString { pointer in
                ccurlshim_request_checked(url, pointer, body.utf8.count, lines, timeoutMilliseconds, check,
                                          policy.allowInsecure ? 0 : 1, &response)
            }
        }
        defer { ccurlshim_free_response(&response) }
        let refused = withUnsafeBytes(of: response.refused_address) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard code == 0 else {
            if !refused.isEmpty { return .failed("refused: not a public address: \(refused)") }
            let message = withUnsafeBytes(of: response.error) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
            return .failed(code == 28 ? "timed out after \(timeoutMilliseconds) ms" : message)
        }
        guard (200..<300).contains(response.status) else { return .failed("answered HTTP \(response.status)") }
        guard response.body_length <= AuthHook.maximumAnswerBytes else { return .failed("answer larger than 16 KiB") }
        return .answered(response.body.map { Data(bytes: $0, count: response.body_length) } ?? Data())
    }
}
