"""protocol.schema: the generated components, their regeneration, and that every
message the Structs encode is valid against them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest

import protocol as p
from protocol.schema import MARKER, OPENAPI_PATH, UNIONS, components, main, regenerate

from .examples import MESSAGES


def _name(type_: Any) -> str:
    for name, union in UNIONS.items():
        if union is type_:
            return name
    return str(type_.__name__)


@pytest.mark.parametrize("case", MESSAGES, ids=[type(m).__name__ for _, m in MESSAGES])
def test_every_encoded_message_satisfies_its_schema(case: tuple[Any, Any]) -> None:
    type_, message = case
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "components": {"schemas": components()},
        "$ref": f"#/components/schemas/{_name(type_)}",
    }
    jsonschema.validate(msgspec.json.decode(p.encode(message)), schema)


def test_the_schema_says_what_decoding_refuses() -> None:
    schema = {"components": {"schemas": components()}, "$ref": "#/components/schemas/CreateGame"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"variant": "gilbert", "seed": 2**53}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"variant": "gilbert", "colour": "red"}, schema)


def test_unions_have_names_and_discriminators() -> None:
    schemas = components()
    assert schemas["Command"]["discriminator"]["propertyName"] == "type"
    assert schemas["Op"]["discriminator"]["propertyName"] == "op"
    assert set(schemas["ServerMessage"]["discriminator"]["mapping"]) == {
        "snapshot",
        "synced",
        "diff",
        "ack",
        "error",
        "pong",
        "moves",
    }


# Fields with a default in their Struct that the server nevertheless always writes.
ALWAYS_SENT = [
    ("Events", "next_after"),  # null on the last page, but there
    ("Stats", "hints"),
    ("Challenge", "winnable"),
    ("Challenge", "par"),
    ("Diff", "type"),
    ("Diff", "at"),
    ("Diff", "hash"),
    ("DiffMessage", "at"),
    ("DiffMessage", "hash"),
    ("Event", "hash"),
]


@pytest.mark.parametrize(("name", "field"), ALWAYS_SENT, ids=[f"{n}.{f}" for n, f in ALWAYS_SENT])
def test_what_the_server_always_sends_is_required(name: str, field: str) -> None:
    """msgspec writes every field of what the server sends, defaults too: a client
    generated from the schema may count on each."""
    assert field in components()[name]["required"]


def test_what_a_client_may_leave_out_stays_optional() -> None:
    schemas = components()
    assert schemas["CreateGame"]["required"] == ["variant"]
    assert schemas["CommandRequest"]["required"] == ["command"]
    assert schemas["Hello"]["required"] == ["type"]
    assert "expected_seq" not in schemas["CommandMessage"]["required"]
    # A command is also what clients send (and what the server sends back in diffs).
    assert "count" not in schemas["Move"]["required"]
    # Left out unless the error answers a command (ErrorMessage omits its defaults).
    assert "command_id" not in schemas["ErrorMessage"]["required"]


def test_move_is_written_with_from() -> None:
    assert set(components()["Move"]["properties"]) == {"type", "from", "to", "count"}


def test_main_checks_and_regenerates_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "openapi.yaml"
    shutil.copy(OPENAPI_PATH, copy)
    assert main(["--check", str(copy)]) == 0
    fresh = copy.read_text(encoding="utf-8")
    copy.write_text(fresh.replace("title: GameState", "title: Game"), encoding="utf-8")
    assert main(["--check", str(copy)]) == 1
    assert "out of date" in capsys.readouterr().out
    assert main([str(copy)]) == 0
    assert copy.read_text(encoding="utf-8") == fresh


def test_regenerate_keeps_the_hand_written_part() -> None:
    text = "openapi: 3.1.0\ncomponents:\n  securitySchemes: {}\n" + MARKER + "\n  schemas: {}\n"
    out = regenerate(text)
    assert out.startswith("openapi: 3.1.0\ncomponents:\n  securitySchemes: {}\n" + MARKER)
    assert "    GameState:" in out


def test_regenerate_needs_the_marker() -> None:
    with pytest.raises(ValueError, match="marker"):
        regenerate("openapi: 3.1.0\n")
