import CCbor

/// A decoded CBOR data item (RFC 8949), as much of CBOR as WebAuthn uses: integers, byte and
/// text strings, arrays, maps, booleans and null. Decoding is libcbor's (`cbor_load`); this
/// file only walks its item tree into Swift values, so no CBOR parsing is hand-written here.
public indirect enum CBOR: Sendable, Equatable {
    case unsigned(UInt64)
    /// A negative integer stored as CBOR does: the value is `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([(key: CBOR, value: CBOR)])
    case bool(Bool)
    case null
    /// Tags, floats, undefined: present, but nothing WebAuthn reads.
    case other

    public static func == (lhs: CBOR, rhs: CBOR) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)), (.negative(let a), .negative(let b)): return a == b
        case (.bytes(let a), .bytes(let b)): return a == b
        case (.text(let a), .text(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.map(let a), .map(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null), (.other, .other): return true
        default: return false
        }
    }

    /// The integer value when it fits an Int64 (COSE labels and algorithm numbers do).
    public var int: Int64? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): return n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: return nil
        }
    }

    public var bytes: [UInt8]? { if case .bytes(let b) = self { return b } else { return nil } }
    public var text: String? { if case .text(let t) = self { return t } else { return nil } }

    /// The value under an integer key of a map (COSE keys are labelled by integers).
    public subscript(int label: Int64) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key.int == label }?.value
    }

    /// The value under a text key of a map (attestation objects are labelled by strings).
    public subscript(text label: String) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key.text == label }?.value
    }

    /// Decodes the first data item of `bytes`; returns it and how many bytes it took, so a
    /// caller reading a COSE key inside authenticator data knows where the extensions begin.
    public static func decodePrefix(_ bytes: ArraySlice<UInt8>) throws(WebAuthnError) -> (CBOR, Int) {
        guard !bytes.isEmpty else { throw .malformed("empty CBOR") }
        return try Array(bytes).withUnsafeBufferPointer { buffer throws(WebAuthnError) -> (CBOR, Int) in
            var result = cbor_load_result()
            guard let base = buffer.baseAddress, let item = cbor_load(base, buffer.count, &result),
                  result.error.code == CBOR_ERR_NONE else { throw .malformed("CBOR does not decode") }
            var owned: UnsafeMutablePointer<cbor_item_t>? = item
            defer { cbor_decref(&owned) }
            return (try convert(item, depth: 0), result.read)
        }
    }

    /// Decodes `bytes` as exactly one data item: trailing bytes are refused.
    public static func decode(_ bytes: [UInt8]) throws(WebAuthnError) -> CBOR {
        let (value, used) = try decodePrefix(bytes[...])
        guard used == bytes.count else { throw .malformed("bytes after the CBOR item") }
        return value
    }

    /// Attestation objects and COSE keys nest two or three levels; more is refused rather than
    /// walked (libcbor itself bounds its stack by the input's size).
    static let maximumDepth = 8

    private static func convert(_ item: UnsafeMutablePointer<cbor_item_t>, depth: Int) throws(WebAuthnError) -> CBOR {
        guard depth <= maximumDepth else { throw .malformed("CBOR nested too deep") }
        switch cbor_typeof(item) {
        case CBOR_TYPE_UINT:
            return .unsigned(cbor_get_int(item))
        case CBOR_TYPE_NEGINT:
            return .negative(cbor_get_int(item))
        case CBOR_TYPE_BYTESTRING:
            // CTAP2's canonical CBOR has definite lengths only.
            guard cbor_bytestring_is_definite(item) else { throw .malformed("indefinite byte string") }
            let length = cbor_bytestring_length(item)
            guard length > 0, let handle = cbor_bytestring_handle(item) else { return .bytes([]) }
            return .bytes(Array(UnsafeBufferPointer(start: handle, count: length)))
        case CBOR_TYPE_STRING:
            guard cbor_string_is_definite(item) else { throw .malformed("indefinite text string") }
            let length = cbor_string_length(item)
            guard length > 0, let handle = cbor_string_handle(item) else { return .text("") }
            guard let text = String(validating: UnsafeBufferPointer(start: handle, count: length), as: UTF8.self) else {
                throw .malformed("text string is not UTF-8")
            }
            return .text(text)
        case CBOR_TYPE_ARRAY:
            let count = cbor_array_size(item)
            guard count > 0, let handle = cbor_array_handle(item) else { return .array([]) }
            var values: [CBOR] = []
            for index in 0..<count {
                guard let element = handle[index] else { throw .malformed("CBOR array hole") }
                values.append(try convert(element, depth: depth + 1))
            }
            return .array(values)
        case CBOR_TYPE_MAP:
            guard cbor_map_is_definite(item) else { throw .malformed("indefinite map") }
            let count = cbor_map_size(item)
            guard count > 0, let handle = cbor_map_handle(item) else { return .map([]) }
            var pairs: [(key: CBOR, value: CBOR)] = []
            for index in 0..<count {
                guard let key = handle[index].key, let value = handle[index].value else { throw .malformed("CBOR map hole") }
                let decodedKey = try convert(key, depth: depth + 1)
                // Duplicate keys would let two readers see two different keys.
                guard !pairs.contains(where: { $0.key == decodedKey }) else { throw .malformed("duplicate CBOR map key") }
                pairs.append((decodedKey, try convert(value, depth: depth + 1)))
            }
            return .map(pairs)
        case CBOR_TYPE_FLOAT_CTRL:
            if cbor_is_null(item) { return .null }
            if cbor_is_bool(item) { return .bool(cbor_get_bool(item)) }
            return .other
        default:
            return .other
        }
    }
}
