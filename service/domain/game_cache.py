"""The games this process read or wrote lately, the most recent ``size`` of them.

The log in the store is the truth: a cached game may be behind it (another instance
wrote since), and a command is written only if the log is still at the cached ``seq``
(the append script checks it), so a stale entry costs a retry, never a wrong write.
"""

from __future__ import annotations

from collections import OrderedDict

from service.domain.loaded import Loaded, same


class GameCache:
    def __init__(self, size: int) -> None:
        self.size = size
        self._games: OrderedDict[str, Loaded] = OrderedDict()

    def get(self, game_id: str) -> Loaded | None:
        return self._games.get(game_id)

    def remember(self, loaded: Loaded) -> None:
        """Keep ``loaded`` as the game's latest state (the oldest game leaves if full)."""
        games = self._games
        games[loaded.game_id] = loaded
        games.move_to_end(loaded.game_id)
        while len(games) > self.size:
            games.popitem(last=False)

    def read(self, loaded: Loaded) -> Loaded:
        """Remember a game just read from the log; the copy to use from now on."""
        cached = self._games.get(loaded.game_id)
        if cached is not None and same(cached, loaded):
            # The cache has it already: keep that one. Each hello reads its game, and a
            # burst of hellos made as many copies, the last of each kept for good: the
            # long-lived copies, scattered among the sockets' memory, kept most of it
            # from being given back once the sockets closed (benchmarks/README.md, "Memory").
            loaded = cached
        self.remember(loaded)
        return loaded

    def forget(self) -> None:
        """Forget every game: each is read from the log again when next used. After a burst
        of sockets has closed (service/runtime/memory.py), the copies their hellos cached
        are the longest-lived objects scattered among the sockets' freed memory, and keep
        Python's allocator from giving it back (benchmarks/README.md, "Memory")."""
        self._games.clear()

    def hints(self, loaded: Loaded, count: int) -> None:
        """The game has had ``count`` hints: ``loaded`` and the cached copy learn it."""
        cached = self._games.get(loaded.game_id)
        for one in (loaded, cached):
            if one is not None:
                one.hints = max(one.hints, count)
