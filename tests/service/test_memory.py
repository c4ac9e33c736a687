"""service/memory.py: memory is given back once a burst of sockets has closed, and not
while sockets only come (the figures are in benchmarks/README.md, "Memory")."""

from __future__ import annotations

import asyncio
import platform

import pytest

from service import memory
from service.memory import Trimmer
from tests.service.helpers import wait_for


async def test_memory_is_given_back_once_a_burst_of_sockets_has_closed() -> None:
    sockets: set[int] = set()
    trimmer = Trimmer(sockets, check_every_s=0.01, after_closed=3)
    trimmer.start()
    try:
        sockets.update(range(5))
        await asyncio.sleep(0.05)  # several checks while the sockets came: no trim
        assert trimmer.trims == 0
        sockets.difference_update(range(4))
        await wait_for(lambda: trimmer.trims == 1, what="a trim after 4 of 5 sockets closed")
        # The count it fell to is the new highest: the next trim waits for another burst.
        sockets.update(range(10, 12))
        sockets.discard(10)
        await asyncio.sleep(0.05)
        assert trimmer.trims == 1
    finally:
        await trimmer.stop()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_glibc_malloc_trim_is_found() -> None:
    trim = memory._malloc_trim()
    assert trim is not None
    assert trim() in (0, 1)  # 1: memory was returned, 0: there was none to return

