import Foundation
import CArgon2
import CSodiumShim
import XCTest
@testable import IdentityCredentials
@testable import IdentityKit

final class CryptoTests: XCTestCase {
    func testAESGCMRoundTripAndAssociatedDataBinding() throws {
        let key = SecureRandom.bytes(32)
        let sealed = try AESGCM.seal(Array("secret pem".utf8), key: key, associatedData: Array("row-1".utf8))
        XCTAssertEqual(sealed.count, 12 + 10 + 16)
        XCTAssertEqual(try AESGCM.open(sealed, key: key, associatedData: Array("row-1".utf8)), Array("secret pem".utf8))
        XCTAssertThrowsError(try AESGCM.open(sealed, key: key, associatedData: Array("row-2".utf8)))
        XCTAssertThrowsError(try AESGCM.open(sealed, key: SecureRandom.bytes(32), associatedData: Array("row-1".utf8)))
    }

    func testArgon2idHashesArePHCStringsAndVerify() throws {
        let hasher = try PasswordHasher(cost: .init(memoryKiB: 1024, iterations: 1, parallelism: 1))
        let hash = try hasher.hash("correct horse")
        XCTAssertTrue(hash.hasPrefix("$argon2id$v=19$m=1024,t=1,p=1$"))
        XCTAssertTrue(hasher.verify("correct horse", against: hash))
        XCTAssertFalse(hasher.verify("correct horsE", against: hash))
        XCTAssertNotEqual(try hasher.hash("correct horse"), hash, "salts are random")
    }

    /// The pepper (ASVS 2.4.5): a peppered hash verifies under its own master key's pepper only,
    /// is Argon2id of HMAC-SHA-256(pepper, password) rather than of the password, and an
    /// unpeppered hash made before it still verifies and is marked for replacement.
    func testPepperedHashesVerifyOnlyUnderTheirMasterKey() throws {
        let plain = try PasswordHasher(cost: .init(memoryKiB: 1024, iterations: 1, parallelism: 1))
        let masterKey = SecureRandom.bytes(32)
        let hasher = try plain.peppered(masterKey: masterKey)
        let hash = try hasher.hash("correct horse")
        XCTAssertTrue(hash.hasPrefix("$pepper-v1$argon2id$v=19$m=1024,t=1,p=1$"), hash)
        XCTAssertTrue(hasher.verify("correct horse", against: hash))
        XCTAssertTrue(hasher.verifyStored("correct horse", against: hash))
        XCTAssertFalse(hasher.verifyStored("correct horsE", against: hash))
        XCTAssertFalse(hasher.needsRehash(hash))
        XCTAssertTrue(hasher.decoyHash.hasPrefix(PasswordHasher.pepperedPrefix + "$argon2id$"))
        // The same password under another master key's pepper, or under none, does not verify.
        let other = try plain.peppered(masterKey: SecureRandom.bytes(32))
        XCTAssertFalse(other.verifyStored("correct horse", against: hash))
        XCTAssertFalse(plain.verifyStored("correct horse", against: hash))
        // What follows the prefix is not a hash of the password itself.
        let inner = String(hash.dropFirst(PasswordHasher.pepperedPrefix.count))
        XCTAssertFalse(plain.verify("correct horse", against: inner))
        // Same master key, same pepper: another worker process verifies it.
        XCTAssertTrue(try plain.peppered(masterKey: masterKey).verifyStored("correct horse", against: hash))
        // A hash made before the pepper verifies, and is replaced at the next sign-in.
        let old = try plain.hash("correct horse")
        XCTAssertTrue(hasher.verifyStored("correct horse", against: old))
        XCTAssertTrue(hasher.needsRehash(old))
        XCTAssertFalse(plain.needsRehash(old))
    }

    /// PHC strings made by the libargon2 code this service used before libsodium (same password,
    /// a fixed salt): stored hashes must keep verifying after the switch, whatever their cost.
    func testHashesMadeByLibargon2StillVerify() throws {
        let hasher = try PasswordHasher(cost: .init(memoryKiB: 1024, iterations: 1, parallelism: 1))
        let old = [
            "$argon2id$v=19$m=1024,t=1,p=1$b2xkLWxpYmFyZ29uMi1zYQ$Ipr9PjsQQZNpwx0cpfXAo2MbRcWuzvZXoVxrQfESZH4",
            "$argon2id$v=19$m=19456,t=2,p=1$b2xkLWxpYmFyZ29uMi1zYQ$QRw8MJS37IPKOjuQXLkif0ghE3L//sviuJKK6hI66jc",
            "$argon2id$v=19$m=1024,t=1,p=2$b2xkLWxpYmFyZ29uMi1zYQ$oZcHZL5ocwVUiYoDOuAZu8Ekhd8cy6+9LBUmD2l68YY",
        ]
        for phc in old {
            XCTAssertTrue(hasher.verify("correct horse", against: phc), phc)
            XCTAssertFalse(hasher.verify("correct horsE", against: phc), phc)
        }
        // Argon2i is not what the service stores: refused even with the right password.
        XCTAssertFalse(hasher.verify("correct horse", against:
            "$argon2i$v=19$m=1024,t=1,p=1$b2xkLWxpYmFyZ29uMi1zYQ$AWRGODWkzhsllCfD56tgeC++R4lU1XOqQgebkKZnA+g"))
        XCTAssertFalse(hasher.verify("correct horse", against: "$argon2id$v=19$m=1024,t=1,p=1$garbage"))
    }

