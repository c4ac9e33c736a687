"""GET /metrics on a running instance: the Prometheus text format, read back with
prometheus_client's own parser.

What it shows: the process's metrics (CPU, memory, open files, garbage
collector), every gauge with a value from the start, and the seconds from a
command received to its ack, by transport, counting each acknowledged command
once whether it came over the WebSocket or REST.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import prometheus_client
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from service.runtime import metrics
from service.runtime.looplag import PROBE_S
from service.runtime.metrics import COMMAND_ACK_BUCKETS, CONTENT_TYPE
from tests.live import daily_chosen, running_service, settings_for_test
from tests.service.helpers import Api, connect

ACK = "solitaire_command_ack_seconds"
LAG = "solitaire_event_loop_lag_seconds"


@contextlib.asynccontextmanager
async def instance(redis_url: str, data_dir: Path) -> AsyncIterator[Api]:
    async with running_service(settings_for_test(redis_url, data_dir)) as base, \
            aiohttp.ClientSession() as session:
        yield Api(session, base)


@pytest.fixture
async def api(redis_url: str, tmp_path: Path) -> AsyncIterator[Api]:
    async with instance(redis_url, tmp_path) as api:
        yield api


async def scrape(api: Api) -> dict[str, list[Sample]]:
    """The families of GET /metrics by name, each with its samples."""
    reply = await api.request("GET", "/metrics", expect=200)
    assert reply.headers["Content-Type"] == CONTENT_TYPE
    families = text_string_to_metric_families(reply.raw.decode())
    return {family.name: family.samples for family in families}


def kinds(text: str) -> dict[str, str]:
    return {family.name: family.type for family in text_string_to_metric_families(text)}


def acks(families: dict[str, list[Sample]], transport: str) -> float:
    """How many commands the histogram counted for ``transport``."""
    (count,) = [s.value for s in families[ACK]
                if s.name == ACK + "_count" and s.labels == {"transport": transport}]
    return count


async def first_legal_move(api: Api, token: str, game_id: str) -> tuple[dict[str, object], int]:
    moves = await api.moves(game_id, token)
    return moves["moves"][0], moves["seq"]


async def test_the_process_metrics_are_there(api: Api) -> None:
    families = await scrape(api)
    for name in ("process_cpu_seconds", "process_resident_memory_bytes",
                 "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                 "process_start_time_seconds",
                 "python_gc_objects_collected", "python_gc_collections", "python_info"):
        assert families.get(name), f"{name} has no sample"
    (open_fds,) = families["process_open_fds"]
    (resident,) = families["process_resident_memory_bytes"]
    assert open_fds.value > 0 and resident.value > 0


async def test_every_gauge_has_a_value_before_anything_happened(api: Api) -> None:
    reply = await api.request("GET", "/metrics", expect=200)
    families = {f.name: f for f in text_string_to_metric_families(reply.raw.decode())}
    gauges = [f for f in families.values() if f.type == "gauge"]
    assert "solitaire_websocket_connections" in {g.name for g in gauges}
    for gauge in gauges:
        assert gauge.samples, f"the gauge {gauge.name} has no value"
    (sockets,) = families["solitaire_websocket_connections"].samples
    assert sockets.value == 0
    # The ack histogram has both transports from the start, at zero.
    assert acks(await scrape(api), "websocket") == 0 and acks(await scrape(api), "rest") == 0


async def test_the_service_metrics_keep_their_names_and_kinds(api: Api) -> None:
    _, token = await api.player()
    await api.create(token, "gilbert", seed=1)
    text = (await api.request("GET", "/metrics", expect=200)).raw.decode()
    assert {name: kind for name, kind in kinds(text).items() if name.startswith("solitaire_")} == {
        "solitaire_http_requests": "counter",  # exposed as solitaire_http_requests_total
        "solitaire_commands_applied": "counter",
        "solitaire_commands_refused": "counter",
        "solitaire_games_created": "counter",
        "solitaire_websocket_connections": "gauge",
        "solitaire_websocket_slow_closed": "counter",
        "solitaire_solver_jobs": "gauge",
        "solitaire_daily_deals_ready": "gauge",
        ACK: "histogram",
        LAG: "histogram",
    }
    assert 'solitaire_games_created_total{variant="gilbert"} 1.0' in text


def gauge(families: dict[str, list[Sample]], name: str) -> float:
    (sample,) = families[name]
    return sample.value


async def test_the_daily_deals_gauge_turns_1_once_both_days_are_chosen(api: Api) -> None:
    await daily_chosen(api.base)  # GET /v1/daily answers for today and tomorrow
    for _ in range(120):  # the chooser looks again every few seconds
        families = await scrape(api)
        if gauge(families, "solitaire_daily_deals_ready") == 1:
            break
        await asyncio.sleep(0.5)
    assert gauge(families, "solitaire_daily_deals_ready") == 1
    assert gauge(families, "solitaire_solver_jobs") == 0  # nothing left to search


async def test_the_ack_histogram_counts_a_command_over_rest_and_one_over_the_websocket(
        api: Api) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=1))["game_id"]

    command, seq = await first_legal_move(api, token, game_id)
    await api.command(token, game_id, command, expected_seq=seq)
    after_rest = await scrape(api)
    assert (acks(after_rest, "rest"), acks(after_rest, "websocket")) == (1, 0)

    sock, _ = await connect(api.session, api.base, game_id, token)
    try:
        command, seq = await first_legal_move(api, token, game_id)
        cid = await sock.command(command, expected_seq=seq)
        await sock.until(lambda m: m["type"] == "ack" and m["command_id"] == cid)
    finally:
        await sock.ws.close()
    after_ws = await scrape(api)
    assert (acks(after_ws, "rest"), acks(after_ws, "websocket")) == (1, 1)

    # Each observation is in the +Inf bucket and in no bucket below 0 s; the sum is of durations.
    for transport in ("rest", "websocket"):
        series = {s.labels["le"]: s.value for s in after_ws[ACK]
                  if s.name == ACK + "_bucket" and s.labels["transport"] == transport}
        assert series["+Inf"] == 1
        assert len(series) == len(COMMAND_ACK_BUCKETS) + 1
        (total,) = [s.value for s in after_ws[ACK]
                    if s.name == ACK + "_sum" and s.labels == {"transport": transport}]
        assert total > 0


def lag_over(families: dict[str, list[Sample]], seconds: str) -> float:
    """How many probes of the loop-lag histogram woke up later than ``seconds`` (a bound)."""
    (count,) = [s.value for s in families[LAG] if s.name == LAG + "_count"]
    (within,) = [s.value for s in families[LAG]
                 if s.name == LAG + "_bucket" and s.labels == {"le": seconds}]
    return count - within


async def test_a_blocked_event_loop_shows_in_the_loop_lag_histogram(api: Api) -> None:
    # The app runs in this test's event loop: blocking the test blocks the service. The
    # probe's 0.1 s sleep falls due during the block, so it wakes at least 0.2 s late.
    before = lag_over(await scrape(api), "0.1")
    time.sleep(PROBE_S + 0.3)
    for _ in range(50):  # the probe's next wake-up records it
        after = lag_over(await scrape(api), "0.1")
        if after > before:
            break
        await asyncio.sleep(PROBE_S)
    assert after == before + 1


async def test_a_refused_command_is_not_an_ack(api: Api) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=1))["game_id"]
    command, seq = await first_legal_move(api, token, game_id)
    await api.command(token, game_id, command, expected_seq=seq + 5, expect=409)

    families = await scrape(api)
    assert acks(families, "rest") == 0
    (refused,) = families["solitaire_commands_refused"]
    assert refused.labels == {"code": "conflict"} and refused.value == 1


async def test_two_instances_in_one_process_count_apart(redis_url: str, tmp_path: Path) -> None:
    # Each app has its own registry: a command on one is not seen by the other.
    async with instance(redis_url, tmp_path / "a") as a, instance(redis_url, tmp_path / "b") as b:
        _, token = await a.player()
        game_id = (await a.create(token, "gilbert", seed=1))["game_id"]
        command, seq = await first_legal_move(a, token, game_id)
        await a.command(token, game_id, command, expected_seq=seq)
        assert acks(await scrape(a), "rest") == 1
        assert acks(await scrape(b), "rest") == 0


def test_the_plain_counters_and_histograms_expose_what_prometheus_client_would() -> None:
    # The service's own Counter and Histogram (plain ints, no lock) against the library's,
    # fed the same: the same text, bucket by bucket (a value on a bound counts in its bucket).
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    counter = metrics.Counter("c_total", "a counter", ("a", "b"), ours)
    bare = metrics.Counter("bare_total", "no labels", (), ours)
    histogram = metrics.Histogram("h_seconds", "a histogram", ("t",), COMMAND_ACK_BUCKETS, ours)
    lag = metrics.Histogram("lag_seconds", "no labels", (), (0.5, 0.1), ours)
    their_counter = prometheus_client.Counter("c_total", "a counter", ("a", "b"), registry=theirs)
    prometheus_client.Counter("bare_total", "no labels", registry=theirs)
    their_histogram = prometheus_client.Histogram("h_seconds", "a histogram", ("t",),
                                                  registry=theirs, buckets=COMMAND_ACK_BUCKETS)
    their_lag = prometheus_client.Histogram("lag_seconds", "no labels", registry=theirs,
                                            buckets=(0.1, 0.5))
    for labels in (("x", "y"), ("x", "y"), ("z", "y")):
        counter.inc(*labels)
        their_counter.labels(*labels).inc()
    for value in (0.0, 0.001, 0.0011, 0.05, 0.0500001, 2.5, 30.0):
        histogram.labels("ws").observe(value)
        their_histogram.labels("ws").observe(value)
    for value in (0.1, 0.3, 9.0):
        lag.observe(value)
        their_lag.observe(value)
    histogram.labels("rest")
    their_histogram.labels("rest")
    assert bare.counts == {(): 0}
    assert generate_latest(ours) == generate_latest(theirs)
    with pytest.raises(ValueError):
        counter.inc("only one")
