/// Whether a 32-byte key could have come from a random generator. A key typed by hand or copied
/// from an example (all zeros, `0101…`, `00010203…`, a short pattern repeated) protects nothing:
/// every process refuses one at start rather than sealing secrets with it.
public enum KeyEntropy {
    /// Fewer distinct bytes than this is no random key: 32 random bytes have about 30 distinct
    /// values, and fewer than 16 happens with a probability far below 2^-100.
    static let minimumDistinctBytes = 16

    /// Why `key` is refused, or nil when it may be random.
    public static func weakness(of key: [UInt8]) -> String? {
        guard let first = key.first else { return "it is empty" }
        if key.allSatisfy({ $0 == first }) { return "every byte is \(String(format: "%02x", first))" }
        if Set(key).count < minimumDistinctBytes {
            return "it has only \(Set(key).count) distinct bytes (a pattern, not a random key)"
        }
        let step = key.count > 1 ? key[1] &- key[0] : 0
        if zip(key, key.dropFirst()).allSatisfy({ $1 &- $0 == step }) {
            return "its bytes count up or down by a fixed step"
        }
        return nil
    }
}
