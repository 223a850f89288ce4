#!/usr/bin/env python3
"""Write docs/configuration.md's table of environment variables from the code's one list of them
(Sources/IdentityKit/Config/ConfigurationVariables.swift), and check that every variable a
process reads is in that list.

    python3 tools/configdoc.py          rewrite the table between the markers
    python3 tools/configdoc.py --check  write nothing; exit 1 if the table differs from the list,
                                        or a variable read in Sources/ is not declared (or one
                                        declared is read nowhere)

A read is a call of the environment reader with a literal name (`string("IDENTITY_…"`, `int(`,
`raw(`, `key32(` and `secret(` — which also read `<name>_FILE` —, `providerURL(`, `flag(`) or
`environment["IDENTITY_…"]`; ConfigurationVariablesTests applies the same pattern in `swift test`.
"""
import re
import sys
from pathlib import Path

import generated_file

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT / "Sources" / "IdentityKit" / "Config" / "ConfigurationVariables.swift"
DOC = ROOT / "docs" / "configuration.md"
BEGIN = "<!-- configuration-variables:begin (tools/configdoc.py writes this table) -->"
END = "<!-- configuration-variables:end -->"

READ = re.compile(r'\b(string|int|raw|key32|secret|providerURL|flag)\(\s*"(IDENTITY_[A-Z0-9_]+)"'
                  r'|environment\[\s*"(IDENTITY_[A-Z0-9_]+)"\s*\]')
TOKEN = re.compile(r'\s+|//[^\n]*|"((?:[^"\\\n]|\\.)*)"|(\.?[A-Za-z_][A-Za-z0-9_]*)|([\[\](),:+={}])')


def fail(message):
    print(f"configdoc: {message}", file=sys.stderr)
    sys.exit(1)


def unescape(literal):
    if "\\(" in literal:
        fail(f"no interpolation in the list: {literal}")
    return re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), literal)


def tokens(text):
    """(kind, value) pairs: 'str', 'ident' or 'punct'; whitespace and comments dropped."""
    out, at = [], 0
    while at < len(text):
        m = TOKEN.match(text, at)
        if not m:
            fail(f"{LIST.name}: cannot read the list near {text[at:at + 40]!r}")
        at = m.end()
        if m.group(1) is not None:
            out.append(("str", unescape(m.group(1))))
        elif m.group(2):
            out.append(("ident", m.group(2)))
        elif m.group(3):
            out.append(("punct", m.group(3)))
    return out


def processes(text):
    """The Process enum: case name → executable name."""
    return dict(re.findall(r'case (\w+) = "([^"]+)"', text))


def declared():
    """[(name, [process], default, meaning)] in the list's order."""
    text = LIST.read_text()
    names = processes(text)
    start = text.index("public static let all: [ConfigurationVariable] = [")
    toks = tokens(text[start + len("public static let all: [ConfigurationVariable] = "):])
    at = 1  # past the opening bracket

    def expect(kind, value=None):
        nonlocal at
        got = toks[at]
        if got[0] != kind or (value is not None and got[1] != value):
            fail(f"{LIST.name}: expected {value or kind}, found {got[1]!r} (entry {len(entries) + 1})")
        at += 1
        return got[1]

    def string():
        value = expect("str")
        while toks[at] == ("punct", "+"):
            expect("punct", "+")
            value += expect("str")
        return value

    entries = []
    while toks[at] != ("punct", "]"):
        expect("ident", "ConfigurationVariable")
        expect("punct", "(")
        name = string()
        expect("punct", ",")
        expect("ident", "read")
        expect("punct", ":")
        expect("punct", "[")
        read = []
        while toks[at] != ("punct", "]"):
            case = expect("ident").lstrip(".")
            if case not in names:
                fail(f"{name}: no process .{case}")
            read.append(names[case])
            if toks[at] == ("punct", ","):
                expect("punct", ",")
        expect("punct", "]")
        expect("punct", ",")
        expect("ident", "default")
        expect("punct", ":")
        default = string()
        expect("punct", ",")
        expect("ident", "meaning")
        expect("punct", ":")
        meaning = string()
        expect("punct", ")")
        if toks[at] == ("punct", ","):
            expect("punct", ",")
        entries.append((name, read, default, meaning))
    if len(entries) != text.count("ConfigurationVariable(\n") + text.count("ConfigurationVariable(\""):
        fail(f"{LIST.name}: read {len(entries)} entries, but the file holds more")
    return entries, list(names.values())


def reads():
    """Every variable read in Sources/, with the files that read it."""
    found = {}
    for path in sorted((ROOT / "Sources").rglob("*.swift")):
        for m in READ.finditer(path.read_text()):
            name = m.group(2) or m.group(3)
            for read in [name] + ([name + "_FILE"] if m.group(1) in ("key32", "secret") else []):
                found.setdefault(read, []).append(str(path.relative_to(ROOT)))
    return found


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def table(entries, every):
    def who(read):
        if sorted(read) == sorted(every):
            return "every process"
        return ", ".join(p.removeprefix("identity-").replace("-", " ") for p in read)

    rows = ["| variable | read by | default | meaning |", "|---|---|---|---|"]
    rows += [f"| `{name}` | {who(read)} | {cell(default)} | {cell(meaning)} |"
             for name, read, default, meaning in entries]
    return "\n".join(rows)


def render():
    entries, every = declared()
    names = [e[0] for e in entries]
    problems = [f"{n} is declared twice" for n in sorted(set(names)) if names.count(n) > 1]
    found = reads()
    problems += [f"{n} is read ({', '.join(sorted(set(found[n])))}) but not declared in {LIST.name}"
                 for n in sorted(found) if n not in names]
    problems += [f"{n} is declared in {LIST.name} but read nowhere in Sources/" for n in names if n not in found]
    if problems:
        fail("\n  ".join(["the list of variables and the code disagree:"] + problems))
    doc = DOC.read_text()
    if BEGIN not in doc or END not in doc:
        fail(f"{DOC.relative_to(ROOT)} lacks the markers {BEGIN} … {END}")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + "\n" + table(entries, every) + "\n" + END + tail


if __name__ == "__main__":
    sys.exit(generated_file.run("configdoc", __doc__, DOC, ROOT, render))
