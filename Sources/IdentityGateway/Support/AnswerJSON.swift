import Foundation
import IdentityKit

/// How the gateway shows a device, a passkey and a session: the shapes of
/// proto/identity/answers/v1/ of those names, rendered here once for every answer that carries
/// one (UserJSON shows the user and a sign-in's tokens; AnswerShapeDriftTests holds each to its
/// shape).
enum AnswerJSON {
    static func device(_ device: CommonV1.Device) -> JSONValue {
        .object(["id": .string(device.id), "token": .string(device.token), "platform": .string(device.platform),
                 "kind": .string(device.kind), "device_name": JSONValue(device.deviceName),
                 "session_id": .string(device.sessionId), "created_at": .string(device.createdAt)])
    }

    static func passkey(_ passkey: TokenV1.Passkey) -> JSONValue {
        .object(["id": .string(passkey.id), "name": .string(passkey.name), "credential_id": .string(passkey.credentialId),
                 "transports": JSONValue(passkey.transports), "aaguid": .string(passkey.aaguid),
                 "backup_eligible": .bool(passkey.backupEligible), "backup_state": .bool(passkey.backupState),
                 "created_at": .string(passkey.createdAt), "last_used_at": JSONValue(passkey.lastUsedAt)])
    }

    /// The worker's WebAuthn options JSON as a JSON value of the answer (it made it; it parses).
    static func passkeyOptions(_ reply: TokenV1.PasskeyOptions) -> JSONValue {
        JSONValue.parse(Data(reply.optionsJson.utf8)) ?? .object([:])
    }

    /// A session as the store keeps it (`SessionRecord`), as the admin API lists it.
    static func sessionRecord(_ session: SessionStore.SessionSummary) -> JSONValue {
        .object([
            "id": .string(session.id),
            "created_at": .string(Timestamp.rfc3339(microsecondsSinceEpoch: session.createdAtMicros)),
            "last_seen_at": .string(Timestamp.rfc3339(microsecondsSinceEpoch: session.lastSeenAtMicros)),
            "expires_at": .string(Timestamp.rfc3339(microsecondsSinceEpoch: session.expiresAtMicros)),
            "ip": JSONValue(session.ip),
            "user_agent": JSONValue(session.userAgent),
            "amr": JSONValue(session.amr),
            "mfa_verified": .bool(session.amr.contains("mfa")),
        ])
    }

    /// A session in the user's own list (`Session`): the record, and whether it is the caller's.
    static func session(_ session: SessionStore.SessionSummary, current: Bool) -> JSONValue {
        guard case .object(var fields) = sessionRecord(session) else { return .null }
        fields["current"] = .bool(current)
        return .object(fields)
    }
}
