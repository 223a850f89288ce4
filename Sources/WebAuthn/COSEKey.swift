import COpenSSL
import IdentityKit

/// A credential public key as COSE_Key (RFC 9052/9053) from attested credential data, limited
/// to the three algorithms registration offers (`pubKeyCredParams`): ES256 (EC2, P-256),
/// EdDSA (OKP, Ed25519) and RS256 (RSA). The CBOR bytes are what is stored; a key is parsed
/// again from them for every assertion.
public struct COSEKey: Sendable, Equatable {
    public enum Algorithm: Int64, Sendable, CaseIterable {
        case es256 = -7
        case edDSA = -8
        case rs256 = -257
    }

    public let algorithm: Algorithm
    /// The COSE_Key as the authenticator encoded it.
    public let encoded: [UInt8]
    let material: Material

    enum Material: Sendable, Equatable {
        case ec2(x: [UInt8], y: [UInt8])
        case okp(x: [UInt8])
        case rsa(modulus: [UInt8], exponent: [UInt8])
    }

    /// Parses and checks a COSE_Key: key type, algorithm and curve must agree, coordinates
    /// must have their curve's length.
    public static func parse(_ encoded: [UInt8]) throws(WebAuthnError) -> COSEKey {
        let key = try CBOR.decode(encoded)
        return try parse(key, encoded: encoded)
    }

    static func parse(_ key: CBOR, encoded: [UInt8]) throws(WebAuthnError) -> COSEKey {
        guard case .map = key else { throw .malformed("COSE key is not a map") }
        guard let kty = key[int: 1]?.int else { throw .malformed("COSE key without kty") }
        guard let algNumber = key[int: 3]?.int else { throw .malformed("COSE key without alg") }
        guard let algorithm = Algorithm(rawValue: algNumber) else { throw .unsupported("COSE alg \(algNumber)") }
        let material: Material
        switch (algorithm, kty) {
        case (.es256, 2):
            guard key[int: -1]?.int == 1 else { throw .unsupported("EC2 curve other than P-256") }
            guard let x = key[int: -2]?.bytes, let y = key[int: -3]?.bytes, x.count == 32, y.count == 32 else {
                throw .malformed("P-256 coordinates")
            }
            material = .ec2(x: x, y: y)
        case (.edDSA, 1):
            guard key[int: -1]?.int == 6 else { throw .unsupported("OKP curve other than Ed25519") }
            guard let x = key[int: -2]?.bytes, x.count == 32 else { throw .malformed("Ed25519 public key") }
            material = .okp(x: x)
        case (.rs256, 3):
            guard let n = key[int: -1]?.bytes, let e = key[int: -2]?.bytes, !e.isEmpty, e.count <= 8 else {
                throw .malformed("RSA modulus or exponent")
            }
            // RSA under 2048 bits is not worth a signature; over 8192 is a CPU cost for us.
            let bits = (n.drop { $0 == 0 }.count) * 8
            guard (2048...8192).contains(bits) else { throw .unsupported("RSA modulus of \(bits) bits") }
            material = .rsa(modulus: n, exponent: e)
        default:
            throw .malformed("COSE kty \(kty) does not match alg \(algNumber)")
        }
        let parsed = COSEKey(algorithm: algorithm, encoded: encoded, material: material)
        // The key must load into OpenSSL now (a P-256 point off the curve, say), not at sign-in.
        _ = try parsed.publicKey()
        return parsed
    }

    /// Whether `signature` signs `message` under this key: ES256 signatures are ASN.1 DER here
    /// (WebAuthn), unlike JOSE's raw r‖s; EdDSA is pure Ed25519 over the message.
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        guard !signature.isEmpty, let key = try? publicKey() else { return false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        let digest: OpaquePointer? = algorithm == .edDSA ? nil : EVP_sha256()
        guard EVP_DigestVerifyInit(context, nil, digest, nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }

    /// An OpenSSL public key (caller frees), read from a SubjectPublicKeyInfo built around the
    /// COSE material.
    func publicKey() throws(WebAuthnError) -> OpaquePointer {
        let spki = DER.subjectPublicKeyInfo(material)
        let key: OpaquePointer? = spki.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else { throw .malformed("public key does not load (point off the curve?)") }
        return key
    }
}

/// Just enough DER to wrap COSE key material in a SubjectPublicKeyInfo for `d2i_PUBKEY`.
enum DER {
    static func subjectPublicKeyInfo(_ material: COSEKey.Material) -> [UInt8] {
        switch material {
        case .ec2(let x, let y):
            // id-ecPublicKey, prime256v1; uncompressed point.
            let algorithm = sequence([0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]
                                     + [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07])
            return sequence(algorithm + bitString([0x04] + x + y))
        case .okp(let x):
            let algorithm = sequence([0x06, 0x03, 0x2b, 0x65, 0x70])  // id-Ed25519
            return sequence(algorithm + bitString(x))
        case .rsa(let modulus, let exponent):
            // rsaEncryption, NULL parameters; RSAPublicKey ::= SEQUENCE { n, e }.
            let algorithm = sequence([0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00])
            return sequence(algorithm + bitString(sequence(integer(modulus) + integer(exponent))))
        }
    }

    static func sequence(_ content: [UInt8]) -> [UInt8] { [0x30] + length(content.count) + content }
    static func bitString(_ content: [UInt8]) -> [UInt8] { [0x03] + length(content.count + 1) + [0x00] + content }

    /// A non-negative INTEGER from big-endian magnitude bytes.
    static func integer(_ magnitude: [UInt8]) -> [UInt8] {
        var bytes = Array(magnitude.drop { $0 == 0 })
        if bytes.isEmpty { bytes = [0] }
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return [0x02] + length(bytes.count) + bytes
    }

    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 { bytes.insert(UInt8(rest & 0xff), at: 0); rest >>= 8 }
        return [0x80 | UInt8(bytes.count)] + bytes
    }
}
