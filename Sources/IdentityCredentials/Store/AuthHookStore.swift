import Foundation
import IdentityKit

/// An app's auth hooks (`app_auth_hooks`, one row per kind). The secret is sealed
/// (`AuthHookSecretSeal`) and shown only when it is made.
public struct AuthHookRecord: Sendable, Equatable {
    public var kind: AuthHook.Kind
    public var url: String
    public var timeoutMilliseconds: Int
    public var failurePolicy: AuthHook.FailurePolicy
    public var secretSealed: [UInt8]
    /// RFC 3339.
    public var updatedAt: String
}

/// Seals a hook's secret bound to its app and kind, under `SubKey.authHookSecret` of the
/// mail-payload key: the token worker and identityctl derive it from the master key, the mailer
/// (which calls the send hooks and holds only the mail-payload key) from its own key.
public struct AuthHookSecretSeal: Sendable {
    let sealer: SecretSealer

    public init(mailPayloadKey: [UInt8]) {
        sealer = SecretSealer(subKey: SubKey.authHookSecret.derive(from: mailPayloadKey))
    }

    public init(masterKey: [UInt8]) { self.init(mailPayloadKey: SubKey.mailPayload.derive(from: masterKey)) }

    public func seal(_ secret: String, appId: String, kind: AuthHook.Kind) throws -> [UInt8] {
        try sealer.seal(Array(secret.utf8), associatedData: Self.associatedData(appId, kind))
    }

    public func open(_ sealed: [UInt8], appId: String, kind: AuthHook.Kind) throws -> String {
        String(decoding: try sealer.open(sealed, associatedData: Self.associatedData(appId, kind)), as: UTF8.self)
    }

    private static func associatedData(_ appId: String, _ kind: AuthHook.Kind) -> [UInt8] {
        Array("auth-hook-secret:\(appId):\(kind.rawValue)".utf8)
    }
}

public struct AuthHookStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    private static let columns = """
        kind, url, timeout_ms, failure_policy, secret_enc, (extract(epoch FROM updated_at) * 1000000)::bigint AS updated_us
        """

    /// The app's hook of `kind`, or nil: what every caller reads before the work it hooks.
    /// `on`: the connection of the transaction that asks, if it holds one (a sign-up asks
    /// inside the transaction that makes the account).
    public func hook(appId: String, kind: AuthHook.Kind, on held: PGConnection? = nil) throws -> AuthHookRecord? {
        let read = { (connection: PGConnection) in
            try connection.query("SELECT \(Self.columns) FROM app_auth_hooks WHERE app_id = $1 AND kind = $2",
                                 [appId, kind.rawValue]).first.map(Self.record)
        }
        if let held { return try read(held) }
        return try pool.withConnection(read)
    }

    public func hooks(appId: String) throws -> [AuthHookRecord] {
        try pool.withConnection { connection in
            try connection.query("SELECT \(Self.columns) FROM app_auth_hooks WHERE app_id = $1 ORDER BY kind",
                                 [appId]).map(Self.record)
        }
    }

    /// What a save asks for: nil keeps a setting of the hook already saved (a new hook takes
    /// the defaults: 2 s, fail closed).
    public struct Change: Sendable {
        public var url: String
        public var timeoutMilliseconds: Int?
        public var failurePolicy: AuthHook.FailurePolicy?
        public var rotateSecret = false

        public init(url: String, timeoutMilliseconds: Int? = nil, failurePolicy: AuthHook.FailurePolicy? = nil,
                    rotateSecret: Bool = false) {
            self.url = url
            self.timeoutMilliseconds = timeoutMilliseconds
            self.failurePolicy = failurePolicy
            self.rotateSecret = rotateSecret
        }
    }

    /// Why `change` cannot be saved (field, message): the URL's text and where it resolves now
    /// (`OutboundAddressPolicy`), the timeout's range.
    public static func problems(_ change: Change, policy: OutboundAddressPolicy) -> [(String, String)] {
        var found: [(String, String)] = []
        if let problem = AuthHook.urlProblem(change.url, policy: policy) ?? policy.lookupProblem(url: change.url) {
            found.append(("url", problem))
        }
        if let timeout = change.timeoutMilliseconds, !AuthHook.timeoutRange.contains(timeout) {
            found.append(("timeout_ms", "must be 100 to 5000 milliseconds"))
        }
        return found
    }

    /// Saves the hook of `kind`; the secret is made for a new hook or when rotated, and returned
    /// then only (shown once).
    public func save(appId: String, kind: AuthHook.Kind, _ change: Change, masterKey: [UInt8])
        throws -> (record: AuthHookRecord, secret: String?) {
        try pool.transaction { connection in
            let existing = try connection.query("""
                SELECT \(Self.columns) FROM app_auth_hooks WHERE app_id = $1 AND kind = $2 FOR UPDATE
                """, [appId, kind.rawValue]).first.map(Self.record)
            var secret: String?
            var sealed = existing?.secretSealed ?? []
            if existing == nil || change.rotateSecret {
                let made = StandardWebhookSignature.newSecret()
                sealed = try AuthHookSecretSeal(masterKey: masterKey).seal(made, appId: appId, kind: kind)
                secret = made
            }
            let timeout = change.timeoutMilliseconds ?? existing?.timeoutMilliseconds ?? AuthHook.defaultTimeoutMilliseconds
            let policy = change.failurePolicy ?? existing?.failurePolicy ?? .failClosed
            guard let row = try connection.query("""
                INSERT INTO app_auth_hooks (app_id, kind, url, timeout_ms, failure_policy, secret_enc)
                VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (app_id, kind) DO UPDATE SET url = EXCLUDED.url, timeout_ms = EXCLUDED.timeout_ms,
                    failure_policy = EXCLUDED.failure_policy, secret_enc = EXCLUDED.secret_enc, updated_at = now()
                RETURNING \(Self.columns)
                """, [appId, kind.rawValue, change.url, String(timeout), policy.rawValue, PGParam.bytea(sealed)]).first
            else { throw StoreError.failed(sqlState: "", message: "no row returned") }
            return (try Self.record(row), secret)
        }
    }

    /// Whether a hook was there to delete.
    public func delete(appId: String, kind: AuthHook.Kind) throws -> Bool {
        try pool.withConnection { connection in
            !(try connection.query("DELETE FROM app_auth_hooks WHERE app_id = $1 AND kind = $2 RETURNING kind",
                                   [appId, kind.rawValue]).isEmpty)
        }
    }

    private static func record(_ row: PGRow) throws -> AuthHookRecord {
        guard let kind = AuthHook.Kind(rawValue: try row.string("kind")),
              let policy = AuthHook.FailurePolicy(rawValue: try row.string("failure_policy")) else {
            throw StoreError.failed(sqlState: "", message: "unknown hook kind or policy")
        }
        return AuthHookRecord(kind: kind, url: try row.string("url"), timeoutMilliseconds: try row.int("timeout_ms"),
                              failurePolicy: policy, secretSealed: try row.bytes("secret_enc"),
                              updatedAt: Timestamp.rfc3339(microsecondsSinceEpoch: try row.int64("updated_us")))
    }
}
