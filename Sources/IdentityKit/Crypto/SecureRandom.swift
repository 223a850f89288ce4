import COpenSSL

/// Random bytes from OpenSSL's CSPRNG.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        // RAND_bytes only fails when the CSPRNG cannot be seeded; without randomness no secret
        // we make would be safe, so that is the one failure we do not try to survive.
        precondition(RAND_bytes(&out, Int32(count)) == 1, "OpenSSL RAND_bytes failed")
        return out
    }
}
