import IdentityKit

/// The token worker's handler of each command it consumes (`TokenCommandHandlers`, generated
/// from proto/): the declared checks ran in `TokenCommandDispatch` before any of these.
extension CommandRouter: TokenCommandHandlers {
    func handle(_ command: TokenV1.SignUp, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(signUp.handle(command, context))
    }
    func handle(_ command: TokenV1.SignIn, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(signIn.handle(command, context))
    }
    func handle(_ command: TokenV1.GuestSignIn, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(guest.handle(command, context))
    }
    func handle(_ command: TokenV1.DeleteAccount, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(deletion.handle(command))
    }
    func handle(_ command: TokenV1.RegisterDevice, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(devices.handle(command))
    }
    func handle(_ command: TokenV1.SendEmailCode, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try emailCode.send(command, context)
    }
    func handle(_ command: TokenV1.VerifyEmailCode, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(emailCode.verify(command, context))
    }
    func handle(_ command: TokenV1.SendPhoneCode, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try phoneCode.send(command, context)
    }
    func handle(_ command: TokenV1.VerifyPhoneCode, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(phoneCode.verify(command, context))
    }
    func handle(_ command: TokenV1.LinkPhone, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(phoneCode.link(command))
    }
    func handle(_ command: TokenV1.ForgotPassword, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try recovery.forgot(command, context)
    }
    func handle(_ command: TokenV1.CheckPasswordCode, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(recovery.check(command))
    }
    func handle(_ command: TokenV1.ResetPassword, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(recovery.reset(command))
    }
    func handle(_ command: TokenV1.ChangePassword, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(recovery.change(command))
    }
    func handle(_ command: TokenV1.SendEmailVerification, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try verification.send(command, context)
    }
    func handle(_ command: TokenV1.VerifyEmail, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(verification.verify(command))
    }
    func handle(_ command: TokenV1.ProviderSignIn, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(providerSignIn.handle(command, context))
    }
    func handle(_ command: TokenV1.LinkIdentity, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(linking.link(command))
    }
    func handle(_ command: TokenV1.UnlinkIdentity, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(linking.unlink(command))
    }
    func handle(_ command: TokenV1.Refresh, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(refresh.handle(command))
    }
    func handle(_ command: TokenV1.UpdateProfile, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(profile.handle(command))
    }
    func handle(_ command: AdminV1.RotateSecretKey, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(admin.secretKeys.handle(command))
    }
    func handle(_ command: AdminV1.ManageWebhooks, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(admin.webhooks.handle(command))
    }
    func handle(_ command: AdminV1.ImportUsers, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(admin.userImport.handle(command))
    }
    func handle(_ command: AdminV1.SaveAuthHook, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(admin.hooks.handle(command))
    }
    func handle(_ command: AdminV1.ListAuthHooks, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(admin.hooks.handle(command))
    }
    func handle(_ command: AdminV1.DeleteAuthHook, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(admin.hooks.handle(command))
    }
    func handle(_ command: AdminV1.RotateSigningKey, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(admin.signingKeys.handle(command))
    }
    func handle(_ command: TokenV1.VerifyMfa, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(mfaVerification.handle(command, context))
    }
    func handle(_ command: TokenV1.StartMfaEnrolment, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try mfa.start(command)
    }
    func handle(_ command: TokenV1.ConfirmMfaEnrolment, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(mfa.confirm(command))
    }
    func handle(_ command: TokenV1.GetMfaStatus, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(mfa.status(command))
    }
    func handle(_ command: TokenV1.RegenerateBackupCodes, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(mfa.regenerate(command))
    }
    func handle(_ command: TokenV1.DisableMfa, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(mfa.disable(command))
    }
    func handle(_ command: AdminV1.CreateUser, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(admin.users.create(command))
    }
    func handle(_ command: AdminV1.UpdateUser, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(admin.users.update(command))
    }
    func handle(_ command: AdminV1.SetUserDisabled, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(admin.users.setDisabled(command))
    }
    func handle(_ command: AdminV1.DeleteUser, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(admin.users.delete(command))
    }
    func handle(_ command: AdminV1.ListUserPasskeys, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(passkeyManagement.list(command))
    }
    func handle(_ command: AdminV1.ResetUserMfa, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(admin.users.resetMfa(command))
    }
    func handle(_ command: AdminV1.UpdateAppSettings, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(admin.settings.handle(command))
    }
    func handle(_ command: TokenV1.PasskeyRegistrationOptions, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(passkeyRegistration.options(command))
    }
    func handle(_ command: TokenV1.FinishPasskeyRegistration, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(passkeyRegistration.finish(command))
    }
    func handle(_ command: TokenV1.PasskeySignInOptions, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(passkeySignIn.options(command))
    }
    func handle(_ command: TokenV1.VerifyPasskey, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(passkeySignIn.verify(command, context))
    }
    func handle(_ command: TokenV1.ListPasskeys, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(passkeyManagement.list(command))
    }
    func handle(_ command: TokenV1.RenamePasskey, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(passkeyManagement.rename(command))
    }
    func handle(_ command: TokenV1.DeletePasskey, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(passkeyManagement.delete(command))
    }
    func handle(_ command: TokenV1.IssueSessionToken, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(sessionTokens.handle(command, messageAppId: context.messageAppId))
    }
    func handle(_ command: TokenV1.Ping, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(TokenV1.Pong(worker: workerName))
    }
}
