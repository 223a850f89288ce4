import IdentityCredentials
import IdentityKit
import WebAuthn

/// Adding a passkey to a signed-in account (docs/api-contract.md, "Sign-in methods": passkey):
/// creation options, then the authenticator's attestation, checked as a relying party must
/// (WebAuthn §7.1).
struct PasskeyRegistration: Sendable {
    let pool: PGPool
    let users: UserStore
    let ceremony: PasskeyCeremony

    static let maximumNameLength = 100

    func options(_ command: TokenV1.PasskeyRegistrationOptions) throws -> TokenV1.PasskeyOptions {
        let (_, settings) = try ceremony.relyingParty(appId: command.appId)
        guard let user = try users.find(appId: command.appId, uid: command.uid), !user.disabled else {
            throw ServiceError.invalidToken
        }
        let existing = try ceremony.passkeys.credentials(appId: command.appId, uid: command.uid)
        let challenge = ceremony.newChallenge()
        let flowId = try ceremony.passkeys.createFlow(appId: command.appId, purpose: "register", uid: command.uid,
                                                      challengeHash: Digest.sha256(challenge), allowedCredentialIds: [],
                                                      identified: true, lifetimeSeconds: ceremony.lifetimeSeconds)
        let name = user.email ?? user.username ?? user.uid
        let options: JSONValue = .object([
            "challenge": .string(Base64URL.encode(challenge)),
            "rp": .object(["id": .string(settings.rpId), "name": .string(settings.rpName ?? settings.rpId)]),
            "user": .object(["id": .string(Base64URL.encode(ceremony.userHandle(appId: command.appId, uid: command.uid))),
                             "name": .string(name), "displayName": .string(name)]),
            "pubKeyCredParams": .array(PasskeyCeremony.algorithms.map {
                .object(["type": .string("public-key"), "alg": .number(Double($0.rawValue))])
            }),
            "timeout": ceremony.timeoutMilliseconds,
            // The user's own credentials: an authenticator holding one does not make a second.
            "excludeCredentials": .array(existing.map { PasskeyCeremony.descriptor(id: $0.credentialId, transports: $0.transports) }),
            "authenticatorSelection": .object(["residentKey": .string("preferred"), "requireResidentKey": .bool(false),
                                               "userVerification": ceremony.userVerification(settings)]),
            "attestation": .string("none"),
        ])
        return TokenV1.PasskeyOptions(flowId: flowId, optionsJson: options.serialized, hasPasskeys: !existing.isEmpty)
    }

    func finish(_ command: TokenV1.FinishPasskeyRegistration) throws -> TokenV1.PasskeyResult {
        let (relyingParty, _) = try ceremony.relyingParty(appId: command.appId)
        let name = (command.name ?? "").isEmpty ? "Passkey" : command.name ?? "Passkey"
        guard name.count <= Self.maximumNameLength else { throw ServiceError.validationFailed([]) }
        let response: CredentialResponse
        let client: ClientData
        do {
            response = try CredentialResponse.parse(json: command.responseJson)
            client = try ClientData.parse(response.clientDataJSON)
        } catch {
            throw PasskeyCeremony.refusal(error, appId: command.appId, flowId: "")
        }
        guard let attestationObject = response.attestationObject else { throw ServiceError.invalidPasskey }
        let outcome = try pool.transaction { connection -> Result<PasskeyRecord, ServiceError> in
            // The flow is this user's open one with this challenge; spent whatever follows.
            guard case .spent(let flow) = try ceremony.passkeys.spendRegistration(
                appId: command.appId, uid: command.uid, challengeHash: Digest.sha256(client.challenge), on: connection)
            else {
                Log.info("passkey registration without an open flow", ["app_id": command.appId])
                return .failure(.invalidPasskey)
            }
            let registration: RelyingParty.Registration
            do {
                registration = try relyingParty.verifyRegistration(clientDataJSON: response.clientDataJSON,
                                                                   attestationObject: attestationObject,
                                                                   challengeHash: flow.challengeHash)
            } catch {
                return .failure(PasskeyCeremony.refusal(error, appId: command.appId, flowId: flow.id))
            }
            guard registration.credentialId == response.rawId else { return .failure(.invalidPasskey) }
            guard try users.lock(appId: command.appId, uid: command.uid, on: connection) else {
                return .failure(.invalidToken)
            }
            let new = PasskeyStore.NewCredential(
                credentialId: registration.credentialId,
                userHandle: ceremony.userHandle(appId: command.appId, uid: command.uid),
                publicKey: registration.publicKey.encoded, algorithm: registration.publicKey.algorithm.rawValue,
                signCount: Int64(registration.signCount), transports: response.transports,
                backupEligible: registration.backupEligible, backupState: registration.backupState,
                aaguid: registration.aaguid, attestationFormat: registration.format, name: name)
            // Registered already (to anyone in this app): refused, the flow stays spent.
            guard let record = try ceremony.passkeys.insert(new, appId: command.appId, uid: command.uid,
                                                            on: connection) else {
                Log.info("passkey credential id registered already", ["app_id": command.appId, "flow_id": flow.id])
                return .failure(.invalidPasskey)
            }
            try Events.passkeyAdded(appId: command.appId, uid: command.uid, passkeyId: record.id, on: connection)
            try SecurityAlerts().raise(.passkeyAdded, appId: command.appId, uid: command.uid,
                                       context: .init(sessionId: command.sessionId), on: connection)
            return .success(record)
        }
        return TokenV1.PasskeyResult(passkey: PasskeyCeremony.message(try outcome.get()))
    }
}
