import Foundation

/// `GET /api/docs`: the API reference, a page that renders `/api/docs/openapi.json` with its own
/// script and stylesheet (web/api-reference/, embedded by tools/apirefgen.py into
/// `APIReferenceAssets.swift`, so the binary needs no files beside it and the page works
/// air-gapped). Problem `type`s (`/api/docs#error-<code>`) land on the page's section of that
/// code, made from the document's `x-error-catalogue`.
enum APIReference {
    struct Asset: Sendable {
        let mediaType: String
        let text: String
    }

    /// The page and its two files, by path.
    static let assets: [(path: String, asset: Asset)] = [
        ("/api/docs", page),
        ("/api/docs/reference.js", script),
        ("/api/docs/reference.css", stylesheet),
    ]

    /// Only this origin's own script and stylesheet may run (no inline code, no eval), the page
    /// may talk only to this origin, and nothing may frame it: a token typed into it cannot be
    /// sent elsewhere.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        + "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    static func response(_ asset: Asset) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", asset.mediaType),
                                            ("Content-Security-Policy", contentSecurityPolicy),
                                            ("X-Content-Type-Options", "nosniff"),
                                            ("Cache-Control", "no-cache"),
                                            ("Referrer-Policy", "no-referrer")],
                     body: Data(asset.text.utf8))
    }
}
