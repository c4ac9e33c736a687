"""The HTTP side of the service: the REST handlers of PROTOCOL.md (``rest``, ``daily``,
``solver``), what every request passes through (``caller``, ``cors``, ``deadline``,
``error_middleware``), how an answer is written (``responses``), the client's address
(``addresses``) and what aiohttp leaves to the application (``connections``,
``aiohttp_handle_error_patch``).

It reaches the store only through :mod:`service.domain`; nothing below ``domain/`` or
``store/`` imports it.
"""
