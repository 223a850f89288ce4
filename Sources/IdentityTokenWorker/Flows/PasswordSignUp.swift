import IdentityCredentials
import IdentityKit

/// `identity.token.v1.SignUp`: a new account with email and password, signed in at once; with
/// a guest's token, that guest becomes the account (409 `auth/account-exists` when the email
/// is taken).
struct PasswordSignUp: Sendable {
    let pool: PGPool
    let users: UserStore
    let hasher: PasswordHasher
    let outcome: SignInOutcome

    func handle(_ command: TokenV1.SignUp, _ context: CommandContext) throws -> TokenV1.AuthResult {
        if let replay = try outcome.replay(context, appId: command.appId, users: users) { return replay }
        // The gateway already checked the shape; these checks keep the worker safe on its own.
        if let problem = PasswordPolicy.problem(with: command.password) { throw ServiceError.weakPassword(problem) }
        guard EmailAddress.isValid(command.email) else { throw ServiceError.invalidEmail() }
        let locale = try MessageLanguages.checked(command.locale)
        let signingKey = try outcome.signingKey(appId: command.appId)
        let hash = try hasher.hash(command.password)
        let (user, decision) = try pool.transaction { connection in
            let user: UserRecord
            if let guest = try GuestUpgrade.guest(command.guestUid, appId: command.appId, users: users, on: connection) {
                var upgrade = UserStore.Upgrade()
                upgrade.email = command.email
                upgrade.username = command.username
                upgrade.firstName = command.firstName
                upgrade.lastName = command.lastName
                upgrade.passwordHash = hash
                upgrade.locale = locale
                user = try GuestUpgrade.apply(upgrade, to: guest, users: users, on: connection)
            } else {
                do {
                    var new = UserStore.NewUser(email: command.email, username: command.username,
                                                firstName: command.firstName, lastName: command.lastName, passwordHash: hash)
                    new.locale = locale
                    user = try outcome.issuer.hooks.createAccount(appId: command.appId, method: "password", new: new,
                                                                  ip: command.client?.ip, on: connection) {
                        try users.insert(new, appId: command.appId, on: connection)
                    }
                } catch UserStore.Conflict.email {
                    throw ServiceError.emailAlreadyInUse
                } catch UserStore.Conflict.username {
                    throw ServiceError.usernameTaken
                }
                try Events.userCreated(appId: user.appId, uid: user.uid, email: user.email, on: connection)
            }
            return (user, try outcome.decide(for: user, by: .password, client: command.client, command: context,
                                               createdAccount: command.guestUid == nil || user.uid != command.guestUid,
                                               on: connection))
        }
        return try outcome.answer(decision, for: user, isNewUser: command.guestUid == nil || user.uid != command.guestUid,
                                 signingKey: signingKey, countedAsSignIn: false)
    }
}
