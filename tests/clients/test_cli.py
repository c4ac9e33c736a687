"""``python -m clients.python``: the arguments, and both modes run as a user would."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import socket
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from clients.python.__main__ import build_parser, main
from tests.live import ROOT


async def _run(
    *args: str, stdin: bytes = b"", env: Mapping[str, str] | None = None
) -> tuple[int, str, str]:
    """The CLI as a user runs it; ``env`` is added to this process's environment, from
    which SOLITAIRE_URL is removed first so that only the test decides it."""
    environ = {k: v for k, v in os.environ.items() if k != "SOLITAIRE_URL"}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "clients.python",
        *args,
        cwd=ROOT,
        env={**environ, **(env or {})},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.fixture(autouse=True)
def player_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own player file (the CLI's runs inherit the variable): never the
    user's own."""
    path = tmp_path / "config" / "player.json"
    monkeypatch.setenv("SOLITAIRE_PLAYER_FILE", str(path))
    return path


def test_help_names_both_modes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "play" in out and "bot" in out


@pytest.mark.parametrize("mode", ["play", "bot"])
def test_each_mode_has_its_own_help(mode: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([mode, "--help"])
    out = capsys.readouterr().out
    assert "--url" in out and "--seed" in out
    if mode == "play":
        assert "t3 f" in out  # the notation is in the help
    else:
        assert "--games" in out and "--concurrency" in out


def test_arguments_are_checked() -> None:
    parser = build_parser()
    args = parser.parse_args(
        [
            "bot",
            "--games",
            "3",
            "--variant",
            "gate",
            "-c",
            "2",
            "--seed",
            "9",
            "-o",
            "single_card_moves=true",
        ]
    )
    assert (args.games, args.variant, args.concurrency, args.seed) == (3, "gate", 2, 9)
    assert args.option == [("single_card_moves", True)]
    for bad in (["bot", "--games", "0"], ["bot", "-o", "novalue"], ["play"], []):
        with pytest.raises(SystemExit):
            parser.parse_args(bad)


async def test_the_bot_prints_a_json_summary(service_url: str) -> None:
    code, out, err = await _run(
        "bot",
        "--url",
        service_url,
        "--games",
        "2",
        "--variant",
        "gate",
        "--seed",
        "5",
        "--json",
        "--max-steps",
        "60",
    )
    assert code == 0, err
    summary = json.loads(out)
    assert summary["games"] == 2 and summary["failed"] == 0
    assert summary["wins"] + summary["losses"] + summary["resigned"] == 2
    assert {"moves", "commands", "commands_per_s", "elapsed_s"} <= set(summary)
    assert err.count("[") == 2  # one progress line per game


async def test_playing_in_the_terminal(service_url: str) -> None:
    script = b"h\nm\nt9\nt0 t6\nd\nu\nresign\n"
    code, out, err = await _run(
        "play",
        "gilbert",
        "--seed",
        "1",
        "--url",
        service_url,
        "--name",
        "terminal",
        "--no-color",
        stdin=script,
    )
    assert code == 0, err
    assert "Gilbert - game g_" in out and "deal 1" in out
    assert "Piles: t0 t1" in out  # h
    assert "legal: " in out and "t0 t6" in out  # m
    assert "'t9': where to?" in out
    assert "seq 3" in out and out.rstrip().endswith("Resigned.")
    assert "##x6" in out and "\x1b[" not in out


async def test_quitting_the_terminal_leaves_the_game_where_it_is(service_url: str) -> None:
    code, out, err = await _run(
        "play", "gilbert", "--seed", "1", "--url", service_url, "--name", "leaver", "--no-color",
        stdin=b"d\nq\n",
    )
    assert code == 0, err
    assert "stays where it is" in out and "Resigned." not in out


async def test_the_terminal_client_asks_for_a_hint(service_url: str) -> None:
    code, out, err = await _run(
        "play", "gate", "--seed", "13", "--url", service_url, "--name", "hinted", "--no-color",
        stdin=b"hint\nq\n",
    )
    assert code == 0, err
    assert "hint: " in out and "sampled deals of the face-down cards" in out


async def test_a_refused_start_is_said_plainly(service_url: str) -> None:
    code, out, _ = await _run("play", "klondike", "--url", service_url, stdin=b"")
    assert code == 1 and "cannot start: unknown variant 'klondike'" in out


@pytest.fixture
def closed_url() -> Iterator[str]:
    """An address where nothing listens: a port bound (so no one else takes it) but never
    listened on, so a connection to it is refused."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}"


async def test_the_service_address_comes_from_solitaire_url(service_url: str) -> None:
    code, out, err = await _run(
        "bot", "--games", "1", "--variant", "gate", "--seed", "5", "--max-steps", "5", "--json",
        env={"SOLITAIRE_URL": service_url},
    )
    assert code == 0, err
    assert json.loads(out)["games"] == 1


async def test_url_wins_over_solitaire_url(service_url: str, closed_url: str) -> None:
    code, out, err = await _run(
        "play", "gate", "--seed", "5", "--url", service_url, "--no-color",
        stdin=b"resign\n", env={"SOLITAIRE_URL": closed_url},
    )
    assert code == 0, err
    assert out.rstrip().endswith("Resigned.")


@pytest.mark.parametrize(
    "args",
    [("play", "gilbert"), ("bot", "--games", "3", "--concurrency", "2")],
    ids=["play", "bot"],
)
async def test_an_unreachable_service_is_one_clear_line(
    args: tuple[str, ...], closed_url: str
) -> None:
    code, out, err = await _run(*args, env={"SOLITAIRE_URL": closed_url})
    assert code != 0
    assert "Traceback" not in out + err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert closed_url in lines[0]  # the address tried
    assert "connection refused" in lines[0]
    assert "./run" in lines[0] and "python -m service" in lines[0]  # how to start it


def test_the_default_address_is_the_one_run_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOLITAIRE_URL", raising=False)
    assert build_parser().parse_args(["play", "gilbert"]).url == "http://127.0.0.1:8080"
    monkeypatch.setenv("SOLITAIRE_URL", "http://example.test:9000")
    assert build_parser().parse_args(["play", "gilbert"]).url == "http://example.test:9000"
    assert build_parser().parse_args(["bot", "--url", "http://a.test"]).url == "http://a.test"


async def test_the_player_is_kept_in_a_file_of_its_own_and_said_once(
        service_url: str, player_file: Path) -> None:
    runs = [await _run("play", "gilbert", "--url", service_url, "--name", "Kept", "--no-color",
                       stdin=b"q\n") for _ in range(2)]
    assert [code for code, _, _ in runs] == [0, 0]
    first, second = runs[0][1], runs[1][1]
    assert f"kept in {player_file}" in first and str(player_file) not in second
    assert player_file.stat().st_mode & 0o777 == 0o600
    assert player_file.parent.stat().st_mode & 0o777 == 0o700
    code, out, _ = await _run("player", "--url", service_url)
    kept = json.loads(player_file.read_text())[service_url]
    assert code == 0 and kept["token"] in out and "Kept" in out and str(player_file) in out
    # Both games are that one player's.
    from clients.python.rest import Client

    async with Client(service_url, kept["token"]) as client:
        assert len((await client.my_games()).games) == 2


async def test_resume_goes_on_with_an_unfinished_game(service_url: str) -> None:
    code, out, err = await _run("play", "gilbert", "--seed", "1", "--url", service_url,
                                "--no-color", stdin=b"d\nq\n")
    assert code == 0, err
    game_id = out.split("stays where it is")[0].split("The game ")[-1].strip()
    # the line it prints, run as printed (the service is not at the default address)
    printed = shlex.split(out.split("go on with it with `")[1].split("`")[0])
    assert printed[:5] == ["python", "-m", "clients.python", "resume", game_id]
    code, out, err = await _run(*printed[3:], "--no-color", stdin=b"resign\n")
    assert code == 0, err
    assert f"game {game_id}" in out and "seq 1" in out and out.rstrip().endswith("Resigned.")
    code, out, _ = await _run("resume", "--url", service_url, stdin=b"")
    assert code == 1 and "no unfinished game" in out


async def test_a_game_played_by_token_prints_a_resume_line_with_that_token(
        service_url: str, player_file: Path) -> None:
    from clients.python.rest import Client

    async with Client(service_url) as client:
        token = (await client.create_player("by-token")).token
    code, out, err = await _run("play", "gate", "--seed", "1", "--url", service_url,
                                "--token", token, "--no-color", stdin=b"q\n")
    assert code == 0, err
    printed = shlex.split(out.split("go on with it with `")[1].split("`")[0])
    assert printed[-2:] == ["--token", token]
    # run as printed, the kept player file (none here) plays no part
    code, out, err = await _run(*printed[3:], "--no-color", stdin=b"resign\n")
    assert code == 0, err
    assert out.rstrip().endswith("Resigned.") and not player_file.exists()


async def test_resume_lets_the_player_choose_among_unfinished_games(service_url: str) -> None:
    for seed in ("1", "2"):
        await _run("play", "gate", "--seed", seed, "--url", service_url, "--no-color",
                   stdin=b"q\n")
    code, out, err = await _run("resume", "--url", service_url, "--no-color",
                                stdin=b"7\n2\nresign\n")
    assert code == 0, err
    assert " 1. g_" in out and " 2. g_" in out and "say a number from 1 to 2" in out
    assert "deal 1" in out and out.rstrip().endswith("Resigned.")  # the older one


async def test_a_refusal_names_piles_as_the_player_types_them(service_url: str) -> None:
    code, out, err = await _run("play", "gilbert", "--seed", "1", "--url", service_url,
                                "--no-color", stdin=b"t0 t99\nq\n")
    assert code == 0, err
    refusal = out[out.index("illegal move:"):out.index("Bye.")]
    assert "t99" in refusal and "f0" in refusal and "t0" in refusal
    assert "tableau/" not in refusal and "foundation/" not in refusal
    assert all(len(line) < 80 for line in refusal.splitlines())


def test_a_printed_command_names_the_service_and_player_file_when_not_the_defaults(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clients.python.defaults import DEFAULT_URL, command_line

    monkeypatch.delenv("SOLITAIRE_URL", raising=False)
    monkeypatch.setenv("SOLITAIRE_PLAYER_FILE", str(tmp_path / "kept.json"))
    assert command_line("resume", "g_1", url=DEFAULT_URL, player_file=tmp_path / "kept.json") \
        == "python -m clients.python resume g_1"
    monkeypatch.chdir(tmp_path)
    assert command_line("player", url="http://h:1", player_file=Path("other.json")) == (
        f"python -m clients.python player --url http://h:1 --player-file {tmp_path}/other.json")
