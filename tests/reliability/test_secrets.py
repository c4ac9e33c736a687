"""Issue 11, point 5: secrets are never printed.

``--help`` shows neither the token secret, the daily secret, nor the store URL's
password; the access log has no query string; an unparsable request's 400 (and
the log line about it) does not quote the request.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from tests.live import ROOT, ServiceProcess
from tests.reliability.helpers import assert_clean_process_log

TOKEN_SECRET = "tok-secret-that-must-not-show-0123"
DAILY_SECRET = "day-secret-that-must-not-show-4567"
PASSWORD = "store-password-that-must-not-show"


def test_help_shows_no_secret_and_no_store_password() -> None:
    env = {
        **os.environ,
        "SOLITAIRE_TOKEN_SECRET": TOKEN_SECRET,
        "SOLITAIRE_DAILY_SECRET": DAILY_SECRET,
        "REDIS_URL": f"redis://user:{PASSWORD}@db.example:6379/0",
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run([sys.executable, "-m", "service", "--help"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # argparse wraps lines
    for secret in (TOKEN_SECRET, DAILY_SECRET, PASSWORD, "user:"):
        assert secret not in text
    assert "redis://db.example:6379/0" in text  # the rest of the URL is still shown
    assert "--token-secret" in text and "--daily-secret" in text


def raw_request(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(data)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out


def test_neither_the_access_log_nor_a_400_shows_a_query_string_or_a_header(
    redis_url: str, tmp_path: Path
) -> None:
    with ServiceProcess(redis_url, tmp_path / "service") as service:
        try:
            urllib.request.urlopen(
                service.url + "/v1/games/g_nope?token=query-secret-1234", timeout=30
            )
        except urllib.error.HTTPError as exc:
            assert exc.code == 404
        with urllib.request.urlopen(service.url + "/v1/variants?access_token=query-secret-5678",
                                    timeout=30) as r:
            assert r.status == 200
        big = (
            b"GET /v1/variants HTTP/1.1\r\nHost: x\r\nCookie: header-secret-"
            + b"9" * 9000
            + b"\r\n\r\n"
        )
        reply = raw_request(service.port, big)
        assert reply.split(b" ", 2)[1] == b"400", reply[:200]
        assert b"header-secret" not in reply and b"999" not in reply
        assert b"longer than the 8 KiB limit" in reply
        service.stop()
        log = service.log()
    assert '"GET /v1/variants" 200' in log  # the access log is on, without the query
    assert "query-secret" not in log and "header-secret" not in log
    assert_clean_process_log(log)
