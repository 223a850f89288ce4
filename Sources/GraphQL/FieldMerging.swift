/// Field selection merging (spec 5.3.2, `FieldsInSetCanMerge`): fields that answer under one
/// response key — side by side, through inline fragments or fragment spreads, at any depth —
/// must be one question asked more than once: the same field with the same arguments and the
/// same response shape, and their sub-selections, taken together, must merge in turn.
///
/// The spec states the rule pair by pair. Done that way a hostile document is quadratic
/// (thousands of `__typename`) or exponential (fragments that spread fragments under several
/// keys), so this walk is shaped for a bounded cost instead:
/// - "same name and arguments" and "same shape" are equivalences, so each field of a key is
///   compared with the key's first field only, not with every other one;
/// - the sub-selections of the fields that agree are merged into one set and checked once
///   (the spec's `mergedSet`), each fragment expanded once per set;
/// - a merged set already checked (the same fields) is not checked again, wherever the walk
///   meets it — this is what graphql-js's memo of compared fragment pairs buys;
/// - the whole walk has a work budget; past it the document is refused, not executed.
///
/// The schemas here have object types only (no interfaces or unions), so two fields "can be
/// the same object" exactly when they are selected on the same type; fields on different
/// object types need only the same response shape.
struct FieldMerging {
    /// Field visits allowed per document: the standard introspection query costs a few
    /// hundred, a flat 64 KiB document of repeated fields a few thousand.
    static let workBudget = 100_000

    private struct FieldInfo {
        let node: FieldNode
        /// The object type it is selected on.
        let parent: String
        /// Its declared type; nil for an unknown field (reported by another rule).
        let type: TypeRef?
    }

    /// A field as it stands in one merged set, and the field of the set above that it was
    /// merged under (nil at the top): the chain names the response keys in a message.
    private final class Occurrence {
        let field: Int
        let above: Occurrence?
        init(field: Int, above: Occurrence?) {
            self.field = field
            self.above = above
        }
    }

    /// A selection set with its fragments expanded, or the union of several (the spec's
    /// `mergedSet`); each field node at most once, each fragment expanded at most once.
    private struct MergedSet {
        var members: [Occurrence] = []
        var present: Set<Int> = []
        var expandedFragments: Set<String> = []
    }

    private struct NodeKey: Hashable {
        let line: Int
        let column: Int
    }

    private struct Pair: Hashable {
        let first: Int
        let second: Int
        init(_ a: Int, _ b: Int) {
            first = min(a, b)
            second = max(a, b)
        }
    }

    private let schema: Schema
    private let fragments: [String: FragmentDefinition]
    private let maximumNesting: Int
    private let maximumConflicts: Int
    private var fields: [FieldInfo] = []
    /// A field node's identity is where it starts in the document.
    private var fieldIDs: [NodeKey: Int] = [:]
    private var mergeChecked: Set<[Int]> = []
    private var shapeChecked: Set<[Int]> = []
    private var reported: Set<Pair> = []
    private var expandedSomewhere: Set<String> = []
    private var work = 0
    private var exhausted = false
    private var conflicts: [GraphQLError] = []

    /// The conflicts in every operation and every fragment of `document`, each reported once
    /// (at the nearest selection set that holds both fields, as graphql-js does).
    /// Sets nested deeper than `maximumNesting` are not visited: the depth limits refuse such
    /// a document anyway, and the walk's recursion stays shallow.
    static func conflicts(in document: Document, schema: Schema, fragments: [String: FragmentDefinition],
                          maximumNesting: Int, maximumConflicts: Int) -> [GraphQLError] {
        var walk = FieldMerging(schema: schema, fragments: fragments, maximumNesting: maximumNesting,
                                maximumConflicts: maximumConflicts)
        for operation in document.operations {
            let root: String? = switch operation.type {
            case .query: schema.queryType
            case .mutation: schema.mutationType
            case .subscription: nil
            }
            guard let root else { continue }
            walk.checkRoot(operation.selectionSet, parent: root)
        }
        // A fragment the operations spread was checked wherever it was spread (its fields
        // and everything below them sit in those merged sets); the others on their own.
        for fragment in document.fragments where fragments[fragment.name]?.location == fragment.location
            && !walk.expandedSomewhere.contains(fragment.name) {
            walk.expandedSomewhere.insert(fragment.name)
            walk.checkRoot(fragment.selectionSet, parent: fragment.typeCondition)
        }
        return walk.conflicts
    }

