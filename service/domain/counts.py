"""The limits documented "per instance", counted across the instance's worker processes.

Open sockets per client address, watchers per game, and solver searches per address
and per player are held in the store (:mod:`service.store.counts`) as each worker's
share, beside the worker's own count here. Taking one is one store call; so is giving
it back; the command path makes none. A worker that stops cleanly takes its shares
away at once; one that is killed has them stop counting when its lease runs out
(:data:`LEASE_S`).

While the store does not answer, a worker counts alone (each worker still holds at
most the limit), and writes its shares once the store answers again. It waits for an
answer :data:`ANSWER_WITHIN_S` at most: a socket's upgrade takes one, and a store that
stalls must not hold the upgrade past the request deadline (docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import NamedTuple

from service.runtime.background import Background
from service.store.counts import CountsStore
from service.store.errors import StoreError

log = logging.getLogger("service.domain.counts")

LEASE_S = 15.0  # a killed worker's shares count this long at most
RENEW_S = 5.0  # how often a worker renews its lease (and writes shares the store missed)
KEEP_S = 24 * 3600  # a count untouched this long is dropped (no socket stays that quiet)
_BATCH = 100  # shares written in one call when catching up
ANSWER_WITHIN_S = 1.0  # a take or give-back not answered by then counts alone (above)


@contextlib.asynccontextmanager
async def _answer_within() -> AsyncIterator[None]:
    """The store's answer within :data:`ANSWER_WITHIN_S`, else a :class:`StoreError`
    (the call is cancelled: a share it may still have written is written again at the
    lease's renewal, as after any unanswered call)."""
    try:
        async with asyncio.timeout(ANSWER_WITHIN_S):
            yield
    except TimeoutError:
        raise StoreError(f"no answer within {ANSWER_WITHIN_S:g} s") from None


class Full(NamedTuple):
    """A limit that refused: what was counted, and how many the instance holds of it."""

    what: str
    held: int


class InstanceCounts:
    """This worker's shares of its instance's counts."""

    def __init__(self, store: CountsStore) -> None:
        self.store = store
        self.here: dict[str, int] = {}  # what -> this worker's count
        self._unwritten: set[str] = set()  # counts whose share in the store may be wrong
        self._counting_alone = False  # the last store call got no answer (said once)
        self._renewing = Background(self._renew, "instance-counts")

    async def take(self, limits: Sequence[tuple[str, int]]) -> Full | None:
        """Count one of each ``(what, most)``, in this worker and in the instance; all or
        none. None when taken, else the limit that is full (nothing is counted)."""
        for what, most in limits:
            held = self.here.get(what, 0)
            if held >= most:  # full in this worker alone (or a limit of 0): no store call
                return Full(what, held)
        whats = [what for what, _ in limits]
        self._add(whats, 1)  # before the first await: concurrent takes see it
        sent = {what: self.here[what] for what in whats}
        try:
            async with _answer_within():
                taken = await self.store.take([(w, most, sent[w]) for w, most in limits],
                                              int(LEASE_S * 1000), KEEP_S)
        except StoreError as exc:
            self._unwritten.update(whats)  # counted here alone; written once the store answers
            self._heard(exc)
            return None
        except BaseException:
            self._add(whats, -1)
            self._unwritten.update(whats)
            raise
        self._heard(None)
        if taken.taken:
            self._check(sent)
            return None
        self._add(whats, -1)
        # A take judged by a later write of this worker (it arrived late) was counted in
        # that write: refused, the store counts one too many. Written again at the renewal.
        self._unwritten.update(whats)
        what = whats[taken.refused]
        return Full(what, taken.others + sent[what] - 1)

    async def give_back(self, whats: Sequence[str]) -> None:
        """Count one of each less."""
        self._add(whats, -1)
        sent = {what: self.here.get(what, 0) for what in whats}
        try:
            async with _answer_within():
                await self.store.set(list(sent.items()), KEEP_S)
        except StoreError as exc:
            self._unwritten.update(whats)  # written by the lease's next renewal
            self._heard(exc)
            return
        except BaseException:
            self._unwritten.update(whats)
            raise
        self._heard(None)
        self._check(sent)

    def _heard(self, failure: StoreError | None) -> None:
        """After each store call: say when this worker starts counting alone (the store did
        not answer) and when it counts across the instance again."""
        alone = failure is not None
        if alone == self._counting_alone:
            return
        self._counting_alone = alone
        if alone:
            log.warning("the store did not answer (%s): the limits documented per instance "
                        "are counted in this worker alone until it does", failure)
        else:
            log.warning("the store answers again: the limits documented per instance are "
                        "counted across the instance's workers again")

    def held_here(self, what: str) -> int:
        return self.here.get(what, 0)

    def _add(self, whats: Sequence[str], n: int) -> None:
        for what in whats:
            now = self.here.get(what, 0) + n
            if now > 0:
                self.here[what] = now
            else:
                self.here.pop(what, None)

    def _check(self, sent: dict[str, int]) -> None:
        # A concurrent take or give-back of this worker changed a count meanwhile. The
        # store keeps the latest-numbered write (service/store/counts.py), but that one
        # may have been a take the store refused: write the count again at the renewal.
        self._unwritten.update(w for w, mine in sent.items() if self.here.get(w, 0) != mine)

    # --- the lease --------------------------------------------------------------------
    def start(self) -> None:
        self._renewing.start()

    async def stop(self) -> None:
        await self._renewing.stop()
        with contextlib.suppress(StoreError):
            await self.store.leave()

    async def _renew(self) -> None:
        while True:
            try:
                await self.store.renew(int(LEASE_S * 1000))
                await self._write_unwritten()
            except StoreError as exc:
                log.debug("could not renew this worker's lease of its counts: %s", exc)
                self._heard(exc)
            else:
                self._heard(None)
            await asyncio.sleep(RENEW_S)

    async def _write_unwritten(self) -> None:
        while self._unwritten:
            batch = [self._unwritten.pop() for _ in range(min(_BATCH, len(self._unwritten)))]
            try:
                await self.store.set([(what, self.here.get(what, 0)) for what in batch], KEEP_S)
            except BaseException:
                self._unwritten.update(batch)
                raise
