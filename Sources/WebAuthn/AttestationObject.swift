/// An attestation object (WebAuthn §6.5): `{fmt, attStmt, authData}` in CBOR. Formats taken:
/// `none`, and `packed` self-attestation (signed by the credential's own key). Neither gives a
/// trust path to a maker: this service does not tell one authenticator model from another, and
/// asks clients for `attestation: "none"`; `packed` with a certificate chain (`x5c`) is refused.
public struct AttestationObject: Sendable {
    public let format: String
    public let authenticatorData: AuthenticatorData
    public let authenticatorDataBytes: [UInt8]
    let statement: CBOR

    public static func parse(_ bytes: [UInt8]) throws(WebAuthnError) -> AttestationObject {
        let object = try CBOR.decode(bytes)
        guard let format = object[text: "fmt"]?.text, let statement = object[text: "attStmt"],
              let authData = object[text: "authData"]?.bytes
        else { throw .malformed("attestation object lacks fmt, attStmt or authData") }
        return AttestationObject(format: format, authenticatorData: try AuthenticatorData.parse(authData),
                                 authenticatorDataBytes: authData, statement: statement)
    }

    /// Checks the statement against the credential it attests; `clientDataHash` is
    /// SHA-256(clientDataJSON).
    func verifyStatement(credentialKey: COSEKey, clientDataHash: [UInt8]) throws(WebAuthnError) {
        switch format {
        case "none":
            guard case .map(let pairs) = statement, pairs.isEmpty else { throw .malformed("none with a statement") }
        case "packed":
            guard statement[text: "x5c"] == nil, statement[text: "ecdaaKeyId"] == nil else {
                throw .unsupported("packed attestation with a certificate chain")
            }
            guard let alg = statement[text: "alg"]?.int, let signature = statement[text: "sig"]?.bytes else {
                throw .malformed("packed statement lacks alg or sig")
            }
            guard alg == credentialKey.algorithm.rawValue else { throw .refused("packed alg differs from the key's") }
            guard credentialKey.verify(signature: signature, message: authenticatorDataBytes + clientDataHash) else {
                throw .refused("packed self-attestation signature")
            }
        default:
            throw .unsupported("attestation format \(format)")
        }
    }
}
