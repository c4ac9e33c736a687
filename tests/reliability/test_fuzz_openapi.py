"""Stateful fuzzing of the whole REST API from openapi.yaml (schemathesis, OpenAPI links).

tests/service/web/test_openapi_contract.py calls every operation on its own; this one
follows the ``links`` of openapi.yaml to make sequences a client would make: create
a game (or a daily attempt), read it, list its legal moves, play the first one at
the seq it was legal at, read the log after it, and so on, with schemathesis
filling in (and breaking) everything the links leave open. Every answer must keep
to the description: no 5xx, a declared status, content type and headers, a body
of the declared schema. The service (a child process) must log no error.

Bounded and deterministic: a fixed number of scenarios of a fixed number of steps,
derandomized, no example database. Hypothesis replays the start of a scenario to try
what else could follow it, and a rule is open only while the answers it needs are in
hand: so the service must answer a replayed request as it did the first time, or
Hypothesis sees other rules open and stops with ``FlakyStrategyDefinition``. Each
scenario is therefore a new player (a player's second ranked daily attempt of a day
is a 409), and every game it makes is given a deal number (without one the server
draws the deal, so the legal moves, and which commands are accepted, would change).
A deal the server keeps secret is still made: a daily attempt's.
"""

from __future__ import annotations

import hashlib
import json
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, Phase, settings

from protocol.schema import OPENAPI_PATH
from service.store.embedded import EmbeddedServer
from tests.live import ServiceProcess, wait_daily_chosen
from tests.redis_servers import flush
from tests.reliability.helpers import assert_clean_process_log

schemathesis = pytest.importorskip(
    "schemathesis", reason="pip install schemathesis==4.32.5 (test extra)"
)

SCENARIOS = 40
VARIANT_IDS = ("gilbert", "shamrocks", "gate", "caprice")
STEPS = 12

schema = schemathesis.openapi.from_path(OPENAPI_PATH).exclude(path_regex=r"/ws$")

CHECKS = [
    schemathesis.checks.not_a_server_error,
    schemathesis.specs.openapi.checks.status_code_conformance,
    schemathesis.specs.openapi.checks.content_type_conformance,
    schemathesis.specs.openapi.checks.response_headers_conformance,
    schemathesis.specs.openapi.checks.response_schema_conformance,
]


def new_player(url: str) -> str:
    """A new player's token."""
    request = urllib.request.Request(
        url + "/v1/players",
        json.dumps({"name": "walker"}).encode(),
        {"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as r:
        return str(json.loads(r.read())["token"])


class Workflow(schema.as_state_machine()):  # type: ignore[misc]
    """Every call of a scenario as the scenario's own new player, on the service of the test."""

    url: ClassVar[str] = ""
    today: ClassVar[str] = ""  # the day of the run's daily attempts, fixed at its start
    calls: ClassVar[dict[str, int]] = {}

    def setup(self) -> None:
        self.token = new_player(self.url)

    def before_call(self, case: Any) -> None:
        """Every new game gets a deal number (the same for the same request). Most of the
        time, name a real variant (and the run's day): else nearly every scenario would
        stop at a 400 and never reach the links."""
        digest = hashlib.sha256(
            repr((case.operation.label, case.path_parameters, case.body)).encode()
        ).digest()
        creates_game = case.operation.label == "POST /v1/games" and isinstance(case.body, dict)
        if creates_game and case.body.get("seed") is None:
            case.body["seed"] = int.from_bytes(digest[2:8], "big")  # < 2^48 < MAX_SEED
        if digest[0] % 5 == 0:
            return
        variant = VARIANT_IDS[digest[1] % len(VARIANT_IDS)]
        if creates_game:
            case.body["variant"] = variant
            case.body.pop("options", None)
        elif case.operation.label == "POST /v1/daily/{date}/{variant}/attempts":
            case.path_parameters.update(variant=variant, date=self.today)

    def get_call_kwargs(self, case: Any) -> dict[str, Any]:
        return {"base_url": self.url, "headers": {"Authorization": f"Bearer {self.token}"}}

    def after_call(self, response: Any, case: Any) -> None:
        key = f"{case.operation.label} {response.status_code}"
        Workflow.calls[key] = Workflow.calls.get(key, 0) + 1

    def validate_response(
        self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any
    ) -> None:
        case.validate_response(response, checks=CHECKS)


@pytest.fixture(scope="module")
def service(
    redis_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServiceProcess]:
    # Players make every call from one address, fast: limits that refill with time would
    # make the answers (and so Hypothesis's replays) depend on the clock. They have tests
    # of their own.
    lifted = {
        "SOLITAIRE_READ_RATE_PER_S": "100000",
        "SOLITAIRE_READ_BURST": "100000",
        "SOLITAIRE_CREATE_RATE_PER_S": "100000",
        "SOLITAIRE_CREATE_BURST": "100000",
        "SOLITAIRE_CREATE_PER_ADDRESS_RATE_PER_S": "100000",
        "SOLITAIRE_CREATE_PER_ADDRESS_BURST": "100000",
        "SOLITAIRE_SIGNUP_PER_ADDRESS_RATE_PER_S": "100000",
        "SOLITAIRE_SIGNUP_PER_ADDRESS_BURST": "100000",
        "SOLITAIRE_RENAMES_PER_DAY": "100000",
        "SOLITAIRE_OPEN_GAMES_PER_PLAYER": "100000",
        # A solution is searched within the request: short, so one never outlasts the
        # request deadline (a 503 "still being searched" is tested with the solver).
        "SOLITAIRE_SOLUTION_SOLVE_S": "1",
        "SOLITAIRE_SOLUTION_SOLVE_NODES": "20000",
    }
    # A store of its own, as every test's: an earlier test's app may have left today's or
    # tomorrow's deals half chosen in the session's server (a lock it did not give back
    # lasts the tests' long solving budget: 20 minutes), and this service waits for them.
    flush(redis_server.url)
    with ServiceProcess(
        redis_server.url, Path(tmp_path_factory.mktemp("stateful")), **lifted
    ) as process:
        wait_daily_chosen(process.url)  # 503 until then, which the fuzzer would count as a failure
        yield process


def test_sequences_that_follow_the_links_keep_to_the_openapi_description(
    service: ServiceProcess,
) -> None:
    Workflow.url = service.url
    Workflow.today = datetime.now(UTC).date().isoformat()
    Workflow.calls = {}
    Workflow.run(
        settings=settings(
            max_examples=SCENARIOS,
            stateful_step_count=STEPS,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate],
        )
    )
    calls = Workflow.calls
    print("\n".join(f"{n:5d} {k}" for k, n in sorted(calls.items())))
    # The links led somewhere: games were made and commands were applied through them.
    assert calls.get("POST /v1/games 201", 0) > 0
    assert calls.get("POST /v1/games/{id}/commands 200", 0) > 0
    assert calls.get("GET /v1/games/{id}/moves 200", 0) > 0
    assert_clean_process_log(service.log())
