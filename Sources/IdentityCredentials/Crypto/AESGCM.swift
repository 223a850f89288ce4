import COpenSSL
import IdentityKit

/// AES-256-GCM for secrets at rest (private signing keys). The sealed form is
/// nonce (12) ‖ ciphertext ‖ tag (16); the associated data binds a sealed value to its row
/// (`signing_key:<app_id>:<kid>`) so it cannot be swapped into another.
public enum AESGCM {
    public static func seal(_ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        guard key.count == 32 else { throw CryptoError(operation: "aes-gcm seal", reason: "key must be 32 bytes") }
        let nonce = SecureRandom.bytes(12)
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        try CryptoError.check(EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce), "EVP_EncryptInit_ex")
        var length: Int32 = 0
        if !associatedData.isEmpty {
            try CryptoError.check(EVP_EncryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)),
                                  "EVP_EncryptUpdate(aad)")
        }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        try CryptoError.check(EVP_EncryptUpdate(context, &ciphertext, &length, plaintext, Int32(plaintext.count)),
                              "EVP_EncryptUpdate")
        var total = Int(length)
        try ciphertext.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { throw CryptoError(operation: "aes-gcm seal", reason: "no buffer") }
            try CryptoError.check(EVP_EncryptFinal_ex(context, base + total, &length), "EVP_EncryptFinal_ex")
        }
        total += Int(length)
        var tag = [UInt8](repeating: 0, count: 16)
        try CryptoError.check(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &tag), "GCM get tag")
        return nonce + ciphertext.prefix(total) + tag
    }

    public static func open(_ sealed: [UInt8], key: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        guard key.count == 32, sealed.count >= 28 else {
            throw CryptoError(operation: "aes-gcm open", reason: "bad key or sealed value")
        }
        let nonce = Array(sealed.prefix(12))
        let tag = Array(sealed.suffix(16))
        let ciphertext = Array(sealed[12..<(sealed.count - 16)])
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        try CryptoError.check(EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce), "EVP_DecryptInit_ex")
        var length: Int32 = 0
        if !associatedData.isEmpty {
            try CryptoError.check(EVP_DecryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)),
                                  "EVP_DecryptUpdate(aad)")
        }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        try CryptoError.check(EVP_DecryptUpdate(context, &plaintext, &length, ciphertext, Int32(ciphertext.count)),
                              "EVP_DecryptUpdate")
        var total = Int(length)
        var tagCopy = tag
        try CryptoError.check(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, &tagCopy), "GCM set tag")
        let final = plaintext.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return 0 }
            return EVP_DecryptFinal_ex(context, base + total, &length)
        }
        guard final == 1 else {
            throw CryptoError(operation: "aes-gcm open", reason: "authentication failed (wrong master key?)")
        }
        total += Int(length)
        return Array(plaintext.prefix(total))
    }
}
