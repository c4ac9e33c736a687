"""What the running service really sends, read with protocol/'s Structs.

Every JSON operation of openapi.yaml is called on a real instance (real Redis, real
sockets), and every kind of WebSocket message is made to happen. Each answer and message
is decoded strictly (no value coerced from another type) with the Struct that openapi.yaml
or the ``ServerMessage`` union names for it, and must be exactly that Struct: encoded
again it gives back the same JSON. So a field the server sends that the Struct does not
declare, or a field of the Struct the server leaves out, fails here, even where clients
tolerate it.

And every field the server sends must be ``required`` in the schema that describes it
(openapi.yaml for REST, asyncapi.yaml for the socket), but for the few in
:data:`OPTIONAL_WHEN_SENT`: a client generated from the schemas may then count on it
instead of checking for it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import aiohttp
import msgspec
import yaml

import protocol
from protocol.asyncapi import ASYNCAPI_PATH
from protocol.schema import OPENAPI_PATH
from protocol.ws import ServerMessage
from tests.fakes import FakeClock
from tests.live import settings_for_test
from tests.service.domain.daily.helpers import DAY, MORNING
from tests.service.helpers import running_app, ws_url

# Not JSON, or not REST: the documents, the metrics text, the WebSocket upgrade.
NOT_JSON = {("GET", "/metrics"), ("GET", "/openapi.yaml"), ("GET", "/asyncapi.yaml"),
            ("GET", "/v1/games/{id}/ws")}


def _load(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        document: dict[str, Any] = yaml.safe_load(f)
    return document


OPENAPI = _load(OPENAPI_PATH)
ASYNCAPI = _load(ASYNCAPI_PATH)

# The fields a server answer may carry that its schema leaves optional, and why.
OPTIONAL_WHEN_SENT = {
    ("Move", "count"): "a command is also what clients send, and they may leave count out",
    ("ErrorMessage", "command_id"): "there only when the error answers a command",
}
OPERATIONS = {(method.upper(), path) for path, item in OPENAPI["paths"].items()
              for method in item if method in ("get", "post", "patch", "put", "delete")}


def struct_of(method: str, path: str, status: int) -> type[msgspec.Struct]:
    """The Struct openapi.yaml names for this answer (the error body for an error)."""
    responses = OPENAPI["paths"][path][method.lower()]["responses"]
    assert str(status) in responses, f"{method} {path} answered {status}, which it does not declare"
    response = _follow(responses[str(status)])
    schema = _follow(response["content"]["application/json"]["schema"], keep_ref=True)
    name = schema["$ref"].rsplit("/", 1)[1]
    struct: type[msgspec.Struct] = getattr(protocol, name)
    return struct


def _follow(node: dict[str, Any], keep_ref: bool = False) -> dict[str, Any]:
    """``node`` with its ``$ref`` followed (a schema ref is kept when ``keep_ref``)."""
    while "$ref" in node and not (keep_ref and "/schemas/" in node["$ref"]):
        target: Any = OPENAPI
        for part in node["$ref"].split("/")[1:]:
            target = target[part]
        node = target
    return node


def exactly(raw: bytes, type_: Any) -> Any:
    """``raw`` decoded strictly as ``type_``, which must hold all of it and nothing more;
    an error's ``details`` only members that ``ErrorDetails`` declares."""
    value = msgspec.json.decode(raw, type=type_, strict=True)
    sent = msgspec.json.decode(raw)
    again = msgspec.json.decode(msgspec.json.encode(value))
    assert again == sent, f"not exactly a {type_}:\n sent  {sent}\n read  {again}"
    error = getattr(value, "error", None)
    if isinstance(error, protocol.ErrorInfo):
        undeclared = set(error.details) - set(protocol.ErrorDetails.__annotations__)
        assert not undeclared, f"details members ErrorDetails does not declare: {undeclared}"
    return value


