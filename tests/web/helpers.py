"""Driving the web client in Chromium: HTTP to the service, and a page object.

The tests pick legal moves through HTTP (``GET /v1/games/{id}/moves``) and then
perform them by clicking in the page, the way a player would.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
# Debian's Chromium as root, headless, on a machine without outside network.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
TIMEOUT_MS = 10_000

# How Chromium's console starts its lines about failed requests and sockets.
_NETWORK_LINES = ("Failed to load resource:", "WebSocket connection to")

# Returns every pile as the page shows it, from the pile elements' data attributes.
_PILES_JS = """els => Object.fromEntries(els.map(e => [e.dataset.pile,
    {down: Number(e.dataset.down), up: e.dataset.up ? e.dataset.up.split(' ') : []}]))"""


def expect(target: Any, message: str | None = None) -> Any:
    """Playwright's ``expect``, imported when first used (the fixtures skip without Playwright)."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target, message)


def http(method: str, url: str, token: str | None = None, body: Any = None) -> tuple[int, Any]:
    """One request; (status, decoded JSON body). Error statuses are returned, not raised."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as err:
        with err:
            return err.code, json.loads(err.read() or b"null")


class GamePage:
    """The web client in one browser page."""

    def __init__(self, page: Page, base: str) -> None:
        self.page = page
        self.base = base
        self.errors: list[str] = []
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        # Whatever the console shows as an error or a warning counts (a Content-Security-Policy
        # violation is only that), but the browser's own line about a request that failed
        # (an error status, a refused connection): the page says those in its own words.
        page.on("console", lambda msg: self.errors.append(msg.text)
                if msg.type in ("error", "warning") and not msg.text.startswith(_NETWORK_LINES)
                else None)

    # --- lobby ------------------------------------------------------------------
    def open(self, fragment: str = "") -> GamePage:
        self.page.goto(self.base + "/" + fragment)
        return self

    def create_player(self, name: str = "Tester") -> None:
        self.page.fill("#player-name", name)
        self.page.click("#player-create")
        expect(self.page.locator("#new-game")).to_be_visible()

    def start_game(self, variant: str, seed: int | None) -> str:
        self.page.click(f"label:has(#variant-{variant})")
        self.page.fill("#seed", "" if seed is None else str(seed))
        self.page.click("#start")
        self.wait_live(0)
        return self.game_id

    @property
    def game_id(self) -> str:
        fragment = self.page.evaluate("location.hash")
        assert fragment.startswith("#g="), fragment
        return str(fragment[3:])

    @property
    def token(self) -> str:
        return str(self.page.evaluate("JSON.parse(localStorage.getItem('solitaire.player')).token"))

    # --- waiting ----------------------------------------------------------------
    def wait_live(self, seq: int) -> None:
        """Connected, at ``seq``, with that seq's legal moves loaded (so highlights are right)."""
        page = self.page
        expect(page.locator("#seq")).to_have_text(str(seq), timeout=TIMEOUT_MS)
        expect(page.locator("#conn")).to_have_attribute("data-conn", "live", timeout=TIMEOUT_MS)
        expect(page.locator("#board")).to_have_attribute("data-moves-seq", str(seq),
                                                         timeout=TIMEOUT_MS)

    # --- reading the board ------------------------------------------------------
    def piles(self) -> dict[str, dict[str, Any]]:
        piles: dict[str, dict[str, Any]] = self.page.eval_on_selector_all("[data-pile]", _PILES_JS)
        return piles

    def seq(self) -> int:
        return int(self.page.inner_text("#seq"))

    # --- clicking -----------------------------------------------------------------
    def pile(self, pile: str) -> Locator:
        return self.page.locator(f'[data-pile="{pile}"]')

    def card(self, pile: str, index: int) -> Locator:
        return self.pile(pile).locator(f'.card[data-index="{index}"]')

    def click_card(self, pile: str, index: int) -> None:
        """Click face-up card ``index`` of ``pile`` on its index corner, which stays visible
        when other cards overlap it (below it in a column, right of it in a fan)."""
        card = self.card(pile, index)
        box = card.bounding_box()
        assert box is not None, f"card {index} of {pile} is not on screen"
        card.click(position={"x": box["width"] * 0.15, "y": box["height"] * 0.1})

    def click_pile(self, pile: str) -> None:
        self.pile(pile).click()

    def perform(self, move: dict[str, Any]) -> None:
        """Do one legal-move entry by clicking: a card (or the stock), then the destination."""
        if move["type"] == "draw":
            self.click_pile("stock")
        elif move["type"] == "move" and move["from"] == "stock":  # Gate: a space from the stock
            self.click_pile("stock")
            expect(self.pile(move["to"])).to_have_class(_has("target"))
            self.click_pile(move["to"])
        else:
            up = self.piles()[move["from"]]["up"]
            self.click_card(move["from"], len(up) - move.get("count", 1))
            expect(self.pile(move["to"])).to_have_class(_has("target"))
            self.click_pile(move["to"])

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


