import IdentityCredentials
import IdentityKit

/// The one way the token worker's sign-up paths make an account (password, provider, email
/// code, phone code, guest): the app's `before_sign_up` hook is asked first, inside the flow's
/// transaction, so a refusal (403 `auth/hook-refused`) or a closed failure leaves nothing
/// behind; the `app_metadata` it answers is the new account's.
extension AuthHookGate {
    /// `method`: password, provider:<name>, email_code, phone, guest. `create` inserts the row.
    func createAccount(appId: String, method: String, new: UserStore.NewUser?, ip: String?, on connection: PGConnection,
                       _ create: () throws -> UserRecord) throws -> UserRecord {
        var described: [String: JSONValue] = ["is_guest": .bool(new == nil)]
        if let new {
            described["email"] = new.email.map(JSONValue.string) ?? .null
            described["email_verified"] = .bool(new.emailVerified)
            described["phone"] = new.phone.map(JSONValue.string) ?? .null
            described["username"] = new.username.map(JSONValue.string) ?? .null
            described["first_name"] = new.firstName.map(JSONValue.string) ?? .null
            described["last_name"] = new.lastName.map(JSONValue.string) ?? .null
            described["locale"] = new.locale.map(JSONValue.string) ?? .null
        }
        let metadata = try beforeSignUp(appId: appId, method: method, user: described, ip: ip, on: connection)
        var user = try create()
        if let metadata {
            try connection.query("UPDATE users SET app_metadata = $3::jsonb WHERE app_id = $1 AND uid = $2",
                                 [appId, user.uid, metadata.serialized])
            user.appMetadataJSON = metadata.serialized
        }
        return user
    }
}
