"""What the service is about, whatever the transport: games over their event log
(``games`` and its parts ``game_*``, ``loaded``, ``fingerprints``, ``eventhash``), their
legal moves, hints and solutions (``moves``, ``hints``, ``solutions``, with the solver's
processes in ``solving``, what starts each in ``solver_worker`` and a hint's job in
``hint_job``), players and their tokens (``players``, ``player_games``,
``auth``), daily challenges (``daily/``), the limits (``ratelimit``, ``counts``,
``searches``), the errors clients are sent (``errors``) and the engine's values as wire
Structs (``wire``).

It never imports aiohttp, ``web/`` or ``socket/`` (tests/test_imports.py checks it): a
handler calls it, never the reverse.
"""
