"""Where the terminal client looks when not told: the service's address and the player
file; and the command line that brings a user back to the same ones."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from . import identity

DEFAULT_URL = "http://127.0.0.1:8080"
# The service's address when --url is not given (then DEFAULT_URL).
URL_VARIABLE = "SOLITAIRE_URL"


def default_url() -> str:
    """``$SOLITAIRE_URL`` when it is set and not empty, else :data:`DEFAULT_URL`."""
    return os.environ.get(URL_VARIABLE, "").strip() or DEFAULT_URL


def command_line(*args: str, url: str, player_file: Path | None,
                 token: str | None = None) -> str:
    """``python -m clients.python <args>``, with ``--url`` and ``--player-file`` where
    these differ from what the same command would use without them, and ``--token`` when
    the player was given by its token, so that the line, run as printed, reaches the same
    service as the same player."""
    words = ["python", "-m", "clients.python", *args]
    if url.rstrip("/") != default_url().rstrip("/"):
        words += ["--url", url]
    if token is not None:  # the player file plays no part then
        words += ["--token", token]
    elif player_file is not None and player_file != identity.default_path():
        words += ["--player-file", str(player_file.expanduser().absolute())]
    return shlex.join(words)
