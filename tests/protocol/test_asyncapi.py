"""asyncapi.yaml: generated from the Structs, up to date, every WebSocket message in it,
and valid for the AsyncAPI project's own parser."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, get_args

import jsonschema
import msgspec
import pytest
import yaml

import protocol as p
from protocol.asyncapi import ASYNCAPI_PATH, asyncapi_schema, main, render
from protocol.schema import components
from tests.jstools import JS_DIR, node, run

from .examples import MESSAGES

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    with ASYNCAPI_PATH.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


def test_asyncapi_yaml_is_at_the_repository_root() -> None:
    assert ASYNCAPI_PATH == ROOT / "asyncapi.yaml"


def test_it_is_up_to_date() -> None:
    """As `python -m protocol.asyncapi --check`: the file is byte for byte what it writes."""
    assert ASYNCAPI_PATH.read_text(encoding="utf-8") == render(), "run: python -m protocol.asyncapi"


def test_main_checks_and_rewrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "asyncapi.yaml"
    shutil.copy(ASYNCAPI_PATH, copy)
    assert main(["--check", str(copy)]) == 0
    copy.write_text(render().replace("title: Hello", "title: Hi"), encoding="utf-8")
    assert main(["--check", str(copy)]) == 1
    assert "out of date" in capsys.readouterr().out
    assert main([str(copy)]) == 0
    assert copy.read_text(encoding="utf-8") == render()


def _tags(union: Any) -> set[str]:
    return {cls.__struct_config__.tag for cls in get_args(union)}


def test_every_websocket_message_is_in_it(doc: dict[str, Any]) -> None:
    messages = doc["components"]["messages"]
    assert set(messages) == _tags(p.ClientMessage) | _tags(p.ServerMessage)
    received = {m["$ref"].rsplit("/", 1)[1] for op in doc["operations"].values()
                if op["action"] == "receive" for m in op["messages"]}
    assert received == _tags(p.ClientMessage)


def test_it_names_every_close_code_of_the_server(doc: dict[str, Any]) -> None:
    from service.socket.messages import Close

    described = {int(c) for c in re.findall(r"\b(1\d{3})\b", doc["info"]["description"])}
    assert described == {int(c) for c in Close}


def test_its_schemas_are_the_openapi_ones(doc: dict[str, Any]) -> None:
    """One source: each schema is openapi.yaml's, with AsyncAPI's form of discriminator."""
    shared = components()
    schemas = doc["components"]["schemas"]
    assert {"Hello", "CommandMessage", "DiffMessage", "ErrorInfo", "GameState"} <= set(schemas)
    for name, schema in schemas.items():
        assert schema == asyncapi_schema(shared[name]), name
    assert schemas["CommandMessage"]["properties"]["command"]["discriminator"] == "type"


WS_MESSAGES = [m for t, m in MESSAGES if isinstance(m, (p.BaseClientMessage, p.BaseServerMessage))]


@pytest.mark.parametrize("message", WS_MESSAGES, ids=[type(m).__name__ for m in WS_MESSAGES])
def test_every_encoded_message_satisfies_its_schema(doc: dict[str, Any], message: Any) -> None:
    tag = type(message).__struct_config__.tag
    ref = doc["components"]["messages"][tag]["payload"]["$ref"]
    schema = {"$schema": "http://json-schema.org/draft-07/schema#",
              "components": doc["components"], "$ref": ref}
    jsonschema.validate(msgspec.json.decode(p.encode(message)), schema)


def test_the_asyncapi_parser_accepts_it() -> None:
    node()
    result = run(["node", "validate_asyncapi.mjs", ASYNCAPI_PATH])
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["ok"] and summary["version"] == "3.1.0"
    assert set(summary["messages"]) == _tags(p.ClientMessage) | _tags(p.ServerMessage)


def test_the_asyncapi_parser_refuses_a_broken_document(tmp_path: Path) -> None:
    """The check can fail: OpenAPI's discriminator object is not AsyncAPI's."""
    node()
    broken = yaml.safe_load(render())
    broken["components"]["schemas"]["CommandMessage"] = components()["CommandMessage"]
    path = tmp_path / "asyncapi.yaml"
    path.write_text(yaml.safe_dump(broken), encoding="utf-8")
    result = run(["node", JS_DIR / "validate_asyncapi.mjs", path])
    assert result.returncode == 1, result.stdout + result.stderr
    assert "CommandMessage" in result.stdout
