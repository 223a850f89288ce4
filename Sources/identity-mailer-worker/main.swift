import IdentityKit
import IdentityMailerWorker

// identity-mailer-worker: renders and delivers mail until SIGTERM or SIGINT.
let configuration = MailerWorkerConfiguration.fromEnvironment()
Log.setLevel(configuration.common.logLevel)
ProcessLifecycle.run("identity-mailer-worker", fields: ["concurrency": String(configuration.concurrency)]) {
    try MailerWorker(configuration: configuration)
}
