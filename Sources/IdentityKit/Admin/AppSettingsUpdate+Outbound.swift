import Foundation

/// The URLs an update lets an app point the service at (`OutboundAddressPolicy`): the SMS API
/// URL and the FCM service account's `token_uri` (the mailer takes FCM's token URL from its own
/// configuration, never from the file, but a stored URL is one a later change could use).
extension AppSettingsUpdate {
    /// (setting, the field inside it when the URL is part of a larger value, URL).
    var outboundURLs: [(setting: String, field: String?, url: String)] {
        var urls: [(setting: String, field: String?, url: String)] = []
        if let url = sms.apiURL, !url.isEmpty { urls.append(("sms_api_url", nil, url)) }
        if let json = fcmServiceAccountJSON, let account = FCMServiceAccount.parse(json) {
            urls.append(("fcm_service_account", "token_uri", account.tokenURI))
        }
        return urls
    }

    /// From the URLs' text (part of `problems`, so the gateway's check too); a setting already
    /// refused for its shape (`skipping`) gets no second message.
    func outboundProblems(skipping: Set<String>) -> [(setting: String, message: String)] {
        let policy = OutboundAddressPolicy.current
        return outboundURLs.compactMap { target in
            guard !skipping.contains(target.setting), let problem = policy.problem(url: target.url) else { return nil }
            return (target.setting, target.field.map { "\($0) \(problem)" } ?? problem)
        }
    }

    /// Where the URLs' hosts resolve now: run by `apply` (the token worker, identityctl) once
    /// `problems` found nothing, not by `problems`, which the gateway runs on an HTTP thread.
    package func outboundLookupProblems() -> [(setting: String, message: String)] {
        let policy = OutboundAddressPolicy.current
        return outboundURLs.compactMap { target in
            guard let problem = policy.lookupProblem(url: target.url) else { return nil }
            return (target.setting, target.field.map { "\($0) \(problem)" } ?? problem)
        }
    }
}