    /// libsodium's working memory is kept between hashes (CSodiumShim): one thread hashing
    /// again and again maps its area once, and every hash made in reused (dirty) memory is still
    /// right, as libargon2, which allocates its own, checks it.
    func testArgon2idWorkingMemoryIsReusedAndHashesStayRight() throws {
        // A cost no other test uses, so its area is this test's own.
        let hasher = try PasswordHasher(cost: .init(memoryKiB: 1_536, iterations: 1, parallelism: 1))
        let before = csodiumshim_hash_memory_reuses()
        var hashes: [String] = []
        for index in 0..<4 { hashes.append(try hasher.hash("correct horse \(index)")) }
        XCTAssertGreaterThanOrEqual(csodiumshim_hash_memory_reuses() - before, 3,
                                    "each hash mapped its working memory anew")
        for (index, hash) in hashes.enumerated() {
            let password = Array("correct horse \(index)".utf8)
            XCTAssertEqual(hash.withCString { argon2id_verify($0, password, password.count) }, ARGON2_OK.rawValue, hash)
            XCTAssertTrue(hasher.verify("correct horse \(index)", against: hash))
            XCTAssertFalse(hasher.verify("correct horse \(index + 1)", against: hash))
        }
    }

    /// The other way round: what libsodium writes, libargon2 reads (a rollback keeps every hash).
    func testLibsodiumHashesVerifyUnderLibargon2() throws {
        for parallelism: UInt32 in [1, 2] {
            let hasher = try PasswordHasher(cost: .init(memoryKiB: 1024, iterations: 2, parallelism: parallelism))
            let hash = try hasher.hash("correct horse")
            XCTAssertTrue(hash.hasPrefix("$argon2id$v=19$m=1024,t=2,p=\(parallelism)$"), hash)
            let password = Array("correct horse".utf8)
            XCTAssertEqual(hash.withCString { argon2id_verify($0, password, password.count) }, ARGON2_OK.rawValue)
            XCTAssertTrue(hasher.verify("correct horse", against: hash))
        }
    }
}

