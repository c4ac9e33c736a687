"""The terminal client's player, kept in a file of its own between runs.

The file holds one player per service address (a token is only good at the service
that issued it): ``{"<url>": {"player_id", "name", "token"}}``. Its token acts as the
player, so the file is the player's owner's alone: mode 0600, in a folder of mode 0700,
written whole to a temporary file and renamed (a crash leaves the old file or the new).
Its place: ``$SOLITAIRE_PLAYER_FILE``, else ``$XDG_CONFIG_HOME/solitaire/player.json``,
else ``~/.config/solitaire/player.json``.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

# Where the player file is when this variable is not set: see :func:`default_path`.
FILE_VARIABLE = "SOLITAIRE_PLAYER_FILE"


@dataclass(frozen=True, slots=True)
class KeptPlayer:
    """A player of one service, as the file keeps it."""

    player_id: str
    name: str
    token: str


def default_path() -> Path:
    """``$SOLITAIRE_PLAYER_FILE``, else the XDG config folder's ``solitaire/player.json``."""
    chosen = os.environ.get(FILE_VARIABLE, "").strip()
    if chosen:
        return Path(chosen).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME", "").strip() or str(Path.home() / ".config")
    return Path(config) / "solitaire" / "player.json"


def _players(path: Path) -> dict[str, dict[str, str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise PlayerFileError(f"cannot read the player file {path}: {exc}") from None
    if not isinstance(data, dict):
        raise PlayerFileError(f"the player file {path} is not a JSON object: move it away")
    return data


def load(path: Path, url: str) -> KeptPlayer | None:
    """The player kept for the service at ``url``, or None."""
    entry = _players(path).get(url.rstrip("/"))
    if not isinstance(entry, dict):
        return None
    try:
        return KeptPlayer(str(entry["player_id"]), str(entry["name"]), str(entry["token"]))
    except KeyError:
        return None


def save(path: Path, url: str, player: KeptPlayer) -> None:
    """Keep ``player`` as the player of the service at ``url`` (others stay as they are)."""
    players = _players(path)
    players[url.rstrip("/")] = asdict(player)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".player-", suffix=".tmp")
    try:
        os.fchmod(fd, 0o600)  # mkstemp's own mode, said again: the token must stay private
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(players, out, indent=2)
            out.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class PlayerFileError(Exception):
    """The player file cannot be read or is not the client's."""
