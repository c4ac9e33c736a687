"""openapi.yaml makes a usable TypeScript client: openapi-typescript generates its types,
and a program written as docs/protocol.md shows the requests typechecks with openapi-fetch
(optional request fields left out, error details read by name)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protocol.schema import OPENAPI_PATH
from tests.jstools import JS_DIR, NODE_MODULES, run, tool

PROGRAM = JS_DIR / "client.ts"

TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "noEmit": True,
        "target": "ES2022",
        "module": "ESNext",
        "moduleResolution": "Bundler",
        "lib": ["ES2022", "DOM"],
        "skipLibCheck": True,
        "noUncheckedIndexedAccess": True,
    },
    "files": ["client.ts"],
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TypeScript project: the types generated from openapi.yaml, and tests/js's packages."""
    generate = tool("openapi-typescript")
    here = tmp_path_factory.mktemp("ts-client")
    result = run([generate, OPENAPI_PATH, "--output", here / "api.d.ts"])
    assert result.returncode == 0, result.stdout + result.stderr
    (here / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    (here / "tsconfig.json").write_text(json.dumps(TSCONFIG), encoding="utf-8")
    return here


def typecheck(project: Path, source: str) -> str:
    """tsc's complaints about ``source`` as client.ts ("" when it typechecks)."""
    (project / "client.ts").write_text(source, encoding="utf-8")
    result = run([tool("tsc"), "--noEmit", "-p", project / "tsconfig.json"], cwd=project)
    return "" if result.returncode == 0 else result.stdout + result.stderr


def test_the_generated_types_declare_what_clients_read(project: Path) -> None:
    types = (project / "api.d.ts").read_text(encoding="utf-8")
    assert "rule?: string" in types and "seq?: number" in types
    assert "details: Record<string, never>" not in types  # an object with no members


def test_the_protocol_program_typechecks(project: Path) -> None:
    assert typecheck(project, PROGRAM.read_text(encoding="utf-8")) == ""


@pytest.mark.parametrize(
    ("wrong", "by"),
    [
        ('body: { variant: "gilbert" }', 'body: { variant: 7 }'),  # a mistyped field
        ("const current: number | undefined = info.details.seq",
         "const current: string = info.details.seq"),  # details.seq is a number
        ('expected_seq: state.seq + 1', 'expected_seq: "1"'),
    ],
)
def test_a_wrong_program_does_not(project: Path, wrong: str, by: str) -> None:
    """The check can fail: the same program with one mistake is refused."""
    source = PROGRAM.read_text(encoding="utf-8")
    assert wrong in source
    assert typecheck(project, source.replace(wrong, by, 1)) != ""


