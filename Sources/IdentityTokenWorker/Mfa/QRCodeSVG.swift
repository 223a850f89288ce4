import CQRencode

/// A QR code as an SVG document: libqrencode gives the module grid, drawn here as one path
/// (a dark 1×1 square per module) with the standard 4-module quiet zone.
enum QRCodeSVG {
    struct Failure: Error {}

    static func render(_ text: String) throws -> String {
        // 8-bit mode, error correction M: what authenticator apps expect of an otpauth URI.
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else { throw Failure() }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        let data = code.pointee.data
        let quiet = 4
        let size = width + 2 * quiet
        var path = ""
        for y in 0..<width {
            for x in 0..<width where (data?[y * width + x] ?? 0) & 1 == 1 {
                path += "M\(x + quiet) \(y + quiet)h1v1h-1z"
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(size) \(size)" shape-rendering="crispEdges">\
            <rect width="\(size)" height="\(size)" fill="#fff"/><path fill="#000" d="\(path)"/></svg>
            """
    }
}
