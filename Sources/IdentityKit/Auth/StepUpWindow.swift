/// How recent a sign-in must be to count as fresh proof (docs/api-contract.md, "Account": a
/// session signed in under 5 minutes ago): the gateway's pipeline and the token worker's own
/// check read this one number.
public enum StepUpWindow {
    public static let seconds = 300
}
