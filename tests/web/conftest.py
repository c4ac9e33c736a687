"""Browser fixtures: Debian's Chromium driven by Playwright, and the service in a child process.

Playwright is imported inside the fixtures, so that without it (or without Chromium)
the tests skip, saying what is missing, instead of failing to import.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.live import ServiceProcess
from tests.web.helpers import CHROMIUM, CHROMIUM_ARGS, DESKTOP

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Playwright



@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    """Playwright's sync API, for this package's tests only: while it runs, it holds an
    event loop running in the main thread, and an asyncio test collected after these
    (``pytest tests/web/x.py tests/other/y.py``) could not run its own loop."""
    sync_api = pytest.importorskip(
        "playwright.sync_api",
        reason="browser tests need Playwright for Python (in the test extras)")
    if not CHROMIUM.exists():
        pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM} "
                    "(apt-get install chromium; .ci/run installs it)")
    with sync_api.sync_playwright() as p:
        yield p


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh browser profile (its own localStorage: a new player) per test."""
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(10_000)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """One service, with its embedded store, for a module's tests (game ids never collide)."""
    with ServiceProcess(None, tmp_path_factory.mktemp("web-service")) as process:
        yield process


@pytest.fixture
def service_on_redis(redis_url: str, tmp_path: Path) -> Iterator[ServiceProcess]:
    """A service on the suite's Redis server, which keeps the games while the service restarts."""
    with ServiceProcess(redis_url, tmp_path / "service") as process:
        yield process
