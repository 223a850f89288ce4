#!/usr/bin/env python3
"""Every file the repository cites exists in it (make test runs it; so can anyone, in a second or
two).

A comment that says "see docs/x.md" or "(PRODUCT.md, \"MFA\")" is only worth something when the
reader can open that file. This check reads every tracked text file (`git ls-files`: Swift, C,
Python, proto, Markdown, shell, YAML, JavaScript/TypeScript, Java, the Makefile) as it is in the
working tree, and fails, with file:line and the missing path, on:

1. A repository path: a token that starts with one of the repository's top-level directories
   (`TOP_LEVEL`) and a `/`, e.g. `docs/api-contract.md` or `Sources/IdentityKit/Auth/`. It must
   be a tracked file, or a directory holding one.
2. A Markdown link to a relative target, `[text](../docs/x.md#anchor)`, resolved against the
   linking file's folder (outside fenced code blocks); an `#anchor` into a Markdown file must be
   one of its headings (GitHub's slugs).
3. A Markdown file name anywhere, `PRODUCT.md` or `../shared/docs/COMPATIBILITY.md`: some tracked
   file must have that name (a citation may leave the folder out, not the file).
4. A section cited by its heading right after a repository path, `docs/api-contract.md, "MFA"`
   (or `docs/x.md "MFA"`, the quote on the same or the next line; `docs/x.md: "…"` quotes the
   file's text and is left alone): the
   file must have a heading, or a paragraph or list item opening in bold (`- **Keys**`, which
   the long docs use as subsections), that reads so; a shortened heading counts when the rest
   of it is a parenthesis or follows a colon ("Client profiles" for "Client profiles (shipped
   clients, unchanged)").

Not citations, so left alone: URLs and the text of Markdown links to URLs (another repository's
files), paths under .build/, .run/ and node_modules/ (made by builds and runs), glob and template
patterns (`Tests/e2e/test_*.py`, `docs/<name>.md`, a path ending in `…`), the few paths in
`ALLOWED` below, each with the reason, and rule 1 in the folders of `OTHER_TREES` (tests whose
fixtures are trees laid out like the repository). migrations/*.sql are not read: a migration is checksummed
once applied (identityctl migrate refuses one whose text changed), so its comments stay as they
were written.
"""
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# The repository's top-level directories: a token starting with one of these and a `/` is a path.
TOP_LEVEL = ("Sources", "Tests", "docs", "scripts", "tools", "proto", "web", "deploy", "clients",
             "bench", "migrations", ".ci")

# What is read: by extension, plus these names, plus any extensionless file with a shell shebang.
EXTENSIONS = {".swift", ".c", ".h", ".py", ".proto", ".md", ".sh", ".bash", ".yml", ".yaml", ".js",
              ".mjs", ".cjs", ".ts", ".tsx", ".java"}
NAMES = {"Makefile"}
# Not read: this script and its test, whose examples of missing files are missing on purpose.
SELF = {"scripts/check-references.py", "scripts/tests/test_check_references.py"}

# Paths (or folders, ending in /) that are cited but made at run time, so never tracked: each with
# the reason it is allowed. An entry no file cites any more fails the check (drop it).
ALLOWED = {
    "clients/typescript/dist/": "tsc's output folder (tsconfig.json's outDir), made by the TypeScript "
                                "client's build and test commands",
}

# Folders whose files name paths of another tree laid out like the repository, so rule 1 (paths
# by their top-level directory) is not applied to them: folder -> why.
OTHER_TREES = {
    "tools/tests/": "the generator's tests run tools/protogen.py on fixture trees laid out like the "
                    "repository (tools/tests/fixtures/, and trees they make in a temporary folder): "
                    "their proto/ and Sources/ paths are files of those trees",
}

# Citations of missing files in files this change may not edit (their owner is changing them in
# the same checkout): (file, what it cites) -> why it waits. Reported, not failed; an entry whose
# citation is gone fails the check, so this list only shrinks.
PENDING: dict = {}

PATH_TOKEN = re.compile(
    r"(?<![\w./\-@~$])(?:\./)?((?:%s)/[\w.\-/+@]*)" % "|".join(re.escape(t) for t in TOP_LEVEL))
