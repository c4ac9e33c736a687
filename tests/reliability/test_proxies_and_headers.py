"""Issue 11, points 8 and 10: browser headers, and client addresses behind the proxy.

- ``/`` and ``/web/*`` carry a Content-Security-Policy (no script but the client's
  own modules, no framing), X-Frame-Options, X-Content-Type-Options and
  Referrer-Policy; the API's JSON carries nosniff. Through deploy/nginx.conf every
  response has them exactly once. (tests/web plays the client under them in
  Chromium and fails on any CSP violation.)
- compose and the Kubernetes config name their proxy in ``trusted_proxies``; behind
  the compose nginx config each client keeps its own per-address limits, and a
  forged X-Forwarded-For gets a client nothing.
"""

from __future__ import annotations

import asyncio
import ipaddress
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from service.app import BROWSER_HEADERS, CONTENT_SECURITY_POLICY
from service.web.addresses import client_address, trusted_networks
from tests.live import ROOT, settings_for_test
from tests.reliability.helpers import LogWatch
from tests.service.helpers import running_app

DEPLOY = ROOT / "deploy"
SLOW = 0.001


async def test_the_web_client_and_the_api_carry_the_browser_headers(
    redis_url: str, tmp_path: Path
) -> None:
    async with (
        running_app(settings_for_test(redis_url, tmp_path)) as (base, _),
        aiohttp.ClientSession() as s,
    ):
        for path in ("/", "/web/app.js", "/web/style.css", "/js/src/index.js"):
            async with s.get(base + path) as r:
                assert r.status == 200
                for name, value in BROWSER_HEADERS.items():
                    assert r.headers.getall(name) == [value], (path, name)
        csp = dict(part.strip().split(" ", 1) for part in CONTENT_SECURITY_POLICY.split(";"))
        assert csp["script-src"] == "'self'" and csp["frame-ancestors"] == "'none'"
        assert (
            "unsafe-inline" not in CONTENT_SECURITY_POLICY
            and "unsafe-eval" not in CONTENT_SECURITY_POLICY
        )
        async with s.get(base + "/v1/variants") as r:
            assert r.headers["X-Content-Type-Options"] == "nosniff"


def test_compose_and_kubernetes_trust_their_proxy_only() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    trusted = compose["services"]["app"]["environment"]["SOLITAIRE_TRUSTED_PROXIES"]
    lb_address = compose["services"]["lb"]["networks"]["backend"]["ipv4_address"]
    assert trusted == lb_address
    subnet = compose["networks"]["backend"]["ipam"]["config"][0]["subnet"]
    assert ipaddress.ip_address(lb_address) in ipaddress.ip_network(subnet)
    assert compose["services"]["app"]["networks"] == ["backend"]
    configmap = yaml.safe_load((DEPLOY / "k8s" / "configmap.yaml").read_text())
    # Parses, and trusts the Ingress controller's pods at most (a node's pod range), never
    # the pod network; shipped empty for the operator to set (deploy/README.md, "Who may
    # connect"), and a proxy left out is said in the log (below).
    for network in trusted_networks(configmap["data"]["SOLITAIRE_TRUSTED_PROXIES"]):
        assert network.prefixlen >= (24 if network.version == 4 else 64), network
    # Behind the proxy: the hop the proxy added, whatever the client wrote before it.
    assert client_address(lb_address, "203.0.113.9, 198.51.100.4", trusted) == "198.51.100.4"
    # Not via the proxy.
    assert client_address("198.51.100.4", "203.0.113.9", trusted) == "198.51.100.4"


async def get(base: str, path: str, source: str, headers: dict[str, str] | None = None) -> Any:
    connector = aiohttp.TCPConnector(local_addr=(source, 0))
    async with aiohttp.ClientSession(connector=connector) as session, \
            session.get(base + path, headers=headers) as r:
        await r.read()
        return r


async def test_behind_the_compose_nginx_each_client_keeps_its_own_limits(
        nginx_in_front_of: Any, redis_url: str, tmp_path: Path) -> None:
    # nginx reaches the service from 127.0.0.1 (the compose lb's fixed address, here);
    # the clients come from 127.0.0.2 and 127.0.0.3.
    settings = settings_for_test(redis_url, tmp_path, read_rate_per_s=SLOW, read_burst=4,
                                 trusted_proxies="127.0.0.1")
    async with running_app(settings) as (base, _):
        port = int(base.rsplit(":", 1)[1])
        lb = f"http://127.0.0.1:{nginx_in_front_of(port)}"
        for _ in range(100):  # nginx starts in well under a second
            try:
                if (await get(lb, "/healthz", "127.0.0.2")).status == 200:
                    break
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
        async with (
            aiohttp.ClientSession() as s,
            s.post(base + "/v1/players", json={"name": "ann"}) as r,
        ):
            token = (await r.json())["token"]
        async with aiohttp.ClientSession() as s, \
                s.post(base + "/v1/games", json={"variant": "gilbert", "public": True},
                       headers={"Authorization": f"Bearer {token}"}) as r:
            game_id = (await r.json())["game_id"]
        path = f"/v1/games/{game_id}"
        forged = {"X-Forwarded-For": "203.0.113.9"}
        statuses = [
            (await get(lb, path, "127.0.0.2", forged if i % 2 else None)).status for i in range(6)
        ]
        assert statuses == [200] * 4 + [429] * 2  # forged or not, one client's four reads
        assert (await get(lb, path, "127.0.0.3")).status == 200  # the other client's own limit
        page = await get(lb, "/", "127.0.0.3")
        for name, value in BROWSER_HEADERS.items():
            assert page.headers.getall(name) == [value], name  # once, from nginx
        refused = await get(lb, path, "127.0.0.2")
        assert refused.headers["Retry-After"] and refused.headers.getall("X-Frame-Options") == [
            "DENY"
        ]


async def test_a_proxy_left_out_of_the_trusted_ones_is_said_once_in_the_log(
        redis_url: str, tmp_path: Path, service_log: LogWatch) -> None:
    """Issue 23, point 9: the ConfigMap ships trusting no one, so an operator who has not set
    the Ingress controller's ranges must hear that its clients share one address."""
    source = "127.0.0.77"  # an address of this test alone: each peer is said once a process
    async with running_app(settings_for_test(redis_url, tmp_path)) as (base, _):
        for _ in range(3):  # a read counted against the client's address
            r = await get(base, "/v1/games/g_none", source, {"X-Forwarded-For": "198.51.100.4"})
            assert r.status == 404
        assert (await get(base, "/v1/games/g_none", source)).status == 404
    said = [r for r in service_log.records
            if "carry X-Forwarded-For, which is not believed" in r.getMessage()]
    assert len(said) == 1 and said[0].levelname == "WARNING"
    assert source in said[0].getMessage() and "SOLITAIRE_TRUSTED_PROXIES" in said[0].getMessage()
