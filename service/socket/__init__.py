"""The WebSocket of a game (``GET /v1/games/{id}/ws``, PROTOCOL.md): the endpoint and a
socket's life (``endpoint``), its first hello and who may watch (``handshake``), the
messages and commands of a live socket (``session``), its moves (``moves``), the writer
with its outbox, ordering and resyncs (``writer``, ``outbox``, ``frames``), the messages
and close codes (``messages``), the state the parts share (``connection``) and aiohttp's
socket that says why before 1009 (``gamesocket``).

Like ``web/``, it reaches the store only through :mod:`service.domain`.
"""
