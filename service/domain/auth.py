"""Player tokens: HMAC-signed, verified without a store lookup.

A token is ``v1.<payload>.<signature>``: the payload is URL-safe base64 of
``{"sub": player_id, "exp": unix_seconds}``, the signature HMAC-SHA256 of
``v1.<payload>`` with the server secret. Every instance shares the secret.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
from pathlib import Path

from service.domain.errors import ApiError
from service.runtime.clock import Clock

_PREFIX = "v1"
log = logging.getLogger("service.domain.auth")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Tokens:
    def __init__(self, secret: bytes, ttl_s: int, clock: Clock) -> None:
        if len(secret) < 16:
            raise ValueError("the token secret must be at least 16 bytes")
        self._secret = secret
        self.ttl_s = ttl_s
        self._clock = clock

    def issue(self, player_id: str) -> str:
        payload = _b64(json.dumps({"sub": player_id, "exp": int(self._clock.time()) + self.ttl_s},
                                  separators=(",", ":")).encode())
        return f"{_PREFIX}.{payload}.{self._sign(payload)}"

    def verify(self, token: str) -> str:
        """The player id in ``token``, or ``401 unauthorized`` saying why."""
        return self.verify_until(token)[0]

    def verify_until(self, token: str) -> tuple[str, int]:
        """The player id in ``token`` and when it expires (unix seconds), or 401."""
        parts = token.split(".")
        # Our tokens are ASCII; hmac.compare_digest raises TypeError on any other str.
        if len(parts) != 3 or parts[0] != _PREFIX or not token.isascii():
            raise ApiError("unauthorized",
                           "malformed token: expected the token from POST /v1/players")
        _, payload, signature = parts
        if not hmac.compare_digest(signature, self._sign(payload)):
            raise ApiError("unauthorized", "invalid token: its signature does not match")
        try:
            claims = json.loads(_unb64(payload))
            player_id, expires = claims["sub"], claims["exp"]
        except (ValueError, KeyError, TypeError):
            raise ApiError("unauthorized", "malformed token payload") from None
        if not isinstance(player_id, str) or not isinstance(expires, int):
            raise ApiError("unauthorized", "malformed token payload")
        if expires <= self._clock.time():
            raise ApiError("unauthorized", "the token has expired: create a player again "
                           "(POST /v1/players, sent without this token)")
        return player_id, expires

    def _sign(self, payload: str) -> str:
        digest = hmac.new(self._secret, f"{_PREFIX}.{payload}".encode(), hashlib.sha256).digest()
        return _b64(digest)


class UnsafeSecretFile(RuntimeError):
    """A secret's file that others may read and this user cannot make private."""


# What a reader of each generated secret could do: said when its file was found readable.
_LEAKED = {
    "token_secret": "sign a token for any player",
    "daily_secret": "compute every future day's deals",
}


def load_secret(configured: str | None, data_dir: Path, name: str = "token_secret") -> bytes:
    """The configured secret, or one generated once and kept in ``data_dir/<name>`` (0600).

    A kept file that others may read (an older version, a copy, a restore from a backup
    made it 0644) is tightened to 0600 with a warning: the file is the service's own, and
    whoever could read it could do what the warning says, so the operator must hear of it
    (and decide whether to rotate it); refusing to start would take the service down over
    a fault it can fix alone. A file of another user, which it cannot fix, stops the start
    (:class:`UnsafeSecretFile`)."""
    if configured:
        return configured.encode()
    path = data_dir / name
    if path.exists():
        _private(path, name)
        return path.read_text().strip().encode()
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    secret = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secret + "\n")
    return secret.encode()


def _private(path: Path, name: str) -> None:
    info = path.stat()
    mode = stat.S_IMODE(info.st_mode)
    if not mode & 0o077:
        return
    setting = f"SOLITAIRE_{name.upper()}"
    if info.st_uid != os.geteuid():
        raise UnsafeSecretFile(
            f"{path} (the {name}) is readable by others (mode {mode:04o}) and belongs to "
            f"another user (uid {info.st_uid}): make it this user's with mode 0600, or set "
            f"{setting}")
    os.chmod(path, 0o600)
    log.warning("%s (the %s) was readable by others (mode %04o): it is 0600 now. Whoever "
                "read it can %s: if anyone else may have, rotate it (delete the file, or set "
                "%s; README, 'Secrets')", path, name, mode, _LEAKED.get(name, "use it"), setting)


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (None when absent)."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError("unauthorized", "the Authorization header must be 'Bearer <token>'")
    return token.strip()
