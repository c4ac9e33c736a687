"""The JavaScript client package in Node (``node --test`` on clients/js/test/), against
real services started here: whole games to `won`, a socket dropped mid-game, an answer
lost, 429 and 503 waited out, an expired token, watchers."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.domain.auth import Tokens
from service.runtime.clock import Clock
from service.store.embedded import EmbeddedServer
from tests.live import TOKEN_SECRET, ServiceProcess
from tests.web.helpers import http

from .conftest import NODE_FLAGS, PACKAGE, node

TESTS = PACKAGE / "test"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    with ServiceProcess(None, tmp_path_factory.mktemp("js-service")) as process:
        yield process


def run_node(test_file: str, env: dict[str, str], timeout_s: float = 600) -> None:
    """Run one test file of the package with node's test runner; fail with its report."""
    done = subprocess.run(
        [node(), *NODE_FLAGS, "--test", "--test-reporter=spec", "--test-timeout=180000",
         str(TESTS / test_file)],
        cwd=PACKAGE, env={**os.environ, **env}, capture_output=True, text=True,
        timeout=timeout_s, check=False)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    assert "ℹ fail 0" in report, report
    assert "ℹ skipped 0" in report and "ℹ todo 0" in report, report  # every test ran
    assert "ℹ pass 0" not in report and "ℹ tests 0" not in report, report


def test_whole_games_to_won_watched_and_refusals(service: ServiceProcess,
                                                 winning_lines: Path) -> None:
    run_node("games.test.js", {"SOLITAIRE_URL": service.url,
                               "SOLITAIRE_LINES": str(winning_lines)})


def test_a_socket_dropped_mid_game_resumes_with_no_diff_lost_or_twice(
        service: ServiceProcess, winning_lines: Path) -> None:
    run_node("resume.test.js", {"SOLITAIRE_URL": service.url,
                                "SOLITAIRE_LINES": str(winning_lines)})


def test_a_command_whose_answer_is_lost_is_resent_once_and_applied_once(
        service: ServiceProcess, winning_lines: Path) -> None:
    run_node("resend.test.js", {"SOLITAIRE_URL": service.url,
                                "SOLITAIRE_LINES": str(winning_lines)})


def test_429_503_and_1013_are_waited_out(tmp_path: Path, winning_lines: Path) -> None:
    store = EmbeddedServer(tmp_path / "store", appendfsync="always")
    store.start()
    try:
        limited = ServiceProcess(None, tmp_path / "limited", SOLITAIRE_RATE_LIMIT_PER_S="1",
                                 SOLITAIRE_RATE_LIMIT_BURST="2", SOLITAIRE_READ_RATE_PER_S="1",
                                 SOLITAIRE_READ_BURST="2", SOLITAIRE_RENAMES_PER_DAY="1")
        pausable = ServiceProcess(store.url, tmp_path / "pausable",
                                  SOLITAIRE_REQUEST_DEADLINE_S="1",
                                  SOLITAIRE_REDIS_TIMEOUT_S="2", SOLITAIRE_REDIS_RETRIES="3")
        with limited, pausable:
            assert store.pid is not None
            run_node("waits.test.js", {"SOLITAIRE_LIMITED_URL": limited.url,
                                       "SOLITAIRE_PAUSABLE_URL": pausable.url,
                                       "SOLITAIRE_STORE_PID": str(store.pid),
                                       "SOLITAIRE_LINES": str(winning_lines)})
    finally:
        store.stop()


SHORT_TOKEN_S = 6


def test_an_expired_token_is_reported_as_such(service: ServiceProcess) -> None:
    status, player = http("POST", f"{service.url}/v1/players", body={"name": "Brief"})
    assert status == 201, player
    short = Tokens(TOKEN_SECRET.encode(), SHORT_TOKEN_S, Clock()).issue(player["player_id"])
    status, created = http("POST", f"{service.url}/v1/games", short, {"variant": "gilbert"})
    assert status == 201, created
    run_node("token.test.js", {"SOLITAIRE_URL": service.url, "SOLITAIRE_SHORT_TOKEN": short,
                               "SOLITAIRE_SHORT_GAME": created["game_id"]})
