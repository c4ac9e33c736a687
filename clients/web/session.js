// One game's live session, without a screen: the socket (hello with `since` and
// `moves`), the state (snapshot + diffs, seq-gap and hash checks, resynchronising,
// a copy in sessionStorage) and the commands. The view (game.js) listens to it.
//
// Legal moves come from the socket's `moves` messages (docs/protocol.md, "Legal moves
// on the socket"): one after `synced` and one after each diff. Only while the socket
// is down (commands then go over REST) are they asked for with GET /moves.

import { Commander } from './commands.js';
import { GameSocket, socketUrl } from './socket.js';
import { applyDiff, DiffError, FINAL_STATUSES } from './state.js';

const CACHE_PREFIX = 'solitaire.state.';
// Socket states in which no `moves` message is on its way.
const SOCKET_DOWN = new Set(['offline', 'refused', 'closed']);

function readCache(gameId) {
  try {
    const state = JSON.parse(sessionStorage.getItem(CACHE_PREFIX + gameId) || 'null');
    return state && state.game_id === gameId && Number.isInteger(state.seq) && state.piles ? state : null;
  } catch {
    return null;
  }
}

function writeCache(state) {
  try {
    sessionStorage.setItem(CACHE_PREFIX + state.game_id, JSON.stringify(state));
  } catch {
    // storage full or disabled: resuming will take a snapshot instead
  }
}

export class GameSession {
  /**
   * @param {{api, gameId: string, identity: ?{token: string},
   *          onChange: (state, before, diff: ?object, live: boolean) => void,
   *          onMoves: (legal: {seq, moves, can_undo}) => void,
   *          onConnection: (status: string) => void,
   *          onError: (err) => void}} options
   *   onChange: a new state; `diff` is the diff that made it (null for a snapshot or a
   *   fresh read), `live` whether it happened now (not replayed while resynchronising).
   */
  constructor({ api, gameId, identity, onChange, onMoves, onConnection, onError }) {
    this.api = api;
    this.gameId = gameId;
    this.identity = identity;
    this.handlers = { onChange, onMoves, onConnection, onError };
    this.state = null;
    this.legal = null; // the latest {seq, moves, can_undo} for this.state.seq
    this.forceSnapshot = false;
    this.resyncs = 0;
    this.hashes = new Map(); // seq -> hash of the latest diffs applied
    this.restMoves = { busy: false, again: false };
    this.socket = new GameSocket(socketUrl(gameId), {
      hello: () => this.hello(),
      onMessage: (msg) => this.onMessage(msg),
      onStatus: (status) => this.handlers.onConnection(status),
    });
    this.commands = new Commander({ api, gameId, socket: this.socket,
      onDiff: (diff) => this.onDiff(diff, true) }); // a command's diff answered over REST
  }

  start() {
    const cached = readCache(this.gameId);
    if (cached) this.setState(cached, null);
    this.socket.start();
  }

  stop() {
    this.socket.stop();
    this.commands.clear();
  }

  /** The legal moves of the state held now ([] until they are known). */
  get moves() {
    return this.state && this.legal && this.legal.seq === this.state.seq ? this.legal.moves : [];
  }

  get canUndo() {
    return !!(this.state && this.legal && this.legal.seq === this.state.seq && this.legal.can_undo);
  }

  /** Send `command` at the state's seq; resolves with the new seq, rejects with an ApiError. */
  send(command) {
    return this.commands.send(command, this.state.seq);
  }

  // --- the socket ---------------------------------------------------------------------

  hello() {
    const since = this.state && !this.forceSnapshot ? this.state.seq : undefined;
    return { token: this.identity ? this.identity.token : undefined, since, moves: true };
  }

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
        this.commands.resend();
        break;
      case 'moves':
        // For the state held (a moves of another seq is about a diff not applied here).
        if (this.state && msg.seq === this.state.seq) this.setMoves(msg);
        break;
      case 'ack':
        this.commands.answer(msg);
        break;
      case 'error':
        if (this.commands.answer(msg)) {
          // The token expired while the socket was open (it is closed with 1008 next):
          // the view starts again, as after a 401 over REST.
          if (msg.error?.code === 'unauthorized') this.handlers.onError(msg.error);
          break;
        }
        if (msg.error?.code === 'bad_request' && msg.error.details?.since != null) {
          // Our `since` is beyond the game's seq: the state we kept is not the server's
          // (a failover lost what we saw). Throw it away: a snapshot.
          this.resynchronise(true);
          break;
        }
        this.handlers.onError(msg.error); // about the connection
        break;
      default:
        break; // messages added to the protocol later
    }
  }

  /** Apply the next diff; a gap or a diff that does not fit means: resynchronise.
   *  `live`: it happens now (not a replay of what was missed). */
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
      console.warn('resynchronising:', err.message);
      this.resynchronise(true);
      return;
    }
    if (diff.hash) {
      this.hashes.set(diff.seq, diff.hash);
      this.hashes.delete(diff.seq - 256); // the latest events are enough
    }
    this.setState(next, diff, live);
  }

  resynchronise(snapshot) {
    this.resyncs += 1;
    if (snapshot) this.forceSnapshot = true;
    this.socket.resync();
  }

  // --- state and moves -----------------------------------------------------------------

  setState(state, diff, live = false) {
    const before = this.state;
    this.state = state;
    writeCache(state);
    this.handlers.onChange(state, before, diff, live);
    if (before && before.status !== state.status && FINAL_STATUSES.has(state.status) && state.seed == null) {
      this.fetchFinalState();
    }
    // The socket sends the moves after synced and after each diff; while it is down, ask.
    if ((!before || before.seq !== state.seq) && SOCKET_DOWN.has(this.socket.status)) this.fetchMoves();
  }

  setMoves(legal) {
    this.legal = { seq: legal.seq, moves: legal.moves, can_undo: legal.can_undo };
    this.handlers.onMoves(this.legal);
  }

  /** The final state read again: a server-chosen seed is shown once the game is over. */
  async fetchFinalState() {
    try {
      const state = await this.api.game(this.gameId);
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
        const answer = await this.api.moves(this.gameId);
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
