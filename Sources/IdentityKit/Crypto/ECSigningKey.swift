import COpenSSL
import COpenSSLShim

/// An EC P-256 private key (an Apple `.p8`), for ES256 signatures. Immutable once read and
/// usable from any thread, like `RSAKey`.
public final class ECSigningKey: @unchecked Sendable {
    private let key: OpaquePointer

    private init(key: OpaquePointer) { self.key = key }

    deinit { EVP_PKEY_free(key) }

    /// Reads a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`) holding an EC key.
    public static func fromPEM(_ pem: String) throws -> ECSigningKey {
        let bytes = Array(pem.utf8)
        return try bytes.withUnsafeBufferPointer { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else {
                throw CryptoError.openSSL("BIO_new_mem_buf")
            }
            defer { BIO_free(bio) }
            guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else {
                throw CryptoError.openSSL("PEM_read_bio_PrivateKey")
            }
            guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else {
                EVP_PKEY_free(key)
                throw CryptoError(operation: "ES256 key", reason: "not an EC key")
            }
            return ECSigningKey(key: key)
        }
    }

    /// ECDSA P-256 with SHA-256, as the 64-byte r ‖ s JWS wants (OpenSSL gives DER).
    public func signES256(_ message: [UInt8]) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw CryptoError.openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        try CryptoError.check(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key), "EVP_DigestSignInit")
        var length = 0
        try CryptoError.check(EVP_DigestSign(context, nil, &length, message, message.count), "EVP_DigestSign(size)")
        var der = [UInt8](repeating: 0, count: length)
        try CryptoError.check(EVP_DigestSign(context, &der, &length, message, message.count), "EVP_DigestSign")
        var raw = [UInt8](repeating: 0, count: 64)
        guard copensslshim_ecdsa_der_to_raw(der, length, &raw, 32) == 0 else {
            throw CryptoError(operation: "ES256", reason: "bad DER signature")
        }
        return raw
    }
}
