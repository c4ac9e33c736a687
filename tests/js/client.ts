// A small client written from docs/protocol.md, typed by the client that
// openapi-typescript generates from openapi.yaml (./api.d.ts, made by the test).
// tests/protocol/test_typescript_client.py typechecks it with tsc --strict, then
// runs it against a real service: optional request fields are left out, and error
// details are read by name. Every call gives the same answer whatever the deal.
import createClient from "openapi-fetch";
import type { components, paths } from "./api.js";

type ErrorInfo = components["schemas"]["ErrorInfo"];

function explain(info: ErrorInfo): string {
  switch (info.code) {
    case "conflict": {
      const current: number | undefined = info.details.seq; // 409: the game's seq now
      return `stale: the game is at seq ${current ?? "?"}`;
    }
    case "illegal_move": {
      const rule: string | undefined = info.details.rule; // 422: which rule refused it
      return `refused by ${rule ?? "a rule"} at seq ${info.details.seq ?? "?"}`;
    }
    case "rate_limited": {
      const wait: number | undefined = info.details.retry_after_s;
      return `retry in ${wait ?? 1} s`;
    }
    default:
      return `${info.code}: ${info.message}`;
  }
}

export async function play(baseUrl: string): Promise<string[]> {
  const client = createClient<paths>({ baseUrl });
  const said: string[] = [];
  const player = await client.POST("/v1/players", { body: { name: "Ada" } });
  if (!player.data) throw new Error(explain(player.error.error));
  const headers = { Authorization: `Bearer ${player.data.token}` };

  // seed, options and public left out.
  const created = await client.POST("/v1/games", { headers, body: { variant: "gilbert" } });
  if (!created.data) throw new Error(explain(created.error.error));
  const id: string = created.data.game_id;
  const state: components["schemas"]["GameState"] = created.data.state;
  const down: number = state.piles["stock"]?.down ?? 0;
  said.push(`${state.variant} at seq ${state.seq}, ${down} cards in the stock`);

  // count, expected_seq and command_id left out; the waste is empty at the deal.
  const early = await client.POST("/v1/games/{id}/commands", {
    params: { path: { id } },
    headers,
    body: { command: { type: "move", from: "waste", to: "foundation" } },
  });
  if (early.error) said.push(explain(early.error.error));

  const drawn = await client.POST("/v1/games/{id}/commands", {
    params: { path: { id } },
    headers,
    body: { command: { type: "draw" }, command_id: "draw-1" },
  });
  if (!drawn.data) throw new Error(explain(drawn.error.error));
  const diff = drawn.data.diff;
  const type: "diff" = diff.type;
  // Always sent: a strict reader needs no null check (the schema must not say nullable).
  const at: string = diff.at;
  const hash: string = diff.hash;
  said.push(`${type} ${diff.seq}${at ? " with its time" : ""}${hash ? " and hash" : ""}, ${diff.status}`);

  // The same command_id again: the first result, nothing applied.
  const again = await client.POST("/v1/games/{id}/commands", {
    params: { path: { id } },
    headers,
    body: { command: { type: "draw" }, command_id: "draw-1" },
  });
  if (again.data) said.push(`resent: seq ${again.data.seq}`);

  // A stale expected_seq.
  const stale = await client.POST("/v1/games/{id}/commands", {
    params: { path: { id } },
    headers,
    body: { command: { type: "undo" }, expected_seq: state.seq },
  });
  if (stale.error) said.push(explain(stale.error.error));

  const legal = await client.GET("/v1/games/{id}/moves", { params: { path: { id } }, headers });
  if (legal.data) {
    const draws = legal.data.moves.filter((command) => command.type === "draw").length;
    said.push(`moves at seq ${legal.data.seq}: ${draws} draw, can undo: ${legal.data.can_undo}`);
  }

  const log = await client.GET("/v1/games/{id}/events", {
    params: { path: { id }, query: { after: 0 } },
    headers,
  });
  if (log.data) said.push(`${log.data.events.length} event: ${log.data.events[0]?.command.type}`);

  const variants = await client.GET("/v1/variants", {});
  if (variants.data) said.push(variants.data.variants.map((v) => v.id).join(", "));
  return said;
}
