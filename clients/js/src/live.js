// One game, live: its socket (hello with `since`, and `moves` when asked for), its state
// (snapshot + diffs applied in order; a gap, a diff that does not fit or a log written
// again after a failover makes it resynchronise) and its commands (over the socket when
// it is live, else over REST; an unanswered one is sent again with the same command_id
// once the socket is back). docs/protocol.md "WebSocket", "Ordering", "Resuming with
// `since`", "Idempotency".

import { ApiError, WAIT_DEFAULT_S, WAIT_MAX_S } from './errors.js';
import { randomId } from './ids.js';
import { GameSocket } from './socket.js';
import { applyDiff, DiffError, FINAL_STATUSES } from './state.js';

/** @typedef {import('../types/wire.js').GameState} GameState */
/** @typedef {import('../types/wire.js').Diff} Diff */
/** @typedef {import('../types/wire.js').Command} Command */
/** @typedef {import('../types/wire.js').Ack} Ack */
/** @typedef {import('../types/wire.js').LegalMoves} LegalMoves */
/** @typedef {import('../types/wire.js').ServerMessage} ServerMessage */
/** @typedef {import('../types/wire.js').CommandMessage} CommandMessage */
/** @typedef {import('./socket.js').Status} Status */
/** @typedef {import('./rest.js').Client} Client */

/**
 * @typedef {object} LiveOptions
 * @property {string | null} [token] the player's token (the client's by default); none
 *   to watch a public game
 * @property {boolean} [moves] keep the legal moves of the state (`moves` messages, or
 *   GET /moves while the socket is down)
 * @property {any} [WebSocket] a WebSocket constructor (else the client's, else the global one)
 * @property {{read: (gameId: string) => GameState | null, write: (state: GameState) => void}} [cache]
 *   where a state is kept between page loads: a kept state resumes with `since`
 * @property {boolean} [wakeOnFocus] in a browser, reconnect at once when the page comes
 *   back to the foreground or the network comes back (default true)
 * @property {number} [commandTimeoutMs] a command unanswered this long on a live socket
 *   makes it reconnect (the connection is presumed dead); the command is then sent again
 *   with its command_id (default 15000)
 */

/**
 * @typedef {object} StateChange
 * @property {GameState | null} before the state before
 * @property {Diff | null} diff the diff that made it (null for a snapshot or a fresh read)
 * @property {boolean} live whether it happens now (not a diff replayed while resynchronising)
 */

/**
 * @typedef {object} LiveEvents
 * @property {[GameState, StateChange]} state a new state
 * @property {[Status, string | undefined]} status the connection's status, and the close reason
 * @property {[LegalMoves]} moves the legal moves of the state held
 * @property {[ApiError]} error an error about the connection, not a command (a refused
 *   hello says why here before the status turns `refused`)
 */

// Socket states in which no `moves` message is on its way.
const SOCKET_DOWN = new Set(['offline', 'refused', 'closed']);
const HASHES_KEPT = 256;

/**
 * @typedef {object} Pending
 * @property {CommandMessage} message
 * @property {(ack: Ack) => void} resolve
 * @property {(err: ApiError) => void} reject
 * @property {any} timer
 * @property {number} [waits] how many refusals (429, 503) it has waited out
 * @property {any} [waitTimer] set while it waits out a refusal, before it is sent again
 */

