"""What tools/phonegen.py and tools/breachgen.py share: write one generated Swift file, or with
--check write nothing and exit 1 (showing the diff) when the committed file differs."""
import argparse, difflib, sys


def run(tool, doc, out, root, render):
    """`tool` names the script in messages, `doc` is its docstring, `out` the file it owns,
    `render` a function returning the file's text. Returns the exit status."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the committed file differs")
    args = parser.parse_args()
    text = render()
    name = out.relative_to(root)
    if args.check:
        current = out.read_text() if out.exists() else ""
        if current != text:
            sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                                       str(out), "generated"))
            print(f"{tool}: {name} is stale: run python3 tools/{tool}.py", file=sys.stderr)
            return 1
        return 0
    out.write_text(text)
    print(f"{tool}: wrote {name}", file=sys.stderr)
    return 0
