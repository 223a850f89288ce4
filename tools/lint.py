#!/usr/bin/env python3
"""`make lint`: swift-format's lint, with the repository's .swift-format, on every hand-written
Swift file (Sources/, Tests/, Package.swift; not the Generated/ folders, which their generators
own and check). Exit 1 on any finding of an enabled rule.

swift-format always adds the pretty-printer's layout findings to its rules' (where it would
break, join or indent lines differently), and no configuration switches them off. The code's
hand-aligned continuation lines differ from the printer's layout in thousands of places, so
those categories (LAYOUT below) are reported as a count only; every rule enabled in
.swift-format, and every file swift-format cannot parse, fails the lint.

    python3 tools/lint.py            lint everything
    python3 tools/lint.py FILE...    lint these files
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYOUT = {"Indentation", "AddLines", "RemoveLine", "Spacing", "TrailingComma", "TrailingWhitespace", "LineLength"}
FINDING = re.compile(r"^(?P<where>[^:]+:\d+:\d+): (?:warning|error): \[(?P<rule>\w+)\] (?P<message>.*)$")


def files(args):
    if args:
        return args
    found = [str(p.relative_to(ROOT)) for top in ("Sources", "Tests") for p in sorted((ROOT / top).rglob("*.swift"))
             if "Generated" not in p.parts]
    return found + ["Package.swift"]


def main(args):
    paths = files(args)
    run = subprocess.run(["swift", "format", "lint", "--parallel", "--no-color-diagnostics",
                          "--configuration", str(ROOT / ".swift-format"), *paths],
                         cwd=ROOT, capture_output=True, text=True)
    failures, layout = [], 0
    for line in (run.stdout + run.stderr).splitlines():
        m = FINDING.match(line)
        if m and m.group("rule") in LAYOUT:
            layout += 1
        elif line.strip():
            failures.append(line)
    for line in failures:
        print(line, file=sys.stderr)
    print(f"lint: {len(paths)} files, {len(failures)} findings of enabled rules "
          f"({layout} layout differences from swift-format's printer not enforced)", file=sys.stderr)
    return 1 if failures or (run.returncode != 0 and not layout) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
