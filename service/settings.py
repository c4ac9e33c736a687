"""Every setting of the service, from command-line flags or the environment.

One frozen dataclass, built once at start-up by :func:`Settings.from_env`
(environment) and :func:`Settings.from_args` (flags override environment).
Units are in the names (``_s`` seconds, ``_bytes``), as in arq.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ENV_PREFIX = "SOLITAIRE_"


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8080
    # None: start the embedded Redis-protocol server under data_dir.
    # Else redis://, rediss://, unix://, or a comma-separated list of cluster
    # nodes ("redis://h1:7000,redis://h2:7001" or "h1:7000,h2:7001").
    redis_url: str | None = None
    data_dir: Path = Path("var")
    # HMAC secret for player tokens; None: generated once and kept in
    # data_dir/token_secret.
    token_secret: str | None = None
    token_ttl_s: int = 90 * 24 * 3600
    # A game with no command for this long expires; won/resigned games are kept.
    game_ttl_s: int = 14 * 24 * 3600
    snapshot_every: int = 50
    max_body_bytes: int = 16 * 1024
    max_ws_message_bytes: int = 8 * 1024
    # Token bucket per player, held in Redis so it holds across instances.
    rate_limit_per_s: float = 20.0
    rate_limit_burst: int = 40
    # Messages queued for one WebSocket before it is closed as too slow.
    ws_send_queue: int = 512
    # A WebSocket being closed as too slow gets this long to take its close frame;
    # one that does not read even that is then dropped (it would be held forever).
    ws_close_timeout_s: float = 5.0
    hello_timeout_s: float = 5.0
    redis_pool_size: int = 256
    # Send concurrent store commands together in pipelines (single server only).
    redis_autopipeline: bool = True
    redis_timeout_s: float = 2.0
    # Retries of a command after a connection error (jittered exponential
    # backoff from 50 ms, capped at 1 s) before StoreUnavailable (503).
    redis_retries: int = 3
    # A pooled connection idle this long is PINGed before use; the fan-out's
    # subscriber connections are PINGed this often and dropped when silent.
    redis_health_check_s: float = 10.0
    # Events queued for one local fan-out listener; on overflow its queue is
    # replaced by one RESYNC (the listener refills from the log).
    fanout_queue: int = 1024
    # Embedded store only: the append-only file's fsync policy
    # ("everysec": at most ~1 s of acknowledged commands lost on a machine
    # crash; "always": none, at the cost of an fsync per command).
    appendfsync: str = "everysec"
    daily_attempts: int = 1
    daily_keep_days: int = 30
    # The solver (issue 10): a pool of worker processes, never the event loop.
    # Jobs beyond the workers wait in a queue of this many; more get 503.
    solver_workers: int = 2
    solver_queue: int = 8
    # A daily deal must be proved winnable within this budget (per candidate deal).
    daily_solve_s: float = 30.0
    daily_solve_nodes: int = 20_000_000
    # A game's solution (GET /v1/games/{id}/solution): one search, kept in Redis.
    solution_solve_s: float = 10.0
    solution_solve_nodes: int = 5_000_000
    # A hint: this many sampled completions of the face-down cards, each solved
    # within the per-sample budget (the node budget decides; seconds only cap it).
    hint_samples: int = 6
    hint_sample_nodes: int = 500
    hint_sample_s: float = 0.25
    log_level: str = "INFO"
    # Comma-separated addresses of the load balancers in front of the service:
    # only requests from these have their X-Forwarded-For believed (for the
    # per-address rate limit of POST /v1/players).
    trusted_proxies: str = ""
    instance_id: str = field(default_factory=lambda: os.environ.get("HOSTNAME", "") or f"pid{os.getpid()}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read ``REDIS_URL`` and ``SOLITAIRE_<FIELD>`` variables (``SOLITAIRE_PORT=9000``)."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for f in dataclasses.fields(cls):
            name = ENV_PREFIX + f.name.upper()
            raw = env.get(name)
            if f.name == "redis_url":
                raw = env.get("REDIS_URL", raw)
            if raw is None or raw == "":
                continue
            values[f.name] = _convert(f, raw, name)
        return cls(**values)  # type: ignore[arg-type]

    @classmethod
    def from_args(cls, argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> Settings:
        """Flags override the environment: ``--port 9000 --data-dir /srv/solitaire``."""
        base = cls.from_env(environ)
        parser = argparse.ArgumentParser(
            prog="python -m service",
            description="Run the solitaire game service (REST + WebSocket).",
            epilog="Every flag can also be set as SOLITAIRE_<NAME> in the environment (REDIS_URL for --redis-url).",
        )
        for f in dataclasses.fields(cls):
            flag = "--" + f.name.replace("_", "-")
            parser.add_argument(flag, dest=f.name, default=None, metavar=f.name.upper(),
                                help=f"default: {getattr(base, f.name)!s}")
        ns = parser.parse_args(argv)
        overrides: dict[str, object] = {}
        for f in dataclasses.fields(cls):
            raw = getattr(ns, f.name)
            if raw is not None:
                try:
                    overrides[f.name] = _convert(f, raw, "--" + f.name.replace("_", "-"))
                except ValueError as exc:
                    parser.error(str(exc))
        return dataclasses.replace(base, **overrides)  # type: ignore[arg-type]


def _convert(f: dataclasses.Field[object], raw: str, source: str) -> object:
    kind = str(f.type)
    if kind == "bool":
        low = raw.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"{source}={raw!r}: expected true or false")
    try:
        if "Path" in kind:
            return Path(raw)
        if kind.startswith("int"):
            return int(raw)
        if kind.startswith("float"):
            return float(raw)
    except ValueError:
        raise ValueError(f"{source}={raw!r} is not a valid {kind.split(' ')[0]}") from None
    if f.name == "appendfsync" and raw not in ("always", "everysec", "no"):
        raise ValueError(f"{source}={raw!r}: expected always, everysec or no")
    return raw