RANKS = {"A": "Ace", "T": "Ten", "J": "Jack", "Q": "Queen", "K": "King"}
SUITS = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}


def card_name(card: str) -> str:
    """A card as the page says it: "Ten of hearts", "7 of spades"."""
    return f"{RANKS.get(card[0], card[0])} of {SUITS[card[1]]}"


def pile_name(pile_id: str) -> str:
    """A pile as the page says it: "tableau 6", "the waste"."""
    return f"the {pile_id}" if pile_id in ("stock", "waste") else pile_id.replace("/", " ")


def _has(cls: str) -> re.Pattern[str]:
    return re.compile(rf"(^|\s){re.escape(cls)}(\s|$)")


class Service:
    """HTTP access to the service under test for one game (the test's own view of the truth)."""

    def __init__(self, base: str, game_id: str, token: str) -> None:
        self.base = base
        self.game_id = game_id
        self.token = token

    def state(self) -> dict[str, Any]:
        status, body = http("GET", f"{self.base}/v1/games/{self.game_id}", self.token)
        assert status == 200, body
        return dict(body)

    def moves(self) -> dict[str, Any]:
        status, body = http("GET", f"{self.base}/v1/games/{self.game_id}/moves", self.token)
        assert status == 200, body
        return dict(body)

    def command(self, command: dict[str, Any], expected_seq: int | None = None) -> tuple[int, Any]:
        body: dict[str, Any] = {"command": command}
        if expected_seq is not None:
            body["expected_seq"] = expected_seq
        return http("POST", f"{self.base}/v1/games/{self.game_id}/commands", self.token, body)


def choose(moves: list[dict[str, Any]], want: str,
           last: dict[str, Any] | None) -> dict[str, Any] | None:
    """A legal entry to play next: a draw if ``want`` is "draw" and one is legal, else a
    move that does not simply take back ``last``, preferring runs, then any entry."""
    draws = [m for m in moves if m["type"] == "draw"]
    plays = [m for m in moves if m["type"] == "move"]
    if last is not None and last["type"] == "move":
        plays = [m for m in plays if (m["from"], m["to"]) != (last["to"], last["from"])] or plays
    if want == "draw" and draws:
        return draws[0]
    if plays:
        return max(plays, key=lambda m: m.get("count", 1))
    return draws[0] if draws else None


def assert_same_board(page: GamePage, server: Service) -> dict[str, Any]:
    """The page shows exactly the server's state: every pile, the counters."""
    state = server.state()
    expect(page.page.locator("#seq")).to_have_text(str(state["seq"]))
    assert page.piles() == state["piles"]
    expect(page.page.locator("#moves")).to_have_text(str(state["stats"]["moves"]))
    expect(page.page.locator("#foundation")).to_have_text(str(state["stats"]["foundation_cards"]))
    expect(page.page.locator("#status")).to_have_text(state["status"])
    return state


def play_by_clicking(page: GamePage, server: Service, plan: list[str]) -> list[dict[str, Any]]:
    """Play one legal entry per step of ``plan``, chosen through HTTP, performed by clicks."""
    done: list[dict[str, Any]] = []
    last = None
    for want in plan:
        seq = server.state()["seq"]
        page.wait_live(seq)
        move = choose(server.moves()["moves"], want, last)
        assert move is not None, f"no legal move at seq {seq}"
        page.perform(move)
        expect(page.page.locator("#seq")).to_have_text(str(seq + 1))
        assert_same_board(page, server)
        done.append(move)
        last = move
    return done


def wait_daily(base: str, timeout_s: float = 900.0) -> dict[str, Any]:
    """Today's challenges, once the service has chosen them (it answers 503 until then)."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        status, body = http("GET", f"{base}/v1/daily")
        if status != 503:
            assert status == 200, body
            return dict(body)
        assert time.monotonic() < deadline, "the day's deals were never chosen"
        time.sleep(0.5)
