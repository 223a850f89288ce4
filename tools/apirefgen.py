#!/usr/bin/env python3
"""Embed the API reference page (web/api-reference/) into the gateway as Swift.

    python3 tools/apirefgen.py          write Sources/IdentityGateway/APIReferenceAssets.swift
    python3 tools/apirefgen.py --check  write nothing; exit 1 with a diff if it is stale

The page, its script and its stylesheet are edited as the files they are under web/api-reference/;
the gateway serves them from its own binary (no assets directory to find at run time), each as
one raw string literal.
"""
import sys
from pathlib import Path

import generated_file

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "web" / "api-reference"
OUT = ROOT / "Sources" / "IdentityGateway" / "APIReferenceAssets.swift"
# Swift name, file, media type.
ASSETS = [("page", "index.html", "text/html; charset=utf-8"),
          ("script", "reference.js", "text/javascript; charset=utf-8"),
          ("stylesheet", "reference.css", "text/css; charset=utf-8")]


def render():
    return generated_file.embedded_assets("apirefgen", SOURCE, ROOT, "APIReference", ASSETS)


def main():
    return generated_file.run("apirefgen", __doc__, OUT, ROOT, render)


if __name__ == "__main__":
    sys.exit(main())
