import Foundation
import XCTest

@testable import IdentityKit

/// The one list of environment variables (`ConfigurationVariables.all`) against the code that
/// reads them: a variable read anywhere in Sources/ and missing from the list (so from
/// docs/configuration.md) fails here, as does a listed one nobody reads, a process module reading
/// a variable the list does not say it reads, or a literal default the list contradicts.
final class ConfigurationVariablesTests: XCTestCase {
    /// A call of the environment reader with a literal name, or a direct look into the process's
    /// environment (tools/configdoc.py uses the same pattern).
    static let read = try! NSRegularExpression(
        pattern: #"\b(string|int|raw|key32|secret|providerURL|flag)\(\s*"(IDENTITY_[A-Z0-9_]+)"|environment\[\s*"(IDENTITY_[A-Z0-9_]+)"\s*\]"#)
    /// A read whose default is a literal string (without interpolation) or integer.
    static let literalDefault = try! NSRegularExpression(
        pattern: #"\b(?:string|int|providerURL)\(\s*"(IDENTITY_[A-Z0-9_]+)",\s*default:\s*(?:"([^"\\]*)"|([0-9_]+))\s*[,)]"#)

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The names `text` reads; `key32` and `secret` also read `<name>_FILE`.
    static func reads(in text: String) -> [String] {
        let range = NSRange(text.startIndex..., in: text)
        return read.matches(in: text, range: range).flatMap { match -> [String] in
            let nameGroup = match.range(at: 2).location != NSNotFound ? 2 : 3
            guard let name = Range(match.range(at: nameGroup), in: text).map({ String(text[$0]) }) else { return [] }
            let call = Range(match.range(at: 1), in: text).map { String(text[$0]) }
            return call == "key32" || call == "secret" ? [name, name + "_FILE"] : [name]
        }
    }

    /// The process a module belongs to alone; nil for a module every process may use.
    static func process(ofModule module: String) -> ConfigurationVariable.Process? {
        switch module {
        case "IdentityGateway", "identity-gateway": .gateway
        case "IdentityTokenWorker", "identity-token-worker": .tokenWorker
        case "IdentityProviderWorker", "identity-provider-worker": .providerWorker
        case "IdentityMailerWorker", "identity-mailer-worker": .mailerWorker
        case "IdentityWebhookWorker", "identity-webhook-worker": .webhookWorker
        case "IdentityRevocationWorker", "identity-revocation-worker": .revocationWorker
        case "identityctl": .identityctl
        default: nil
        }
    }

    /// Every Swift file under Sources/: (module, text).
    static func sources() throws -> [(module: String, path: String, text: String)] {
        let sources = root.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else {
            return []
        }
        var found: [(String, String, String)] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            let relative = String(url.path.dropFirst(sources.path.count + 1))
            let module = String(relative.prefix { $0 != "/" })
            found.append((module, relative, try String(contentsOf: url, encoding: .utf8)))
        }
        return found
    }

    func testTheScannerSeesEveryKindOfRead() {
        let text = """
            env.string("IDENTITY_A", default: "x"); env.int("IDENTITY_B", default: 1, range: 0...2)
            env.raw("IDENTITY_C"); env.key32("IDENTITY_D", required: true)
            env.providerURL(
                "IDENTITY_E", default: "https://e"); flag("IDENTITY_F")
            ProcessInfo.processInfo.environment["IDENTITY_G"]; env.fail("IDENTITY_H is wrong")
            """
        XCTAssertEqual(
            Self.reads(in: text),
            ["IDENTITY_A", "IDENTITY_B", "IDENTITY_C", "IDENTITY_D", "IDENTITY_D_FILE", "IDENTITY_E", "IDENTITY_F",
             "IDENTITY_G"])
        XCTAssertNil(ConfigurationVariables.named("IDENTITY_G"), "a read the list lacks would be reported")
    }

    func testEveryVariableReadInSourcesIsDeclared() throws {
        let files = try Self.sources()
        XCTAssertGreaterThan(files.count, 100, "Sources/ was found")
        for file in files {
            for name in Self.reads(in: file.text) where ConfigurationVariables.named(name) == nil {
                XCTFail("\(file.path) reads \(name), which ConfigurationVariables.all does not declare")
            }
        }
    }

    func testEveryDeclaredVariableIsReadSomewhere() throws {
        let read = Set(try Self.sources().flatMap { Self.reads(in: $0.text) })
        for variable in ConfigurationVariables.all where !read.contains(variable.name) {
            XCTFail("\(variable.name) is declared but no process reads it")
        }
    }

    func testAProcessModuleReadsOnlyWhatTheListSaysItReads() throws {
        for file in try Self.sources() {
            guard let process = Self.process(ofModule: file.module) else { continue }
            for name in Self.reads(in: file.text) {
                guard let variable = ConfigurationVariables.named(name) else { continue }
                XCTAssertTrue(
                    variable.readBy.contains(process),
                    "\(file.path) reads \(name), but the list does not name \(process.rawValue) among its readers")
            }
        }
    }

    func testALiteralDefaultInTheCodeIsTheDeclaredOne() throws {
        var checked = 0
        for file in try Self.sources() {
            let range = NSRange(file.text.startIndex..., in: file.text)
            for match in Self.literalDefault.matches(in: file.text, range: range) {
                guard let name = Range(match.range(at: 1), in: file.text).map({ String(file.text[$0]) }),
                    let variable = ConfigurationVariables.named(name)
                else { continue }
                let text = Range(match.range(at: 2), in: file.text).map { String(file.text[$0]) }
                let integer = Range(match.range(at: 3), in: file.text).map {
                    file.text[$0].replacingOccurrences(of: "_", with: "")
                }
                let literal = text ?? integer ?? ""
                guard !literal.isEmpty else { continue }
                checked += 1
                XCTAssertTrue(
                    variable.defaultValue.contains("`\(literal)`"),
                    "\(file.path): \(name) defaults to \(literal), the list says \(variable.defaultValue)")
            }
        }
        XCTAssertGreaterThan(checked, 40)
    }

    func testNamesAreUniqueAndEachHasAReaderAndAMeaning() {
        let names = ConfigurationVariables.all.map(\.name)
        XCTAssertEqual(names.count, Set(names).count)
        for variable in ConfigurationVariables.all {
            XCTAssertTrue(variable.name.hasPrefix("IDENTITY_"), variable.name)
            XCTAssertFalse(variable.readBy.isEmpty, variable.name)
            XCTAssertFalse(variable.defaultValue.isEmpty, variable.name)
            XCTAssertFalse(variable.meaning.isEmpty, variable.name)
        }
    }

    func testTheConfigurationPageShowsEveryVariable() throws {
        let page = try String(
            contentsOf: Self.root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        for variable in ConfigurationVariables.all where !page.contains("| `\(variable.name)` |") {
            XCTFail("docs/configuration.md has no row for \(variable.name): run python3 tools/configdoc.py")
        }
    }
}
