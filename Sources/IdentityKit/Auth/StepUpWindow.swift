/// How recent a sign-in must be to count as fresh proof (PRODUCT.md, "MFA": step-up): the
/// gateway's pipeline and the token worker's own check read this one number.
public enum StepUpWindow {
    public static let seconds = 300
}
