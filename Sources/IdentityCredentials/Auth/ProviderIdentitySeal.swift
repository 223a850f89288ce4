import Foundation
import IdentityKit

/// A verified provider identity crosses the bus from the provider worker to the token worker
/// (through the gateway, which only passes it on). Whoever can publish a token command must
/// not be able to make one up and get tokens for any user: the provider worker signs each
/// identity with a MAC under a sub-key only it and the token worker derive from the master
/// key (the gateway never has it), and the token worker accepts an identity only with a valid
/// MAC made in the last `maximumAge` seconds.
public struct ProviderIdentitySeal: Sendable {
    /// How long a sealed identity may be used after the provider worker verified it.
    public static let maximumAge: Int64 = 120

    let key: [UInt8]

    public init(masterKey: [UInt8]) {
        key = SubKey.providerIdentityMAC.derive(from: masterKey)
    }

    /// The identity with `verified_at` and `mac` set, for `appId`.
    public func seal(_ identity: ProviderV1.VerifiedIdentity, appId: String,
                     now: Int64 = Timestamp.nowSeconds()) -> ProviderV1.VerifiedIdentity {
        var sealed = identity
        sealed.verifiedAt = now
        sealed.mac = Base64URL.encode(mac(sealed, appId: appId))
        return sealed
    }

    /// True when the MAC is ours for this app and fresh.
    public func isValid(_ identity: ProviderV1.VerifiedIdentity, appId: String, now: Int64 = Timestamp.nowSeconds()) -> Bool {
        Self.isFresh(identity.verifiedAt, now: now) && Self.matches(identity.mac, mac(identity, appId: appId))
    }

    /// An Apple account event with `verified_at` and `mac` set, for `appId`.
    public func seal(_ event: ProviderV1.VerifiedAppleEvent, appId: String,
                     now: Int64 = Timestamp.nowSeconds()) -> ProviderV1.VerifiedAppleEvent {
        var sealed = event
        sealed.verifiedAt = now
        sealed.mac = Base64URL.encode(mac(sealed, appId: appId))
        return sealed
    }

    /// True when the event's MAC is ours for this app and fresh.
    public func isValid(_ event: ProviderV1.VerifiedAppleEvent, appId: String, now: Int64 = Timestamp.nowSeconds()) -> Bool {
        Self.isFresh(event.verifiedAt, now: now) && Self.matches(event.mac, mac(event, appId: appId))
    }

    /// Verified within `maximumAge` (and not in the future beyond a few seconds of skew).
    private static func isFresh(_ verifiedAt: Int64, now: Int64) -> Bool {
        verifiedAt <= now + 5 && now - verifiedAt <= maximumAge
    }

    /// The presented MAC (base64url) is the expected one, compared in constant time.
    private static func matches(_ presented: String, _ expected: [UInt8]) -> Bool {
        guard let presented = Base64URL.decode(presented), presented.count == 32 else { return false }
        return Digest.constantTimeEqual(presented, expected)
    }

    /// As an identity's, under its own label: an event's MAC is never an identity's.
    private func mac(_ event: ProviderV1.VerifiedAppleEvent, appId: String) -> [UInt8] {
        Digest.hmacSHA256(key: key, Self.fields(["apple-event-v1", appId, event.type, event.subject, event.email,
                                                 String(event.eventTime), event.eventId, String(event.verifiedAt)]))
    }

    /// Each text length-prefixed (nil as 0xffffffff), so no two lists give the same bytes.
    private static func fields(_ texts: [String?]) -> [UInt8] {
        var input: [UInt8] = []
        for text in texts {
            guard let text else { input += [0xff, 0xff, 0xff, 0xff]; continue }
            let bytes = Array(text.utf8)
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { input += $0 }
            input += bytes
        }
        return input
    }

    /// Every field, length-prefixed in a fixed order (no encoding ambiguity: "ab"+"c" and
    /// "a"+"bc" differ), with the app id so an identity verified for one app is not one of another's.
    private func mac(_ identity: ProviderV1.VerifiedIdentity, appId: String) -> [UInt8] {
        Digest.hmacSHA256(key: key, Self.fields([
            "provider-identity-v1", appId, identity.provider, identity.subject, identity.email,
            identity.emailVerified ? "1" : "0", identity.emailAuthoritative ? "1" : "0", identity.phone,
            identity.firstName, identity.lastName, identity.photoUrl, identity.audience, identity.nonceHash,
            String(identity.verifiedAt),
        ]))
    }
}
