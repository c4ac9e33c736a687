"""Every setting of the service, from command-line flags or the environment.

One frozen dataclass, built once at start-up by :func:`Settings.from_env`
(environment) and :func:`Settings.from_args` (flags override environment).
Units are in the names (``_s`` seconds, ``_bytes``), as in arq.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn
from urllib.parse import unquote_plus

from protocol.ws import HELLO_TIMEOUT_S
from service.web.addresses import trusted_networks

ENV_PREFIX = "SOLITAIRE_"
# The choices of two settings; the store's modules check them against these too.
DURABILITY_LEVELS = ("memory", "local", "replicated")
APPENDFSYNC_POLICIES = ("always", "everysec", "no")  # Redis' appendfsync
DAY_S = 86_400  # the settings counted in days (..._days), in seconds


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
    # The most commands (moves, draws, undos) one game takes; then only resign. Bounds what
    # one game costs: its log, its snapshot (the commands in effect), and rebuilding its
    # positions for an undo after a load. No real game comes near it.
    max_commands_per_game: int = 5000
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
    # Time for a socket's first message: the contract's (PROTOCOL.md), unless configured.
    hello_timeout_s: float = HELLO_TIMEOUT_S
    redis_pool_size: int = 256
    # Send concurrent store commands together in pipelines (single server only).
    redis_autopipeline: bool = True
    redis_timeout_s: float = 2.0
    # Retries of a command after a connection error (jittered exponential
    # backoff from 50 ms, capped at 1 s) before StoreUnavailable (503).
    redis_retries: int = 3
    # Every request (and every WebSocket command) answers within this long: a store
    # that stalls (paused, overloaded, partitioned) gets 503 + Retry-After, not a hang.
    request_deadline_s: float = 5.0
    # When a command is acknowledged: "memory" (the store has it in memory; a
    # crash or failover may lose it), "local" (fsynced to the store's append-only
    # file: the reply of a store with appendfsync always, else WAITAOF 1 0), "replicated"
    # (also received by a replica: WAITAOF 1 0 + WAIT 1).
    durability: str = "local"
    # A pooled connection idle this long is PINGed before use; the fan-out's
    # subscriber connections are PINGed this often and dropped when silent.
    redis_health_check_s: float = 10.0
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
    # Searches (solutions, hints) one client address, and one player, may have running or
    # waiting at once on an instance; more get 429, so that nobody fills the queue.
    solver_searches_per_address: int = 2
    solver_searches_per_player: int = 2
    # The solver's processes start on first use and stop after this long without a job.
    solver_idle_s: float = 60.0
    # A daily deal must be proved winnable within this budget (per candidate deal). Small,
    # so that a candidate the search cannot settle soon (Gilbert's likely-lost deals) does
    # not hold back the day: the native core spends under a second of CPU on 500,000
    # positions, and the next candidate is usually won at once (benchmarks/daily_deals.py).
    daily_solve_s: float = 10.0
    daily_solve_nodes: int = 500_000
    # A game's solution (GET /v1/games/{id}/solution): one search, kept in Redis.
    solution_solve_s: float = 10.0
    solution_solve_nodes: int = 5_000_000
    # A hint: this many sampled completions of the face-down cards, each solved
    # within the per-sample budget (the node budget decides; seconds only cap it: six
    # samples, 0.3 s at most). The native core searches 20,000 positions in 10-40 ms of
    # CPU; with none unknown, one search has the six budgets (docs/winnability.md, "Hints
    # worth taking"; answer times through the service: benchmarks/hint_latency.py).
    hint_samples: int = 6
    hint_sample_nodes: int = 20_000
    hint_sample_s: float = 0.05
    log_level: str = "INFO"
    # Comma-separated addresses of the load balancers in front of the service:
    # only requests from these have their X-Forwarded-For believed (for the
    # per-address rate limit of POST /v1/players).
    trusted_proxies: str = ""
    # --- hardening (issue 11): every limit a stranger can reach -------------------------
    # HMAC secret of the daily challenges' seeds; None: generated once and kept in
    # data_dir/daily_secret. Separate from token_secret: rotating one must not move
    # the other, and a leaked token secret must not reveal future deals.
    daily_secret: str | None = None
    # Reads per client address (GET of a game, its moves, events or solution, a socket's hello),
    # held in the store like the command limit.
    read_rate_per_s: float = 50.0
    read_burst: int = 200
    # hellos on one socket (the first included): a token bucket per socket.
    hello_rate_per_s: float = 1.0
    hello_burst: int = 10
    # A hello whose `since` is this many diffs behind gets a snapshot instead.
    replay_max_diffs: int = 200
    # Finished (won or resigned) games are kept this long after their last command.
    finished_game_ttl_days: int = 90
    # A player's name and id are kept this long after the player's last game or rename.
    player_ttl_days: int = 400
    # --- issue 23: sign-ups, renames and the daily leaderboard's integrity --------------
    # A player that has started no game (nor daily attempt) yet is kept only this long.
    unplayed_player_ttl_s: int = 24 * 3600
    # Sign-ups (POST /v1/players) per client address, a token bucket in the store of
    # their own (each also counts as a new game from the address, see create_per_address).
    signup_per_address_rate_per_s: float = 0.1
    signup_per_address_burst: int = 60
    # Renames (PATCH /v1/players/me) per player: this many a day, all at once at most.
    renames_per_day: int = 10
    # A daily attempt faster than this per move (on average, over 10 moves or more) is
    # marked machine-paced and ranked after every human-paced one (docs/reliability.md).
    machine_pace_ms_per_move: int = 100
    open_games_per_player: int = 100
    # Game creation per player and per client address (token buckets in the store).
    create_rate_per_s: float = 1.0
    create_burst: int = 30
    create_per_address_rate_per_s: float = 5.0
    create_per_address_burst: int = 100
    # A connection that has not sent a complete request's headers this long after it
    # opened (or after its previous response) is closed.
    request_header_timeout_s: float = 10.0
    ws_per_address: int = 200
    watchers_per_game: int = 200
    instance_id: str = field(
        default_factory=lambda: os.environ.get("HOSTNAME", "") or f"pid{os.getpid()}")
    # Worker processes of this instance on one port (SO_REUSEPORT), the embedded
    # store shared; default: the cores this process may use (service/runtime/workers.py).
    workers: int = field(default_factory=lambda: _default_workers())

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
    def from_args(cls, argv: Sequence[str] | None = None,
                  environ: Mapping[str, str] | None = None) -> Settings:
        """Flags override the environment: ``--port 9000 --data-dir /srv/solitaire``."""
        try:
            base = cls.from_env(environ)
        except ValueError as exc:
            refuse(str(exc))
        parser = argparse.ArgumentParser(
            prog=_PROG,
            description="Run the solitaire game service (REST + WebSocket).",
            epilog="Every flag can also be set as SOLITAIRE_<NAME> in the environment "
                   "(REDIS_URL for --redis-url).",
        )
        for f in dataclasses.fields(cls):
            flag = "--" + f.name.replace("_", "-")
            parser.add_argument(flag, dest=f.name, default=None, metavar=f.name.upper(),
                                help=f"default: {shown(f.name, getattr(base, f.name))}")
        ns = parser.parse_args(argv)
        overrides: dict[str, object] = {}
        for f in dataclasses.fields(cls):
            raw = getattr(ns, f.name)
            if raw is not None:
                try:
                    overrides[f.name] = _convert(f, raw, "--" + f.name.replace("_", "-"))
                except ValueError as exc:
                    refuse(str(exc))
        return dataclasses.replace(base, **overrides)  # type: ignore[arg-type]

    @property
    def player_ttl_s(self) -> int:
        """How long a player's name and id are kept after their last game or rename, in
        seconds (``player_ttl_days``)."""
        return self.player_ttl_days * DAY_S

    @property
    def finished_game_ttl_s(self) -> int:
        """How long a won or resigned game is kept, in seconds (``finished_game_ttl_days``)."""
        return self.finished_game_ttl_days * DAY_S

    def to_env(self) -> dict[str, str]:
        """These settings as the environment variables :meth:`from_env` reads."""
        out: dict[str, str] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            name = "REDIS_URL" if f.name == "redis_url" else ENV_PREFIX + f.name.upper()
            out[name] = str(value).lower() if isinstance(value, bool) else str(value)
        return out


_PROG = "python -m service"


def refuse(reason: str) -> NoReturn:
    """Stop the start over a value a setting cannot take: one line naming the setting and
    why, exit status 2 (argparse's ``error`` would print the usage of every flag first)."""
    print(f"{_PROG}: error: {reason}", file=sys.stderr)
    raise SystemExit(2)


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """A sentence for each ``SOLITAIRE_*`` variable that is no setting (a typo is otherwise
    silently ignored: ``SOLITAIRE_DURABLITY=replicated`` would leave ``local`` in force)."""
    fields = [f.name.upper() for f in dataclasses.fields(Settings)]
    out = []
    for name in sorted(environ):
        if name.startswith(ENV_PREFIX) and name.removeprefix(ENV_PREFIX) not in fields:
            close = difflib.get_close_matches(name.removeprefix(ENV_PREFIX), fields, n=1)
            hint = f" (did you mean {ENV_PREFIX}{close[0]}?)" if close else ""
            out.append(f"{name} is not a setting of the service and is ignored{hint}")
    return out


def _default_workers() -> int:
    """The cores this process may use: its CPU affinity, capped by a cgroup v2 CPU quota
    (a container's CPU limit), rounded up."""
    cores = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
             else (os.cpu_count() or 1))
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


