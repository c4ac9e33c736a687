"""openapi.yaml makes a usable TypeScript client: openapi-typescript generates its types,
and a program written as docs/protocol.md shows the requests (tests/js/client.ts)
typechecks with openapi-fetch (optional request fields left out, error details read by
name), then runs against a real service and gets the answers the page promises."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol.schema import OPENAPI_PATH
from tests.jstools import JS_DIR, NODE_MODULES, node, run, tool
from tests.live import ServiceProcess

SOURCES = ("client.ts", "main.ts")

TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "target": "ES2022",
        "module": "NodeNext",
        "moduleResolution": "NodeNext",
        "lib": ["ES2022", "DOM"],
        "skipLibCheck": True,
        "noUncheckedIndexedAccess": True,
        "outDir": "out",
    },
    "files": list(SOURCES),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TypeScript project: the types generated from openapi.yaml, the program, and
    tests/js's packages."""
    generate = tool("openapi-typescript")
    here = tmp_path_factory.mktemp("ts-client")
    result = run([generate, OPENAPI_PATH, "--output", here / "api.d.ts"])
    assert result.returncode == 0, result.stdout + result.stderr
    (here / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    (here / "package.json").write_text('{"type": "module", "private": true}', encoding="utf-8")
    (here / "tsconfig.json").write_text(json.dumps(TSCONFIG), encoding="utf-8")
    for name in SOURCES:
        (here / name).write_text((JS_DIR / name).read_text(encoding="utf-8"), encoding="utf-8")
    return here


def compile_(project: Path, client_source: str | None = None) -> str:
    """tsc's complaints ("" when the project typechecks; it then writes out/*.js)."""
    if client_source is not None:
        (project / "client.ts").write_text(client_source, encoding="utf-8")
    result = run([tool("tsc"), "-p", project / "tsconfig.json"], cwd=project)
    return "" if result.returncode == 0 else result.stdout + result.stderr


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    with ServiceProcess(None, tmp_path_factory.mktemp("ts-service")) as process:
        yield process


def test_the_generated_types_declare_what_clients_read(project: Path) -> None:
    types = (project / "api.d.ts").read_text(encoding="utf-8")
    assert "rule?: string" in types and "seq?: number" in types
    assert "details: Record<string, never>" not in types  # an object with no members
    assert "count?: number" in types  # a request field with a default may be left out


def test_the_protocol_program_typechecks_and_runs(project: Path, service: ServiceProcess) -> None:
    assert compile_(project, (JS_DIR / "client.ts").read_text(encoding="utf-8")) == ""
    node()
    result = run(["node", project / "out" / "main.js", service.url], cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    said = json.loads(result.stdout)
    assert said == [
        "gilbert at seq 0, 24 cards in the stock",
        "refused by nothing_to_move at seq 0",
        "diff 1 with its time and hash, playing",
        "resent: seq 1",
        "stale: the game is at seq 1",
        "moves at seq 1: 1 draw, can undo: true",
        "1 event: draw",
        "gilbert, shamrocks, gate, caprice",
    ]


@pytest.mark.parametrize(
    ("wrong", "by"),
    [
        ('body: { variant: "gilbert" }', "body: { variant: 7 }"),  # a mistyped field
        ("const current: number | undefined = info.details.seq",
         "const current: string = info.details.seq"),  # details.seq is a number
        ("expected_seq: state.seq", 'expected_seq: "0"'),
        ('command: { type: "draw" }, command_id', 'command: { type: "deal" }, command_id'),
    ],
)
def test_a_wrong_program_does_not_typecheck(project: Path, wrong: str, by: str) -> None:
    """The check can fail: the same program with one mistake is refused."""
    source = (JS_DIR / "client.ts").read_text(encoding="utf-8")
    assert wrong in source
    assert compile_(project, source.replace(wrong, by, 1)) != ""
