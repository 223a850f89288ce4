import Foundation
import IdentityKit

/// Apps' settings and unsealed current signing keys, kept for a minute so a sign-in does not
/// read and decrypt the key each time; a rotated key is picked up within that minute.
final class SigningKeyCache: Sendable {
    struct Entry: Sendable {
        let app: AppRecord
        let kid: String
        let key: RSAKey
        let loadedAt: Date
    }

    private let apps: AppStore
    private let masterKey: [UInt8]
    private let entries = Locked<[String: Entry]>([:])
    private let lifetime: TimeInterval = 60

    init(apps: AppStore, masterKey: [UInt8]) {
        self.apps = apps
        self.masterKey = masterKey
    }

    func entry(appId: String) throws -> Entry? {
        if let cached = entries.withLock({ $0[appId] }), Date().timeIntervalSince(cached.loadedAt) < lifetime {
            return cached
        }
        guard let app = try apps.find(id: appId),
              let (kid, key) = try apps.currentSigningKey(appId: appId, masterKey: masterKey) else { return nil }
        let entry = Entry(app: app, kid: kid, key: key, loadedAt: Date())
        entries.withLock { $0[appId] = entry }
        return entry
    }
}
