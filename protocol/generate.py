"""The command line every generated contract file shares (``openapi.yaml``,
``asyncapi.yaml``, ``clients/js/src/contract.js``, ``clients/js/types/wire.d.ts``): write
the file, or ``--check`` that the committed one is what the Structs make (exit 1 when it is not)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def run(argv: Sequence[str] | None, *, prog: str, description: str | None, default: Path,
        produce: Callable[[str | None], str]) -> int:
    """``produce(old text or None)`` gives the file's text; write it when it differs."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("path", nargs="?", type=Path, default=default)
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    old = args.path.read_text(encoding="utf-8") if args.path.exists() else None
    new = produce(old)
    if args.check:
        if new != old:
            print(f"{args.path}: out of date; run {prog}")
            return 1
        return 0
    if new != old:
        args.path.write_text(new, encoding="utf-8")
        print(f"{args.path}: regenerated", file=sys.stderr)
    return 0
