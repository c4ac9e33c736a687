"""A setting given a value it cannot take stops the start, saying which setting and why."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from service.settings import Settings, unknown_variables

ROOT = Path(__file__).resolve().parents[2]


def refusal(capsys: pytest.CaptureFixture[str], argv: list[str],
            environ: dict[str, str] | None = None) -> str:
    """The one line ``python -m service`` prints when it refuses these settings (README:
    "one line naming the flag or variable and why", not the usage of every flag)."""
    with pytest.raises(SystemExit) as exited:
        Settings.from_args(argv, environ={} if environ is None else environ)
    assert exited.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    return line


@pytest.mark.parametrize(("argv", "says"), [
    (["--port", "-1"], "--port='-1': must be at least 0"),
    (["--port", "65536"], "--port='65536': must be at most 65535"),
    (["--workers", "0"], "--workers='0': must be at least 1"),
    (["--token-ttl-s", "-5"], "--token-ttl-s='-5': must be at least 1"),
    (["--snapshot-every", "0"], "--snapshot-every='0': must be at least 1"),
    (["--solver-workers", "0"], "--solver-workers='0': must be at least 1"),
    (["--rate-limit-per-s", "0"], "--rate-limit-per-s='0': must be a number above 0"),
    (["--hello-timeout-s", "-1"], "--hello-timeout-s='-1': must be a number above 0"),
    (["--request-deadline-s", "nan"], "--request-deadline-s='nan': must be a number above 0"),
    (["--read-rate-per-s", "inf"], "--read-rate-per-s='inf': must be a number above 0"),
    (["--max-body-bytes", "16k"], "--max-body-bytes='16k' is not a valid int"),
    (["--log-level", "LOUD"], "--log-level='LOUD': expected DEBUG, INFO, WARNING, ERROR or"),
    (["--trusted-proxies", "10.0.0.0/8,lb"], "'lb' is not an address or a network"),
    (["--redis-url", "localhost:6379"], "does not start with redis:// or rediss:// or unix://"),
])
def test_a_value_the_setting_cannot_take_is_refused_by_name(
        capsys: pytest.CaptureFixture[str], argv: list[str], says: str) -> None:
    line = refusal(capsys, argv)
    assert line.startswith("python -m service: error: ") and says in line


def test_a_bad_environment_variable_is_refused_by_name_without_a_traceback(
        capsys: pytest.CaptureFixture[str]) -> None:
    line = refusal(capsys, [], {"SOLITAIRE_PORT": "http"})
    assert line == "python -m service: error: SOLITAIRE_PORT='http' is not a valid int"
    line = refusal(capsys, [], {"SOLITAIRE_WS_SEND_QUEUE": "-512"})
    assert line == "python -m service: error: SOLITAIRE_WS_SEND_QUEUE='-512': must be at least 1"


def test_a_refused_store_url_keeps_its_password_secret(capsys: pytest.CaptureFixture[str]) -> None:
    line = refusal(capsys, ["--redis-url", "http://user:hunter2@redis:6379"])
    assert "redis:6379" in line and "hunter2" not in line


def test_the_least_values_a_setting_may_take_are_taken() -> None:
    settings = Settings.from_args(
        ["--port", "0", "--redis-retries", "0", "--solver-queue", "0", "--replay-max-diffs", "0",
         "--watchers-per-game", "0", "--create-rate-per-s", "0.01", "--log-level", "debug",
         "--redis-url", "h1:7000,redis://h2:7001"], environ={})
    assert (settings.port, settings.redis_retries, settings.solver_queue) == (0, 0, 0)
    assert (settings.replay_max_diffs, settings.watchers_per_game) == (0, 0)
    assert settings.create_rate_per_s == 0.01 and settings.log_level == "DEBUG"


def test_every_default_passes_the_checks_of_its_own_setting() -> None:
    defaults = Settings()
    assert Settings.from_env(defaults.to_env()) == defaults
    assert len(defaults.to_env()) == len(dataclasses.fields(Settings)) - 3  # the unset three


def test_a_misspelt_variable_is_named_with_the_setting_it_resembles() -> None:
    problems = unknown_variables({"SOLITAIRE_DURABLITY": "replicated", "SOLITAIRE_PORT": "80",
                                  "HOME": "/root", "SOLITAIRE_URL": "http://x"})
    assert problems == [
        "SOLITAIRE_DURABLITY is not a setting of the service and is ignored "
        "(did you mean SOLITAIRE_DURABILITY?)",
        "SOLITAIRE_URL is not a setting of the service and is ignored",
    ]


@pytest.mark.parametrize(("argv", "environ", "says"), [
    ([], {"SOLITAIRE_RATE_LIMIT_PER_S": "-20"},
     "SOLITAIRE_RATE_LIMIT_PER_S='-20': must be a number above 0"),
    (["--port", "70000"], {}, "--port='70000': must be at most 65535"),
])
def test_the_service_refuses_a_bad_value_in_one_line_and_starts_nothing(
        tmp_path: Path, argv: list[str], environ: dict[str, str], says: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "service", "--data-dir", str(tmp_path / "data"), *argv],
        env={"PATH": "/usr/bin:/bin", **environ}, cwd=ROOT,
        capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"python -m service: error: {says}"]
    assert not (tmp_path / "data").exists()


def test_the_settings_counted_in_days_say_their_seconds() -> None:
    settings = Settings.from_env({"SOLITAIRE_PLAYER_TTL_DAYS": "2",
                                  "SOLITAIRE_FINISHED_GAME_TTL_DAYS": "3"})
    assert settings.player_ttl_s == 2 * 24 * 3600
    assert settings.finished_game_ttl_s == 3 * 24 * 3600
