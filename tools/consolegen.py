#!/usr/bin/env python3
"""Embed the web console's stylesheet and script (web/console/) into the gateway as Swift.

    python3 tools/consolegen.py          write Sources/IdentityGateway/Console/ConsoleAssets.swift
    python3 tools/consolegen.py --check  write nothing; exit 1 with a diff if it is stale

The console's pages are rendered by the gateway (Sources/IdentityGateway/Console/); its two
static files are edited as the files they are and served from the binary, as the API reference's.
"""
import sys
from pathlib import Path

import generated_file

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "web" / "console"
OUT = ROOT / "Sources" / "IdentityGateway" / "Console" / "ConsoleAssets.swift"
# Swift name, file, media type.
ASSETS = [("stylesheet", "console.css", "text/css; charset=utf-8"),
          ("script", "console.js", "text/javascript; charset=utf-8")]


def render():
    return generated_file.embedded_assets("consolegen", SOURCE, ROOT, "ConsoleSite", ASSETS)


def main():
    return generated_file.run("consolegen", __doc__, OUT, ROOT, render)


if __name__ == "__main__":
    sys.exit(main())
