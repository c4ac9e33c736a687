"""The patch of aiohttp (service/web/aiohttp_handle_error_patch.py) still fits the aiohttp
installed: its version is within the range the patch was checked against, the method it
replaces has the signature the patch calls, and on a bare aiohttp server (no middleware of
ours) a request aiohttp cannot parse, or a handler's failure that escapes the application,
still reaches ``handle_error``, which still logs and still refuses to answer once a
response was started."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import re
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web, web_protocol

from service.web.aiohttp_handle_error_patch import CHECKED, ORIGINAL, json_protocol_errors


def _minor(version: str) -> tuple[int, int]:
    major, minor = re.findall(r"\d+", version)[:2]
    return int(major), int(minor)


def test_the_installed_aiohttp_is_within_the_range_the_patch_was_checked_against() -> None:
    low, high = CHECKED
    assert low <= _minor(aiohttp.__version__) < high, (
        f"aiohttp {aiohttp.__version__} is outside the range the patch of handle_error was "
        f"checked against ({low} to {high}): read service/web/aiohttp_handle_error_patch.py "
        "against it, then widen CHECKED")


def test_handle_error_takes_what_the_patch_passes_it() -> None:
    assert list(inspect.signature(ORIGINAL).parameters) == [
        "self", "request", "status", "exc", "message"]


def test_the_patch_is_made_once() -> None:
    json_protocol_errors()
    patched = web_protocol.RequestHandler.handle_error
    json_protocol_errors()
    assert web_protocol.RequestHandler.handle_error is patched is not ORIGINAL


async def _fails(request: web.Request) -> web.StreamResponse:
    raise RuntimeError("a bug")


async def _fails_midway(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse()
    await response.prepare(request)
    await response.write(b"partial")
    raise RuntimeError("a bug after the response began")


@pytest.fixture
async def bare_port() -> AsyncIterator[int]:
    """A bare aiohttp server on a loopback port, its handle_error patched: none of the
    service's middlewares stands between aiohttp and the handlers."""
    json_protocol_errors()
    app = web.Application()
    app.router.add_get("/fails", _fails)
    app.router.add_get("/fails-midway", _fails_midway)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield runner.addresses[0][1]
    finally:
        await runner.cleanup()


async def _raw(port: int, data: bytes) -> bytes:
    """Everything the server answers to ``data`` until it closes the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        async with asyncio.timeout(30):
            return await reader.read(-1)
    finally:
        writer.close()


def _json_error(reply: bytes) -> tuple[int, dict[str, object]]:
    head, _, body = reply.partition(b"\r\n\r\n")
    assert b"application/json" in head, reply[:300]
    return int(head.split(b" ", 2)[1]), json.loads(body)["error"]


@pytest.mark.parametrize(("request_bytes", "reason"), [
    (b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"9" * 9000 + b"\r\n\r\n",
     "the request line or a header is longer than the 8 KiB limit"),
    (b"G@T / HTTP/1.1\r\nHost: x\r\n\r\n", "the method is not valid HTTP"),
])
async def test_a_request_aiohttp_cannot_parse_reaches_handle_error(
        bare_port: int, request_bytes: bytes, reason: str) -> None:
    status, error = _json_error(await _raw(bare_port, request_bytes))
    assert status == 400
    assert error == {"code": "bad_request", "message": f"malformed HTTP request: {reason}",
                     "details": {}}


async def test_a_failure_that_escapes_the_application_reaches_handle_error_which_logs_it(
        bare_port: int, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="aiohttp.server"):
        reply = await _raw(bare_port, b"GET /fails HTTP/1.1\r\nHost: x\r\n\r\n")
    status, error = _json_error(reply)
    assert status == 500
    assert error == {"code": "unavailable", "message": "internal error; try again",
                     "details": {}}
    assert any(record.exc_info and "a bug" in str(record.exc_info[1])
               for record in caplog.records), "aiohttp's handle_error no longer logs"


async def test_handle_error_still_refuses_to_answer_once_a_response_began(
        bare_port: int) -> None:
    reply = await _raw(bare_port, b"GET /fails-midway HTTP/1.1\r\nHost: x\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 200 ") and b"partial" in reply
    assert b'"error"' not in reply  # the connection was cut, no second response followed
