"""`npm pack` makes a tarball that installs in an empty folder, with no dependency, and
runs the README's quickstart against a running service."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live import ServiceProcess

from .conftest import NODE_FLAGS, PACKAGE, node

README = PACKAGE / "README.md"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    with ServiceProcess(None, tmp_path_factory.mktemp("js-pack")) as process:
        yield process


def quickstart() -> str:
    """The first ```js block after the README's "## Quickstart"."""
    text = README.read_text(encoding="utf-8").split("## Quickstart", 1)[1]
    found = re.search(r"```js\n(.*?)```", text, re.S)
    assert found is not None, "no quickstart in clients/js/README.md"
    return found.group(1)


def npm(*args: str, cwd: Path) -> str:
    path = shutil.which("npm")
    if path is None:
        pytest.skip("npm is not installed")
    done = subprocess.run([path, *args, "--no-audit", "--no-fund", "--offline"], cwd=cwd,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_tarball_installs_and_runs_the_readme_quickstart(
        service: ServiceProcess, tmp_path: Path) -> None:
    node()
    packed = json.loads(npm("pack", "--json", "--pack-destination", str(tmp_path), cwd=PACKAGE))
    files = {f["path"] for f in packed[0]["files"]}
    assert "src/index.js" in files and "types/index.d.ts" in files and "types/wire.d.ts" in files
    assert not any(f.startswith("test/") for f in files), files  # the tests stay home
    tarball = tmp_path / packed[0]["filename"]

    app = tmp_path / "app"
    app.mkdir()  # an empty folder
    npm("install", str(tarball), cwd=app)
    modules = app / "node_modules"
    installed = sorted(p.name for p in modules.iterdir() if not p.name.startswith("."))
    assert installed == ["solitaire-client"], installed  # no dependency came along
    manifest = json.loads((app / "node_modules/solitaire-client/package.json").read_text())
    assert not manifest.get("dependencies"), manifest

    (app / "quickstart.mjs").write_text(quickstart(), encoding="utf-8")
    done = subprocess.run([node(), *NODE_FLAGS, "quickstart.mjs"], cwd=app,
                          env={"PATH": "/usr/bin:/bin", "SOLITAIRE_URL": service.url},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert re.match(r"Quickstart played \{.*\}: now at seq 1$", lines[0]), done.stdout
    assert any(line.startswith("tableau/1 ") for line in lines), done.stdout  # the board
    assert any(line.startswith("foundation/") for line in lines), done.stdout
