import Foundation
import IdentityKit

/// An app's Connect page (docs/console.md, "Pages"): what a client or a backend needs to reach
/// the app, copy-ready, for every member: the app key (public: it ships in the app's clients),
/// the issuer and the JWKS and discovery URLs a backend verifies tokens with, and first lines
/// for curl, the Swift SDK and the TypeScript client. Nothing secret is on it: the secret key is
/// shown once, by its rotation (Keys).
enum ConsoleConnect {
    static func page(user: ConsoleSite.Session, membership: ConsoleStore.Membership, app: AppRecord) -> String {
        // The discovery document's own values, so this page and `/.well-known/…` never differ.
        let base = DiscoveryRoutes.baseURL(of: app)
        let metadata = DiscoveryRoutes.metadata(of: app)
        let jwks: String = if case .string(let uri)? = metadata["jwks_uri"] { uri } else { "" }
        let rows: [(String, String, String)] = [
            ("app-id", "App id", app.id),
            ("app-key", "App key (X-App-Key; public, it ships in your clients)", app.appKey),
            ("base-url", "API base URL", base),
            ("issuer", "Issuer (the tokens' iss)", app.issuer),
            ("jwks", "JWKS (verify access tokens offline)", jwks),
            ("discovery", "Discovery (RFC 8414)", DiscoveryRoutes.metadataURL(of: app)),
            ("openid", "Discovery (OpenID Connect's path)", app.issuer + "/.well-known/openid-configuration"),
        ]
        var html = "<h1>Connect</h1><p class=\"hint\">What your clients and your backend need to reach "
            + "\(ConsoleHTML.escape(membership.appName)). The secret key of your backend is shown once, when it is "
            + "made: Keys → Rotate secret key.</p><table id=\"connect\"><tbody>"
        for (id, label, value) in rows {
            html += "<tr><th scope=\"row\">\(ConsoleHTML.escape(label))</th>"
                + "<td><code id=\"\(id)\">\(ConsoleHTML.escape(value))</code></td></tr>"
        }
        html += "</tbody></table>"
        let snippets: [(String, String, String)] = [
            ("curl", "curl", """
                curl -X POST '\(base)/v1/auth/sign-up' \\
                     -H 'X-App-Key: \(app.appKey)' \\
                     -H 'Content-Type: application/json' \\
                     -d '{"email": "jane@example.com", "password": "a long passphrase"}'
                """),
            ("swift", "Swift (IdentityClient)", """
                import IdentityClient

                let identity = IdentityClient(
                    baseURL: URL(string: "\(base)")!,
                    appKey: "\(app.appKey)",
                    storage: KeychainTokenStorage(service: "com.example.app.identity"))
                """),
            ("typescript", "TypeScript (@identity/client)", """
                import { IdentityClient } from "@identity/client";

                const identity = new IdentityClient({
                  baseUrl: "\(base)",
                  appKey: "\(app.appKey)",
                });
                """),
        ]
        for (id, title, code) in snippets {
            html += "<h2>\(ConsoleHTML.escape(title))</h2><pre class=\"snippet\"><code id=\"snippet-\(id)\">\(ConsoleHTML.escape(code))</code></pre>"
        }
        return ConsoleHTML.page(title: "Connect", user: user, app: (membership.appId, membership.appName, "connect"), body: html)
    }
}
