"""Issue 11, point 11: the crash paths found by fuzzing, and two found by reading.

- JSON nested deeper than the decoder's recursion limit is a bad message
  (``bad_request``), on a live socket, as a hello and as a REST body: no
  traceback, and a live socket goes on.
- A ``hello`` whose ``since`` is beyond the game's ``seq`` gets ``bad_request``
  and the socket stays open for a correct hello (PROTOCOL.md "later additions"),
  first hello and hello on a live socket alike.
- A refused hello's close reason is cut between characters (valid UTF-8).
- ``python -m service``: a failure of the service is not chained to uvloop's ImportError.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from service.app import Context
from service.socket.messages import Close, close_reason
from tests.live import ROOT, settings_for_test
from tests.reliability.helpers import LogWatch
from tests.service.helpers import Api, running_app, socket

DEEP = 3_000  # past msgspec's recursion limit (about 1,000), under the 8 KiB message limit


@pytest.fixture
async def live(redis_url: str, tmp_path: Path) -> AsyncIterator[tuple[Api, Context]]:
    async with running_app(settings_for_test(redis_url, tmp_path)) as (base, ctx), \
            aiohttp.ClientSession() as session:
        yield Api(session, base), ctx


def deep(message_type: str) -> str:
    # Unknown fields before the tag are skipped by the tagged union's decoder: recursively.
    return '{"x":' + "[" * DEEP + "]" * DEEP + f',"type":"{message_type}"}}'


async def test_deeply_nested_json_on_a_live_socket_is_a_bad_request_and_the_socket_lives_on(
        live: tuple[Api, Context], service_log: LogWatch) -> None:
    api, _ = live
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=5))["game_id"]
    async with socket(api.session, api.base, game_id) as sock:
        await sock.hello(token)
        for kind in ("command", "ping", "hello"):
            await sock.send(deep(kind))
            reply = await sock.recv()
            assert reply["type"] == "error" and reply["error"]["code"] == "bad_request", reply
            assert "nested too deeply" in reply["error"]["message"]
        await sock.send({"type": "ping"})
        assert await sock.recv() == {"type": "pong"}
    service_log.assert_no_tracebacks()


async def test_deeply_nested_json_as_a_hello_is_refused_with_1008(
        live: tuple[Api, Context], service_log: LogWatch) -> None:
    api, _ = live
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=5))["game_id"]
    async with socket(api.session, api.base, game_id) as sock:
        await sock.send(deep("hello"))
        messages, code = await sock.closed()
        assert code == Close.POLICY_VIOLATION
        assert messages[0]["error"]["code"] == "bad_request"
    service_log.assert_no_tracebacks()


@pytest.mark.parametrize("path", ["/v1/players", "/v1/games"])
async def test_deeply_nested_json_in_a_rest_body_is_400(
    live: tuple[Api, Context], service_log: LogWatch, path: str
) -> None:
    api, _ = live
    _, token = await api.player()
    body = '{"x":' + "[" * 5000 + "]" * 5000 + "}"  # under the 16 KiB body limit
    reply = await api.request(
        "POST", path, token, data=body, headers={"Content-Type": "application/json"}
    )
    assert reply.status == 400 and reply.error["code"] == "bad_request", reply.raw[:200]
    service_log.assert_no_tracebacks()


async def test_a_hello_since_beyond_the_seq_is_a_bad_request_and_the_socket_stays_open(
        live: tuple[Api, Context]) -> None:
    api, _ = live
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=5, public=True))["game_id"]
    for _ in range(3):
        await api.command(token, game_id, {"type": "draw"})
    async with socket(api.session, api.base, game_id) as sock:
        await sock.send({"type": "hello", "since": 4})
        refused = await sock.recv()
        assert refused["error"]["code"] == "bad_request" and refused["error"]["details"] == {
            "since": 4,
            "seq": 3,
        }
        assert [m["type"] for m in await sock.hello(since=1)] == ["diff", "diff", "synced"]
        # Live now: a hello beyond the seq again, then a correct one on the same socket.
        await sock.send({"type": "hello", "since": 9})
        refused = await sock.recv()
        assert refused["type"] == "error" and refused["error"]["details"] == {"since": 9, "seq": 3}
        assert await sock.hello(since=3) == [{"type": "synced", "seq": 3}]
        await sock.send({"type": "ping"})
        assert await sock.recv() == {"type": "pong"}


def test_a_close_reason_is_cut_between_characters() -> None:
    for prefix in range(0, 8):
        text = "x" * prefix + "é€😀" * 60
        reason = close_reason(text)
        assert len(reason) <= 123
        assert text.startswith(reason.decode("utf-8"))  # strict: raises on a cut character
        assert len(reason) >= 120  # cut at most 3 bytes short of the limit


async def test_a_refused_hello_with_a_long_non_ascii_reason_still_closes_with_1008(
        live: tuple[Api, Context]) -> None:
    api, _ = live
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=5))["game_id"]
    # The refusal names the unknown field. aiohttp's client, like a browser, fails a
    # close frame whose reason is not UTF-8: every alignment of 1-, 2-, 3- and 4-byte
    # characters against the cut is tried.
    for pad in range(4):
        field = "x" * pad + "é€😀" * 30
        async with socket(api.session, api.base, game_id) as sock:
            await sock.send(json.dumps({"type": "hello", field: 1}, ensure_ascii=False))
            messages, code = await sock.closed()
            assert code == Close.POLICY_VIOLATION, (pad, code)
            assert messages[0]["error"]["code"] == "bad_request"


def test_a_failing_service_traceback_is_not_chained_to_uvloops_import_error(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "sys.modules['uvloop'] = None  # as if not installed: importing it raises ImportError\n"
        "import service.__main__ as m\n"
        "async def serve(settings):\n"
        "    raise RuntimeError('the service failed')\n"
        "m.serve = serve\n"
        "m.main(['--data-dir', sys.argv[1]])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "the service failed" in done.stderr
    assert "uvloop" not in done.stderr and "During handling" not in done.stderr, done.stderr
