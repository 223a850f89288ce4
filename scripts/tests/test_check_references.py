#!/usr/bin/env python3
"""The matcher of scripts/check-references.py on small made-up repositories: a citation of a file
the repository lacks fails, one of a file it has passes (make references-check runs this too).

    python3 scripts/tests/test_check_references.py      (or python3 -m pytest -q scripts/tests)
"""
import importlib.util
import pathlib
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "check-references.py"
spec = importlib.util.spec_from_file_location("check_references", SCRIPT)
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

DOCS = {
    "docs/api-contract.md": "# API contract\n\n## Conventions for every endpoint\n\n"
                            "## Tokens and sessions\n\n```\n## Not a heading (in a code block)\n```\n",
    "docs/clients.md": "# Clients\n\n## Client profiles (shipped clients, unchanged)\n\n"
                       "- **Keys** (`SubKey.swift`): every key is a sub-key\n",
    "README.md": "# Identity service\n",
}
FILES = list(DOCS) + ["Sources/IdentityKit/Auth/JWT.swift", "scripts/run.sh"]


def repository():
    return check.Repository(FILES, read=lambda path: DOCS.get(path, ""))


def cited(path, text, allowed=None):
    """What the matcher reports in `text`, as (line, cited)."""
    found = check.missing_references(path, text, repository(),
                                     allowed if allowed is not None else {})
    return [(number, what) for number, what, _ in found]


class MissingCitationsFail(unittest.TestCase):
    def test_a_markdown_name_the_repository_lacks(self):
        # The case this check was written for: the product spec lives outside the repository.
        self.assertEqual(cited("Sources/IdentityKit/Errors/ServiceError.swift",
                               "/// The catalogue of codes (PRODUCT.md). Clients match on `code`.\n"),
                         [(1, "PRODUCT.md")])
        self.assertEqual(cited("migrations.txt", "-- (issue 17, ../shared/docs/COMPATIBILITY.md)\n"),
                         [(1, "../shared/docs/COMPATIBILITY.md")])

    def test_a_repository_path_that_does_not_exist(self):
        self.assertEqual(cited("scripts/test.sh", "x\n# see docs/operations.md and tools/gone.py\n"),
                         [(2, "docs/operations.md"), (2, "tools/gone.py")])

    def test_a_relative_markdown_link_to_nothing(self):
        self.assertEqual(cited("docs/clients.md", "See [the spec](../PRODUCT.md#mfa).\n"),
                         [(1, "../PRODUCT.md")])
        self.assertEqual(cited("docs/clients.md", "See [shared](../../shared/notes.txt).\n"),
                         [(1, "../../shared/notes.txt")])

    def test_a_link_anchor_that_is_no_heading(self):
        self.assertEqual(cited("docs/clients.md", "[x](api-contract.md#errors)\n"),
                         [(1, "api-contract.md#errors")])

    def test_a_section_the_cited_file_does_not_have(self):
        self.assertEqual(cited("Sources/A.swift", '/// (docs/api-contract.md, "Ways in")\n'),
                         [(1, 'docs/api-contract.md, "Ways in"')])
        # The quote on the next line of the comment counts, and a heading in a code block is none.
        self.assertEqual(cited("Sources/A.swift", "/// (docs/api-contract.md,\n/// \"Not a heading\")\n"),
                         [(1, 'docs/api-contract.md, "Not a heading"')])


class ExistingCitationsPass(unittest.TestCase):
    def test_paths_names_links_and_sections_that_exist(self):
        text = "\n".join([
            "/// (docs/api-contract.md, \"Tokens and sessions\"), Sources/IdentityKit/Auth/JWT.swift.",
            "/// docs/clients.md, \"Client profiles\": a shortened heading; \"Keys\" a bold lead:",
            "/// docs/clients.md, \"Keys\"; the folder Sources/IdentityKit/ and README.md.",
            "# docs/api-contract.md, \"Conventions for every",
            "# endpoint\" (the quote goes on)",
        ])
        self.assertEqual(cited("Sources/A.swift", text), [])

    def test_markdown_links_resolve_from_the_linking_file(self):
        text = ("[contract](api-contract.md), [anchor](api-contract.md#tokens-and-sessions), "
                "[up](../README.md), [this file](#client-profiles-shipped-clients-unchanged), "
                "[folder](../Sources/IdentityKit/)\n")
        self.assertEqual(cited("docs/clients.md", text), [])

    def test_what_is_no_citation(self):
        text = "\n".join([
            "https://github.com/OWASP/ASVS/blob/v4.0.3_release/4.0/en/0x11-V2-Authentication.md",
            "[`0x12-V3-Session-management.md`](https://github.com/OWASP/ASVS/blob/x/0x12-V3.md)",
            "Tests/e2e/test_*.py, docs/<name>.md, Sources/IdentityKit/…, and .build/debug/x.md",
            "node --test clients/typescript/dist/test/unit/",
            "```",
            "[not a link](in/a/code/block.md) is still a name: ok.md",
            "```",
        ])
        found = cited("docs/clients.md", text, allowed={"clients/typescript/dist/": "tsc's output"})
        self.assertEqual(found, [(6, "in/a/code/block.md"), (6, "ok.md")])

    def test_fixture_trees_of_the_generator_tests(self):
        # tools/tests/ names files of the fixture trees it renders, not of the repository...
        self.assertEqual(cited("tools/tests/test_x.py", "# proto/identity/bad/v1/oneof.proto\n"), [])
        # ...but a Markdown name there must still exist.
        self.assertEqual(cited("tools/tests/test_x.py", "# see PRODUCT.md\n"), [(1, "PRODUCT.md")])

    def test_a_symlinked_folder_is_followed(self):
        repo = check.Repository(["clients/swift/Sources/IdentityClient",
                                 "Sources/IdentityClient/Client.swift"])
        self.assertTrue(repo.exists("Sources/IdentityClient/Client.swift"))
        self.assertFalse(repo.exists("clients/swift/Sources/IdentityClient/Nope.swift"))


if __name__ == "__main__":
    unittest.main()
