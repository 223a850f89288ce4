import Foundation

extension IdentityClient {
    /// The user's second-factor state.
    public func mfaStatus() async throws -> MFAStatus {
        try Transport.data(MFAStatus.self, of: try await send(.mfaStatus()))
    }

    /// Starts TOTP enrolment: show the QR code (or the secret), then call ``confirmTOTP(code:)``.
    public func enrollTOTP() async throws -> TOTPEnrollment {
        try Transport.data(TOTPEnrollment.self, of: try await send(.startTotp()))
    }

    /// Confirms TOTP enrolment with a code from the authenticator app; returns the ten backup
    /// codes, shown once.
    public func confirmTOTP(code: String) async throws -> [String] {
        struct Codes: Decodable { let backup_codes: [String] }
        return try Transport.data(Codes.self, of: try await send(.confirmTotp(code: code))).backup_codes
    }

    /// Starts the email second factor: a code is emailed; confirm it with ``confirmEmailMFA(code:)``.
    public func enrollEmailMFA() async throws {
        _ = try await send(.startEmailMfa())
    }

    /// Confirms the email second factor; returns the backup codes.
    public func confirmEmailMFA(code: String) async throws -> [String] {
        struct Codes: Decodable { let backup_codes: [String] }
        return try Transport.data(Codes.self, of: try await send(.confirmEmailMfa(code: code))).backup_codes
    }

    /// Starts the SMS second factor (the account needs a verified phone, `POST /v1/me/phone`): a code
    /// is texted to it; confirm it with ``confirmSMSMFA(code:)``.
    public func enrollSMSMFA() async throws {
        _ = try await send(.startSmsMfa())
    }

    /// Confirms the SMS second factor; returns the backup codes.
    public func confirmSMSMFA(code: String) async throws -> [String] {
        struct Codes: Decodable { let backup_codes: [String] }
        return try Transport.data(Codes.self, of: try await send(.confirmSmsMfa(code: code))).backup_codes
    }

    /// A fresh set of ten backup codes; the old ones stop working.
    public func regenerateBackupCodes() async throws -> [String] {
        struct Codes: Decodable { let backup_codes: [String] }
        return try Transport.data(Codes.self, of: try await send(.regenerateBackupCodes())).backup_codes
    }

    /// Turns MFA off, with a current code (TOTP, backup, or the mailed or texted one).
    public func disableMFA(code: String) async throws {
        _ = try await send(.disableMfa(code: code))
    }
}
