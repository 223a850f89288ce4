import IdentityKit

/// The flows behind the admin API (`identity.admin.v1` commands), one per area.
struct AdminCommands: Sendable {
    let secretKeys: SecretKeyRotation
    let userImport: AdminUserImport
    let signingKeys: AdminSigningKeyRotation
    let users: UserAdministration
    let settings: AppSettingsChange
    let hooks: AdminAuthHooks
    let webhooks: WebhookAdministration
}
