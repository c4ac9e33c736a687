"""openapi.yaml against the running service: schemathesis generates requests for every
operation (valid and invalid ones) and checks that no answer is a 5xx, and that every
answer has a declared status, content type, headers and a body matching its schema.

(That openapi.yaml is valid OpenAPI 3.1 is tests/protocol/test_openapi.py's part.)

Bounded and deterministic: at most ``MAX_EXAMPLES`` cases per operation, derandomized,
no example database. The service runs as a child process (schemathesis calls it with
a blocking client), on the suite's store; paths with a game id get, most of the time,
one of a few real games (the owner's, a public game of another player, a private game
of another player) so that commands reach the rules and not only the 404.
"""

from __future__ import annotations

import hashlib
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings

from protocol.schema import OPENAPI_PATH
from service.store.embedded import EmbeddedServer
from tests.live import ServiceProcess, wait_daily_chosen

schemathesis = pytest.importorskip(
    "schemathesis", reason="pip install schemathesis==4.32.5 (test extra)"
)

MAX_EXAMPLES = 30

schema = schemathesis.openapi.from_path(OPENAPI_PATH)
# The WebSocket upgrade is not REST: tests/service/socket/test_ws.py covers it.
schema = schema.exclude(path_regex=r"/ws$")

CHECKS = [
    schemathesis.checks.not_a_server_error,
    schemathesis.specs.openapi.checks.status_code_conformance,
    schemathesis.specs.openapi.checks.content_type_conformance,
    schemathesis.specs.openapi.checks.response_headers_conformance,
    schemathesis.specs.openapi.checks.response_schema_conformance,
    schemathesis.specs.openapi.checks.negative_data_rejection,
]


def _post(url: str, body: dict[str, Any], token: str | None = None) -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    with urllib.request.urlopen(request, timeout=10) as r:
        return json.loads(r.read())


class Service:
    def __init__(self, process: ServiceProcess) -> None:
        self.process = process
        url = self.url = process.url
        me = _post(url + "/v1/players", {"name": "fuzzer"})
        other = _post(url + "/v1/players", {"name": "other"})
        self.token = me["token"]
        self.games = [
            _post(url + "/v1/games", {"variant": v, "seed": 42}, self.token)["game_id"]
            for v in ("gilbert", "shamrocks", "gate", "caprice")
        ]
        self.games.append(
            _post(url + "/v1/games", {"variant": "gate", "public": True}, other["token"])["game_id"]
        )
        self.games.append(
            _post(url + "/v1/games", {"variant": "gilbert"}, other["token"])["game_id"]
        )


@pytest.fixture(scope="module")
def service(
    redis_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    # A solution search waits at most its budget (+5 s) before a 503: below the 10 s the
    # generated requests wait for an answer.
    with ServiceProcess(redis_server.url, Path(tmp_path_factory.mktemp("contract")),
                        SOLITAIRE_SOLUTION_SOLVE_S="2") as process:
        wait_daily_chosen(process.url)  # GET /v1/daily is a 503 until then
        yield Service(process)


def _pick(case: Any, choices: list[str]) -> str | None:
    """A deterministic choice for this case: a real game most of the time, else None."""
    digest = hashlib.sha256(repr((case.operation.label, case.path_parameters, case.body,
                                  case.query)).encode()).digest()
    return None if digest[0] % 5 == 0 else choices[digest[1] % len(choices)]


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
def test_the_service_keeps_to_its_openapi_description(case: Any, service: Service) -> None:
    if case.path_parameters and "id" in case.path_parameters:
        game = _pick(case, service.games)
        if game is not None:
            case.path_parameters["id"] = game
    case.call_and_validate(
        base_url=service.url, headers={"Authorization": f"Bearer {service.token}"}, checks=CHECKS
    )


def test_the_service_logged_no_error_meanwhile(service: Service) -> None:
    """Runs after the cases above: nothing they sent made the service log an error."""
    bad = [line for line in service.process.log().splitlines()
           if " ERROR " in line or " CRITICAL " in line or line.startswith("Traceback")]
    assert not bad, "the service logged:\n" + "\n".join(bad[:10])
