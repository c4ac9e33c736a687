"""The repository is the one home of its contract: every document a client author
needs is in it, links stay inside it, no machine's path is written anywhere, and
docs/protocol.md agrees with the code on codes, close codes and settings."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from protocol.errors import HTTP_STATUS
from service.engine.refusals import Rule
from service.settings import Settings
from service.socket.messages import Close

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL_MD = ROOT / "docs" / "protocol.md"
SKIP_DIRS = {".git", ".venv", ".venv-lock", ".venv-latest", "node_modules", "var",
             "__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache",
             "build", "artifacts"}
TEXT_SUFFIXES = {".md", ".py", ".js", ".html", ".css", ".yaml", ".yml", ".toml", ".json",
                 ".sh", ".ts", ".mjs", ".txt", ".conf", ".cfg", ""}


def _files(suffixes: set[str]) -> list[Path]:
    out = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if any(part in SKIP_DIRS or part.endswith(".egg-info") for part in rel.parts):
            continue
        if path.is_file() and path.suffix in suffixes:
            out.append(path)
    return out


def test_the_contract_documents_are_in_the_repository() -> None:
    for name in ("docs/rules.md", "docs/protocol.md", "openapi.yaml", "asyncapi.yaml"):
        assert (ROOT / name).is_file(), name


MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc", _files({".md"}), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_of_a_document_stays_inside_the_repository(doc: Path) -> None:
    for target in MARKDOWN_LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue  # a web address, or a heading of the same page
        resolved = (doc.parent / target.split("#", 1)[0]).resolve()
        assert resolved.is_relative_to(ROOT), f"{doc.name} links outside the repository: {target}"
        assert resolved.exists(), f"{doc.name} links to a missing file: {target}"


WEB_ADDRESS = re.compile(r"\b(?:https?|wss?)://([^/\s:)`\"'<>,]+)")
THIS_MACHINE = {"127.0.0.1", "localhost", "0.0.0.0", "[::1]"}


@pytest.mark.parametrize("doc", _files({".md", ".yaml", ".yml"}),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_document_sends_its_reader_to_a_web_page(doc: Path) -> None:
    """The repository says everything a client author needs in its own words: a web
    address in a document is the service's own (on this machine), never a page
    elsewhere that may change or vanish (cite a paper by its title instead)."""
    hosts = set(WEB_ADDRESS.findall(doc.read_text(encoding="utf-8")))
    assert hosts - THIS_MACHINE == set(), f"{doc.name} sends its reader to {hosts}"


# Written in two pieces so that this file does not match itself.
MACHINE_PATH = re.compile("/" + r"(work|home|Users|root)/[\w.-]+|\.\./" + "shared")


def test_no_file_names_a_path_of_some_machine() -> None:
    found = []
    for path in _files(TEXT_SUFFIXES):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for line_no, line in enumerate(text.splitlines(), 1):
            if MACHINE_PATH.search(line):
                found.append(f"{path.relative_to(ROOT)}:{line_no}: {line.strip()}")
    assert found == []


def _table_rows(text: str, heading: str) -> list[list[str]]:
    """The rows of the first table under ``heading``, header row left out."""
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    lines = section[section.index("\n|"):].strip().split("\n\n", 1)[0].splitlines()
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def test_the_error_codes_of_the_page_are_the_contracts() -> None:
    rows = _table_rows(PROTOCOL_MD.read_text(encoding="utf-8"), "## Errors")
    table = {row[0].strip("`"): int(row[1]) for row in rows if row[1].isdigit()}
    assert table == dict(HTTP_STATUS)


def test_the_rules_of_a_422_on_the_page_are_the_engines_catalogue() -> None:
    rows = _table_rows(PROTOCOL_MD.read_text(encoding="utf-8"), "### The rules of a 422")
    table = [(row[0].strip("`"), row[1]) for row in rows]
    catalogue = [(rule.value, rule.meaning) for rule in Rule]
    assert table == catalogue, "the table docs/protocol.md should have:\n" + "\n".join(
        f"| `{name}` | {meaning} |" for name, meaning in catalogue)


def test_the_close_codes_of_the_page_are_the_servers() -> None:
    rows = _table_rows(PROTOCOL_MD.read_text(encoding="utf-8"), "## Close codes")
    assert {int(row[0]) for row in rows if row[0].isdigit()} == {int(c) for c in Close}


def test_every_setting_the_page_names_exists() -> None:
    flags = set(re.findall(r"`(--[a-z0-9-]+)`", PROTOCOL_MD.read_text(encoding="utf-8")))
    known = {"--" + f.name.replace("_", "-") for f in dataclasses.fields(Settings)}
    assert flags, "the page names no setting: the parse is broken"
    assert flags - known == set()


def _json_blocks(text: str) -> list[str]:
    return re.findall(r"```json\n(.*?)```", text, re.S)


def test_the_examples_of_the_page_are_what_the_structs_decode() -> None:
    import protocol as p

    blocks = _json_blocks(PROTOCOL_MD.read_text(encoding="utf-8"))
    kinds = []
    for block in blocks:
        block = block.replace(', "...": {}', "")  # "and the other piles"
        if block.count("\n{") or block.startswith('{"type": "move"'):
            commands = [p.decode_command(line) for line in block.strip().splitlines()]
            assert {type(c) for c in commands} == {p.Move, p.Draw, p.Undo, p.Resign}
            kinds.append("commands")
        elif '"error"' in block:
            assert p.decode(block, p.ErrorBody).error.details["rule"]
            kinds.append("error")
        elif '"type": "diff"' in block:
            message = p.decode_server_message(block)
            assert isinstance(message, p.DiffMessage) and message.at is not None
            kinds.append("diff")
        else:
            assert p.decode_game_state(block).seq == 0
            kinds.append("state")
    assert sorted(kinds) == ["commands", "diff", "error", "state"]
