"""The README is what a newcomer reads first: its commands and settings must be true."""

from __future__ import annotations

import dataclasses
import os
import re
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


#: Settings whose default is no literal (made at start, or a secret): what the table says.
NOT_LITERAL = {"redis_url": "unset", "token_secret": "generated", "daily_secret": "generated",
               "instance_id": "`$HOSTNAME` or pid", "workers": "the cores it may use"}


def documented_default(cell: str) -> object:
    """A default as the table writes it: `50`, `true`, `everysec`, 90 days, 16 KiB, empty."""
    literal = re.fullmatch(r"`([^`]*)`", cell)
    if literal:
        text = literal[1]
        if text in ("true", "false"):
            return text == "true"
        try:
            return float(text)
        except ValueError:
            return text
    if cell == "empty":
        return ""
    amount = re.fullmatch(r"(\d+) (days|KiB)", cell)
    assert amount, f"a default written as {cell!r}: say it as `value`, N days or N KiB"
    return int(amount[1]) * (86_400 if amount[2] == "days" else 1024)


def test_the_readme_gives_each_settings_default_as_the_code_has_it() -> None:
    defaults = Settings()
    for f in dataclasses.fields(Settings):
        flag = "--" + f.name.replace("_", "-")
        (row,) = [line for line in README.splitlines() if line.startswith(f"| `{flag}` / ")]
        cell = row.split("|")[2].strip()
        if f.name in NOT_LITERAL:
            assert cell == NOT_LITERAL[f.name], f"{flag}: default {cell!r}"
            continue
        value = getattr(defaults, f.name)
        expected = float(value) if isinstance(value, int | float) and not isinstance(
            value, bool) else str(value) if isinstance(value, Path) else value
        assert documented_default(cell) == expected, f"README.md: {flag} defaults to {value!r}"

