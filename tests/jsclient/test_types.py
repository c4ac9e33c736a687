"""The package's types: the wire types and the declarations written from its JSDoc are
current, a consumer's TypeScript under --strict sees every field as it is sent, and every
operation of openapi.yaml is a method of the client."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from protocol.schema import OPENAPI_PATH, components
from protocol.tstypes import WIRE_DTS_PATH, main, render, ts_type
from tests.jstools import run, tool

from .conftest import PACKAGE, node

HERE = Path(__file__).resolve().parent


def test_the_wire_types_are_current() -> None:
    """As `python -m protocol.tstypes --check`."""
    assert main(["--check"]) == 0, "run: python -m protocol.tstypes"
    assert WIRE_DTS_PATH.read_text(encoding="utf-8") == render()


def test_a_field_the_server_always_sends_is_neither_optional_nor_nullable() -> None:
    """Every schema whose properties are all required (what the server sends: msgspec
    writes every field) gives a TypeScript type without `?`; a property is `| null` only
    where its schema allows null."""
    checked = 0
    for name, schema in components().items():
        properties = schema.get("properties")
        if not properties or set(schema.get("required", ())) != set(properties):
            continue
        checked += 1
        text = ts_type(schema)
        top = [line for line in text.splitlines() if re.match(r"^  [a-z_]+\??: ", line)]
        assert len(top) == len(properties), (name, text)
        for line in top:
            assert "?:" not in line, (name, line)
            field = line.strip().split(":")[0]
            nullable = "null" in json.dumps(properties[field])
            assert ("null" in line) == nullable, (name, line)
    assert checked > 20


def test_the_declarations_are_what_tsc_writes_from_the_jsdoc(tmp_path: Path) -> None:
    """types/*.d.ts (but wire.d.ts) are tsc's output for src/ (tsc -p clients/js), and
    src/ typechecks under --strict (checkJs)."""
    out = tmp_path / "types"
    result = run([tool("tsc"), "-p", PACKAGE / "tsconfig.json", "--outDir", out], cwd=PACKAGE)
    assert result.returncode == 0, result.stdout + result.stderr
    written = {p.name: p.read_text(encoding="utf-8") for p in out.glob("*.d.ts")}
    committed = {p.name: p.read_text(encoding="utf-8") for p in (PACKAGE / "types").glob("*.d.ts")
                 if p.name != "wire.d.ts"}
    assert written == committed, "run: tests/js/node_modules/.bin/tsc -p clients/js"


@pytest.mark.parametrize("resolution", ["bundler", "nodenext"])
def test_a_consumer_typechecks_under_strict(tmp_path: Path, resolution: str) -> None:
    """tests/jsclient/consumer.ts, importing the package by name as an installed package
    (node_modules/solitaire-client), compiles with --strict, under a bundler's module
    resolution and under Node's own (nodenext: every relative import of the declarations
    needs its .js); the `@ts-expect-error` lines in it fail the build if what they expect
    stops being an error (a secret seed that is not nullable, a command the protocol does
    not have)."""
    (tmp_path / "package.json").write_text('{"type": "module"}', encoding="utf-8")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "solitaire-client").symlink_to(PACKAGE)
    (tmp_path / "consumer.ts").write_text((HERE / "consumer.ts").read_text(encoding="utf-8"),
                                          encoding="utf-8")
    tsconfig = {
        "compilerOptions": {
            "strict": True, "noEmit": True, "target": "ES2022",
            "module": "ES2022" if resolution == "bundler" else "nodenext",
            "moduleResolution": resolution, "lib": ["ES2022", "DOM"],
            "noUncheckedIndexedAccess": True,
        },
        "files": ["consumer.ts"],
    }
    (tmp_path / "tsconfig.json").write_text(json.dumps(tsconfig), encoding="utf-8")
    result = run([tool("tsc"), "-p", tmp_path / "tsconfig.json"], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


# An operation whose method has another name: the socket is opened as a live game.
METHOD_OF = {"watchGame": "open"}


def test_every_operation_of_openapi_is_a_method_of_the_client() -> None:
    spec = yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))
    operations = {op["operationId"] for item in spec["paths"].values()
                  for op in item.values() if isinstance(op, dict) and "operationId" in op}
    script = ("import('./src/index.js').then(({ Client }) => console.log(JSON.stringify("
              "Object.getOwnPropertyNames(Client.prototype))))")
    done = subprocess.run([node(), "--input-type=module", "-e", script], cwd=PACKAGE,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    methods = set(json.loads(done.stdout))
    missing = {op for op in operations if METHOD_OF.get(op, op) not in methods}
    assert len(operations) > 15 and missing == set(), missing
