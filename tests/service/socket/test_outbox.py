"""The socket outbox: first in first out, bounded, the writer woken by a put, the reader by
room."""

from __future__ import annotations

import asyncio

import pytest

from service.socket.outbox import Outbox


async def test_items_come_out_in_order_and_the_bound_holds() -> None:
    box: Outbox[int] = Outbox(3)
    assert box.qsize() == 0 and box.empty()
    for i in range(3):
        box.put_nowait(i)
    with pytest.raises(asyncio.QueueFull):
        box.put_nowait(3)
    assert box.qsize() == 3
    assert [await box.get() for _ in range(3)] == [0, 1, 2]
    assert box.empty()
    box.put_nowait(4)  # room again once taken
    assert box.get_nowait() == 4
    with pytest.raises(asyncio.QueueEmpty):
        box.get_nowait()


async def test_a_waiting_writer_is_woken_by_a_put_and_can_be_cancelled() -> None:
    box: Outbox[str] = Outbox(2)
    reader = asyncio.create_task(box.get())
    await asyncio.sleep(0)
    assert not reader.done()
    box.put_nowait("a")
    assert await asyncio.wait_for(reader, 5) == "a"
    waiting = asyncio.create_task(box.get())
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    box.put_nowait("b")  # a cancelled wait leaves the outbox usable
    assert await asyncio.wait_for(box.get(), 5) == "b"


async def test_the_reader_waits_for_room_until_the_writer_has_taken_everything() -> None:
    # The socket's reader, with its own answers half the outbox, reads the next message
    # only once the writer has sent them (service/socket/session.py).
    box: Outbox[int] = Outbox(4)
    for i in range(3):
        box.put_nowait(i)
    room = asyncio.create_task(box.drained())
    await asyncio.sleep(0)
    box.get_nowait()
    box.get_nowait()
    await asyncio.sleep(0)
    assert not room.done()  # one left
    box.get_nowait()
    await asyncio.wait_for(room, 5)
    await asyncio.wait_for(box.drained(), 5)  # nothing queued: no wait at all


async def test_a_writer_gone_leaves_no_reader_waiting_for_room_now_or_later() -> None:
    box: Outbox[int] = Outbox(4)
    box.put_nowait(1)
    room = asyncio.create_task(box.drained())
    await asyncio.sleep(0)
    assert not room.done()
    box.close()
    await asyncio.wait_for(room, 5)
    box.put_nowait(2)
    await asyncio.wait_for(box.drained(), 5)  # closed: nobody will take it, nobody waits


async def test_idle_only_while_the_writer_waits_with_nothing_queued() -> None:
    # A command's answer skips the outbox only then (Writer.answer): queued items, or a
    # writer busy elsewhere (sending, reading the store), keep it in the outbox's order.
    box: Outbox[str] = Outbox(4)
    assert not box.idle  # no reader waiting: the writer is busy
    reader = asyncio.create_task(box.get())
    await asyncio.sleep(0)
    assert box.idle
    box.put_nowait("a")
    assert not box.idle  # woken, not run yet: the item is still queued
    assert await asyncio.wait_for(reader, 5) == "a"
    assert not box.idle