SECRETS = frozenset({"token_secret", "daily_secret"})


def shown(name: str, value: object) -> str:
    """A setting's value as --help and logs may show it: secrets never, a URL without its
    password."""
    if name in SECRETS:
        return "(set)" if value else "generated into data_dir"
    if name == "redis_url" and isinstance(value, str):
        return redact_url(value)
    return str(value)


def redact_url(url: str | None) -> str:
    """A store URL (or comma-separated list) as it may be shown: no user or password
    before the host, and the value of every credential-like query parameter
    (``?password=``, which redis-py reads, and any name holding pass, pwd, secret,
    token, auth, cred, key, sig or user) replaced by ``***``."""
    if not url:
        return ""
    return ",".join(_redact_one(part) for part in url.split(","))


# Parts of a query parameter's name that mark its value as a credential (matched on the
# name as redis-py reads it: percent-decoded, any case).
_CREDENTIAL_MARKS = ("pass", "pwd", "secret", "token", "auth", "cred", "key", "sig", "user")


def _redact_one(part: str) -> str:
    scheme, sep, rest = part.partition("://")
    if not sep:
        scheme, rest = "", part
    rest, question, query = rest.partition("?")
    rest = rest.rsplit("@", 1)[-1]
    if question:
        params = []
        for param in query.split("&"):
            name, equals, _ = param.partition("=")
            if equals and any(mark in unquote_plus(name).lower() for mark in _CREDENTIAL_MARKS):
                param = f"{name}=***"
            params.append(param)
        rest += "?" + "&".join(params)
    return f"{scheme}{sep}{rest}"


