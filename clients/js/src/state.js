// Applying diffs to a game state, mechanically (docs/protocol.md "Diffs"). No rules here:
// the same result as protocol.apply_diff on the server (a shared test says so).

/** @typedef {import('../types/wire.js').GameState} GameState */
/** @typedef {import('../types/wire.js').Pile} Pile */
/** @typedef {import('../types/wire.js').Op} Op */
/** @typedef {Pick<import('../types/wire.js').Diff, 'seq' | 'ops' | 'status' | 'stats'>} DiffLike */

/** A diff that cannot apply to the state it was given: the client must resynchronise. */
export class DiffError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'DiffError';
  }
}

/** @param {Record<string, Pile>} piles @param {string} id @returns {Pile} */
function pileOf(piles, id) {
  const pile = piles[id];
  if (!pile) throw new DiffError(`the diff names an unknown pile ${id}`);
  return pile;
}

/** New piles after `ops`, in order; `piles` is left untouched.
 *  @param {Record<string, Pile>} piles @param {ReadonlyArray<Op>} ops
 *  @returns {Record<string, Pile>} */
export function applyOps(piles, ops) {
  const out = { ...piles };
  const copied = new Set();
  /** @param {string} id */
  const edit = (id) => {
    if (!copied.has(id)) {
      const pile = pileOf(out, id);
      out[id] = { down: pile.down, up: pile.up.slice() };
      copied.add(id);
    }
    return out[id];
  };
  for (const op of ops) {
    const pile = edit(op.pile);
    switch (op.op) {
      case 'pop':
        if (!(op.n >= 0) || op.n > pile.up.length) {
          throw new DiffError(`pop ${op.n} from ${op.pile}, which shows ${pile.up.length} cards`);
        }
        pile.up.length -= op.n;
        break;
      case 'push':
        pile.up.push(...op.cards);
        break;
      case 'flip':
        if (pile.down < 1) throw new DiffError(`flip on ${op.pile}, which has no face-down card`);
        pile.down -= 1;
        pile.up.push(op.card);
        break;
      case 'down':
        if (pile.down + op.n < 0) throw new DiffError(`down ${op.n} on ${op.pile}, which has ${pile.down}`);
        pile.down += op.n;
        break;
      default:
        throw new DiffError(`unknown op ${JSON.stringify(/** @type {any} */ (op).op)}`);
    }
  }
  return out;
}

/** The state after `diff`, which must be the next one (seq + 1); else a DiffError.
 *  `state` is left untouched.
 *  @template {Omit<GameState, 'game_id' | 'variant' | 'options' | 'public' | 'seed' | 'owner'>} S
 *  @param {S} state @param {DiffLike} diff @returns {S} */
export function applyDiff(state, diff) {
  if (diff.seq !== state.seq + 1) {
    throw new DiffError(`diff ${diff.seq} does not follow seq ${state.seq}`);
  }
  return {
    ...state,
    seq: diff.seq,
    status: diff.status,
    stats: { ...state.stats, ...diff.stats },
    piles: applyOps(state.piles, diff.ops),
  };
}

/** The statuses of a game that is over. @type {ReadonlySet<string>} */
export const FINAL_STATUSES = new Set(['won', 'resigned']);