MD_NAME = re.compile(r"(?<![\w\-])((?:[\w.\-]+/)*[\w.\-]*[\w\-]\.md)(?![\w\-])")
MD_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL_LINK = re.compile(r"\[[^\]]*\]\(\s*<?[a-zA-Z][a-zA-Z0-9+.\-]*:[^)]*\)")
SECTION = re.compile(r"((?:\.\./)*(?:[\w.\-]+/)*[\w.\-]+\.md),?\s+\\?\"([^\s\"\\][^\"\\]*)\\?\"")
URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s)\"'`>]*")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
# A character right before or after a path token that makes it a pattern rather than a path.
PATTERN_MARKS = set("*?{[<$%…")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
BOLD_LEAD = re.compile(r"^\s*(?:[-*+]\s+|\d+\.\s+)?\*\*(.+?)\*\*")
COMMENT_LEAD = re.compile(r"^\s*(?:///|//|/\*\*|\*|#|--|\"\"\")?\s*")


class Repository:
    """What exists: tracked files, the folders that hold them, every tracked file's name, and each
    Markdown file's headings (read when first asked)."""

    def __init__(self, files, read=None, root=None):
        self.files = set(files)
        self.folders = set()
        for name in self.files:
            parts = name.split("/")
            for end in range(1, len(parts)):
                self.folders.add("/".join(parts[:end]))
        self.names = {name.rsplit("/", 1)[-1] for name in self.files}
        self.read = read or (lambda path: "")
        self.root = root
        self._sections = {}

    def exists(self, path):
        path = path.rstrip("/")
        if path in self.files or path in self.folders or path == "":
            return True
        # Through a tracked symbolic link (clients/swift/Sources/IdentityClient).
        if self.root is not None:
            parts = path.split("/")
            for end in range(1, len(parts)):
                head = "/".join(parts[:end])
                if head in self.files and os.path.islink(self.root / head):
                    target = os.path.normpath(os.path.join(os.path.dirname(head),
                                                           os.readlink(self.root / head)))
                    return self.exists("/".join([target] + parts[end:]))
        return False

    def sections(self, path):
        """(headings and bold leads as prose cites them, GitHub anchors) of a Markdown file."""
        if path not in self._sections:
            names, anchors, fenced = set(), set(), False
            for line in self.read(path).splitlines():
                if line.lstrip().startswith("```"):
                    fenced = not fenced
                    continue
                if fenced:
                    continue
                heading = HEADING.match(line)
                if heading:
                    names.add(normal_heading(heading.group(2)))
                    slug = github_slug(heading.group(2))
                    number = 1
                    while slug in anchors:  # GitHub numbers repeated headings: x, x-1, x-2
                        slug = f"{github_slug(heading.group(2))}-{number}"
                        number += 1
                    anchors.add(slug)
                    continue
                bold = BOLD_LEAD.match(line)
                if bold:
                    names.add(normal_heading(bold.group(1)))
            self._sections[path] = (names, anchors)
        return self._sections[path]

    def has_section(self, path, cited):
        cited = normal_heading(cited)
        for name in self.sections(path)[0]:
            if name == cited or (name.startswith(cited)
                                 and (name[len(cited):].startswith((" (", ":")))):
                return True
        return False


def normal_heading(text):
    """A heading as prose cites it: without backticks, emphasis, a closing full stop and case."""
    return re.sub(r"[`*_]", "", text).strip().rstrip(".").strip().lower()


def github_slug(text):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def clean(token):
    """A path token without the sentence around it: a closing full stop, comma or colon."""
    while token and token[-1] in ".,:;'":
        token = token[:-1]
    return token


def ignored(path):
    return any(part in (".build", ".run", "__pycache__", "node_modules") for part in path.split("/"))


def allowed_path(path, allowed):
    return any(path == entry.rstrip("/") or (entry.endswith("/") and path.startswith(entry))
               for entry in allowed)


def resolve(linking_file, target):
    """A Markdown link's target as a repository path ("" for the root), or None when it leaves
    the repository."""
    joined = target.lstrip("/") if target.startswith("/") else \
        os.path.join(os.path.dirname(linking_file), target)
    normal = os.path.normpath(joined) if joined else "."
    if normal == ".":
        return ""
    if normal == ".." or normal.startswith("../"):
        return None
    return normal


