"""Issue 11, point 4: hidden cards at rest.

The embedded store's files (append-only files, config, log) and the generated
secrets are their owner's alone: files 0600, folders 0700, files an older version
left readable included; and the store listens on no TCP port.
"""

from __future__ import annotations

import json
import os
import stat
import urllib.request
from pathlib import Path

import pytest

from service.domain.auth import Tokens, load_secret
from service.runtime.clock import Clock
from service.store.embedded import EmbeddedServer
from tests.live import ServiceProcess
from tests.redis_servers import aof_files, sync_client
from tests.reliability.helpers import assert_clean_process_log


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
            assert aof_files(server)
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


# --- issue 23, point 10: a kept secret's file that others may read ----------------------


def test_a_kept_secret_file_readable_by_others_is_tightened_with_a_warning(
    redis_url: str, tmp_path: Path
) -> None:
    data = tmp_path / "service"
    data.mkdir(mode=0o700)
    kept = {"token_secret": "kept-token-secret-0123456789abcdef",
            "daily_secret": "kept-daily-secret-0123456789abcdef"}
    for name, secret in kept.items():
        (data / name).write_text(secret + "\n")
        os.chmod(data / name, 0o644)
    # Unset: the service reads the kept files.
    with ServiceProcess(redis_url, data, SOLITAIRE_TOKEN_SECRET="",
                        SOLITAIRE_DAILY_SECRET="") as service:
        with urllib.request.urlopen(urllib.request.Request(
                service.url + "/v1/players", data=b'{"name": "ann"}', method="POST",
                headers={"Content-Type": "application/json"}), timeout=30) as r:
            token = json.loads(r.read())["token"]
        service.stop()
        log = service.log()
    for name, secret in kept.items():
        assert stat.S_IMODE((data / name).stat().st_mode) == 0o600
        assert (data / name).read_text().strip() == secret  # kept, not replaced
        assert f"(the {name}) was readable by others (mode 0644): it is 0600 now" in log
    assert "sign a token for any player" in log and "compute every future day's deals" in log
    # the kept token secret signs the tokens
    Tokens(kept["token_secret"].encode(), 3600, Clock()).verify(token)
    assert_clean_process_log(log)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_secret_file_of_another_user_readable_by_others_stops_the_start(
    redis_url: str, tmp_path: Path
) -> None:
    data = tmp_path / "service"
    data.mkdir(mode=0o700)
    (data / "token_secret").write_text("someone-elses-secret-0123456789ab\n")
    os.chmod(data / "token_secret", 0o644)
    os.chown(data / "token_secret", 54321, 54321)
    service = ServiceProcess(redis_url, data, SOLITAIRE_TOKEN_SECRET="")
    with pytest.raises(RuntimeError, match="exited with 2"):
        service.start()
    errors = [line for line in service.log().splitlines() if " ERROR " in line]
    assert len(errors) == 1, errors
    assert "token_secret" in errors[0] and "another user (uid 54321)" in errors[0]
    assert "SOLITAIRE_TOKEN_SECRET" in errors[0]
    assert stat.S_IMODE((data / "token_secret").stat().st_mode) == 0o644  # not its to change
