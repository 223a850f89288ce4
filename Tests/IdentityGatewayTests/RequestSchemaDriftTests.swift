import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// Where an operation's body is read by generated code (its fields' rules in proto/) but the API
/// document still shows a shared, hand-written schema, the two must say the same: the same
/// required fields, the same properties, the same length bounds, formats, patterns and values. A field
/// rule changed in proto/ without the document (or the reverse) fails here.
final class RequestSchemaDriftTests: XCTestCase {
    func testSharedRequestSchemasAgreeWithTheGeneratedReaders() throws {
        let document = try XCTUnwrap(OpenAPIDocument.source(routes: try servedRoutesForTests()))
        var compared = 0
        for declared in DeclaredOperation.all {
            guard let name = declared.document.request, let text = declared.document.generatedRequest else { continue }
            let generated = try XCTUnwrap(JSONValue.parse(Data(text.utf8)), declared.id)
            let shared = try XCTUnwrap(document["components"]?["schemas"]?[name], "\(declared.id): no schema \(name)")
            XCTAssertEqual(Self.names(shared["required"]), Self.names(generated["required"]), "\(declared.id) required")
            guard case .object(let sharedProperties)? = shared["properties"],
                  case .object(let generatedProperties)? = generated["properties"] else {
                XCTFail("\(declared.id): properties"); continue
            }
            XCTAssertEqual(Set(sharedProperties.keys), Set(generatedProperties.keys), "\(declared.id) properties")
            for (field, rules) in generatedProperties {
                for rule in ["maxLength", "minLength", "format", "pattern", "enum"] {
                    XCTAssertEqual(sharedProperties[field]?[rule], rules[rule], "\(declared.id).\(field) \(rule)")
                }
            }
            compared += 1
        }
        // The generated readers of the email and password operations are compared at least.
        XCTAssertGreaterThanOrEqual(compared, 7)
    }

    private static func names(_ value: JSONValue?) -> Set<String> {
        guard case .array(let items)? = value else { return [] }
        return Set(items.compactMap { if case .string(let name) = $0 { return name } else { return nil } })
    }
}
