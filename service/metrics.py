"""Prometheus metrics in the text exposition format, without a dependency.

Counters, gauges and histograms with labels, kept per process; ``render``
writes what ``GET /metrics`` returns.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence


def _labels(names: Sequence[str], values: Sequence[str], extra: str = "") -> str:
    parts = [f'{n}="{_escape(v)}"' for n, v in zip(names, values, strict=True)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class _Metric:
    kind = ""

    def __init__(self, name: str, help_: str, labels: Sequence[str] = ()) -> None:
        self.name = name
        self.help = help_
        self.label_names = tuple(labels)

    def header(self) -> list[str]:
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} {self.kind}"]


class Counter(_Metric):
    kind = "counter"

    def __init__(self, name: str, help_: str, labels: Sequence[str] = ()) -> None:
        super().__init__(name, help_, labels)
        self.values: dict[tuple[str, ...], float] = {}

    def inc(self, *labels: str, by: float = 1.0) -> None:
        self.values[labels] = self.values.get(labels, 0.0) + by

    def lines(self) -> Iterable[str]:
        for labels, value in sorted(self.values.items()):
            yield f"{self.name}{_labels(self.label_names, labels)} {value:g}"


class Gauge(Counter):
    kind = "gauge"

    def set(self, value: float, *labels: str) -> None:
        self.values[labels] = value

    def dec(self, *labels: str, by: float = 1.0) -> None:
        self.inc(*labels, by=-by)


class Histogram(_Metric):
    kind = "histogram"

    def __init__(self, name: str, help_: str, buckets: Sequence[float], labels: Sequence[str] = ()) -> None:
        super().__init__(name, help_, labels)
        self.buckets = tuple(sorted(buckets))
        self.series: dict[tuple[str, ...], list[float]] = {}  # bucket counts..., sum, count

    def observe(self, value: float, *labels: str) -> None:
        series = self.series.get(labels)
        if series is None:
            series = self.series[labels] = [0.0] * (len(self.buckets) + 2)
        series[bisect.bisect_left(self.buckets, value)] += 1  # non-cumulative; summed on render
        series[-2] += value
        series[-1] += 1

    def lines(self) -> Iterable[str]:
        for labels, series in sorted(self.series.items()):
            running = 0.0
            for bound, count in zip(self.buckets, series, strict=False):
                running += count
                le = 'le="%g"' % bound
                yield f"{self.name}_bucket{_labels(self.label_names, labels, le)} {running:g}"
            inf = 'le="+Inf"'
            yield f"{self.name}_bucket{_labels(self.label_names, labels, inf)} {series[-1]:g}"
            yield f"{self.name}_sum{_labels(self.label_names, labels)} {series[-2]:g}"
            yield f"{self.name}_count{_labels(self.label_names, labels)} {series[-1]:g}"


class Metrics:
    """The service's metrics, one set per process."""

    def __init__(self) -> None:
        self.requests = Counter("solitaire_http_requests_total", "HTTP requests by route and status",
                                ("route", "method", "status"))
        self.commands = Counter("solitaire_commands_applied_total", "Commands appended to game logs",
                                ("variant", "type"))
        self.commands_refused = Counter("solitaire_commands_refused_total", "Commands refused, by error code",
                                        ("code",))
        self.ws_connections = Gauge("solitaire_websocket_connections", "Open WebSocket connections")
        self.ws_closed_slow = Counter("solitaire_websocket_slow_closed_total",
                                      "WebSockets closed because their send queue was full")
        self.store_latency = Histogram(
            "solitaire_store_latency_seconds", "Round-trip time of store operations",
            (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0), ("op",))
        self.games_created = Counter("solitaire_games_created_total", "Games created", ("variant",))

    def all(self) -> list[_Metric]:
        return [self.requests, self.commands, self.commands_refused, self.ws_connections,
                self.ws_closed_slow, self.store_latency, self.games_created]

    def render(self) -> str:
        out: list[str] = []
        for metric in self.all():
            out += metric.header()
            out += metric.lines()
        return "\n".join(out) + "\n"
