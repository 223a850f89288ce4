import Foundation

/// An app's custom domains (`app_domains`, migrations 0017 and 0029): hosts that select the app
/// without `X-App-Key`. A host selects an app only once verified, and is verified for one app at
/// most (a unique index): a tenant who names a host through the admin API only *requests* it,
/// with a fresh random token it must publish on that host
/// (`identityctl apps domains verify`, DomainVerification.swift), while the operator may
/// allow a host outright (`identityctl apps settings --domains`). Before this a host was the
/// first app's to name it, so a tenant could take another's domain, or learn whose it was from
/// the answer. Requests do not conflict: any number of apps may request a host, so a request
/// neither blocks the real owner nor tells anyone that the host is taken.
public struct AppDomainStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    public struct Domain: Sendable, Equatable {
        public let host: String
        public let verified: Bool
        /// What `https://HOST/.well-known/identity-domain-verification` must hold; nil for a host
        /// the operator allowed (or that was verified before requests existed).
        public let token: String?
    }

    /// How a settings change sets the app's list: hosts it no longer lists are dropped either way.
    public enum Change: Sendable {
        /// A tenant's: new hosts are requested (unverified, a fresh token); listed ones keep their state.
        case request([String])
        /// The operator's: every listed host is verified now.
        case allow([String])
    }

    public static let tokenPrefix = "idv"

    public func domains(appId: String) throws -> [Domain] {
        try pool.withConnection { try Self.domains(appId: appId, on: $0) }
    }

    public static func domains(appId: String, on connection: PGConnection) throws -> [Domain] {
        try connection.query("""
            SELECT host, verified_at IS NOT NULL AS verified, verification_token FROM app_domains
            WHERE app_id = $1 ORDER BY host
            """, [appId]).map {
            Domain(host: try $0.string("host"), verified: try $0.bool("verified"), token: try $0.optionalString("verification_token"))
        }
    }

    /// Applies `change` in the caller's transaction; a host the operator allows that is verified
    /// for another app fails on the unique index (`StoreError.uniqueViolation`).
    public static func apply(_ change: Change, appId: String, on connection: PGConnection) throws {
        let hosts: [String]
        switch change {
        case .request(let listed), .allow(let listed): hosts = listed
        }
        try connection.query("DELETE FROM app_domains WHERE app_id = $1 AND NOT (host = ANY($2::text[]))",
                             [appId, PGParam.textArray(hosts)])
        for host in hosts {
            switch change {
            case .request:
                try connection.query("""
                    INSERT INTO app_domains (app_id, host, verification_token) VALUES ($1, $2, $3)
                    ON CONFLICT (app_id, host) DO NOTHING
                    """, [appId, host, Identifiers.secret(tokenPrefix)])
            case .allow:
                try connection.query("""
                    INSERT INTO app_domains (app_id, host, verified_at) VALUES ($1, $2, now())
                    ON CONFLICT (app_id, host) DO UPDATE SET verified_at = COALESCE(app_domains.verified_at, now())
                    """, [appId, host])
            }
        }
    }

    /// The app's request for `host`, if it made one (or the host is verified for it already).
    public func domain(appId: String, host: String) throws -> Domain? {
        try domains(appId: appId).first { $0.host == host }
    }

    /// Marks the app's requested `host` verified (the proof was checked by the caller); false
    /// when the app has no such request. Fails on the unique index when another app holds it.
    public func markVerified(appId: String, host: String) throws -> Bool {
        try pool.withConnection { connection in
            try !connection.query("""
                UPDATE app_domains SET verified_at = COALESCE(verified_at, now()) WHERE app_id = $1 AND host = $2
                RETURNING host
                """, [appId, host]).isEmpty
        }
    }

    /// The app `host` is verified for: told to the operator only (identityctl), never to a tenant.
    public func verifiedApp(host: String) throws -> String? {
        try pool.withConnection { connection in
            try connection.query("SELECT app_id FROM app_domains WHERE host = $1 AND verified_at IS NOT NULL", [host])
                .first?.string("app_id")
        }
    }
}