export class LiveGame {
  /** @param {Client} client @param {string} gameId @param {LiveOptions} [options] */
  constructor(client, gameId, options = {}) {
    this.client = client;
    this.gameId = gameId;
    /** @type {string | null} */
    this.token = options.token ?? null;
    this.wantMoves = !!options.moves;
    this.cache = options.cache ?? null;
    this.commandTimeoutMs = options.commandTimeoutMs ?? 15000;
    /** @type {GameState | null} the state held, as the server's at `state.seq` */
    this.state = null;
    /** @type {LegalMoves | null} */
    this.legal = null;
    this.forceSnapshot = false;
    this.resyncs = 0; // how many times it had to resynchronise
    /** @type {Map<number, string>} seq -> hash of the latest diffs applied */
    this.hashes = new Map();
    this.restMoves = { busy: false, again: false };
    /** @type {Map<string, Pending>} command_id -> a command sent and not answered */
    this.pending = new Map();
    /** @type {Map<string, Set<(...args: any[]) => void>>} */
    this.listeners = new Map();
    this.socket = new GameSocket(client.socketUrl(gameId), {
      hello: () => this.hello(),
      onMessage: (msg) => this.onMessage(msg),
      onStatus: (status, reason) => this.onStatus(status, reason),
      WebSocket: options.WebSocket ?? client.WebSocket,
      wakeOnFocus: options.wakeOnFocus,
    });
  }

  /** The connection's status. @returns {Status} */
  get status() {
    return this.socket.status;
  }

  /** The legal moves of the state held ([] until known; needs `moves: true`).
   *  @returns {LegalMoves['moves']} */
  get moves() {
    return this.state && this.legal && this.legal.seq === this.state.seq ? this.legal.moves : [];
  }

  /** @returns {boolean} */
  get canUndo() {
    return !!(this.state && this.legal && this.legal.seq === this.state.seq && this.legal.can_undo);
  }

  /** Listen; returns the function that stops listening.
   *  @template {keyof LiveEvents} K
   *  @param {K} event @param {(...args: LiveEvents[K]) => void} listener
   *  @returns {() => void} */
  on(event, listener) {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** @template {keyof LiveEvents} K @param {K} event @param {LiveEvents[K]} args */
  emit(event, ...args) {
    const set = this.listeners.get(event);
    if (set) for (const listener of [...set]) listener(...args);
  }

  /** Connect (a kept state from the cache resumes with `since`). */
  start() {
    const cached = this.cache ? this.cache.read(this.gameId) : null;
    if (cached && cached.game_id === this.gameId && Number.isInteger(cached.seq) && cached.piles) {
      this.setState(cached, null);
    }
    this.socket.start();
    return this;
  }

  /** Disconnect for good; commands still unanswered are rejected (code `closed`). */
  close() {
    this.socket.stop();
    this.failPending(new ApiError(0, 'network', 'the live game was closed before the command was answered'));
  }

  /** The next state whose seq is at least `seq` (the state held, if it is already there).
   *  @param {number} seq @returns {Promise<GameState>} */
  waitForSeq(seq) {
    if (this.state && this.state.seq >= seq) return Promise.resolve(this.state);
    return new Promise((resolve) => {
      const off = this.on('state', (state) => {
        if (state.seq >= seq) {
          off();
          resolve(state);
        }
      });
    });
  }

  // --- commands --------------------------------------------------------------------

  /**
   * Send a command at the state's seq (or at `expectedSeq`; null: at whatever seq the
   * game is). Resolves with its ack once it is in the game's log (its diff is applied to
   * `state` by then when it came over the socket), or rejects with an ApiError: a 422
   * (`rule`), a 409 for a seq the game has left (`staleSeq`, with the game's `seq`),
   * 401/403... An answer lost with the connection is not an error: the command is sent
   * again with the same command_id when the socket is back, and the service applies it once;
   * a 429 or 503 is waited out and the command sent again as the REST calls are.
   * @param {Command} command
   * @param {{expectedSeq?: number | null, commandId?: string}} [options]
   * @returns {Promise<Ack>}
   */
  async play(command, options = {}) {
    const expectedSeq = options.expectedSeq !== undefined ? options.expectedSeq : (this.state?.seq ?? null);
    const commandId = options.commandId ?? randomId();
    /** @type {CommandMessage} */
    const message = { type: 'command', command_id: commandId, command };
    if (expectedSeq != null) message.expected_seq = expectedSeq;
    if (this.socket.live) return this.overSocket(message);
    const answer = await this.client.sendCommand(this.gameId, command, { expectedSeq, commandId });
    this.onDiff(answer.diff, true);
    return { type: 'ack', command_id: commandId, seq: answer.seq };
  }

  /** How many commands are sent and not answered yet. @returns {number} */
  get unanswered() {
    return this.pending.size;
  }

  /** @param {CommandMessage} message @returns {Promise<Ack>} */
  overSocket(message) {
    return new Promise((resolve, reject) => {
      /** @type {Pending} */
      const p = { message, resolve, reject, timer: null };
      this.pending.set(message.command_id, p);
      this.armTimer(p);
      this.socket.send(message);
    });
  }

  /** @param {Pending} p */
  armTimer(p) {
    clearTimeout(p.timer);
    p.timer = setTimeout(() => {
      if (this.pending.get(p.message.command_id) === p && this.socket.live) this.resynchronise(false);
    }, this.commandTimeoutMs);
  }

  /** An `ack` or an `error` message: true if it answered one of ours.
   *  @param {any} msg */
  answer(msg) {
    const p = msg.command_id ? this.pending.get(msg.command_id) : undefined;
    if (!p) return false;
    clearTimeout(p.timer);
    if (msg.type === 'error') {
      // A limit or a busy store (429, 503): waited out as the REST calls are, then sent
      // again with its command_id (applied once), up to the client's `retries` times.
      const err = ApiError.fromInfo(msg.error, undefined, msg.command_id);
      const waits = p.waits ?? 0;
      const wait = err.retryAfterS ?? WAIT_DEFAULT_S * 2 ** waits;
      if (err.retryable && wait <= WAIT_MAX_S && waits < this.client.retries) {
        p.waits = waits + 1;
        p.waitTimer = setTimeout(() => {
          p.waitTimer = null;
          if (this.pending.get(p.message.command_id) !== p) return;
          this.armTimer(p);
          if (this.socket.live) this.socket.send(p.message); // else sent when it is back
        }, 1000 * wait);
        return true;
      }
      this.pending.delete(msg.command_id);
      p.reject(err);
      return true;
    }
    this.pending.delete(msg.command_id);
    p.resolve(msg);
    return true;
  }

  /** After a reconnection: send again, with the same command_id, what was never answered. */
  resend() {
    for (const p of this.pending.values()) {
      if (p.waitTimer) continue; // waiting out a refusal: sent when the wait is over
      this.armTimer(p);
      this.socket.send(p.message);
    }
  }

  /** @param {ApiError} err */
  failPending(err) {
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      clearTimeout(p.waitTimer);
      p.reject(err);
    }
    this.pending.clear();
  }

