import Foundation
import IdentityKit
import IdentityMailerWorker

// identity-mailer-worker: renders and delivers mail until SIGTERM or SIGINT.
let configuration = MailerWorkerConfiguration.fromEnvironment()
Log.setLevel(configuration.common.logLevel)
do {
    let worker = try MailerWorker(configuration: configuration)
    worker.start()
    Log.info("identity-mailer-worker started", ["concurrency": String(configuration.concurrency)])
    ShutdownSignal.wait()
    let counters = worker.snapshot
    Log.info("identity-mailer-worker stopping", ["sent": String(counters.sent), "retried": String(counters.retried),
                                                  "dead_lettered": String(counters.deadLettered)])
    worker.stop()
} catch {
    Log.error("identity-mailer-worker failed to start", ["error": String(describing: error)])
    exit(1)
}