    private init(schema: Schema, fragments: [String: FragmentDefinition], maximumNesting: Int, maximumConflicts: Int) {
        self.schema = schema
        self.fragments = fragments
        self.maximumNesting = maximumNesting
        self.maximumConflicts = maximumConflicts
    }

    private var done: Bool { exhausted || conflicts.count >= maximumConflicts }

    private mutating func checkRoot(_ selections: [Selection], parent: String) {
        var set = MergedSet()
        collect(selections, parent: parent, above: nil, into: &set)
        checkMerge(set, depth: 1)
    }

    /// Counts work; false (and one error) once the budget is spent.
    private mutating func spend(_ units: Int) -> Bool {
        guard !exhausted else { return false }
        work += units
        guard work > Self.workBudget else { return true }
        exhausted = true
        conflicts.append(GraphQLError("The document has too many overlapping fields and fragments to check that they merge; simplify it.",
                                      code: GraphQLError.Code.validationFailed))
        return false
    }

    // MARK: sets

    /// Adds the fields `selections` answer with to `set`, in document order, inline fragments
    /// and fragment spreads flattened. A loop, not a recursion: fragments spreading fragments
    /// nest with no syntax limit.
    private mutating func collect(_ selections: [Selection], parent: String, above: Occurrence?, into set: inout MergedSet) {
        var stack: [(selections: ArraySlice<Selection>, parent: String)] = [(selections[...], parent)]
        while let top = stack.last {
            guard let selection = top.selections.first else {
                stack.removeLast()
                continue
            }
            stack[stack.count - 1].selections = top.selections.dropFirst()
            guard spend(1) else { return }
            switch selection {
            case .field(let node):
                let id = fieldID(node, parent: top.parent)
                if set.present.insert(id).inserted { set.members.append(Occurrence(field: id, above: above)) }
            case .inlineFragment(let condition, _, let inner, _):
                stack.append((inner[...], condition ?? top.parent))
            case .fragmentSpread(let name, _, _):
                guard set.expandedFragments.insert(name).inserted, let fragment = fragments[name] else { continue }
                expandedSomewhere.insert(name)
                stack.append((fragment.selectionSet[...], fragment.typeCondition))
            }
        }
    }

    private mutating func fieldID(_ node: FieldNode, parent: String) -> Int {
        let key = NodeKey(line: node.location.line, column: node.location.column)
        if let id = fieldIDs[key] { return id }
        fields.append(FieldInfo(node: node, parent: parent, type: schema.field(node.name, on: parent)?.type))
        fieldIDs[key] = fields.count - 1
        return fields.count - 1
    }

    /// The set's fields by response key, keys in document order.
    private func byResponseKey(_ set: MergedSet) -> [[Occurrence]] {
        var index: [String: Int] = [:]
        var groups: [[Occurrence]] = []
        for occurrence in set.members {
            let key = fields[occurrence.field].node.responseKey
            if let at = index[key] {
                groups[at].append(occurrence)
            } else {
                index[key] = groups.count
                groups.append([occurrence])
            }
        }
        return groups
    }

    /// The union of the sub-selections of `occurrences`.
    private mutating func subSelections(of occurrences: [Occurrence]) -> MergedSet {
        var merged = MergedSet()
        for occurrence in occurrences {
            let info = fields[occurrence.field]
            guard let inner = info.node.selectionSet, let type = info.type else { continue }
            collect(inner, parent: type.namedType, above: occurrence, into: &merged)
        }
        return merged
    }

    // MARK: the rule

    /// `FieldsInSetCanMerge`.
    private mutating func checkMerge(_ set: MergedSet, depth: Int) {
        guard !set.members.isEmpty, depth <= maximumNesting, !done, spend(set.members.count),
              mergeChecked.insert(set.members.map(\.field).sorted()).inserted else { return }
        for group in byResponseKey(set) {
            // Fields on the same object type must be the same field; the sub-selections of
            // those that agree make one merged set, checked in turn (for a lone field that
            // is its own selection set: every set of the document is reached this way).
            var byParent: [String: [Occurrence]] = [:]
            var parents: [String] = []
            for occurrence in group {
                let parent = fields[occurrence.field].parent
                if byParent[parent] == nil { parents.append(parent) }
                byParent[parent, default: []].append(occurrence)
            }
            for parent in parents {
                let same = byParent[parent]!
                let reference = same[0]
                var agreeing = [reference]
                var differing: [Occurrence] = []
                for other in same.dropFirst() {
                    if let reason = difference(fields[reference.field], fields[other.field], sameParent: true) {
                        report(reason, reference, other)
                        differing.append(other)
                    } else {
                        agreeing.append(other)
                    }
                }
                checkMerge(subSelections(of: agreeing), depth: depth + 1)
                // A field already in conflict still has its own selection set to check.
                for other in differing { checkMerge(subSelections(of: [other]), depth: depth + 1) }
            }
            // Fields on different object types never answer for the same object: only their
            // response shapes must agree (`SameResponseShape`).
            if parents.count > 1 { checkShape(group, depth: depth) }
        }
    }

