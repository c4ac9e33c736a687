"""Issue 11, point 4: hidden cards at rest.

The embedded store's files (append-only files, config, log) and the generated
secrets are their owner's alone: files 0600, folders 0700, files an older version
left readable included; and the store listens on no TCP port.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from service.auth import load_secret
from service.store.embedded import EmbeddedServer
from tests.redis_servers import sync_client


def modes(root: Path) -> dict[str, int]:
    out = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        if not path.is_symlink() and not path.is_socket():
            out[str(path.relative_to(root))] = stat.S_IMODE(path.lstat().st_mode)
    return out


def test_the_store_files_and_folders_are_their_owners_alone(tmp_path: Path) -> None:
    old = os.umask(0o022)  # a usual umask: what the files would get without the fix
    try:
        folder = tmp_path / "redis"
        folder.mkdir(mode=0o755)
        (folder / "left-by-an-old-version.aof").write_bytes(b"")
        os.chmod(folder / "left-by-an-old-version.aof", 0o644)
        with EmbeddedServer(folder) as server:
            with sync_client(server.url) as client:
                for i in range(50):
                    client.rpush("g:{x}:events", f"event {i}")
                client.execute_command("BGREWRITEAOF")
            assert server.aof_files()
            server.stop()
            seen = modes(folder)
    finally:
        os.umask(old)
    assert any("appendonlydir/" in name for name in seen)
    for name, mode in seen.items():
        is_dir = (folder / name).is_dir()
        assert mode == (0o700 if is_dir else 0o600) or (not is_dir and mode & 0o077 == 0), (
            name,
            oct(mode),
        )
    assert seen["."] == 0o700


def test_the_generated_token_secret_is_its_owners_alone(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        data = tmp_path / "data"
        load_secret(None, data)
    finally:
        os.umask(old)
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert stat.S_IMODE((data / "token_secret").stat().st_mode) == 0o600
