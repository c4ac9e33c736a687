"""The lock files (requirements/*.txt, written by scripts/lock) pin what pyproject.toml asks
for: every requirement is there at an allowed version, with hashes, and the two locks agree.
./run, ./test and the Docker image install from them, so a release of a library cannot turn
a fresh clone red; an upgrade is a refresh of the locks, tried by the suite."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCKS = ROOT / "requirements"
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def locked(name: str) -> dict[str, list[tuple[str, str | None]]]:
    """{package: [(version, marker)]} and every entry's hashes checked present."""
    pins: dict[str, list[tuple[str, str | None]]] = {}
    lines = (LOCKS / name).read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        match = PIN.match(line)
        if not match:
            continue
        assert i + 1 < len(lines) and "--hash=sha256:" in lines[i + 1], \
            f"{name}: {match[1]} has no hash"
        pins.setdefault(canonicalize_name(match[1]), []).append((match[2], match[3]))
    return pins


def requirements(*extras: str) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = list(project["dependencies"])
    for extra in extras:
        wanted += project["optional-dependencies"][extra]
    build = (LOCKS / "build.in").read_text(encoding="utf-8").splitlines()
    wanted += [line for line in build if line.strip() and not line.startswith("#")]
    return [Requirement(r) for r in wanted]


@pytest.mark.parametrize(("lock", "extras"), [("service.txt", ("speed",)),
                                              ("test.txt", ("speed", "test"))])
def test_every_requirement_of_pyproject_is_locked_at_an_allowed_version(
        lock: str, extras: tuple[str, ...]) -> None:
    pins = locked(lock)
    env = default_environment()
    for req in requirements(*extras):
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        versions = pins.get(canonicalize_name(req.name))
        assert versions, f"{req.name} is in pyproject.toml but not in {lock}: run scripts/lock"
        for version, _marker in versions:
            assert req.specifier.contains(version, prereleases=True), \
                f"{lock} pins {req.name}=={version}, outside {req}: run scripts/lock"


def test_the_service_lock_is_the_test_lock_less_the_test_tools() -> None:
    service, test = locked("service.txt"), locked("test.txt")
    for name, pins in service.items():
        # Versions, not markers: a test tool may need a package on more Pythons.
        versions = {version for version, _ in pins}
        assert versions == {version for version, _ in test.get(name, [])}, \
            f"{name}: the two locks disagree: run scripts/lock"


def test_the_installed_environment_is_whole() -> None:
    """Installed with --no-deps from the lock: a dependency the lock forgot is missing, and
    pip check names it."""
    done = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