/// HKDF-SHA-256 against RFC 5869's test vectors, and the provider-identity seal.
final class KeyDerivationTests: XCTestCase {
    func testHKDFMatchesRFC5869() {
        // Test case 1.
        let okm1 = HKDF.sha256(key: [UInt8](repeating: 0x0b, count: 22), salt: Hex.decode("000102030405060708090a0b0c") ?? [],
                               info: Hex.decode("f0f1f2f3f4f5f6f7f8f9") ?? [], length: 42)
        XCTAssertEqual(Hex.encode(okm1),
                       "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
        // Test case 3: no salt, no info.
        let okm3 = HKDF.sha256(key: [UInt8](repeating: 0x0b, count: 22), info: [], length: 42)
        XCTAssertEqual(Hex.encode(okm3),
                       "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
        let master = SecureRandom.bytes(32)
        XCTAssertNotEqual(HKDF.subkey(of: master, label: "a-v1"), HKDF.subkey(of: master, label: "b-v1"))
        XCTAssertEqual(HKDF.subkey(of: master, label: "a-v1").count, 32)
    }

    func testSealedIdentitiesVerifyOnlyUnchangedFreshAndForTheirApp() {
        let master = SecureRandom.bytes(32)
        let seal = ProviderIdentitySeal(masterKey: master)
        let identity = ProviderV1.VerifiedIdentity(provider: "google", subject: "123", email: "a@gmail.com",
                                                   emailVerified: true, audience: "client", emailAuthoritative: true)
        let now = Timestamp.nowSeconds()
        let sealed = seal.seal(identity, appId: "app_1", now: now)
        XCTAssertTrue(seal.isValid(sealed, appId: "app_1", now: now + 10))
        XCTAssertFalse(seal.isValid(sealed, appId: "app_2", now: now + 10), "another app")
        XCTAssertFalse(seal.isValid(sealed, appId: "app_1", now: now + ProviderIdentitySeal.maximumAge + 1), "stale")
        XCTAssertFalse(seal.isValid(identity, appId: "app_1", now: now), "never sealed")
        XCTAssertFalse(ProviderIdentitySeal(masterKey: SecureRandom.bytes(32)).isValid(sealed, appId: "app_1", now: now),
                       "another key")
        var altered = sealed
        altered.subject = "456"
        XCTAssertFalse(seal.isValid(altered, appId: "app_1", now: now))
        altered = sealed
        altered.emailAuthoritative = false
        XCTAssertFalse(seal.isValid(altered, appId: "app_1", now: now))
        altered = sealed
        altered.email = nil
        XCTAssertFalse(seal.isValid(altered, appId: "app_1", now: now))
    }

    /// An Apple account event is sealed as an identity is, under its own label: only the
    /// unchanged, fresh event of its app verifies, and no event's MAC is an identity's.
    func testSealedAppleEventsVerifyOnlyUnchangedFreshAndForTheirApp() {
        let seal = ProviderIdentitySeal(masterKey: SecureRandom.bytes(32))
        let event = ProviderV1.VerifiedAppleEvent(type: "account-delete", subject: "001234.abcd", eventTime: 1_764_000_000,
                                                  eventId: "jti-1")
        let now = Timestamp.nowSeconds()
        let sealed = seal.seal(event, appId: "app_1", now: now)
        XCTAssertTrue(seal.isValid(sealed, appId: "app_1", now: now + 10))
        XCTAssertFalse(seal.isValid(sealed, appId: "app_2", now: now + 10), "another app")
        XCTAssertFalse(seal.isValid(sealed, appId: "app_1", now: now + ProviderIdentitySeal.maximumAge + 1), "stale")
        XCTAssertFalse(seal.isValid(event, appId: "app_1", now: now), "never sealed")
        for change in [{ (e: inout ProviderV1.VerifiedAppleEvent) in e.type = "email-enabled" },
                       { $0.subject = "001234.abce" }, { $0.email = "x@privaterelay.appleid.com" },
                       { $0.eventId = "jti-2" }, { $0.eventTime += 1 }] {
            var altered = sealed
            change(&altered)
            XCTAssertFalse(seal.isValid(altered, appId: "app_1", now: now))
        }
        // The same words as an identity's fields: a different MAC (the label differs).
        let identity = seal.seal(ProviderV1.VerifiedIdentity(provider: "account-delete", subject: "001234.abcd"),
                                 appId: "app_1", now: now)
        XCTAssertNotEqual(identity.mac, sealed.mac)
    }

    /// Each purpose its own key: no two sub-keys alike, none the master key, and a sealed value
    /// opens only under the sub-key of its purpose.
    func testSubKeysAreDistinctAndBoundToTheirPurpose() throws {
        let master = SecureRandom.bytes(32)
        let keys = SubKey.allCases.map { $0.derive(from: master) }
        XCTAssertEqual(Set(SubKey.allCases.map(\.rawValue)).count, SubKey.allCases.count)
        XCTAssertEqual(Set(keys.map(Hex.encode)).count, keys.count)
        XCTAssertFalse(keys.contains(master))
        XCTAssertTrue(keys.allSatisfy { $0.count == 32 })
        let aad = Array("signing_key:app_1:key_1".utf8)
        let sealed = try SecretSealer(masterKey: master, purpose: .signingKeySeal).seal(Array("pem".utf8), associatedData: aad)
        XCTAssertEqual(try SecretSealer(masterKey: master, purpose: .signingKeySeal).open(sealed, associatedData: aad),
                       Array("pem".utf8))
        XCTAssertThrowsError(try SecretSealer(masterKey: master, purpose: .appleSecretSeal).open(sealed, associatedData: aad))
        XCTAssertThrowsError(try AESGCM.open(sealed, key: master, associatedData: aad))
    }

    /// At most `concurrentHashes` hashes and checks at once, however many callers.
    func testPasswordHasherBoundsConcurrentHashes() throws {
        let hasher = try PasswordHasher(cost: .init(memoryKiB: 1024, iterations: 1, parallelism: 1), concurrentHashes: 2)
        let phc = try hasher.hash("secret")
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            if index % 2 == 0 {
                XCTAssertTrue(hasher.verify("secret", against: phc))
            } else {
                XCTAssertNotNil(try? hasher.hash("other-\(index)"))
            }
        }
        let most = try XCTUnwrap(hasher.gate?.mostAtOnce)
        XCTAssertGreaterThanOrEqual(most, 1)
        XCTAssertLessThanOrEqual(most, 2)
        XCTAssertNil(try PasswordHasher(cost: .init(memoryKiB: 1024, iterations: 1, parallelism: 1)).gate,
                     "no bound unless asked for")
    }
}
