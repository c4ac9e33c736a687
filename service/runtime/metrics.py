"""The service's Prometheus metrics, with ``prometheus_client``, one registry per app.

Each application (each Context) has its own ``CollectorRegistry``: tests run
several apps in one process, and the library's global registry would refuse a
second metric of the same name. On it are the process collector (CPU seconds,
resident memory, open file descriptors, ...), the garbage collector's and the
platform's, and the service's own metrics below. ``GET /metrics`` returns
``exposition()`` of it; with ``--workers N`` each worker is a process with its
own registry, and a scrape sees the worker that accepted it.
"""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

# A ``_created`` timestamp per counter and histogram series would double the series
# scraped and tells nothing a restart's drop to zero does not (a process-wide switch).
disable_created_metrics()  # type: ignore[no-untyped-call]

CONTENT_TYPE = CONTENT_TYPE_LATEST  # the text format ``generate_latest`` writes

# Seconds from a command received to its ack. The goal is a p99 under 50 ms (benchmarks/):
# fine buckets up to it (0.05 is a bound, so "the share acked within 50 ms" is exact), a few
# beyond it to tell a slow tail from an outage.
COMMAND_ACK_BUCKETS = (0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05,
                       0.075, 0.1, 0.25, 0.5, 1.0, 2.5)


# Seconds the event loop ran late (service/runtime/looplag.py): a few milliseconds is a busy loop;
# beyond the ack goal (50 ms) every reply of the process is late.
LOOP_LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class LabelledCounter:
    """A counter with labels, counted as ``inc("klondike", "move")`` (label values in order).

    Keeps each labelled child it made: ``labels()`` takes a lock and validates its
    arguments, which is more than a command's path should pay each time."""

    def __init__(self, name: str, help_: str, labels: Sequence[str],
                 registry: CollectorRegistry) -> None:
        self.metric = Counter(name, help_, labels, registry=registry)
        self._children: dict[tuple[str, ...], Counter] = {}

    def inc(self, *label_values: str) -> None:
        child = self._children.get(label_values)
        if child is None:
            child = self._children[label_values] = self.metric.labels(*label_values)
        child.inc()


class Metrics:
    """The metrics of one application, on its own registry."""

    def __init__(self) -> None:
        self.registry = registry = CollectorRegistry()
        ProcessCollector(registry=registry)
        GCCollector(registry=registry)
        PlatformCollector(registry=registry)

        self.requests = LabelledCounter("solitaire_http_requests_total",
                                        "HTTP requests by route and status",
                                        ("route", "method", "status"), registry)
        self.commands = LabelledCounter("solitaire_commands_applied_total",
                                        "Commands appended to game logs", ("variant", "type"),
                                        registry)
        self.commands_refused = LabelledCounter("solitaire_commands_refused_total",
                                                "Commands refused, by error code", ("code",),
                                                registry)
        self.games_created = LabelledCounter("solitaire_games_created_total", "Games created",
                                             ("variant",), registry)
        self.ws_connections = Gauge("solitaire_websocket_connections", "Open WebSocket connections",
                                    registry=registry)
        self.ws_closed_slow = Counter("solitaire_websocket_slow_closed_total",
                                      "WebSockets closed because their send queue was full",
                                      registry=registry)
        # Set to functions of the solver pool and the daily deals by the app.
        self.solver_jobs = Gauge("solitaire_solver_jobs",
                                 "Searches running or waiting in this process's solver pool",
                                 registry=registry)
        self.daily_deals_ready = Gauge(
            "solitaire_daily_deals_ready",
            "1 once today's and tomorrow's daily deals are all chosen (as last looked at, "
            "every few seconds), else 0", registry=registry)
        command_ack = Histogram(
            "solitaire_command_ack_seconds",
            "Seconds from a command received to its ack: the ack handed to the socket's writer "
            "(websocket) or the response returned by the handler (rest); refused commands are "
            "not counted",
            ("transport",), registry=registry, buckets=COMMAND_ACK_BUCKETS)
        self.loop_lag = Histogram(
            "solitaire_event_loop_lag_seconds",
            "How much later than asked a probe sleeping 0.1 s at a time woke up: the event "
            "loop was busy or blocked (or the process short of CPU) for as long",
            registry=registry, buckets=LOOP_LAG_BUCKETS)
        # Bound once: a command pays one observe, not a labels() lookup.
        self.websocket_ack = command_ack.labels("websocket")
        self.rest_ack = command_ack.labels("rest")

    def value(self, name: str, **labels: str) -> float:
        """The current value of one sample (0 if it has none yet), by its exposed name."""
        return self.registry.get_sample_value(name, labels) or 0.0

    def exposition(self) -> bytes:
        """Every metric in the Prometheus text format (``CONTENT_TYPE``). Reads /proc for
        the process metrics: call it off the event loop."""
        return generate_latest(self.registry)
