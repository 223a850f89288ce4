import Foundation

/// Where the client keeps what must survive a restart: the refresh token, the signed-in user's
/// profile (``IdentityClient/currentUser`` at launch), and the guest secret (made once per
/// installation so the same guest comes back).
///
/// The access token is never stored: it lives in memory only.
public protocol TokenStorage: Sendable {
    /// The value under `key`, or nil.
    func read(_ key: String) async throws -> String?
    /// Stores `value` under `key`, replacing any earlier one.
    func write(_ key: String, value: String) async throws
    /// Removes `key` (no error when it is absent).
    func delete(_ key: String) async throws
}

/// The keys the client uses in its ``TokenStorage``.
public enum TokenStorageKey {
    public static let refreshToken = "identity.refresh_token"
    public static let guestSecret = "identity.guest_secret"
    /// The signed-in user as last known (JSON), removed at sign-out with the refresh token.
    public static let user = "identity.user"
}

/// Keeps everything in memory: for tests and for servers that sign in per process.
public actor InMemoryTokenStorage: TokenStorage {
    private var values: [String: String] = [:]

    public init() {}

    public func read(_ key: String) -> String? { values[key] }
    public func write(_ key: String, value: String) { values[key] = value }
    public func delete(_ key: String) { values[key] = nil }
}

/// Keeps the values in one JSON file readable by its owner only (mode 0600), written atomically.
/// For Linux and command-line tools; on Apple platforms prefer ``KeychainTokenStorage``.
public actor FileTokenStorage: TokenStorage {
    private let url: URL

    /// - Parameter url: the file; its directory must exist.
    public init(url: URL) {
        self.url = url
    }

    public func read(_ key: String) throws -> String? {
        try load()[key]
    }

    public func write(_ key: String, value: String) throws {
        var values = try load()
        values[key] = value
        try save(values)
    }

    public func delete(_ key: String) throws {
        var values = try load()
        guard values.removeValue(forKey: key) != nil else { return }
        try save(values)
    }

    private func load() throws -> [String: String] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [:] }
        return try JSONDecoder().decode([String: String].self, from: Data(contentsOf: url))
    }

    private func save(_ values: [String: String]) throws {
        // Written to a private temporary file first, then renamed: never a half-written or
        // world-readable refresh token on disk.
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        let data = try JSONEncoder().encode(values)
        guard FileManager.default.createFile(atPath: temporary.path, contents: data,
                                             attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
        // rename(2) replaces the old file atomically (FileManager's replaceItemAt differs by platform).
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown)
        }
    }
}

#if canImport(Security)
import Security

/// Keeps the values in the Keychain (generic passwords of one service), readable after the
/// device's first unlock and never synced to other devices.
public struct KeychainTokenStorage: TokenStorage {
    private let service: String
    private let accessGroup: String?

    /// - Parameters:
    ///   - service: the Keychain service name, e.g. your bundle id + ".identity".
    ///   - accessGroup: a shared access group, to share the session with an app extension.
    public init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    private func baseQuery(_ key: String) -> [String: Any] {
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                    kSecAttrService as String: service,
                                    kSecAttrAccount as String: key]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    public func read(_ key: String) async throws -> String? {
        var query = baseQuery(key)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw KeychainError(status: status) }
        return String(decoding: data, as: UTF8.self)
    }

    public func write(_ key: String, value: String) async throws {
        let data = Data(value.utf8)
        let update: [String: Any] = [kSecValueData as String: data]
        var status = SecItemUpdate(baseQuery(key) as CFDictionary, update as CFDictionary)
        if status == errSecItemNotFound {
            var add = baseQuery(key)
            add[kSecValueData as String] = data
            add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            status = SecItemAdd(add as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw KeychainError(status: status) }
    }

    public func delete(_ key: String) async throws {
        let status = SecItemDelete(baseQuery(key) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
    }
}

/// A Keychain call failed with this `OSStatus`.
public struct KeychainError: Error, Sendable, Equatable {
    public let status: OSStatus
}
#endif
