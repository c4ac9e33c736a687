"""openapi.yaml: valid OpenAPI 3.1, schemas generated from the Structs, every endpoint
of docs/protocol.md, and errors declared where they can happen."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from openapi_spec_validator import validate

import protocol as p
from protocol.schema import OPENAPI_PATH, components, regenerate

ROOT = Path(__file__).resolve().parents[2]
METHODS = ("get", "put", "post", "patch", "delete")

# Every endpoint of docs/protocol.md, also listed here so that a page that lost
# its REST table still leaves each one checked.
ENDPOINTS = [
    ("get", "/v1/variants"),
    ("post", "/v1/players"),
    ("patch", "/v1/players/me"),
    ("post", "/v1/games"),
    ("get", "/v1/games/{id}"),
    ("post", "/v1/games/{id}/commands"),
    ("get", "/v1/games/{id}/moves"),
    ("get", "/v1/games/{id}/events"),
    ("get", "/v1/games/{id}/ws"),
    ("get", "/v1/daily"),
    ("post", "/v1/daily/{date}/{variant}/attempts"),
    ("get", "/v1/daily/{date}/{variant}/leaderboard"),
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/metrics"),
    ("get", "/openapi.yaml"),
    ("get", "/asyncapi.yaml"),
]


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    with OPENAPI_PATH.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


def operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, op)
        for path, item in spec["paths"].items()
        for method, op in item.items()
        if method in METHODS
    ]


def test_openapi_yaml_is_at_the_repository_root() -> None:
    assert OPENAPI_PATH == ROOT / "openapi.yaml"


def test_it_is_valid_openapi_3_1(spec: dict[str, Any]) -> None:
    assert spec["openapi"].startswith("3.1")
    validate(spec)


def test_component_schemas_are_exactly_the_generated_ones(spec: dict[str, Any]) -> None:
    assert spec["components"]["schemas"] == components()


def test_the_generated_section_is_up_to_date() -> None:
    """As `python -m protocol.schema --check`: the file is byte for byte what it writes."""
    text = OPENAPI_PATH.read_text(encoding="utf-8")
    assert regenerate(text) == text, "run: python -m protocol.schema"


PROTOCOL_MD = ROOT / "docs" / "protocol.md"


def protocol_endpoints(text: str) -> set[tuple[str, str]]:
    """(method, path) of every endpoint docs/protocol.md names, query strings dropped;
    a path of the REST table without /v1 is under /v1."""
    found: set[tuple[str, str]] = set()
    mention = re.compile(r"`(GET|POST|PATCH|PUT|DELETE) (/[^`?\s]*)")
    for line in text.splitlines():
        in_table = line.startswith("| `")
        for method, path in mention.findall(line):
            if in_table and not path.startswith("/v1/"):
                path = "/v1" + path
            found.add((method.lower(), path))
    return found


def test_every_endpoint_of_protocol_md_is_described(spec: dict[str, Any]) -> None:
    named = protocol_endpoints(PROTOCOL_MD.read_text(encoding="utf-8"))
    # The REST table alone has ten rows: a parse that finds fewer is broken.
    assert len(named) >= 14
    described = {(m, pth) for m, pth, _ in operations(spec)}
    missing = set()
    for method, pth in named:
        # Outside the table the page may write /daily for /v1/daily.
        if (method, pth) not in described and (method, "/v1" + pth) not in described:
            missing.add((method, pth))
    assert missing == set()


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_endpoint_is_described(spec: dict[str, Any], method: str, path: str) -> None:
    assert method in spec["paths"].get(path, {})


def test_every_error_response_is_an_error_body(spec: dict[str, Any]) -> None:
    responses = spec["components"]["responses"]
    for method, path, op in operations(spec):
        for status, response in op["responses"].items():
            if int(status) < 400:
                continue
            if "$ref" in response:
                response = responses[response["$ref"].rsplit("/", 1)[1]]
            schema = response["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (method, path, status)


def test_429_and_503_wherever_they_can_happen(spec: dict[str, Any]) -> None:
    for method, path, op in operations(spec):
        if path.startswith("/v1/"):
            assert {"429", "503"} <= set(op["responses"]), (method, path)
    assert "503" in spec["paths"]["/readyz"]["get"]["responses"]


def test_413_wherever_there_is_a_body(spec: dict[str, Any]) -> None:
    for method, path, op in operations(spec):
        if "requestBody" in op:
            assert "413" in op["responses"], (method, path)
            assert "400" in op["responses"], (method, path)


def test_a_token_is_declared_where_it_is_needed_or_read(spec: dict[str, Any]) -> None:
    needs = {
        ("patch", "/v1/players/me"),
        ("post", "/v1/games"),
        ("post", "/v1/games/{id}/commands"),
        ("post", "/v1/daily/{date}/{variant}/attempts"),
    }
    for method, path, op in operations(spec):
        security = op.get("security", [])
        if (method, path) in needs:
            assert security == [{"bearer": []}], (method, path)
        if security:
            assert "401" in op["responses"], (method, path)
    assert set(spec["components"]["securitySchemes"]) == {"bearer"}


def test_status_codes_of_protocol_md(spec: dict[str, Any]) -> None:
    def codes(method: str, path: str) -> set[str]:
        return set(spec["paths"][path][method]["responses"])

    assert {"201"} <= codes("post", "/v1/players")
    assert {"201"} <= codes("post", "/v1/games")
    assert {"200", "409", "422", "403", "404"} <= codes("post", "/v1/games/{id}/commands")
    assert {"201", "409", "403"} <= codes("post", "/v1/daily/{date}/{variant}/attempts")
    assert "101" in codes("get", "/v1/games/{id}/ws")
    assert "text/plain" in spec["paths"]["/metrics"]["get"]["responses"]["200"]["content"]


def test_the_websocket_messages_are_components(spec: dict[str, Any]) -> None:
    messages = spec["paths"]["/v1/games/{id}/ws"]["get"]["x-websocket-messages"]
    assert messages == {
        "client": {"$ref": "#/components/schemas/ClientMessage"},
        "server": {"$ref": "#/components/schemas/ServerMessage"},
    }


def _constraints(schema: dict[str, Any]) -> dict[str, Any]:
    """A field's schema without prose, and without the null of an optional value."""
    if "anyOf" in schema:
        (schema,) = [s for s in schema["anyOf"] if s != {"type": "null"}]
    keep = ("type", "format", "pattern", "minimum", "maximum", "minLength", "maxLength")
    return {k: v for k, v in schema.items() if k in keep}


@pytest.mark.parametrize(
    ("parameter", "struct", "field"),
    [
        ("After", p.EventsQuery, "after"),
        ("DailyDate", p.DailyQuery, "date"),
        ("Date", p.DailyQuery, "date"),
        ("Limit", p.LeaderboardQuery, "limit"),
        ("Cursor", p.LeaderboardQuery, "cursor"),
        ("Variant", p.Challenge, "variant"),
    ],
)
def test_parameters_agree_with_the_query_structs(
    spec: dict[str, Any], parameter: str, struct: type, field: str
) -> None:
    (_,), schemas = msgspec.json.schema_components([struct])
    expected = schemas[struct.__name__]["properties"][field]
    declared = spec["components"]["parameters"][parameter]["schema"]
    assert _constraints(declared) == _constraints(expected)
    default = expected.get("default")
    assert declared.get("default") == default
