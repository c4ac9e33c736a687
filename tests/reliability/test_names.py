"""Issue 11, point 7: names that look like nothing or like someone else.

A name needs a visible character; default-ignorable and filler code points are
refused with a 400 naming the character; names are kept in NFKC form, so a
fullwidth or otherwise compatible spelling of a name *is* that name wherever
names are shown or compared (leaderboards), never a look-alike of it. A name is
written in one script (or in scripts written together: Japanese, Korean, Chinese with
Latin), so a Cyrillic letter cannot pass a Latin name off as another (issue 23).
"""

from __future__ import annotations

import unicodedata
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from service.domain.players import is_invisible
from tests.live import settings_for_test
from tests.service.helpers import Api, running_app

INVISIBLE = [
    "\u3164",
    "\u115f",
    "\u1160",
    "\uffa0",
    "\u200b",
    "\u2060",
    "\ufeff",
    "\u00ad",
    "\u2800",
    "\U000e0041",
    "\u180e",
    "\u034f",
    "\ufe0f",
]


@pytest.fixture
async def api(redis_url: str, tmp_path: Path) -> AsyncIterator[Api]:
    async with running_app(settings_for_test(redis_url, tmp_path)) as (base, _), \
            aiohttp.ClientSession() as session:
        yield Api(session, base)


@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
async def test_invisible_characters_are_refused_alone_and_inside_a_name(
    api: Api, char: str
) -> None:
    for name in (char, char * 3, f"ann{char}", f"{char}ann", f"an{char}n"):
        reply = await api.request("POST", "/v1/players", json={"name": name})
        assert reply.status == 400, (name, reply.raw[:200])
        assert reply.error["code"] == "bad_request" and reply.error["details"] == {"field": "name"}
    _, token = await api.player("ann")
    reply = await api.request("PATCH", "/v1/players/me", token, json={"name": f"ann{char}"})
    assert reply.status == 400


async def test_the_invisible_character_is_named_in_the_refusal(api: Api) -> None:
    reply = await api.request("POST", "/v1/players", json={"name": "\u3164"})
    assert "U+3164" in reply.error["message"] and "HANGUL FILLER" in reply.error["message"]


async def test_look_alike_spellings_are_kept_in_nfkc_form(api: Api) -> None:
    for sent, kept in [
        ("ａｄｍｉｎ", "admin"),
        ("ℌello", "Hello"),
        ("ﬁsh", "fish"),
        ("Ｚoë", "Zoë"),
    ]:
        body = (await api.request("POST", "/v1/players", json={"name": sent}, expect=201)).body
        assert body["name"] == kept == unicodedata.normalize("NFKC", sent)


async def test_visible_names_of_every_script_are_still_welcome(api: Api) -> None:
    for name in ("ann", "Zoë", "李雷", "Ольга", "أحمد", "O'Neil-Smith", "J. R. 2"):
        body = (await api.request("POST", "/v1/players", json={"name": name}, expect=201)).body
        assert body["name"] == name


def test_every_default_ignorable_range_is_invisible() -> None:
    assert all(is_invisible(c) for c in INVISIBLE)
    assert not any(is_invisible(c) for c in "aZ09 .'-ëé李")


async def test_a_name_has_at_most_32_characters_as_sent_and_as_kept(api: Api) -> None:
    await api.request("POST", "/v1/players", json={"name": "x" * 32}, expect=201)
    sent = await api.request("POST", "/v1/players", json={"name": "x" * 33})
    assert sent.status == 400 and "<= 32" in sent.error["message"]  # the protocol's maxLength
    # Two characters as sent, 36 once folded (U+FDFA is a whole phrase in NFKC).
    kept = await api.request("POST", "/v1/players", json={"name": "\ufdfa\ufdfa"})
    assert kept.status == 400
    assert kept.error["message"] == "a player name has 1 to 32 characters, got 36"


# --- issue 23, point 10: letters of other scripts that look alike ------------------------


async def test_a_name_mixing_scripts_is_refused_naming_the_letter(api: Api) -> None:
    # Cyrillic і (U+0456) and а (U+0430), Greek ο (U+03BF) among Latin letters, and the
    # other way round: each reads as a Latin name.
    for name, letter in [("admіn", "\u0456"), ("Pаul", "\u0430"), ("bοb", "\u03bf"),
                         ("Оlga", "l")]:
        reply = await api.request("POST", "/v1/players", json={"name": name})
        assert reply.status == 400, (name, reply.raw[:200])
        assert reply.error["details"] == {"field": "name"}
        assert f"U+{ord(letter):04X}" in reply.error["message"], reply.error["message"]
        assert "one script" in reply.error["message"]
    _, token = await api.player("ann")
    reply = await api.request("PATCH", "/v1/players/me", token, json={"name": "аnn"})
    assert reply.status == 400 and "Cyrillic and Latin" in reply.error["message"]


async def test_scripts_people_write_together_are_welcome(api: Api) -> None:
    # Japanese (Han, Hiragana, Katakana, with Latin), Korean (Hangul, Han, Latin), Chinese
    # with Bopomofo; digits and punctuation belong to no script.
    for name in ("山田 Taro", "すし太郎ー", "東京タワー 2", "김민수 Kim", "金 민수", "ㄅㄆ 李",
                 "Ольга-2", "Σωκράτης", "Zoë O'Neil"):
        body = (await api.request("POST", "/v1/players", json={"name": name}, expect=201)).body
        assert body["name"] == name
