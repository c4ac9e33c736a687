/** New piles after `ops`, in order; `piles` is left untouched.
 *  @param {Record<string, Pile>} piles @param {ReadonlyArray<Op>} ops
 *  @returns {Record<string, Pile>} */
export function applyOps(piles: Record<string, Pile>, ops: ReadonlyArray<Op>): Record<string, Pile>;
/** The state after `diff`, which must be the next one (seq + 1); else a DiffError.
 *  `state` is left untouched.
 *  @template {Omit<GameState, 'game_id' | 'variant' | 'options' | 'public' | 'seed' | 'owner'>} S
 *  @param {S} state @param {DiffLike} diff @returns {S} */
export function applyDiff<S extends Omit<GameState, "game_id" | "variant" | "options" | "public" | "seed" | "owner">>(state: S, diff: DiffLike): S;
/** @typedef {import('../types/wire.js').GameState} GameState */
/** @typedef {import('../types/wire.js').Pile} Pile */
/** @typedef {import('../types/wire.js').Op} Op */
/** @typedef {Pick<import('../types/wire.js').Diff, 'seq' | 'ops' | 'status' | 'stats'>} DiffLike */
/** A diff that cannot apply to the state it was given: the client must resynchronise. */
export class DiffError extends Error {
    /** @param {string} message */
    constructor(message: string);
}
/** The statuses of a game that is over. @type {ReadonlySet<string>} */
export const FINAL_STATUSES: ReadonlySet<string>;
export type GameState = import("../types/wire.js").GameState;
export type Pile = import("../types/wire.js").Pile;
export type Op = import("../types/wire.js").Op;
export type DiffLike = Pick<import("../types/wire.js").Diff, "seq" | "ops" | "status" | "stats">;
