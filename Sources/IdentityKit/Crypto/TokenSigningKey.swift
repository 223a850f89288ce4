import COpenSSL
import COpenSSLShim

/// The algorithms an app's access tokens may be signed with (JWS `alg`).
public enum SigningAlgorithm: String, Sendable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256, 2048-bit keys: the default, what every JWT library reads.
    case rs256 = "RS256"
    /// ECDSA P-256 with SHA-256, signatures as the 64-byte r ‖ s.
    case es256 = "ES256"
    /// Ed25519 (RFC 8037).
    case edDSA = "EdDSA"
}

/// An app's access-token key of any `SigningAlgorithm`: private in the token worker, public
/// everywhere else (verification, the JWKS). The EVP_PKEY is immutable once made and OpenSSL
/// allows concurrent use of one key from many threads, hence `@unchecked Sendable`.
public final class TokenSigningKey: @unchecked Sendable {
    private let key: OpaquePointer
    public let algorithm: SigningAlgorithm
    public let isPrivate: Bool

    private init(key: OpaquePointer, algorithm: SigningAlgorithm, isPrivate: Bool) {
        self.key = key
        self.algorithm = algorithm
        self.isPrivate = isPrivate
    }

    deinit { EVP_PKEY_free(key) }

    public static func generate(_ algorithm: SigningAlgorithm) throws -> TokenSigningKey {
        let context: OpaquePointer?
        switch algorithm {
        case .rs256: context = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nil)
        case .es256: context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil)
        case .edDSA: context = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil)
        }
        guard let context else { throw CryptoError.openSSL("EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(context) }
        try CryptoError.check(EVP_PKEY_keygen_init(context), "EVP_PKEY_keygen_init")
        switch algorithm {
        case .rs256:
            guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048) > 0 else { throw CryptoError.openSSL("set_rsa_keygen_bits") }
        case .es256:
            guard EVP_PKEY_CTX_set_group_name(context, "P-256") > 0 else { throw CryptoError.openSSL("set_group_name") }
        case .edDSA:
            break
        }
        var generated: OpaquePointer?
        try CryptoError.check(EVP_PKEY_keygen(context, &generated), "EVP_PKEY_keygen")
        guard let generated else { throw CryptoError.openSSL("EVP_PKEY_keygen") }
        return TokenSigningKey(key: generated, algorithm: algorithm, isPrivate: true)
    }

    /// Reads a PKCS#8 private key or an SPKI public key in PEM; the key's type must be the
    /// one `algorithm` names (an RSA key listed as ES256 is refused, not reinterpreted).
    public static func fromPEM(_ pem: String, algorithm: SigningAlgorithm) throws -> TokenSigningKey {
        let bytes = Array(pem.utf8)
        let isPrivate = pem.contains("PRIVATE KEY")
        let key: OpaquePointer = try bytes.withUnsafeBufferPointer { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else {
                throw CryptoError.openSSL("BIO_new_mem_buf")
            }
            defer { BIO_free(bio) }
            let read = isPrivate ? PEM_read_bio_PrivateKey(bio, nil, nil, nil) : PEM_read_bio_PUBKEY(bio, nil, nil, nil)
            guard let read else { throw CryptoError.openSSL("PEM_read_bio") }
            return read
        }
        let expected: Int32
        switch algorithm {
        case .rs256: expected = EVP_PKEY_RSA
        case .es256: expected = EVP_PKEY_EC
        case .edDSA: expected = EVP_PKEY_ED25519
        }
        guard EVP_PKEY_get_base_id(key) == expected,
              algorithm != .es256 || Self.groupName(key) == "prime256v1" else {
            EVP_PKEY_free(key)
            throw CryptoError(operation: "signing key", reason: "the key is not a \(algorithm.rawValue) key")
        }
        return TokenSigningKey(key: key, algorithm: algorithm, isPrivate: isPrivate)
    }

    private static func groupName(_ key: OpaquePointer) -> String? {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, &name, name.count, &length) == 1 else { return nil }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public func privateKeyPEM() throws -> String {
        try writePEM { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
    }

    public func publicKeyPEM() throws -> String {
        try writePEM { bio in PEM_write_bio_PUBKEY(bio, key) }
    }

    private func writePEM(_ write: (OpaquePointer) -> Int32) throws -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.openSSL("BIO_new") }
        defer { BIO_free(bio) }
        try CryptoError.check(write(bio), "PEM_write")
        var data: UnsafeMutablePointer<CChar>?
        let length = copensslshim_bio_mem_data(bio, &data)
        guard let data, length > 0 else { throw CryptoError.openSSL("BIO_get_mem_data") }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    /// The JWS signature of `message`: PKCS#1 v1.5 for RS256, r ‖ s for ES256, Ed25519's 64 bytes.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        guard isPrivate else { throw CryptoError(operation: "sign", reason: "public key") }
        guard let context = EVP_MD_CTX_new() else { throw CryptoError.openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        // Ed25519 hashes internally: no digest is named.
        try CryptoError.check(EVP_DigestSignInit(context, nil, algorithm == .edDSA ? nil : EVP_sha256(), nil, key),
                              "EVP_DigestSignInit")
        var length = 0
        try CryptoError.check(EVP_DigestSign(context, nil, &length, message, message.count), "EVP_DigestSign(size)")
        var signature = [UInt8](repeating: 0, count: length)
        try CryptoError.check(EVP_DigestSign(context, &signature, &length, message, message.count), "EVP_DigestSign")
        signature = Array(signature.prefix(length))
        guard algorithm == .es256 else { return signature }
        var raw = [UInt8](repeating: 0, count: 64)
        guard copensslshim_ecdsa_der_to_raw(signature, signature.count, &raw, 32) == 0 else {
            throw CryptoError(operation: "ES256", reason: "bad DER signature")
        }
        return raw
    }

    public func verify(_ message: [UInt8], signature: [UInt8]) -> Bool {
        var presented = signature
        if algorithm == .es256 {
            guard signature.count == 64 else { return false }
            var der = [UInt8](repeating: 0, count: 80)
            let length = copensslshim_ecdsa_raw_to_der(signature, 32, &der, der.count)
            guard length > 0 else { return false }
            presented = Array(der.prefix(Int(length)))
        }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, algorithm == .edDSA ? nil : EVP_sha256(), nil, key) == 1 else {
            ERR_clear_error()
            return false
        }
        let result = EVP_DigestVerify(context, presented, presented.count, message, message.count)
        ERR_clear_error()
        return result == 1
    }

    /// The public JWK (RFC 7517/7518/8037) with `kid`, `use: sig` and `alg`.
    public func publicJWK(kid: String) throws -> JSONValue {
        var fields: [String: JSONValue] = ["kid": .string(kid), "use": .string("sig"), "alg": .string(algorithm.rawValue)]
        switch algorithm {
        case .rs256:
            fields["kty"] = .string("RSA")
            fields["n"] = .string(Base64URL.encode(try bigNumber(OSSL_PKEY_PARAM_RSA_N)))
            fields["e"] = .string(Base64URL.encode(try bigNumber(OSSL_PKEY_PARAM_RSA_E)))
        case .es256:
            // The uncompressed point 0x04 ‖ x ‖ y.
            var point = [UInt8](repeating: 0, count: 65)
            var length = 0
            try CryptoError.check(EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, &point, point.count, &length),
                                  "EVP_PKEY_get_octet_string_param")
            guard length == 65, point[0] == 4 else { throw CryptoError(operation: "ES256 JWK", reason: "not an uncompressed point") }
            fields["kty"] = .string("EC")
            fields["crv"] = .string("P-256")
            fields["x"] = .string(Base64URL.encode(point[1..<33]))
            fields["y"] = .string(Base64URL.encode(point[33..<65]))
        case .edDSA:
            var raw = [UInt8](repeating: 0, count: 32)
            var length = raw.count
            try CryptoError.check(EVP_PKEY_get_raw_public_key(key, &raw, &length), "EVP_PKEY_get_raw_public_key")
            fields["kty"] = .string("OKP")
            fields["crv"] = .string("Ed25519")
            fields["x"] = .string(Base64URL.encode(raw.prefix(length)))
        }
        return .object(fields)
    }

    private func bigNumber(_ name: String) throws -> [UInt8] {
        var number: OpaquePointer?
        try CryptoError.check(EVP_PKEY_get_bn_param(key, name, &number), "EVP_PKEY_get_bn_param(\(name))")
        guard let number else { throw CryptoError.openSSL("EVP_PKEY_get_bn_param") }
        defer { BN_free(number) }
        var out = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
        _ = BN_bn2bin(number, &out)
        return out
    }
}
