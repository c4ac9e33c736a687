// A consumer of the package under tsc --strict: what the service always sends is read
// without a check (neither optional nor nullable), what may be null says so, commands
// and errors are typed. tests/jsclient/test_types.py compiles it; it is never run.
import { ApiError, Client, LiveGame } from "solitaire-client";
import type { Diff, GameState, GameSummary, LegalMoves, ServerMessage } from "solitaire-client/wire";

export async function consume(client: Client): Promise<number> {
  const created = await client.createPlayer("Typed");
  const token: string = created.token;
  const { game_id, state } = await client.createGame({ variant: "gilbert", seed: 2 });
  const seq: number = state.seq;
  const seed: number | null = state.seed;
  const owner: string = state.owner;
  const moves: number = state.stats.moves;
  const hints: number = state.stats.hints; // a default, always sent
  const started: string | null = state.stats.started_at;
  const down: number = state.piles["stock"]!.down;
  // @ts-expect-error a secret seed is null: it must be checked before use as a number
  const unchecked: number = state.seed;

  const game: LiveGame = client.open(game_id, { moves: true });
  game.on("state", (next: GameState, { diff }) => {
    if (diff) {
      const at: string = diff.at; // always sent: neither optional nor null
      const hash: string = diff.hash;
      const kind: "diff" = diff.type;
      void [at, hash, kind];
    }
    void next.status;
  });
  game.on("moves", (legal: LegalMoves) => void legal.can_undo);
  game.on("status", (status) => {
    // @ts-expect-error only the statuses the package has
    if (status === "open") return;
  });
  try {
    const ack = await game.play({ type: "move", from: "waste", to: "foundation" });
    const acked: string = ack.command_id;
    void acked;
  } catch (err) {
    if (err instanceof ApiError) {
      const rule: string | null = err.rule;
      const at: number | null = err.seq;
      const wait: number | null = err.retryAfterS;
      const stale: boolean = err.staleSeq;
      const status: number = err.status;
      void [rule, at, wait, stale, status, err.details.limit, err.code];
    }
  }
  // @ts-expect-error a command the protocol does not have
  await game.play({ type: "shuffle" });

  const result = await client.sendCommand(game_id, { type: "draw" }, { expectedSeq: seq });
  const diff: Diff = result.diff;
  const ops: number = diff.ops.length;
  const mine = await client.listMyGames({ status: "playing", limit: 5 });
  const first: GameSummary | undefined = mine.games[0];
  const updated: string | undefined = first?.updated_at;
  const next: string | null = mine.next_cursor;
  const me = await client.getMe();
  const board = await client.getLeaderboard("2026-01-01", "gilbert", { limit: 3 });
  const rank: number | undefined = board.entries[0]?.rank;
  const message: ServerMessage = { type: "synced", seq: 3 };
  void [token, owner, moves, hints, started, down, unchecked, ops, updated, next, me.name, rank,
    message];
  game.close();
  return seq;
}