  // --- the socket --------------------------------------------------------------------

  hello() {
    const since = this.state && !this.forceSnapshot ? this.state.seq : undefined;
    /** @type {Record<string, unknown>} */
    const hello = {};
    if (this.token) hello.token = this.token;
    if (since !== undefined) hello.since = since;
    if (this.wantMoves) hello.moves = true;
    return hello;
  }

  /** @param {Status} status @param {string | undefined} reason */
  onStatus(status, reason) {
    if (status === 'refused') {
      // The service will not take this socket (1008): commands waiting for it never will.
      this.failPending(new ApiError(0, 'network', reason || 'the socket was refused'));
    }
    this.emit('status', status, reason);
  }

  /** @param {any} msg */
  onMessage(msg) {
    switch (msg.type) {
      case 'snapshot':
        this.forceSnapshot = false;
        this.hashes = new Map();
        this.setState({ ...msg.state, seq: msg.seq }, null);
        break;
      case 'diff':
        this.onDiff(msg, this.socket.live); // not live: replayed before synced
        break;
      case 'synced':
        if (!this.state || this.state.seq !== msg.seq) {
          this.resynchronise(true); // we should hold exactly what the server says we have
          break;
        }
        this.resend();
        break;
      case 'moves':
        // For the state held (a moves of another seq is about a diff not applied here).
        if (this.state && msg.seq === this.state.seq) this.setMoves(msg);
        break;
      case 'ack':
        this.answer(msg);
        break;
      case 'error': {
        if (this.answer(msg)) {
          // The token expired while the socket was open (it is closed with 1008 next).
          if (msg.error?.code === 'unauthorized') this.emit('error', ApiError.fromInfo(msg.error));
          break;
        }
        const retry = msg.error?.details?.retry_after_s;
        if (typeof retry === 'number') this.socket.retryAfter(retry); // before a 1013
        if (msg.error?.code === 'bad_request' && msg.error.details?.since != null) {
          // Our `since` is beyond the game's seq: the state we kept is not the server's
          // (a failover lost what we saw). Throw it away: a snapshot.
          this.resynchronise(true);
          break;
        }
        this.emit('error', ApiError.fromInfo(msg.error)); // about the connection
        break;
      }
      default:
        break; // messages added to the protocol later
    }
  }