def _convert(f: dataclasses.Field[object], raw: str, source: str) -> object:
    kind = str(f.type)
    if kind == "bool":
        low = raw.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"{source}={raw!r}: expected true or false")
    if "Path" in kind:
        return Path(raw)
    if kind.startswith(("int", "float")):
        try:
            number = int(raw) if kind.startswith("int") else float(raw)
        except ValueError:
            raise ValueError(f"{source}={raw!r} is not a valid {kind.split(' ')[0]}") from None
        _in_range(f.name, number, raw, source)
        return number
    if f.name == "durability":
        return one_of(source, raw, DURABILITY_LEVELS)
    if f.name == "appendfsync":
        return one_of(source, raw, APPENDFSYNC_POLICIES)
    if f.name == "log_level":
        return one_of(source, raw.upper(), LOG_LEVELS)
    if f.name == "trusted_proxies":
        try:
            trusted_networks(raw)
        except ValueError as exc:
            raise ValueError(f"{source}={raw!r}: {exc}") from None
    if f.name == "redis_url":
        _check_redis_url(raw, source)
    return raw


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# Every number is a count or a size (an int: at least 1, but for the least values below) or a
# rate or a duration (a float: finite and above 0).
_LEAST = {
    "port": 0,  # 0: any free port
    "redis_retries": 0,  # 0: no retry
    "solver_queue": 0,  # 0: a search waits for no other
    "replay_max_diffs": 0,  # 0: a resuming hello always gets a snapshot
    "watchers_per_game": 0,  # 0: only the game's owner
}
_MOST = {"port": 65535}


def _in_range(name: str, value: float, raw: str, source: str) -> None:
    if isinstance(value, float):
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"{source}={raw!r}: must be a number above 0")
        return
    least = _LEAST.get(name, 1)
    if value < least:
        raise ValueError(f"{source}={raw!r}: must be at least {least}")
    most = _MOST.get(name)
    if most is not None and value > most:
        raise ValueError(f"{source}={raw!r}: must be at most {most}")


def _check_redis_url(raw: str, source: str) -> None:
    """A single server's URL names its scheme; a cluster's nodes are ``[redis[s]://]host:port``."""
    parts = [part.strip() for part in raw.split(",")]
    schemes = ("redis", "rediss", "unix") if len(parts) == 1 else ("redis", "rediss")
    for part in parts:
        scheme = part.split("://", 1)[0] if "://" in part else ""
        if (scheme or len(parts) == 1) and scheme not in schemes:
            raise ValueError(f"{source}={redact_url(raw)!r}: {redact_url(part)!r} does not "
                             f"start with {' or '.join(s + '://' for s in schemes)}")


def one_of(source: str, value: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``, else ValueError naming ``source`` and them."""
    if value not in choices:
        raise ValueError(f"{source}={value!r}: expected {', '.join(choices[:-1])} or {choices[-1]}")
    return value