    /// `SameResponseShape` for every pair of `group` (one response key), through sub-selections.
    private mutating func checkShape(_ group: [Occurrence], depth: Int) {
        guard group.count > 1, depth <= maximumNesting, !done, spend(group.count) else { return }
        let typed = group.filter { fields[$0.field].type != nil }
        guard let reference = typed.first else { return }
        var agreeing = [reference]
        for other in typed.dropFirst() {
            if let reason = difference(fields[reference.field], fields[other.field], sameParent: false) {
                report(reason, reference, other)
            } else {
                agreeing.append(other)
            }
        }
        guard agreeing.count > 1 else { return }
        let merged = subSelections(of: agreeing)
        guard !merged.members.isEmpty, shapeChecked.insert(merged.members.map(\.field).sorted()).inserted else { return }
        for subgroup in byResponseKey(merged) { checkShape(subgroup, depth: depth + 1) }
    }

    /// Why `a` and `b` cannot answer under one key; nil when they can (sub-selections aside).
    private func difference(_ a: FieldInfo, _ b: FieldInfo, sameParent: Bool) -> String? {
        if sameParent {
            if a.node.name != b.node.name { return "\"\(a.node.name)\" and \"\(b.node.name)\" are different fields" }
            if Self.canonicalArguments(a.node.arguments) != Self.canonicalArguments(b.node.arguments) {
                return "they have differing arguments"
            }
        }
        if let typeA = a.type, let typeB = b.type, shapesDiffer(typeA, typeB) {
            return "they return conflicting types \"\(typeA)\" and \"\(typeB)\""
        }
        return nil
    }

    /// Lists and non-nulls must match level for level; leaf types must be the same type;
    /// object types are compared through their sub-selections instead.
    private func shapesDiffer(_ a: TypeRef, _ b: TypeRef) -> Bool {
        switch (a, b) {
        case (.list(let x), .list(let y)), (.nonNull(let x), .nonNull(let y)): shapesDiffer(x, y)
        case (.named(let x), .named(let y)): (isLeaf(x) || isLeaf(y)) && x != y
        default: true
        }
    }

    private func isLeaf(_ name: String) -> Bool { schema.types[name]?.isLeaf ?? true }

    /// Arguments as comparable text: argument order and input-object field order do not count.
    private static func canonicalArguments(_ arguments: [Argument]) -> [String] {
        arguments.map { $0.name + ":" + canonical($0.value) }.sorted()
    }

    private static func canonical(_ value: ValueNode) -> String {
        switch value {
        case .list(let items): "[" + items.map(canonical).joined(separator: ",") + "]"
        case .object(let fields): "{" + fields.map { $0.name + ":" + canonical($0.value) }.sorted().joined(separator: ",") + "}"
        default: Coercion.print(value)
        }
    }

    /// One error per conflicting pair of fields, named from the nearest selection set that
    /// holds both: `Fields "a" conflict because subfields "b" conflict because …`, located at
    /// both chains of fields from there down.
    private mutating func report(_ reason: String, _ a: Occurrence, _ b: Occurrence) {
        guard !done, reported.insert(Pair(a.field, b.field)).inserted else { return }
        var chainA = [a], chainB = [b]
        var upA = a.above, upB = b.above
        while let above = upA, let other = upB, above.field != other.field {
            chainA.insert(above, at: 0)
            chainB.insert(other, at: 0)
            upA = above.above
            upB = other.above
        }
        let keys = chainA.map { fields[$0.field].node.responseKey }
        var message = "Fields \"\(keys[0])\" conflict because "
        for key in keys.dropFirst() { message += "subfields \"\(key)\" conflict because " }
        message += reason + ". Use different aliases on the fields to fetch both if this was intentional."
        let locations = (chainA + chainB).map { fields[$0.field].node.location }
        conflicts.append(GraphQLError(message, code: GraphQLError.Code.validationFailed, locations: locations))
    }
}
