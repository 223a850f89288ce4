import Foundation

extension AppSettingsUpdate {
    /// Whether this change sets something that can hand the app's accounts or its mail to
    /// someone: the sign-in providers and what they are trusted with (a Firebase project's
    /// verified emails sign in as the existing user of that address), where browsers and links
    /// reach the app (origins, domains, path prefix, profile, deep link, passkeys' relying
    /// party), who sends its messages and what they say (sender, texts, SMS account, push
    /// credentials), and whether users hear of changes to their account (security alerts).
    /// A console session changes these only when it signed in within `StepUpWindow.seconds`,
    /// checked by the console and again by the token worker (`CallerAuthority`); the app's
    /// secret key needs no such proof, being the backend's own credential.
    public var handsOverAccounts: Bool {
        let providers: [Any?] = [googleClientIds, appleBundleIds, appleServicesIds, appleTeamId, appleKeyId,
                                 applePrivateKeyPEM, firebaseProjectId, firebaseTrustEmailVerified]
        let reach: [Any?] = [allowedOrigins, domains, pathPrefix, profile, appleNonce, deepLinkURL, webauthnRpId,
                             webauthnOrigins]
        let messages: [Any?] = [mailFromName, mailFromAddress, apnsTeamId, apnsKeyId, apnsTopic, apnsPrivateKeyPEM,
                                fcmServiceAccountJSON, securityAlerts, sms.apiURL, sms.accountSid, sms.authToken,
                                sms.fromNumber, sms.messagingServiceSid]
        // Not among them: lifetimes, rate limits, the SMS breaker and calling codes, metadata,
        // the default language: they bound or shape what the app does, and hand nothing over.
        return (providers + reach + messages).contains { $0 != nil } || !mailTemplates.isEmpty
    }
}
