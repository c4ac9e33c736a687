"""The service's Prometheus metrics, one registry per app.

Each application (each Context) has its own ``CollectorRegistry`` (prometheus_client):
tests run several apps in one process, and the library's global registry would refuse a
second metric of the same name. On it are the process collector (CPU seconds,
resident memory, open file descriptors, ...), the garbage collector's and the
platform's, and the service's own metrics below. ``GET /metrics`` returns
``exposition()`` of it; with ``--workers N`` each worker is a process with its
own registry, and a scrape sees the worker that accepted it.

The service's counters and histograms (:class:`Counter`, :class:`Histogram`) are plain
ints and lists of the event loop's thread, exposed by collectors of their own: every
command counts one and observes one, and prometheus_client's own take a lock and go
through its value classes for each (about 2 µs a command, against 0.3). A scrape reads
them from another thread (``exposition()`` runs off the loop): it copies each before
reading it, and may see a histogram's sum a command ahead of its buckets, as a scrape
between two commands would. The gauges, set seldom or computed at the scrape, are
prometheus_client's.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Gauge,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.gc_collector import GCCollector
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.utils import floatToGoString

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


class Counter:
    """A counter, with or without labels, counted as ``inc("klondike", "move")`` (its label
    values in order; ``inc()`` without labels). Exposed as prometheus_client exposes its
    own: ``<name>_total``, a series for each label values counted at least once (the one
    series of a counter without labels from the start, at 0)."""

    def __init__(self, name: str, help_: str, labels: Sequence[str],
                 registry: CollectorRegistry) -> None:
        self.name = name.removesuffix("_total")  # the family's name; its sample adds it
        self.help = help_
        self.labels = tuple(labels)
        self.counts: dict[tuple[str, ...], int] = {} if self.labels else {(): 0}
        registry.register(self)

    def inc(self, *label_values: str) -> None:
        counts = self.counts
        count = counts.get(label_values)
        if count is None:
            if len(label_values) != len(self.labels):
                raise ValueError(f"{self.name} counts by {self.labels}, not {label_values}")
            count = 0
        counts[label_values] = count + 1

    def describe(self) -> list[Metric]:
        return [CounterMetricFamily(self.name, self.help, labels=self.labels)]

    def collect(self) -> list[Metric]:
        family = CounterMetricFamily(self.name, self.help, labels=self.labels)
        for label_values, count in self.counts.copy().items():
            family.add_metric(label_values, float(count))
        return [family]


class Series:
    """One series of a :class:`Histogram`: how many observations fell in each bucket (not
    cumulated: the last is above every bound) and their sum."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        # A bucket counts what is less than or equal to its bound: the first bound >= value.
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value


class Histogram:
    """A histogram of ``buckets`` (their upper bounds), exposed as prometheus_client exposes
    its own (``_bucket`` by ``le``, cumulative, with ``+Inf``; ``_count``; ``_sum``). With
    labels, ``labels(...)`` is the series of those values (bind it once: each call looks it
    up); without, ``observe`` is the one series'."""

    def __init__(self, name: str, help_: str, labels: Sequence[str], buckets: Sequence[float],
                 registry: CollectorRegistry) -> None:
        self.name = name
        self.help = help_
        self.label_names = tuple(labels)
        self.bounds = tuple(sorted(float(bound) for bound in buckets))
        self.les = [*(floatToGoString(bound)  # type: ignore[no-untyped-call]
                      for bound in self.bounds), "+Inf"]
        self.series: dict[tuple[str, ...], Series] = {}
        if not self.label_names:
            self.observe = self.labels().observe
        registry.register(self)

    def labels(self, *label_values: str) -> Series:
        series = self.series.get(label_values)
        if series is None:
            if len(label_values) != len(self.label_names):
                raise ValueError(f"{self.name} is by {self.label_names}, not {label_values}")
            series = self.series[label_values] = Series(self.bounds)
        return series

    def describe(self) -> list[Metric]:
        return [HistogramMetricFamily(self.name, self.help, labels=self.label_names)]

    def collect(self) -> list[Metric]:
        family = HistogramMetricFamily(self.name, self.help, labels=self.label_names)
        for label_values, series in self.series.copy().items():
            counts, total = series.counts.copy(), series.sum
            cumulated = accumulate(counts)
            family.add_metric(label_values, [(le, float(n)) for le, n in
                                             zip(self.les, cumulated, strict=True)], total)
        return [family]


class Metrics:
    """The metrics of one application, on its own registry."""

    def __init__(self) -> None:
        self.registry = registry = CollectorRegistry()
        ProcessCollector(registry=registry)
        GCCollector(registry=registry)
        PlatformCollector(registry=registry)

        self.requests = Counter("solitaire_http_requests_total",
                                        "HTTP requests by route and status",
                                        ("route", "method", "status"), registry)
        self.commands = Counter("solitaire_commands_applied_total",
                                        "Commands appended to game logs", ("variant", "type"),
                                        registry)
        self.commands_refused = Counter("solitaire_commands_refused_total",
                                                "Commands refused, by error code", ("code",),
                                                registry)
        self.games_created = Counter("solitaire_games_created_total", "Games created",
                                             ("variant",), registry)
        self.ws_connections = Gauge("solitaire_websocket_connections", "Open WebSocket connections",
                                    registry=registry)
        self.ws_closed_slow = Counter("solitaire_websocket_slow_closed_total",
                                      "WebSockets closed because their send queue was full", (),
                                      registry)
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
            ("transport",), COMMAND_ACK_BUCKETS, registry)
        self.loop_lag = Histogram(
            "solitaire_event_loop_lag_seconds",
            "How much later than asked a probe sleeping 0.1 s at a time woke up: the event "
            "loop was busy or blocked (or the process short of CPU) for as long",
            (), LOOP_LAG_BUCKETS, registry)
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
