import COpenSSL
import COpenSSLShim

/// An RSA key held by OpenSSL: a private key in the token worker (signing), a public key
/// everywhere else (verification, JWKS). The EVP_PKEY is immutable once made and OpenSSL
/// allows concurrent use of one key from many threads, hence `@unchecked Sendable`.
public final class RSAKey: @unchecked Sendable {
    private let key: OpaquePointer
    public let isPrivate: Bool

    private init(key: OpaquePointer, isPrivate: Bool) {
        self.key = key
        self.isPrivate = isPrivate
    }

    deinit { EVP_PKEY_free(key) }

    public static func generate(bits: Int32 = 2048) throws -> RSAKey {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nil) else { throw CryptoError.openSSL("EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(context) }
        try CryptoError.check(EVP_PKEY_keygen_init(context), "EVP_PKEY_keygen_init")
        guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, bits) > 0 else { throw CryptoError.openSSL("set_rsa_keygen_bits") }
        var generated: OpaquePointer?
        try CryptoError.check(EVP_PKEY_keygen(context, &generated), "EVP_PKEY_keygen")
        guard let generated else { throw CryptoError.openSSL("EVP_PKEY_keygen") }
        return RSAKey(key: generated, isPrivate: true)
    }

    /// Reads a PKCS#8 private key or an SPKI public key in PEM.
    public static func fromPEM(_ pem: String) throws -> RSAKey {
        let bytes = Array(pem.utf8)
        // BIO_new_mem_buf does not copy: the buffer must outlive the BIO, so both live inside
        // one withUnsafeBufferPointer (an implicit array-to-pointer argument would not).
        return try bytes.withUnsafeBufferPointer { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else {
                throw CryptoError.openSSL("BIO_new_mem_buf")
            }
            defer { BIO_free(bio) }
            if pem.contains("PRIVATE KEY") {
                guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else {
                    throw CryptoError.openSSL("PEM_read_bio_PrivateKey")
                }
                return RSAKey(key: key, isPrivate: true)
            }
            guard let key = PEM_read_bio_PUBKEY(bio, nil, nil, nil) else { throw CryptoError.openSSL("PEM_read_bio_PUBKEY") }
            return RSAKey(key: key, isPrivate: false)
        }
    }

    /// A public key from a JWK's `n` and `e` (big-endian bytes), as providers publish them.
    public static func fromComponents(modulus: [UInt8], exponent: [UInt8]) throws -> RSAKey {
        guard let key = copensslshim_rsa_public_key(modulus, modulus.count, exponent, exponent.count) else {
            throw CryptoError.openSSL("RSA key from JWK")
        }
        return RSAKey(key: key, isPrivate: false)
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

    /// RSASSA-PKCS1-v1_5 with SHA-256 (JWS `RS256`).
    public func signRS256(_ message: [UInt8]) throws -> [UInt8] {
        guard isPrivate else { throw CryptoError(operation: "sign", reason: "public key") }
        guard let context = EVP_MD_CTX_new() else { throw CryptoError.openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        try CryptoError.check(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key), "EVP_DigestSignInit")
        var length = 0
        try CryptoError.check(EVP_DigestSign(context, nil, &length, message, message.count), "EVP_DigestSign(size)")
        var signature = [UInt8](repeating: 0, count: length)
        try CryptoError.check(EVP_DigestSign(context, &signature, &length, message, message.count), "EVP_DigestSign")
        return Array(signature.prefix(length))
    }

    public func verifyRS256(_ message: [UInt8], signature: [UInt8]) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        let result = EVP_DigestVerify(context, signature, signature.count, message, message.count)
        ERR_clear_error()
        return result == 1
    }

    /// The public modulus and exponent, big-endian, for a JWK's `n` and `e`.
    public func publicComponents() throws -> (modulus: [UInt8], exponent: [UInt8]) {
        (try bigNumber(OSSL_PKEY_PARAM_RSA_N), try bigNumber(OSSL_PKEY_PARAM_RSA_E))
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
