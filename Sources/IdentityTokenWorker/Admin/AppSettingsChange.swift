import Foundation
import IdentityCredentials
import IdentityKit

/// `identity.admin.v1.UpdateAppSettings`: the admin API's app settings, through the same
/// `AppSettingsUpdate` as `identityctl apps settings`, as the tenant: held to the operator's
/// ceilings (`OperatorLimits`, this worker's environment), which alone decide whether a limit
/// may be turned off (only one whose ceiling is `none`), and a domain is only requested.
struct AppSettingsChange: Sendable {
    let pool: PGPool
    let masterKey: [UInt8]
    let limits: OperatorLimits

    func handle(_ command: AdminV1.UpdateAppSettings) throws -> AdminV1.AppSettings {
        guard let body = JSONValue.parse(Data(command.settingsJson.utf8)) else {
            throw ServiceError.validationFailed([.init(location: "body", message: "must be a JSON object")])
        }
        let (update, problems) = AppSettingsUpdate.parse(body)
        guard problems.isEmpty else { throw ServiceError.validationFailed(problems) }
        guard let settings = try update.apply(appId: command.appId, pool: pool, masterKey: masterKey, offAllowed: true,
                                                   authority: .tenant(limits))
        else { throw ServiceError.notFound }
        return AdminV1.AppSettings(settingsJson: settings.serialized)
    }
}
