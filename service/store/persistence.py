"""Whether the store can keep what ``settings.durability`` promises, asked of the store.

``local`` and ``replicated`` acknowledge a command once the store has it in its
append-only file (``WAITAOF``; ``replicated`` also once a replica has it: ``WAIT``).
A store without an append-only file, one that never fsyncs it (``appendfsync no``), or
one that refuses ``WAITAOF`` or ``WAIT`` (an older server, a managed store's command
list) can confirm no write: every write would be answered 503 "unknown outcome" though
it was done. :func:`check` asks each node (the one server, or every master of a
cluster) with commands a managed store allows: ``INFO persistence`` (whether it keeps
an append-only file), ``WAITAOF 1 0 1`` and ``WAIT 0 1`` on a connection that wrote
nothing (answered at once when the store has them), ``INFO replication`` (its
replicas); and ``CONFIG GET appendfsync``, which a managed store may refuse (the
policy is then unknown, not a fault).

- :func:`check` at start-up (``python -m service``, before any worker): a fault stops
  the start with one line naming the setting and both ways out.
- :class:`Watch`, while running: asked again at each new connection to the store (a
  restarted or replaced store may run otherwise), it logs an ERROR when the store can no
  longer confirm writes, and a WARNING when what it found changed.
- :func:`replicas_missing`: ``/readyz`` under ``replicated``.

The cost of ``appendfsync everysec`` under ``local``: each acknowledgement waits for the
store's next fsync (once a second, shared by every write meanwhile). :data:`EVERYSEC_FIGURES`
gives the figures measured (benchmarks/README.md, "appendfsync everysec under local").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from service.store.durability import LEVELS, _config_value, _info_field
from service.store.errors import StoreError

logger = logging.getLogger(__name__)

WAYS_OUT = ("run the service with --durability memory (SOLITAIRE_DURABILITY=memory: a "
            "crash of the store may then lose acknowledged commands), or configure the store "
            "with appendonly yes and appendfsync always")
# benchmarks/README.md, "appendfsync everysec under local": measured, on Valkey 8.1.
EVERYSEC_FIGURES = ("100 clients each sending a command once its last was acknowledged got "
                    "100-109 commands/s and an ack median of 0.7-1.0 s, against 880-2,260/s "
                    "and 39-103 ms with appendfsync always; benchmarks/README.md")


@dataclass(frozen=True)
class Node:
    """What one node of the store said."""

    name: str
    aof: bool | None  # INFO persistence aof_enabled (None: INFO refused)
    appendfsync: str | None  # None: CONFIG GET refused
    waitaof: str | None  # None: WAITAOF answered; else the refusal
    wait: str | None  # None: WAIT answered (or not asked); else the refusal
    replicas: int | None  # INFO replication connected_slaves (None: not asked or refused)


@dataclass(frozen=True)
class Finding:
    """The verdict: ``fault`` (the level cannot be kept: one sentence) and ``warnings``."""

    fault: str | None
    warnings: tuple[str, ...]
    summary: str  # what was found, for the start-up log


async def check(conn: Any, level: str, timeout_s: float) -> Finding:
    """Ask every node of ``conn``'s store (StoreError if it does not answer)."""
    need = LEVELS[level]
    if need is None:
        return Finding(None, (), "durability memory: the store's persistence is not asked")
    async with asyncio.timeout(timeout_s):
        nodes = await _ask(conn, replicated=need[1] > 0)
    return judge(level, nodes)


def judge(level: str, nodes: list[Node]) -> Finding:
    fault: str | None = None
    warnings: list[str] = []
    for node in nodes:
        where = f"the store ({node.name})"
        if node.aof is False:
            fault = fault or (
                f"durability {level} acknowledges a command once it is in the store's "
                f"append-only file, and {where} keeps none (INFO persistence: aof_enabled:0): "
                f"{WAYS_OUT}")
        elif node.appendfsync == "no":
            fault = fault or (
                f"durability {level} acknowledges a command once the store has fsynced it, "
                f"and {where} never does (appendfsync no): {WAYS_OUT}")
        elif node.waitaof is not None:
            fault = fault or (
                f"durability {level} waits for the store's WAITAOF, which {where} refuses "
                f"({node.waitaof}): {WAYS_OUT} (WAITAOF: Redis 7.2 or Valkey 8 and later)")
        elif node.wait is not None:
            fault = fault or (
                f"durability {level} waits for a replica with WAIT, which {where} refuses "
                f"({node.wait}): run the service with --durability local or memory, or use "
                f"a store that answers WAIT")
        if node.appendfsync == "everysec":
            warnings.append(
                f"durability {level} on {where} with appendfsync everysec: each "
                f"acknowledgement waits for the store's next fsync, once a second "
                f"({EVERYSEC_FIGURES}); set appendfsync always "
                f"on the store: it then fsyncs before it replies and nothing waits")
        elif node.appendfsync is None and node.aof:
            warnings.append(
                f"durability {level}: {where} does not say its appendfsync (CONFIG GET "
                f"refused): under everysec each acknowledgement waits for its next fsync, "
                f"once a second; appendfsync always is the fast setting")
        if level == "replicated" and node.replicas == 0:
            warnings.append(f"durability replicated: {where} has no replica attached: every "
                            f"write is refused (503, outcome unknown) and /readyz answers 503 "
                            f"until one is")
    policies = sorted({n.appendfsync or "unknown" for n in nodes})
    summary = (f"durability {level}: append-only file "
               f"{'on' if all(n.aof for n in nodes) else 'off or unknown'}, appendfsync "
               f"{'/'.join(policies)}" + (f" on {len(nodes)} masters" if len(nodes) > 1 else ""))
    return Finding(fault, tuple(warnings), summary)


