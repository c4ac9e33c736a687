"""The suite's guard against a hung test (tests/conftest.py): a test still running after
TEST_HANG_S fails with the stacks of what it waits for, and the run goes on; a teardown
that hangs too ends the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = '''
import asyncio
import pytest

async def the_wait_that_never_ends():
    await asyncio.Event().wait()

async def test_hangs():
    await the_wait_that_never_ends()

def test_after_it():
    pass

@pytest.fixture
async def stuck_teardown():
    yield
    await the_wait_that_never_ends()

async def test_whose_teardown_hangs(stuck_teardown):
    await the_wait_that_never_ends()
'''


def run_probe(tmp_path: Path, *selection: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {**os.environ, "TEST_HANG_S": "1", "TEST_HANG_GRACE_S": "1"}
    # The suite's conftest as a plugin, for a test file outside the suite.
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
         "--rootdir", str(tmp_path), "-c", os.devnull, "-o", "asyncio_mode=auto",
         "-o", "asyncio_default_fixture_loop_scope=function",
         *(f"{tmp_path / 'test_probe.py'}::{name}" for name in selection)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_a_hung_test_fails_with_where_it_waits_and_the_run_goes_on(tmp_path: Path) -> None:
    run = run_probe(tmp_path, "test_hangs", "test_after_it")
    assert "1 failed, 1 passed" in run.stdout, run.stdout + run.stderr
    assert "test_hangs ran longer than 1 s" in run.stdout
    assert "in the_wait_that_never_ends" in run.stdout  # the pending task's own stack


def test_a_teardown_that_hangs_too_ends_the_run(tmp_path: Path) -> None:
    run = run_probe(tmp_path, "test_whose_teardown_hangs", "test_after_it")
    assert run.returncode == 3, run.stdout + run.stderr
    assert "its teardown still runs" in run.stdout
