"""The service's CPU per leaderboard entry read: from the board's members (as Redis
returns them) to the response body, without Redis or HTTP.

Each entry is split from its member (``service.store.daily``), made the protocol's
``LeaderboardEntry`` from its stored JSON (``service.domain.daily.ranking.board_entry``), and
the page encoded as a ``Leaderboard`` by msgspec, as ``DailyService.leaderboard`` does.
Prints µs per entry: the median of ``--runs`` runs, each the mean over ``--pages``
pages of ``--entries`` entries (every player named, every attempt won and finished).

    python benchmarks/leaderboard_entries.py
    python benchmarks/leaderboard_entries.py --entries 100 --pages 2000 --runs 7
"""

from __future__ import annotations

import argparse
import time

from _harness import median

from protocol.codec import encode
from protocol.daily import Leaderboard
from service.domain.daily.ranking import Standing, board_entry
from service.store.daily import _row  # the store's split of one member


def members(n: int) -> list[bytes]:
    out = []
    for i in range(n):
        s = Standing(player_id=f"player_{i:06d}", game_id=f"g_{i:022d}", seq=200, status="won",
                     foundation_cards=52, moves=120 + i, duration_ms=300_000 + i,
                     finished_at="2026-12-01T10:00:00.123Z", finish_ms=1_796_119_200_123)
        out.append(s.member().encode() + b"|" + s.entry_json())
    return out


NAMES = {f"player_{i:06d}": f"Player {i}" for i in range(1000)}


def page(board: list[bytes]) -> bytes:
    rows = [_row(m, 1 + i) for i, m in enumerate(board)]
    return encode(Leaderboard(entries=[board_entry(r, NAMES.get(r.player_id)) for r in rows],
                              next_cursor=None, me=None))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=100, help="entries per page")
    ap.add_argument("--pages", type=int, default=2000, help="pages per run")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    board = members(args.entries)
    page(board)  # warm up
    per_entry = []
    for _ in range(args.runs):
        start = time.perf_counter()
        for _ in range(args.pages):
            page(board)
        per_entry.append((time.perf_counter() - start) / args.pages / args.entries * 1e6)
    print(f"{median(per_entry):.2f} µs per entry (median of {args.runs} runs; runs: "
          + ", ".join(f"{x:.2f}" for x in per_entry) + ")")


if __name__ == "__main__":
    main()
