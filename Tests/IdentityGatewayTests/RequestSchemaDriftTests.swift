import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// The request schemas of operations whose bodies are read by generated code come from proto/
/// alone: the document's component is the generated one, and no hand-written component of the
/// same name is left to drift from it. Each such body has an example made of its fields'.
final class RequestSchemaDriftTests: XCTestCase {
    func testGeneratedRequestSchemasAreTheDocumentsAndHaveNoHandWrittenTwin() throws {
        let base = try XCTUnwrap(JSONValue.parse(Data(OpenAPIDocument.json.utf8), maximumBytes: 1 << 20))
        let document = try XCTUnwrap(OpenAPIDocument.source(routes: try servedRoutesForTests()))
        XCTAssertGreaterThanOrEqual(DeclaredOperation.requestSchemas.count, 8)
        for (name, text) in DeclaredOperation.requestSchemas {
            XCTAssertNil(base["components"]?["schemas"]?[name], "\(name) is generated; remove its hand-written copy")
            XCTAssertEqual(document["components"]?["schemas"]?[name], JSONValue.parse(Data(text.utf8)), name)
        }
    }

    func testEveryGeneratedBodyHasAnExampleThatItsSchemaAllows() throws {
        let document = try XCTUnwrap(OpenAPIDocument.source(routes: try servedRoutesForTests()))
        var checked = 0
        for declared in DeclaredOperation.all where declared.document.generatedRequest != nil {
            let media = document["paths"]?[declared.pattern]?[declared.method.lowercased()]?["requestBody"]?["content"]?["application/json"]
            guard case .object(let example)? = media?["example"] else {
                XCTFail("\(declared.id): no example"); continue
            }
            let schema = try XCTUnwrap(JSONValue.parse(Data(declared.document.generatedRequest!.utf8)))
            guard case .array(let required)? = schema["required"] else { continue }
            for case .string(let field) in required {
                XCTAssertNotNil(example[field], "\(declared.id): the example lacks required \(field)")
            }
            checked += 1
        }
        XCTAssertGreaterThanOrEqual(checked, 14)
    }
}

/// Values a body field allows that the code also knows: the declaration and the code agree.
final class DeclaredValuesTests: XCTestCase {
    func testTheSigningAlgorithmsARotationAllowsAreTheOnesWeSignWith() throws {
        let text = try XCTUnwrap(DeclaredOperation.requestSchemas["RotateSigningKeyRequest"])
        let schema = try XCTUnwrap(JSONValue.parse(Data(text.utf8)))
        let declared = schema["properties"]?["alg"]?["enum"]
        XCTAssertEqual(declared, .array(SigningAlgorithm.allCases.map { .string($0.rawValue) } + [.null]))
    }
}
