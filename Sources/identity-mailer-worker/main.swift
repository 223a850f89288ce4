import IdentityKit
import IdentityMailerWorker

// identity-mailer-worker: renders and delivers mail until SIGTERM or SIGINT.
let configuration = MailerWorkerConfiguration.fromEnvironment()
configuration.common.applyToProcess()
ProcessLifecycle.run("identity-mailer-worker", fields: ["concurrency": String(configuration.concurrency)],
                       operations: configuration.common) {
    try MailerWorker(configuration: configuration)
}
