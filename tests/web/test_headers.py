"""The web client under its browser headers (issue 11, point 8): Chromium enforces the
Content-Security-Policy (an injected inline script does not run) and the client plays
a game through the WebSocket without a single violation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.app import BROWSER_HEADERS
from tests.live import ServiceProcess
from tests.web.helpers import GamePage, Service, choose

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

_INJECT = """() => {
  window.injected = 'no';
  const s = document.createElement('script');
  s.textContent = "window.injected = 'yes'";
  document.head.append(s);
  return new Promise(resolve => setTimeout(() => resolve(window.injected), 100));
}"""


def test_the_client_plays_under_its_csp_and_an_injected_inline_script_is_refused(
        service: ServiceProcess, context: BrowserContext) -> None:
    tab = context.new_page()
    page = GamePage(tab, service.url)
    response = tab.goto(service.url + "/")
    assert response is not None
    for name, value in BROWSER_HEADERS.items():
        assert response.headers[name.lower()] == value
    page.create_player()
    game_id = page.start_game("gilbert", 11)
    server = Service(service.url, game_id, page.token)
    move = choose(server.moves()["moves"], "move", None) or server.moves()["moves"][0]
    page.perform(move)
    page.wait_live(1)  # the WebSocket (connect-src 'self') carried the diff
    assert page.errors == []
    assert tab.evaluate(_INJECT) == "no"
    assert any("Content Security Policy" in e for e in page.errors)  # and the browser said why