def ref(struct: type[msgspec.Struct]) -> dict[str, Any]:
    """The schema of ``struct`` as a document refers to it."""
    return {"$ref": f"#/components/schemas/{struct.__name__}"}


def optional_yet_sent(sent: Any, schema: dict[str, Any], schemas: dict[str, Any],
                      at: str = "$") -> list[str]:
    """Where ``sent`` carries a field of one of ``schemas`` (the components of a document)
    that its schema does not list as ``required``: one line each, ``Struct.field at path``.
    ``schema`` describes ``sent`` (a Struct's: ``ref(Struct)``); the schemas it refers to
    are looked up in ``schemas``."""
    if not isinstance(sent, dict | list):
        return []
    name = None
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        schema = schemas[name]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return optional_yet_sent(sent, _branch(sent, schema[key], schemas), schemas, at)
    found = []
    if isinstance(sent, dict):
        properties = schema.get("properties", {})
        if name is not None:  # a Struct's schema (inline objects are maps, or details)
            required = set(schema.get("required", ()))
            found += [f"{name}.{field} at {at}" for field in sent
                      if field in properties and field not in required
                      and (name, field) not in OPTIONAL_WHEN_SENT]
        for field, value in sent.items():
            inner = properties.get(field, schema.get("additionalProperties"))
            if isinstance(inner, dict):
                found += optional_yet_sent(value, inner, schemas, f"{at}.{field}")
    elif isinstance(sent, list) and isinstance(schema.get("items"), dict):
        for i, value in enumerate(sent):
            found += optional_yet_sent(value, schema["items"], schemas, f"{at}[{i}]")
    return found


def _branch(sent: Any, branches: list[dict[str, Any]], schemas: dict[str, Any]) -> dict[str, Any]:
    """The branch of a union that describes ``sent``: the one whose type it has and, among
    tagged Structs, whose tag (its ``type`` or ``op``) it carries."""
    def fits(branch: dict[str, Any]) -> bool:
        while "$ref" in branch:
            branch = schemas[branch["$ref"].rsplit("/", 1)[1]]
        if "anyOf" in branch or "oneOf" in branch:
            return any(fits(b) for b in branch.get("anyOf", branch.get("oneOf", ())))
        if isinstance(sent, list):
            return branch.get("type") == "array"
        if branch.get("type") != "object":
            return False
        tags = [(k, p["enum"]) for k, p in branch.get("properties", {}).items()
                if k in ("type", "op") and "enum" in p]
        return all(sent.get(k) in values for k, values in tags)

    fitting = [branch for branch in branches if fits(branch)]
    assert len(fitting) == 1, f"{sent!r} fits {len(fitting)} of {branches}"
    return fitting[0]


def _tags(union: Any) -> set[str]:
    """The ``type`` tags of a union of messages."""
    return {member.__struct_config__.tag for member in get_args(union)}


@dataclass
class Client:
    """A thin client that checks every answer against the Struct openapi.yaml names."""

    session: aiohttp.ClientSession
    base: str
    called: set[tuple[str, str]] = field(default_factory=set)  # operations answered 2xx
    errors: set[int] = field(default_factory=set)  # error statuses seen

    async def call(self, method: str, path: str, token: str | None = None, expect: int = 200,
                   json: Any = None, data: bytes | None = None, **params: str) -> Any:
        """Call ``path`` (openapi.yaml's template, filled from ``params`` where it has
        ``{...}``, the rest as the query); the decoded Struct of the answer."""
        url, query = path, {}
        for key, value in params.items():
            if "{" + key + "}" in url:
                url = url.replace("{" + key + "}", value)
            else:
                query[key] = value
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with self.session.request(method, self.base + url, headers=headers, json=json,
                                        data=data, params=query) as r:
            raw = await r.read()
            status = r.status
        assert status == expect, (method, url, status, raw[:500])
        if status < 300:
            self.called.add((method, path))
        else:
            self.errors.add(status)
        struct = struct_of(method, path, status)
        schemas = OPENAPI["components"]["schemas"]
        optional = optional_yet_sent(msgspec.json.decode(raw), ref(struct), schemas)
        assert not optional, f"{method} {path}: fields openapi.yaml leaves optional: {optional}"
        return exactly(raw, struct)


