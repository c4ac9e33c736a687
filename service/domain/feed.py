"""A game's feed: what a watcher of a game receives as its events are appended, through
whichever instance appended them.

The store carries them (service/store/fanout.py: one subscription per game and instance,
a resync when the subscription was lost); web/ and socket/ name what arrives from here,
so that they depend on the domain and not on how the store carries events:

- :class:`Published`: one appended event (its seq and the stored diff message);
- :class:`Resync`: the feed may have missed events: read the log again from the last
  seq known.
"""

from __future__ import annotations

from service.store.fanout import Published, Resync

__all__ = ["Published", "Resync"]
