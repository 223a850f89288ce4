/// How many introspection fields one execution may complete (`Limits.maximumIntrospectionFields`):
/// the introspection data is small, but a document may ask for it many times over (aliases,
/// every type's fields with their types' fields, fragments written once and spread often), and
/// the depth and list-nesting limits alone let through answers of megabytes costing a second
/// of CPU. Past the budget the execution stops (what is left unwinds at once) and the answer
/// is an error with `data: null` (spec 7.1.2: an error during execution that prevents a valid
/// response). Only queries ask for introspection (a mutation has `__typename` at most, which
/// on a user type is not counted), so no side effect is ever lost with the data.
final class IntrospectionBudget: @unchecked Sendable {
    let maximum: Int
    private(set) var spent = 0
    private(set) var exceeded = false

    init(maximum: Int) { self.maximum = maximum }

    /// Counts one field of `objectType` (a field of an introspection type, or `__schema` /
    /// `__type`); false once the budget is spent. Fields run one after another (no lock).
    func take(_ field: String, on objectType: String) -> Bool {
        guard objectType.hasPrefix("__") || field == "__schema" || field == "__type" else { return !exceeded }
        spent += 1
        if spent > maximum { exceeded = true }
        return !exceeded
    }

    var error: GraphQLError {
        GraphQLError("The introspection answer would have more than \(maximum) fields; ask for less at a time.",
                     code: GraphQLError.Code.validationFailed)
    }
}