@dataclass
class Socket:
    """A WebSocket client that reads every server message as exactly a ServerMessage."""

    ws: aiohttp.ClientWebSocketResponse
    seen: set[str]

    async def send(self, message: protocol.BaseClientMessage) -> None:
        await self.ws.send_str(protocol.encode(message).decode())

    async def recv(self) -> Any:
        msg = await self.ws.receive(timeout=30)
        assert msg.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY), msg
        raw = msg.data.encode() if isinstance(msg.data, str) else msg.data
        message = exactly(raw, ServerMessage)
        self.seen.add(type(message).__struct_config__.tag)
        schemas = ASYNCAPI["components"]["schemas"]
        optional = optional_yet_sent(msgspec.json.decode(raw), ref(type(message)), schemas)
        assert not optional, f"fields asyncapi.yaml leaves optional: {optional}"
        return message

    async def until(self, kind: type[Any]) -> list[Any]:
        out = [await self.recv()]
        while not isinstance(out[-1], kind):
            out.append(await self.recv())
        return out


async def solution(client: Client, game_id: str, token: str) -> protocol.Solution:
    """GET the solution, waiting as Retry-After says while the solver is busy (503)."""
    for _ in range(20):
        async with client.session.get(f"{client.base}/v1/games/{game_id}/solution",
                                      headers={"Authorization": f"Bearer {token}"}) as r:
            if r.status == 503:
                await asyncio.sleep(int(r.headers["Retry-After"]))
                continue
        found: protocol.Solution = await client.call("GET", "/v1/games/{id}/solution", token,
                                                     id=game_id)
        return found
    raise AssertionError("the solver stayed busy for twenty tries")


async def test_every_answer_and_message_is_exactly_its_struct(
        redis_url: str, tmp_path: Path, session: aiohttp.ClientSession) -> None:
    # A hint searches several samples: on a busy machine that can outlast the default 5 s
    # request deadline, which is not what this test is about.
    settings = settings_for_test(redis_url, tmp_path, request_deadline_s=120.0)
    async with running_app(settings) as (base, _):
        client = Client(session, base)
        await client.call("GET", "/healthz")
        await client.call("GET", "/readyz")
        await client.call("GET", "/v1/variants")
        ann = await client.call("POST", "/v1/players", expect=201, json={"name": "ann"})
        await client.call("PATCH", "/v1/players/me", ann.token, json={"name": "ann b"})
        created = await client.call("POST", "/v1/games", ann.token, 201,
                                    json={"variant": "gilbert", "seed": 7, "public": True})
        game_id = created.game_id

        seen: set[str] = set()
        async with session.ws_connect(ws_url(base, game_id)) as owner_ws, \
                session.ws_connect(ws_url(base, game_id)) as watcher_ws:
            owner, watcher = Socket(owner_ws, seen), Socket(watcher_ws, seen)
            await owner.send(protocol.Hello(token=ann.token))
            assert [type(m) for m in await owner.until(protocol.Synced)] == [
                protocol.Snapshot, protocol.Synced]
            await watcher.send(protocol.Hello(since=0, moves=True))  # the legal moves too
            await watcher.until(protocol.Synced)
            await watcher.until(protocol.MovesMessage)
            await owner.send(protocol.Ping())
            await owner.until(protocol.Pong)

            moves = await client.call("GET", "/v1/games/{id}/moves", id=game_id)
            await owner.send(protocol.CommandMessage(command_id="c1", command=moves.moves[0]))
            answers = await owner.until(protocol.Ack)
            assert [type(m) for m in answers] == [protocol.DiffMessage, protocol.Ack]
            await watcher.until(protocol.DiffMessage)
            # A command refused: an error answering it, with its command_id.
            await owner.send(protocol.CommandMessage(command_id="c2", expected_seq=0,
                                                     command=protocol.Draw()))
            (refused,) = await owner.until(protocol.ErrorMessage)
            assert refused.command_id == "c2" and refused.error.code == "conflict"

            result = await client.call("POST", "/v1/games/{id}/commands", ann.token,
                                       json={"command": {"type": "draw"}}, id=game_id)
            assert result.seq == 2 and result.diff.seq == 2
            await owner.until(protocol.DiffMessage)
        assert seen == _tags(ServerMessage), "server messages never seen"

        await client.call("GET", "/v1/games/{id}", id=game_id)
        await client.call("GET", "/v1/players/me", ann.token)
        mine = await client.call("GET", "/v1/players/me/games", ann.token, limit="1")
        assert mine.games[0].game_id == game_id and mine.next_cursor is None
        events = await client.call("GET", "/v1/games/{id}/events", id=game_id, after="0",
                                   limit="1")
        assert events.next_after == 1
        await client.call("GET", "/v1/games/{id}/events", id=game_id)
        await client.call("POST", "/v1/games/{id}/hint", ann.token, id=game_id)
        await client.call("POST", "/v1/games/{id}/commands", ann.token,
                          json={"command": {"type": "resign"}}, id=game_id)
        await solution(client, game_id, ann.token)

        # Errors: each as the error body, whatever the endpoint.
        await client.call("GET", "/v1/games/{id}", expect=404, id="g_nothing_here")
        await client.call("POST", "/v1/players", expect=400, data=b"{")
        await client.call("POST", "/v1/games", expect=401, json={"variant": "gilbert"})
        await client.call("POST", "/v1/games/{id}/commands", ann.token, 422,
                          json={"command": {"type": "draw"}}, id=game_id)

    daily = {op for op in OPERATIONS if op[1].startswith("/v1/daily")}
    assert OPERATIONS - NOT_JSON - daily - client.called == set(), "operations never called"
    assert client.errors == {400, 401, 404, 422}


