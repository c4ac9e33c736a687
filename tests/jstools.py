"""The npm tools some tests run (tests/js/package.json, installed by ./test with npm ci).

Without node, or before ``npm ci`` has run, those tests skip and say why.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

JS_DIR = Path(__file__).resolve().parent / "js"
NODE_MODULES = JS_DIR / "node_modules"


def node() -> str:
    """The node executable, or skip."""
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed: the AsyncAPI and TypeScript checks need node 18+")
    if not NODE_MODULES.is_dir():
        pytest.skip(f"{NODE_MODULES} is missing: run ./test (it runs npm ci in tests/js)")
    return found


def tool(name: str) -> Path:
    """An executable of tests/js/node_modules/.bin (``tsc``), or skip."""
    node()
    path = NODE_MODULES / ".bin" / name
    if not path.exists():
        pytest.skip(f"{path} is missing: run ./test (npm ci in tests/js)")
    return path


def run(args: list[str | Path], cwd: Path = JS_DIR,
        timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a command, capturing its output as text (it never raises on a non-zero exit)."""
    return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout_s, check=False)