  /** Apply the next diff; a gap or a diff that does not fit means: resynchronise.
   *  @param {Diff} diff @param {boolean} live it happens now (not a replay) */
  onDiff(diff, live) {
    if (!this.state) {
      this.resynchronise(true);
      return;
    }
    if (diff.seq <= this.state.seq) {
      // Seen already, unless it is a different event at that seq: the log was rolled back
      // and written again (a failover), and our state is not the server's any more.
      const held = this.hashes.get(diff.seq);
      if (held && diff.hash && held !== diff.hash) this.resynchronise(true);
      return;
    }
    if (diff.seq !== this.state.seq + 1) {
      this.resynchronise(false); // a gap: replay what followed our seq
      return;
    }
    let next;
    try {
      next = applyDiff(this.state, diff);
    } catch (err) {
      if (!(err instanceof DiffError)) throw err;
      this.resynchronise(true);
      return;
    }
    if (diff.hash) {
      this.hashes.set(diff.seq, diff.hash);
      this.hashes.delete(diff.seq - HASHES_KEPT); // the latest events are enough
    }
    this.setState(next, diff, live);
  }

  /** Reconnect now: with `since` (the diffs missed), or for a snapshot.
   *  @param {boolean} snapshot */
  resynchronise(snapshot) {
    this.resyncs += 1;
    if (snapshot) this.forceSnapshot = true;
    this.socket.resync();
  }

  // --- state and moves -----------------------------------------------------------------

  /** @param {GameState} state @param {Diff | null} diff @param {boolean} [live] */
  setState(state, diff, live = false) {
    const before = this.state;
    this.state = state;
    if (this.cache) this.cache.write(state);
    this.emit('state', state, { before, diff, live });
    if (before && before.status !== state.status && FINAL_STATUSES.has(state.status) && state.seed == null) {
      this.fetchFinalState();
    }
    // The socket sends the moves after synced and after each diff; while it is down, ask.
    if (this.wantMoves && (!before || before.seq !== state.seq) && SOCKET_DOWN.has(this.socket.status)) {
      this.fetchMoves();
    }
  }

  /** @param {LegalMoves} legal */
  setMoves(legal) {
    this.legal = { seq: legal.seq, moves: legal.moves, can_undo: legal.can_undo };
    this.emit('moves', this.legal);
  }

  /** The final state read again: a server-chosen seed is shown once the game is over. */
  async fetchFinalState() {
    try {
      const state = await this.client.getGame(this.gameId);
      if (this.state && state.seq === this.state.seq) this.setState(state, null);
    } catch {
      // the seed is a nicety
    }
  }

  /** GET /moves, while the socket cannot send them; one request at a time. */
  async fetchMoves() {
    const r = this.restMoves;
    if (r.busy) {
      r.again = true;
      return;
    }
    r.busy = true;
    try {
      do {
        r.again = false;
        const answer = await this.client.getLegalMoves(this.gameId);
        if (this.state && answer.seq === this.state.seq) this.setMoves(answer);
        else if (this.state && answer.seq < this.state.seq) r.again = true;
      } while (r.again);
    } catch {
      // without the list, nothing is highlighted; commands still go to the server
    } finally {
      r.busy = false;
    }
  }
}