async def test_the_daily_answers_are_exactly_their_structs(
        redis_url: str, tmp_path: Path, session: aiohttp.ClientSession) -> None:
    async with running_app(settings_for_test(redis_url, tmp_path), FakeClock(MORNING)) as (base, _):
        client = Client(session, base)
        date = DAY.isoformat()
        await _chosen(client, date)
        ann = await client.call("POST", "/v1/players", expect=201, json={"name": "ann"})
        attempt = await client.call("POST", "/v1/daily/{date}/{variant}/attempts", ann.token, 201,
                                    date=date, variant="gate")
        await client.call("POST", "/v1/games/{id}/commands", ann.token,
                          json={"command": {"type": "resign"}}, id=attempt.game_id)
        board = await client.call("GET", "/v1/daily/{date}/{variant}/leaderboard", ann.token,
                                  date=date, variant="gate", limit="5")
        assert board.me is not None and board.me.game_id == attempt.game_id
        assert [e.player_id for e in board.entries] == [ann.player_id]
        await client.call("POST", "/v1/daily/{date}/{variant}/attempts", ann.token, 409,
                          date=date, variant="gate")
    daily = {op for op in OPERATIONS if op[1].startswith("/v1/daily")}
    assert daily - client.called == set(), "daily operations never called"


async def _chosen(client: Client, date: str) -> None:
    """Wait until the day's deals are chosen: GET /v1/daily is a 503 until then."""
    deadline = asyncio.get_running_loop().time() + 900
    while True:
        async with client.session.get(client.base + "/v1/daily", params={"date": date}) as r:
            raw, status = await r.read(), r.status
        if status == 200:
            await client.call("GET", "/v1/daily", date=date)
            return
        assert status == 503, raw
        exactly(raw, protocol.ErrorBody)
        assert asyncio.get_running_loop().time() < deadline, f"no deals chosen for {date}"
        await asyncio.sleep(0.5)
