import IdentityKit
import IdentityMailerWorker

// identity-mailer-worker: renders and delivers mail until SIGTERM or SIGINT.
// The log format first: reading the configuration may log.
CommonConfiguration.applyLogSettingsFromEnvironment()
let configuration = MailerWorkerConfiguration.fromEnvironment()
configuration.common.applyToProcess()
ProcessLifecycle.run("identity-mailer-worker", exports: .mailerWorker, fields: ["concurrency": configuration.concurrency],
                     operations: configuration.common) {
    try MailerWorker(configuration: configuration)
}
