import Foundation
import IdentityCredentials
import IdentityKit

/// Apps' settings and unsealed signing keys (the current one and a next one), kept for a
/// minute so a sign-in does not read and decrypt a key each time. The key that signs is chosen
/// at each use: the latest whose activation time has come, so a rotation's next key takes over
/// at its instant even from a cached entry (it is published a JWKS cache period before, and an
/// entry lives at most that long, so any entry in use at the activation was loaded after the
/// rotation and holds the next key).
final class SigningKeyCache: Sendable {
    struct Entry: Sendable {
        let app: AppRecord
        let kid: String
        let key: TokenSigningKey
    }

    private struct Loaded: Sendable {
        let app: AppRecord
        let candidates: [SigningKeyStore.SigningCandidate]
        let loadedAt: Date
        /// Never longer than the app's JWKS cache period, a rotation's lead: an entry loaded
        /// before a rotation is gone by the time its next key signs.
        let lifetime: TimeInterval
    }

    private let apps: AppStore
    private let keys: SigningKeyStore
    private let masterKey: [UInt8]
    private let entries = Locked<[String: Loaded]>([:])
    private let lifetime: TimeInterval = 60

    init(apps: AppStore, keys: SigningKeyStore, masterKey: [UInt8]) {
        self.apps = apps
        self.keys = keys
        self.masterKey = masterKey
    }

    func entry(appId: String) throws -> Entry? {
        let now = Date()
        var loaded = entries.withLock { $0[appId] }
        if loaded == nil || now.timeIntervalSince(loaded?.loadedAt ?? now) >= loaded?.lifetime ?? 0 {
            guard let app = try apps.find(id: appId) else { return nil }
            let lead = TimeInterval(try keys.jwksCacheSeconds(appId: appId) ?? Int(lifetime))
            let fresh = Loaded(app: app, candidates: try keys.signingCandidates(appId: appId, masterKey: masterKey), loadedAt: now,
                               lifetime: min(lifetime, lead))
            entries.withLock { $0[appId] = fresh }
            loaded = fresh
        }
        guard let loaded, let signing = loaded.candidates.last(where: { $0.activatesAt <= now }) else { return nil }
        return Entry(app: loaded.app, kid: signing.kid, key: signing.key)
    }
}
