// A small client written from docs/protocol.md, typed by the client that
// openapi-typescript generates from openapi.yaml (./api.d.ts, made by the test).
// tests/protocol/test_typescript_client.py typechecks it with tsc --noEmit --strict:
// optional request fields are left out, and error details are read by name.
import createClient from "openapi-fetch";
import type { components, paths } from "./api";

type ErrorInfo = components["schemas"]["ErrorInfo"];

const client = createClient<paths>({ baseUrl: "http://127.0.0.1:8080" });

function explain(info: ErrorInfo): string {
  switch (info.code) {
    case "conflict": {
      const current: number | undefined = info.details.seq; // 409: the game's seq now
      return `stale: the game is at seq ${current ?? "?"}`;
    }
    case "illegal_move": {
      const rule: string | undefined = info.details.rule; // 422: which rule refused it
      return `refused by ${rule ?? "a rule"}: ${info.message}`;
    }
    case "rate_limited": {
      const wait: number | undefined = info.details.retry_after_s;
      return `retry in ${wait ?? 1} s`;
    }
    default:
      return info.message;
  }
}

export async function play(): Promise<string[]> {
  const said: string[] = [];
  const player = await client.POST("/v1/players", { body: { name: "Ada" } });
  if (!player.data) throw new Error(player.error.error.message);
  const headers = { Authorization: `Bearer ${player.data.token}` };

  // seed, options and public left out.
  const created = await client.POST("/v1/games", { headers, body: { variant: "gilbert" } });
  if (!created.data) throw new Error(created.error.error.message);
  const id: string = created.data.game_id;
  const state: components["schemas"]["GameState"] = created.data.state;
  const down: number = state.piles["stock"]?.down ?? 0;
  said.push(`${state.variant} at seq ${state.seq}, ${down} cards in the stock`);

  // expected_seq and command_id left out.
  const drawn = await client.POST("/v1/games/{id}/commands", {
    params: { path: { id } },
    headers,
    body: { command: { type: "draw" } },
  });
  if (drawn.data) {
    const diff = drawn.data.diff;
    const type: "diff" = diff.type;
    const at: string | null = diff.at;
    said.push(`${type} ${diff.seq} at ${at ?? "?"}: ${diff.ops.length} ops, ${diff.status}`);
  }

  // count left out; "foundation" picks the lowest index that accepts the card.
  const moved = await client.POST("/v1/games/{id}/commands", {
    params: { path: { id } },
    headers,
    body: {
      command: { type: "move", from: "waste", to: "foundation" },
      expected_seq: state.seq + 1,
      command_id: "move-1",
    },
  });
  if (moved.error) said.push(explain(moved.error.error));

  const legal = await client.GET("/v1/games/{id}/moves", { params: { path: { id } }, headers });
  if (legal.data) {
    for (const command of legal.data.moves) {
      if (command.type === "move") said.push(`${command.from} -> ${command.to} (${command.count ?? 1})`);
    }
  }

  const log = await client.GET("/v1/games/{id}/events", {
    params: { path: { id }, query: { after: 0 } },
  });
  if (log.data) said.push(`${log.data.events.length} events`);

  const daily = await client.GET("/v1/daily", {});
  if (daily.data) said.push(daily.data.challenges.map((c) => c.variant).join(", "));
  return said;
}
