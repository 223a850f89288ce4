import Foundation

/// An integer field's declared bounds (`…Range`, generated into its message from the field's
/// `minimum` and `maximum` in proto/) and the one way a value outside them is refused, said alike
/// by the gateway's body reader, the worker carrying the command out, the console's forms and
/// identityctl.
public enum DeclaredBounds {
    /// Why `value` is refused, nil when `range` holds it.
    public static func problem(_ value: Int, in range: ClosedRange<Int>) -> String? {
        range.contains(value) ? nil : message(range)
    }

    public static func message(_ range: ClosedRange<Int>) -> String {
        "must be an integer from \(range.lowerBound) to \(range.upperBound)"
    }
}
