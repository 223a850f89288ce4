import Foundation
import IdentityKit
import IdentityOutbound

/// `identityctl apps domains verify APP_ID DOMAIN`: the operator's check that whoever runs the
/// app also runs the domain it requested (`AppDomainStore`). The app's request made a random
/// token (shown in its settings as `domains_pending`); the domain must serve it at
/// `https://DOMAIN/.well-known/identity-domain-verification`, one line of the file. A random
/// token kept with the request, rather than one derived from a key, so the check needs no secret
/// and a new request is a new token. Only the operator runs this: no tenant's call makes the
/// service fetch anything. The host is still the tenant's word, so the URL is fixed but for the
/// host, no redirect is followed, and the answer is only compared, never shown.
enum DomainVerification {
    static let defaultTemplate = "https://{domain}/.well-known/identity-domain-verification"
    /// A verification file is a line or a few; anything longer is not one.
    static let maxBodyBytes = 64 * 1024

    enum Outcome {
        case verified(url: String, already: Bool)
        case refused(String)
    }

    /// The URL of the file for `host`: the template's `{domain}` replaced. Tests point the
    /// template at a local server (`IDENTITY_DOMAIN_VERIFICATION_URL_TEMPLATE=http://127.0.0.1:PORT/{domain}/…`).
    static func url(template: String, host: String) -> String {
        template.replacingOccurrences(of: "{domain}", with: host)
    }

    /// Whether `template` is a usable URL template (http or https, with `{domain}`).
    static func isValid(template: String) -> Bool {
        let lowered = template.lowercased()
        return template.contains("{domain}") && (lowered.hasPrefix("https://") || lowered.hasPrefix("http://"))
    }

    /// Whether `body` holds `token` as one of its lines (spaces and a final newline do not matter).
    static func holds(_ body: Data, token: String) -> Bool {
        guard body.count <= maxBodyBytes else { return false }
        return String(decoding: body, as: UTF8.self).split(whereSeparator: \.isNewline)
            .contains { $0.trimmingCharacters(in: .whitespaces) == token }
    }

    static func verify(appId: String, domain: String, template: String, pool: PGPool) throws -> Outcome {
        guard let host = ClientProfile.normalizedHost(domain) else { return .refused("\(domain) is not a host (host or host:port)") }
        let store = AppDomainStore(pool: pool)
        guard let request = try store.domain(appId: appId, host: host) else {
            return .refused("app \(appId) has not requested \(host) (the admin API's settings: \"domains\")")
        }
        let url = url(template: template, host: host)
        if request.verified { return .verified(url: url, already: true) }
        guard let token = request.token else { return .refused("\(host) has no verification token") }
        OutboundHTTP.initialize()
        let response: OutboundHTTP.Response
        do {
            response = try OutboundHTTP(timeoutMilliseconds: 5000).get(url)
        } catch {
            return .refused("\(url) could not be fetched: \(error)")
        }
        guard response.status == 200 else { return .refused("\(url) answered \(response.status), not 200") }
        guard holds(response.body, token: token) else {
            return .refused("\(url) does not hold the token \(host) was given for app \(appId) (its domains_pending)")
        }
        do {
            guard try store.markVerified(appId: appId, host: host) else {
                return .refused("app \(appId) no longer requests \(host)")
            }
        } catch StoreError.uniqueViolation {
            let holder = try store.verifiedApp(host: host) ?? "another app"
            return .refused("\(host) is verified for app \(holder): remove it there first")
        }
        return .verified(url: url, already: false)
    }
}
