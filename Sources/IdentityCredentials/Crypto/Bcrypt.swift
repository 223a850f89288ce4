import CCrypt
import IdentityKit

/// bcrypt (`$2a$`, `$2b$`, `$2y$`) through libxcrypt's `crypt_rn`, for imported hashes only.
/// crypt_rn writes into caller-owned scratch memory (about 32 KiB), so it is thread-safe, and
/// returns NULL (never the "*0" failure token some crypt() builds return) on an invalid setting.
public enum Bcrypt {
    /// The hash of `password` under the cost and salt that `setting` (a full bcrypt hash) names,
    /// or nil when libxcrypt refuses the setting.
    public static func hash(_ password: [UInt8], setting: String) -> String? {
        // A NUL would end the C string early: such a password can never be what was hashed.
        guard !password.contains(0) else { return nil }
        let size = MemoryLayout<crypt_data>.size
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<crypt_data>.alignment)
        scratch.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        defer {
            // The scratch area holds key material derived from the password.
            scratch.initializeMemory(as: UInt8.self, repeating: 0, count: size)
            scratch.deallocate()
        }
        let phrase = password.map { CChar(bitPattern: $0) } + [0]
        guard let result = crypt_rn(phrase, setting, scratch, Int32(size)) else { return nil }
        return String(cString: result)
    }

    /// The cost of a syntactically valid bcrypt hash (`$2b$12$` + 53 characters), or nil.
    public static func cost(of hash: String) -> Int? {
        let bytes = Array(hash.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
              [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]),
              bytes[3] == UInt8(ascii: "$"), bytes[6] == UInt8(ascii: "$"),
              let cost = Int(String(decoding: bytes[4..<6], as: UTF8.self)) else { return nil }
        let alphabet = Set("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        guard bytes[7...].allSatisfy(alphabet.contains) else { return nil }
        return cost
    }
}