async def replicas_missing(conn: Any, timeout_s: float) -> str | None:
    """Under ``replicated``: why the store cannot take a write now (a master without a
    replica), or None. StoreError or TimeoutError if it does not answer."""
    async with asyncio.timeout(timeout_s):
        replies = await conn.every_master([("INFO", "replication")])
    for name, (info,) in replies:
        count = None if isinstance(info, BaseException) else _info_field(info, "connected_slaves")
        if count == "0":
            return (f"durability replicated: the store ({name}) has no replica attached, so no "
                    f"write can be acknowledged (INFO replication: connected_slaves:0)")
    return None


async def _ask(conn: Any, replicated: bool) -> list[Node]:
    calls: list[tuple[Any, ...]] = [("INFO", "persistence"), ("CONFIG", "GET", "appendfsync"),
                                    ("WAITAOF", 1, 0, 1)]
    if replicated:
        calls += [("WAIT", 0, 1), ("INFO", "replication")]
    nodes = []
    for name, replies in await conn.every_master(calls):
        info, fsync, waitaof = replies[:3]
        aof_field = None if isinstance(info, BaseException) else _info_field(info, "aof_enabled")
        aof = None if aof_field is None else aof_field == "1"
        policy = None if isinstance(fsync, BaseException) else (_config_value(fsync) or None)
        # With no append-only file WAITAOF is refused for that reason, said above.
        refused = _refusal(waitaof) if aof is not False else None
        wait = replicas = None
        if replicated:
            wait = _refusal(replies[3])
            count = (None if isinstance(replies[4], BaseException)
                     else _info_field(replies[4], "connected_slaves"))
            replicas = int(count) if count is not None and count.isdigit() else None
        nodes.append(Node(name, aof, policy, refused, wait, replicas))
    return nodes


def _refusal(reply: Any) -> str | None:
    return f"{type(reply).__name__}: {reply}" if isinstance(reply, BaseException) else None


class Watch:
    """Asks the store again after each new connection (at most one question at a time,
    and one a second), and logs what changed: an ERROR when the store can no longer
    confirm writes (they are answered 503 "unknown outcome" until it can), a WARNING
    for a new warning. The first answer of a process is logged only if it is a fault
    (start-up said the rest)."""

    def __init__(self, conn: Any, level: str, timeout_s: float) -> None:
        self.conn = conn
        self.level = level
        self.timeout_s = timeout_s
        self.last: Finding | None = None
        self._again = False
        self._task: asyncio.Task[None] | None = None

    def connected(self) -> None:
        """A connection to the store was made (or made again)."""
        if LEVELS[self.level] is None:
            return
        if self._task is not None and not self._task.done():
            self._again = True
            return
        with contextlib.suppress(RuntimeError):  # no running loop: nothing to ask with
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            self._again = False
            try:
                finding = await check(self.conn, self.level, self.timeout_s)
            except (StoreError, TimeoutError) as exc:
                logger.debug("the store's persistence was not asked: %s", exc)
            else:
                self._report(finding)
            if not self._again:
                return
            await asyncio.sleep(1.0)

    def _report(self, finding: Finding) -> None:
        before = self.last
        self.last = finding
        if finding.fault is not None and (before is None or before.fault != finding.fault):
            logger.error("the store can no longer confirm writes: %s. Until then every write "
                         "is answered 503 'unknown outcome' (it may have been done)",
                         finding.fault)
        elif before is not None and before.fault is not None and finding.fault is None:
            logger.warning("the store confirms writes again (%s)", finding.summary)
        if before is not None:
            for warning in finding.warnings:
                if warning not in before.warnings:
                    logger.warning("%s", warning)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
