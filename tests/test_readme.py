"""The README is what a newcomer reads first: its commands and settings must be true."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from service.settings import ENV_PREFIX, Settings

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_the_readme_starts_with_the_two_commands() -> None:
    block = README.split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["./run", "./test"]
    for command in commands:
        path = ROOT / command
        assert path.is_file() and os.access(path, os.X_OK), f"{command} is not an executable script"


def test_ci_runs_the_readmes_test_command() -> None:
    assert "./test" in (ROOT / ".ci" / "run").read_text()


def test_the_readme_documents_every_setting() -> None:
    for f in dataclasses.fields(Settings):
        flag = "--" + f.name.replace("_", "-")
        env = "REDIS_URL" if f.name == "redis_url" else ENV_PREFIX + f.name.upper()
        assert f"`{flag}`" in README, f"README.md does not document {flag}"
        assert f"`{env}`" in README, f"README.md does not document {env}"
