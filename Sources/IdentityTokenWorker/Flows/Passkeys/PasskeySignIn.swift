import IdentityCredentials
import IdentityKit
import WebAuthn

/// Signing in with a passkey (docs/api-contract.md, "Sign-in methods": passkey): request options
/// (for an identifier, or usernameless), then the assertion, checked as a relying party must
/// (WebAuthn §7.2); the session comes from `SignInOutcome` like every first factor's.
struct PasskeySignIn: Sendable {
    let pool: PGPool
    let users: UserStore
    let outcome: SignInOutcome
    let ceremony: PasskeyCeremony

    /// The same work and the same shape whether or not the identifier has an account or
    /// passkeys: a user lookup, a credential query, a flow row, one `allowCredentials` list
    /// (a deterministic decoy when there is nothing real to offer). Only `has_passkeys` differs.
    func options(_ command: TokenV1.PasskeySignInOptions) throws -> TokenV1.PasskeyOptions {
        let (_, settings) = try ceremony.relyingParty(appId: command.appId)
        let challenge = ceremony.newChallenge()
        var allow: [JSONValue] = []
        var allowedIds: [String] = []
        var uid: String?
        let identifier = command.identifier.flatMap { $0.isEmpty ? nil : $0 }
        if let identifier {
            let user = try users.find(appId: command.appId, identifier: identifier)
            let credentials = try ceremony.passkeys.credentials(appId: command.appId, uid: user?.uid ?? "")
            if let user, !user.disabled, !credentials.isEmpty {
                uid = user.uid
                allow = credentials.map { PasskeyCeremony.descriptor(id: $0.credentialId, transports: $0.transports) }
                allowedIds = credentials.map { Base64URL.encode($0.credentialId) }
            } else {
                allow = ceremony.decoyCredentials(appId: command.appId, identifier: identifier)
            }
        }
        let flowId = try ceremony.passkeys.createFlow(appId: command.appId, purpose: "sign_in", uid: uid,
                                                      challengeHash: Digest.sha256(challenge),
                                                      allowedCredentialIds: allowedIds, identified: identifier != nil,
                                                      lifetimeSeconds: ceremony.lifetimeSeconds)
        let options: JSONValue = .object([
            "challenge": .string(Base64URL.encode(challenge)),
            "rpId": .string(settings.rpId),
            "timeout": ceremony.timeoutMilliseconds,
            "userVerification": ceremony.userVerification(settings),
            "allowCredentials": .array(allow),
        ])
        return TokenV1.PasskeyOptions(flowId: flowId, optionsJson: options.serialized, hasPasskeys: uid != nil)
    }

    func verify(_ command: TokenV1.VerifyPasskey, _ context: CommandContext) throws -> TokenV1.AuthResult {
        if let replay = try outcome.replay(context, appId: command.appId, users: users) { return replay }
        let (relyingParty, _) = try ceremony.relyingParty(appId: command.appId)
        let signingKey = try outcome.signingKey(appId: command.appId)
        let response: CredentialResponse
        do {
            response = try CredentialResponse.parse(json: command.responseJson)
        } catch {
            throw PasskeyCeremony.refusal(error, appId: command.appId, flowId: command.flowId)
        }
        guard let authenticatorData = response.authenticatorData, let signature = response.signature else {
            throw ServiceError.invalidPasskey
        }
        let appId = command.appId
        // Failures are returned, not thrown, so the transaction commits what they must leave
        // behind: the spent flow, and the security event of a counter that went backwards.
        let checked = try pool.transaction { connection -> Result<(UserRecord, SignInOutcome.Decision), ServiceError> in
            guard case .spent(let flow) = try ceremony.passkeys.spendSignIn(appId: appId, flowId: command.flowId,
                                                                           on: connection) else {
                Log.info("passkey sign-in for a flow that is unknown, used or expired", ["app_id": appId, "flow_id": command.flowId])
                return .failure(.invalidPasskey)
            }
            func refuse(_ why: String) -> Result<(UserRecord, SignInOutcome.Decision), ServiceError> {
                Log.info("passkey sign-in refused", ["app_id": appId, "flow_id": flow.id, "why": why])
                return .failure(.invalidPasskey)
            }
            guard let credential = try ceremony.passkeys.lockCredential(appId: appId, credentialId: response.rawId,
                                                                        on: connection) else {
                return refuse("credential unknown to this app")
            }
            if flow.identified {
                // Only a credential offered in allowCredentials, of the user the identifier named.
                guard flow.uid == credential.uid, flow.allowedCredentialIds.contains(Base64URL.encode(credential.credentialId))
                else { return refuse("credential not among those offered") }
            } else {
                // Usernameless: the authenticator names the user by the handle it was given.
                guard response.userHandle != nil else { return refuse("no user handle") }
            }
            if let handle = response.userHandle, !Digest.constantTimeEqual(handle, credential.userHandle) {
                return refuse("user handle of another user")
            }
            let key: COSEKey
            let assertion: RelyingParty.Assertion
            do {
                key = try COSEKey.parse(credential.publicKey)
                assertion = try relyingParty.verifyAssertion(clientDataJSON: response.clientDataJSON,
                                                             authenticatorData: authenticatorData, signature: signature,
                                                             challengeHash: flow.challengeHash, credentialKey: key)
            } catch {
                return .failure(PasskeyCeremony.refusal(error, appId: appId, flowId: flow.id))
            }
            let stored = UInt32(clamping: credential.signCount)
            guard RelyingParty.signCountAccepted(stored: stored, received: assertion.signCount) else {
                Log.warning("passkey signature counter did not advance: possible cloned authenticator",
                            ["app_id": appId, "passkey_id": credential.id, "stored": stored,
                             "received": assertion.signCount])
                try Events.passkeySignCountRegressed(appId: appId, uid: credential.uid, passkeyId: credential.id,
                                                     stored: Int64(stored), received: Int64(assertion.signCount),
                                                     on: connection)
                return .failure(.invalidPasskey)
            }
            guard let user = try users.find(appId: appId, uid: credential.uid, on: connection) else {
                return refuse("user gone")
            }
            guard !user.disabled else { return .failure(.userDisabled) }
            try ceremony.passkeys.recordUse(appId: appId, id: credential.id, signCount: Int64(assertion.signCount),
                                            backupState: assertion.backupState, on: connection)
            let decision = try outcome.decide(for: user, by: .passkey(userVerified: assertion.userVerified),
                                              client: command.client, command: context, createdAccount: false,
                                              on: connection)
            return .success((user, decision))
        }
        let (user, decision) = try checked.get()
        return try outcome.answer(decision, for: user, isNewUser: false, signingKey: signingKey)
    }
}
