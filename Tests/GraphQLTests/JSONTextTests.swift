import XCTest
@testable import GraphQL

/// The answer's text: strings that need no escape are copied whole, the rest scalar by scalar;
/// both must write what the scalar-by-scalar loop always wrote.
final class JSONTextTests: XCTestCase {
    func testStringsAreEscapedWhateverPathTheyTake() {
        let cases: [(String, String)] = [
            ("plain name_1", #""plain name_1""#),
            ("é😀 — ok", #""é😀 — ok""#),  // U+2014 leads with 0xE2 like U+2028: the loop, unescaped
            ("q\"b\\s", #""q\"b\\s""#),
            ("a\nb\rc\td", #""a\nb\rc\td""#),
            ("<script>", #""\u003cscript>""#),
            ("\u{2028}\u{2029}", #""\u2028\u2029""#),
            ("\u{1}\u{1f}", #""\u0001\u001f""#),
            ("", #""""#),
        ]
        for (text, json) in cases {
            XCTAssertEqual(GraphQLValue.string(text).json, json, text)
            XCTAssertEqual(GraphQLValue.object([(text, .null)]).json, "{" + json + ":null}", text)
        }
    }

    func testTypeReferencesParseBackFromTheirText() {
        for type: TypeRef in [.named("User"), .nonNull(.list(.nonNull(.named("String")))), .list(.list(.named("__Type")))] {
            XCTAssertEqual(TypeRef.parse(Substring(type.description))?.description, type.description)
        }
        for text in ["", "[User", "User!!", "Us-er", "Usér", "[]"] {
            XCTAssertNil(TypeRef.parse(Substring(text)), text)
        }
    }
}
