/// How many introspection lists of types nest under `__schema` / `__type` (graphql-js's and
/// graphql-core's `MaxIntrospectionDepthRule`, which they recommend for public servers): each
/// of `fields`, `inputFields`, `interfaces` and `possibleTypes` multiplies the answer by the
/// size of a type, so `types { fields { type { ofType { fields { … } } } } }` grows as a power
/// of the schema within the depth limit. Three nested, as those libraries count, are refused;
/// the standard introspection query nests one.
enum IntrospectionLists {
    static let refusedNesting = 3
    static let names: Set<String> = ["fields", "inputFields", "interfaces", "possibleTypes"]
    static let message = "Maximum introspection depth exceeded."

    /// The `__schema` / `__type` fields of the document (in operations and fragments) whose
    /// selections nest `refusedNesting` lists or more, fragments expanded.
    static func tooDeep(_ document: Document, fragments: [String: FragmentDefinition]) -> [FieldNode] {
        var walk = Walk(fragments: fragments)
        var found: [FieldNode] = []
        for selections in document.operations.map(\.selectionSet) + document.fragments.map(\.selectionSet) {
            walk.introspectionFields(in: selections, into: &found)
        }
        return found
    }

    private struct Walk {
        let fragments: [String: FragmentDefinition]
        /// The most lists a fragment nests on one path: each fragment is walked once, however
        /// often it is spread (fragments spreading the next one several times stay linear).
        var nesting: [String: Int] = [:]
        /// Fragments being walked: a cycle (refused by its own rule) counts nothing.
        var open: Set<String> = []

        mutating func introspectionFields(in selections: [Selection], into found: inout [FieldNode]) {
            for selection in selections {
                switch selection {
                case .field(let field) where field.name == "__schema" || field.name == "__type":
                    if deepest(field.selectionSet ?? []) >= IntrospectionLists.refusedNesting { found.append(field) }
                case .field(let field): introspectionFields(in: field.selectionSet ?? [], into: &found)
                case .inlineFragment(_, _, let inner, _): introspectionFields(in: inner, into: &found)
                case .fragmentSpread: break  // the fragment's own fields are found where it is defined
                }
            }
        }

        mutating func deepest(_ selections: [Selection]) -> Int {
            var most = 0
            for selection in selections {
                switch selection {
                case .field(let field):
                    let own = IntrospectionLists.names.contains(field.name) ? 1 : 0
                    most = max(most, own + deepest(field.selectionSet ?? []))
                case .inlineFragment(_, _, let inner, _):
                    most = max(most, deepest(inner))
                case .fragmentSpread(let name, _, _):
                    most = max(most, deepest(fragment: name))
                }
            }
            return most
        }

        mutating func deepest(fragment name: String) -> Int {
            if let known = nesting[name] { return known }
            guard let fragment = fragments[name], open.insert(name).inserted else { return 0 }
            let found = deepest(fragment.selectionSet)
            open.remove(name)
            nesting[name] = found
            return found
        }
    }
}
