"""Issue 11, point 5: secrets are never printed.

``--help`` shows neither the token secret, the daily secret, nor the store URL's
password; the access log has no query string; an unparsable request's 400 (and
the log line about it) does not quote the request.
"""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.live import ROOT, ServiceProcess
from tests.redis_servers import sync_client
from tests.reliability.helpers import assert_clean_process_log, raw_request

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


# --- issue 23, point 8: a password in the store URL's query string ---------------------

QUERY_PASSWORD = "query-password-that-must-not-show"


def test_redact_url_hides_every_credential_of_a_store_url() -> None:
    from service.settings import redact_url

    cases = {
        "redis://u:pw-1@h:1/0?password=pw-2": "redis://h:1/0?password=***",
        "rediss://h:1/0?username=alice&Password=pw-3&socket_timeout=5":
            "rediss://h:1/0?username=***&Password=***&socket_timeout=5",
        # redis-py decodes the parameter's name: "pass%77ord" is read as "password"
        "redis://h:1/0?pass%77ord=pw-4": "redis://h:1/0?pass%77ord=***",
        "unix:///run/redis.sock?db=0&password=pw-5": "unix:///run/redis.sock?db=0&password=***",
        "redis://h:1/0?ssl_keyfile=pw-6&auth_token=pw-7&x_secret=pw-8&sig=pw-9":
            "redis://h:1/0?ssl_keyfile=***&auth_token=***&x_secret=***&sig=***",
        # a cluster's nodes, with and without a scheme
        "redis://a:pw-10@h1:1?password=pw-11,h2:2": "redis://h1:1?password=***,h2:2",
        "redis://h:1/0?password=pw-12@h:2": "redis://h:1/0?password=***",
    }
    for url, shown in cases.items():
        assert redact_url(url) == shown, url
        assert "pw-" not in redact_url(url)


def test_a_password_in_the_store_urls_query_string_is_neither_in_help_nor_in_the_log(
    server_factory: Any, tmp_path: Path
) -> None:
    server = server_factory("private")
    with sync_client(server.url) as client:  # a user the URL logs in as
        client.execute_command("ACL", "SETUSER", "ops", "on", f">{QUERY_PASSWORD}",
                               "~*", "&*", "+@all")
    url = f"{server.url}?username=ops&password={QUERY_PASSWORD}"
    env = {**os.environ, "REDIS_URL": url, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "service", "--help"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split()).replace(" ", "")  # argparse wraps even inside a URL
    assert QUERY_PASSWORD not in text and "password=***" in text
    with ServiceProcess(url, tmp_path / "service") as service:
        with urllib.request.urlopen(service.url + "/readyz", timeout=30) as r:
            assert r.status == 200  # it did log in with the URL's password
        with sync_client(server.url) as client:
            names = [c["name"] for c in client.client_list() if c.get("user") == "ops"]
        assert names, "the service is not connected as the URL's user"
        service.stop()
        log = service.log()
    assert "password=***" in log
    assert QUERY_PASSWORD not in log
    assert_clean_process_log(log)