def missing_references(path, text, repository, allowed=ALLOWED):
    """(line number, cited, why) for each citation in `text` (the file `path`) of something the
    repository does not have."""
    found = []
    markdown = path.endswith(".md")
    other_tree = path.startswith(tuple(OTHER_TREES))
    lines = text.splitlines()
    fenced = False
    for index, line in enumerate(lines):
        number = index + 1
        if markdown and line.lstrip().startswith("```"):
            fenced = not fenced
        bare = URL.sub(" ", EXTERNAL_LINK.sub(" ", line) if markdown else line)
        seen = set()

        def report(cited, why):
            if cited not in seen:  # once a line, whichever rule finds it first
                seen.add(cited)
                found.append((number, cited, why))

        # 1. Repository paths.
        for match in PATH_TOKEN.finditer("" if other_tree else bare):
            token = match.group(1)
            if bare[match.end():match.end() + 1] in PATTERN_MARKS or token.endswith("…"):
                continue
            token = clean(token)
            if "//" in token or ignored(token) or allowed_path(token, allowed):
                continue
            if not repository.exists(token):
                report(token, "no such file or folder in the repository")

        # 2. Markdown links to relative targets.
        if markdown and not fenced:
            for match in MD_LINK.finditer(line):
                target = match.group(1)
                if SCHEME.match(target) or any(c in target for c in "*<$"):
                    continue
                target, _, anchor = target.partition("#")
                target = target.split("?", 1)[0]
                resolved = resolve(path, target) if target else path
                if resolved is None:
                    report(target, "the link leaves the repository")
                elif ignored(resolved) or allowed_path(resolved, allowed):
                    continue
                elif not repository.exists(resolved):
                    report(target, f"the link's target {resolved} does not exist")
                elif anchor and resolved.endswith(".md") and resolved in repository.files \
                        and anchor not in repository.sections(resolved)[1]:
                    report(f"{target}#{anchor}", f"{resolved} has no heading with the anchor #{anchor}")

        # 3. Markdown file names.
        for match in MD_NAME.finditer(bare):
            token = match.group(1)
            before = bare[max(0, match.start() - 1):match.start()]
            if bare[match.end():match.end() + 1] in PATTERN_MARKS or before in PATTERN_MARKS \
                    or ignored(token) or allowed_path(token, allowed):
                continue
            name = token.rsplit("/", 1)[-1]
            if name not in repository.names:
                report(token, f"no file named {name} in the repository")

        # 4. Sections cited by their heading (the quote may open on the next line).
        following = lines[index + 1] if index + 1 < len(lines) else ""
        joined = bare + " " + URL.sub(" ", COMMENT_LEAD.sub("", following, count=1))
        for match in SECTION.finditer(joined):
            if match.start() >= len(bare):
                break
            cited, heading = match.group(1), match.group(2)
            if cited.startswith(TOP_LEVEL):
                target = cited
            elif markdown:
                target = resolve(path, cited)
            else:
                continue
            if target is None or target not in repository.files:
                continue  # a missing file is reported above
            if not repository.has_section(target, heading):
                report(f'{cited}, "{heading}"', f'{target} has no heading "{heading}"')
    return found


def scanned(path):
    if path in SELF:
        return False
    name = path.rsplit("/", 1)[-1]
    if name in NAMES or os.path.splitext(name)[1] in EXTENSIONS:
        return True
    if "." in name:
        return False
    try:
        with open(ROOT / path, "rb") as handle:
            first = handle.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"sh" in first.split(b"/")[-1]


def main():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    files = [name for name in listed if name]

    def read(path):
        try:
            return (ROOT / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    repository = Repository(files, read, ROOT)
    failures, waiting, count = [], [], 0
    cited_allowed, cited_pending = set(), set()
    for path in files:
        if not (ROOT / path).is_file() or os.path.islink(ROOT / path) or not scanned(path):
            continue
        count += 1
        text = read(path)
        for entry in ALLOWED:
            if entry.rstrip("/") in text:
                cited_allowed.add(entry)
        for number, cited, why in missing_references(path, text, repository):
            if (path, cited) in PENDING:
                cited_pending.add((path, cited))
                waiting.append(f"{path}:{number}: cites {cited}: {why} "
                               f"(pending: {PENDING[(path, cited)]})")
                continue
            hint = ""
            if cited.split("/")[0] in TOP_LEVEL and (ROOT / cited).exists():
                hint = " (it is on disk but not tracked: git add it)"
            failures.append(f"{path}:{number}: cites {cited}: {why}{hint}")
    for entry in sorted(set(ALLOWED) - cited_allowed):
        failures.append(f"scripts/check-references.py: ALLOWED names {entry}, which no file cites "
                        "any more (drop it)")
    for path, cited in sorted(set(PENDING) - cited_pending):
        failures.append(f"scripts/check-references.py: PENDING names {path} citing {cited}, "
                        "which it no longer does (drop it)")

    for line in waiting:
        print(f"WAIT {line}", file=sys.stderr)
    if failures:
        for failure in failures:
            print(f"FAIL {failure}", file=sys.stderr)
        print(f"references check: {len(failures)} citations of what the repository does not have",
              file=sys.stderr)
        return 1
    print(f"references check: every path, Markdown link, .md name and cited section in {count} "
          f"tracked files exists ({len(waiting)} pending in files being edited elsewhere)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
