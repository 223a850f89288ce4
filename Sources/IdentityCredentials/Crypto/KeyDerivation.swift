import COpenSSL
import IdentityKit

/// Password-based key derivation through OpenSSL, for verifying password hashes imported from
/// other systems (the service's own hashes are Argon2id, `PasswordHasher`).
public enum KeyDerivation {
    /// The most memory one scrypt derivation may take (128·N·r bytes): an imported hash whose
    /// parameters ask for more is refused at import rather than allowed to exhaust a worker.
    public static let scryptMaximumMemory: UInt64 = 64 * 1024 * 1024

    /// RFC 7914 scrypt.
    public static func scrypt(password: [UInt8], salt: [UInt8], n: UInt64, r: UInt64, p: UInt64,
                              length: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        // OpenSSL's own ceiling (32 MiB by default) is raised to ours plus its bookkeeping.
        let maximumMemory = scryptMaximumMemory * 2
        try CryptoError.check(EVP_PBE_scrypt(password, password.count, salt, salt.count, n, r, p,
                                             maximumMemory, &out, length), "EVP_PBE_scrypt")
        return out
    }

    public enum PBKDF2Digest: String, Sendable { case sha256, sha1 }

    /// RFC 8018 PBKDF2 with HMAC-SHA-256 or HMAC-SHA-1.
    public static func pbkdf2(password: [UInt8], salt: [UInt8], iterations: Int32, digest: PBKDF2Digest,
                              length: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        let md = digest == .sha256 ? EVP_sha256() : EVP_sha1()
        let passwordChars = password.map { CChar(bitPattern: $0) }
        try CryptoError.check(PKCS5_PBKDF2_HMAC(passwordChars, Int32(password.count), salt, Int32(salt.count),
                                                iterations, md, Int32(length), &out), "PKCS5_PBKDF2_HMAC")
        return out
    }

    /// AES-256-CTR with a zero IV, the last step of Firebase's modified scrypt.
    public static func aes256CTR(key: [UInt8], _ input: [UInt8]) throws -> [UInt8] {
        guard key.count == 32 else { throw CryptoError(operation: "AES-256-CTR", reason: "key must be 32 bytes") }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        let iv = [UInt8](repeating: 0, count: 16)
        try CryptoError.check(EVP_EncryptInit_ex(context, EVP_aes_256_ctr(), nil, key, iv), "EVP_EncryptInit_ex")
        var out = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        try CryptoError.check(EVP_EncryptUpdate(context, &out, &written, input, Int32(input.count)), "EVP_EncryptUpdate")
        var final: Int32 = 0
        try out.withUnsafeMutableBufferPointer { buffer in
            try CryptoError.check(EVP_EncryptFinal_ex(context, buffer.baseAddress.map { $0 + Int(written) }, &final),
                                  "EVP_EncryptFinal_ex")
        }
        return Array(out.prefix(Int(written + final)))
    }
}
