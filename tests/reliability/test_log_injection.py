"""Issue 23, point 7: nothing a stranger sends can forge a line of the log.

A path with an encoded newline, carriage return, terminal escape, NUL, DEL, a C1
control and a line separator is answered, and its access-log line (and any other
line) holds each as an escape: the log keeps one line per record.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from service.runtime.logs import FORMAT, EscapingFormatter, escape
from tests.live import ServiceProcess
from tests.reliability.helpers import assert_clean_process_log, raw_request

FORGED = "2026-12-06 05:00:00,000 WARNING service: FORGED"
# Every control a path can carry, percent-encoded (the HTTP parser refuses them raw).
PATH = ("/v1/games/g%0A" + FORGED.replace(" ", "%20") + "%0D%0A%1B[31mred%1B[0m%00nul%7F"
        "%C2%85nel%E2%80%A8ls%E2%80%AEbidi%09tab")


def raw_get(port: int, path: str) -> bytes:
    return raw_request(port, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                       .encode())


def test_control_characters_in_a_request_are_escaped_in_the_log(
    redis_url: str, tmp_path: Path
) -> None:
    with ServiceProcess(redis_url, tmp_path / "service") as service:
        reply = raw_get(service.port, PATH)
        assert reply.split(b" ", 2)[1] == b"404", reply[:200]
        service.stop()
        raw = service.log_path.read_bytes()
    text = raw.decode()
    lines = text.splitlines()  # splits on \x85, \u2028 and the rest too
    assert len(lines) == text.count("\n"), "a control character made a line of its own"
    assert not any(line.startswith(FORGED) or line.startswith("\x1b") for line in lines)
    access = [line for line in lines if "FORGED" in line]
    assert len(access) == 1, access
    for shown in ("g\\n2026-12-06", "\\r\\n\\x1b[31mred\\x1b[0m", "\\x00nul", "\\x7f",
                  "\\x85nel", "\\u2028ls", "\\u202ebidi", "\\ttab"):
        assert shown in access[0], (shown, access[0])
    assert '" 404 ' in access[0] and access[0].split(" ", 3)[2] == "INFO"
    for control in [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, 0x202E]:
        if control != 0x0A:
            assert chr(control) not in text, hex(control)
    assert_clean_process_log(text)


def test_an_exceptions_text_in_a_traceback_cannot_forge_a_line() -> None:
    formatter = EscapingFormatter(FORMAT)
    try:
        try:
            raise KeyError("inner\n" + FORGED)
        except KeyError as exc:
            raise ValueError("outer\r\n" + FORGED + "\x1b[2J") from exc
    except ValueError:
        record = logging.LogRecord("service", logging.ERROR, __file__, 1, "failed on %s",
                                   ("/p\nath",), sys.exc_info())
    out = formatter.format(record)
    assert out.count("\n") > 4  # the traceback keeps its lines
    assert not any(line.startswith(FORGED) for line in out.splitlines())
    assert "failed on /p\\nath" in out.splitlines()[0]
    assert "outer\\r\\n" + FORGED + "\\x1b[2J" in out and "inner\\n" + FORGED in out
    assert escape("tab\there\\n") == "tab\\there\\n"  # a backslash stays as it is
