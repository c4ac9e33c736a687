// One game on screen: the live state (snapshot + diffs over the socket), the
// board, selection and commands. Legal moves come from GET /moves; the client
// judges nothing itself: an illegal attempt goes to the server, whose reason is shown.

import { ApiError } from './api.js';
import { Commander } from './commands.js';
import { createBoard, layoutOf, renderPiles, setHighlights } from './board.js';
import { enableDrag } from './drag.js';
import { clock, fill, h } from './dom.js';
import { GameSocket, socketUrl } from './socket.js';
import { applyDiff, DiffError, FINAL_STATUSES } from './state.js';

const CACHE_PREFIX = 'solitaire.state.';
const REPLAY_PREFIX = 'solitaire.replay.';
const CONFIRM_MS = 4000;
const CONNECTION_LABELS = {
  idle: '', connecting: 'connecting…', syncing: 'syncing…', live: 'live', offline: 'reconnecting…',
  refused: 'disconnected', closed: '',
};
const STATUS_BANNERS = {
  won: 'You won! Every card is on the foundations.',
  lost: 'No moves left. Undo to try another way, or resign.',
  resigned: 'Game resigned.',
};

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

/** A solution being replayed in game `gameId`: {commands, index, of}. */
function readReplay(gameId) {
  try {
    const replay = JSON.parse(sessionStorage.getItem(REPLAY_PREFIX + gameId) || 'null');
    return replay && Array.isArray(replay.commands) && Number.isInteger(replay.index) ? replay : null;
  } catch {
    return null;
  }
}

function writeReplay(gameId, replay) {
  try {
    sessionStorage.setItem(REPLAY_PREFIX + gameId, JSON.stringify(replay));
  } catch {
    // storage disabled: the replay ends with the page
  }
}

function describe(command) {
  if (command.type === 'draw') return 'draw from the stock';
  if (command.type !== 'move') return command.type;
  const n = command.count && command.count > 1 ? `${command.count} cards` : 'the top card';
  return `move ${n} of ${command.from} to ${command.to}`;
}

export class GameView {
  constructor({ api, gameId, identity, variants, onLeave }) {
    this.api = api;
    this.gameId = gameId;
    this.identity = identity;
    this.variants = variants; // id -> variant description
    this.onLeave = onLeave;
    this.state = null;
    this.board = null;
    this.moves = [];
    this.movesSeq = -1;
    this.canUndo = false;
    this.selection = null;
    this.forceSnapshot = false;
    this.resyncs = 0;
    this.movesBusy = false;
    this.movesDirty = false;
    this.confirmTimer = null;
    this.hinted = null; // {seq, command}: the suggestion shown on the board
    this.replay = readReplay(gameId); // stepping through a solution in this game
    this.socket = new GameSocket(socketUrl(gameId), {
      hello: () => this.hello(),
      onMessage: (msg) => this.onMessage(msg),
      onStatus: (status) => this.onConnection(status),
    });
    this.commands = new Commander({ api, gameId, socket: this.socket, onDiff: (diff) => this.onDiff(diff) });
    this.onKey = (event) => {
      if (event.key === 'Escape') this.select(null);
    };
  }

  // --- the page ---------------------------------------------------------------------

  mount(root) {
    const counter = (label, id, value) => h('span', { class: 'counter' }, h('span', { class: 'label' }, label),
      h('span', { id, class: 'value' }, value));
    this.el = {
      title: h('h2', { id: 'title' }, 'Loading…'),
      deal: h('span', { id: 'deal', class: 'deal' }),
      moves: counter('Moves', 'moves', '0'),
      home: counter('Home', 'foundation', '0'),
      timer: counter('Time', 'timer', '0:00'),
      seq: counter('Seq', 'seq', '–'),
      status: h('span', { id: 'status', class: 'status', 'data-status': '' }),
      conn: h('span', { id: 'conn', class: 'conn', 'data-conn': 'idle' }),
      hint: h('button', { id: 'hint', type: 'button', onclick: () => this.askHint() }, 'Hint'),
      undo: h('button', { id: 'undo', type: 'button', disabled: true, onclick: () => this.undo() }, 'Undo'),
      resign: h('button', { id: 'resign', type: 'button', onclick: () => this.resign() }, 'Resign'),
      message: h('div', { id: 'message', class: 'message', role: 'status', 'aria-live': 'polite' }),
      banner: h('div', { id: 'banner', class: 'banner', hidden: true }),
      replay: h('div', { id: 'replay', class: 'replay', hidden: true }),
      board: h('div', { id: 'board', class: 'board', 'data-moves-seq': '-1' }),
    };
    const e = this.el;
    this.root = fill(root, h('section', { class: 'game' },
      h('div', { class: 'bar' },
        h('button', { id: 'back', type: 'button', class: 'link', onclick: () => this.onLeave() }, '← Lobby'),
        h('div', { class: 'heading' }, e.title, e.deal),
        h('div', { class: 'actions' }, e.hint, e.undo, e.resign)),
      h('div', { class: 'counters' }, e.moves, e.home, e.timer, e.seq, e.status, e.conn),
      e.message, e.replay, e.banner, e.board));
    e.board.addEventListener('click', (event) => this.onBoardClick(event));
    e.board.addEventListener('dblclick', (event) => this.onBoardDoubleClick(event));
    enableDrag(e.board, {
      start: (pile, index) => this.dragStart(pile, index),
      drop: (pile, index, target) => this.dragDrop(pile, index, target),
      cancel: () => this.select(null),
    });
    document.addEventListener('keydown', this.onKey);
    const cached = readCache(this.gameId);
    if (cached) this.setState(cached);
    this.ticker = setInterval(() => this.renderTimer(), 500);
    this.socket.start();
  }

  destroy() {
    this.socket.stop();
    clearInterval(this.ticker);
    clearTimeout(this.confirmTimer);
    document.removeEventListener('keydown', this.onKey);
    this.commands.clear();
  }

  get watching() {
    return !!this.state && (!this.identity || this.state.owner !== this.identity.player_id);
  }

  /** No input from the board: watching someone's game, or stepping through a solution. */
  get passive() {
    return this.watching || !!this.replay;
  }

  // --- the socket ---------------------------------------------------------------------

  hello() {
    const since = this.state && !this.forceSnapshot ? this.state.seq : undefined;
    return { token: this.identity ? this.identity.token : undefined, since };
  }

  onConnection(status) {
    this.el.conn.dataset.conn = status;
    this.el.conn.textContent = CONNECTION_LABELS[status] ?? status;
  }

  onMessage(msg) {
    switch (msg.type) {
      case 'snapshot':
        this.forceSnapshot = false;
        this.hashes = new Map();
        this.setState({ ...msg.state, seq: msg.seq });
        break;
      case 'diff':
        this.onDiff(msg);
        break;
      case 'synced':
        if (!this.state || this.state.seq !== msg.seq) {
          this.resynchronise(true); // we should hold exactly what the server says we have
          break;
        }
        this.commands.resend();
        this.refreshMoves();
        break;
      case 'ack':
        this.commands.answer(msg);
        break;
      case 'error':
        if (!this.commands.answer(msg)) { // about the connection itself (a refused hello)
          const err = ApiError.fromBody(msg.error);
          this.sayError(err);
          if (err.code === 'unauthorized' && this.api.onUnauthorized) this.api.onUnauthorized();
        }
        break;
      default:
        break; // messages added to the protocol later
    }
  }

  /** Apply the next diff; a gap or a diff that does not fit means: resynchronise. */
  onDiff(diff) {
    if (!this.state) {
      this.resynchronise(true);
      return;
    }
    if (diff.seq <= this.state.seq) {
      // Seen already, unless it is a different event at that seq: the log was rolled back
      // and written again (a failover), and our state is not the server's any more.
      const held = this.hashes && this.hashes.get(diff.seq);
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
    if (!this.hashes) this.hashes = new Map();
    if (diff.hash) {
      this.hashes.set(diff.seq, diff.hash);
      this.hashes.delete(diff.seq - 256); // the latest events are enough
    }
    this.setState(next);
  }

  resynchronise(snapshot) {
    this.resyncs += 1;
    if (snapshot) this.forceSnapshot = true;
    this.el.seq.querySelector('.value').dataset.resyncs = String(this.resyncs);
    this.socket.resync();
  }

  // --- state and drawing ----------------------------------------------------------

  setState(state) {
    const before = this.state;
    this.state = state;
    writeCache(state);
    if (!this.board) this.buildBoard(state.variant);
    if (this.board) renderPiles(this.board, state.piles);
    if (!before || before.seq !== state.seq) {
      this.selection = null;
      if (this.hinted && this.hinted.seq !== state.seq) this.hinted = null;
    }
    this.renderCounters();
    this.renderHighlights();
    if (before && before.status !== state.status && FINAL_STATUSES.has(state.status) && state.seed == null) {
      this.fetchFinalState();
    }
    if (!before || before.seq !== state.seq) this.refreshMoves();
  }

  buildBoard(variantId) {
    const variant = this.variants[variantId];
    if (!variant) {
      this.say(`This client does not know the variant "${variantId}".`, 'error');
      return;
    }
    this.board = createBoard(layoutOf(variant));
    fill(this.el.board, this.board.el);
    this.el.title.textContent = variant.name;
    document.title = `${variant.name} – Solitaire`;
  }

  async fetchFinalState() {
    try {
      const state = await this.api.game(this.gameId);
      if (this.state && state.seq === this.state.seq) this.setState(state);
    } catch {
      // the seed is a nicety
    }
  }

  renderCounters() {
    const s = this.state;
    const e = this.el;
    e.moves.querySelector('.value').textContent = String(s.stats.moves);
    e.home.querySelector('.value').textContent = String(s.stats.foundation_cards);
    e.seq.querySelector('.value').textContent = String(s.seq);
    e.status.textContent = s.status;
    e.status.dataset.status = s.status;
    e.deal.textContent = s.seed != null ? `Deal #${s.seed}` : 'Secret deal';
    const final = FINAL_STATUSES.has(s.status);
    e.resign.hidden = this.passive;
    e.undo.hidden = this.passive;
    e.hint.hidden = this.passive;
    e.resign.disabled = final;
    e.hint.disabled = final;
    const banner = this.replay ? null : STATUS_BANNERS[s.status];
    const solvable = (s.status === 'won' || s.status === 'resigned') && !this.replay;
    e.banner.hidden = !banner && !this.watching;
    e.banner.dataset.status = s.status;
    fill(e.banner,
      banner ? h('p', {}, banner) : null,
      this.watching ? h('p', { class: 'watching' }, 'You are watching this game.') : null,
      banner ? h('button', { type: 'button', id: 'new-game', onclick: () => this.onLeave() }, 'New game') : null,
      solvable ? h('button', { type: 'button', id: 'show-solution', onclick: () => this.showSolution() },
        'Show a winning line') : null);
    this.renderReplay();
    this.renderTimer();
  }

  renderTimer() {
    const s = this.state;
    if (!s) return;
    const { started_at: started, duration_ms: duration } = s.stats;
    const ms = s.status === 'playing' && started ? Date.now() - Date.parse(started) : duration || 0;
    this.el.timer.querySelector('.value').textContent = clock(ms);
  }

  legal() {
    return this.state && this.movesSeq === this.state.seq ? this.moves : [];
  }

  renderHighlights() {
    if (!this.board) return;
    const sel = this.selection;
    const targets = new Set(sel ? this.legal()
      .filter((m) => m.type === 'move' && m.from === sel.pile && (m.count ?? 1) === sel.count)
      .map((m) => m.to) : []);
    setHighlights(this.board, sel, targets);
    const hinted = this.hinted && this.hinted.seq === this.state.seq ? this.hinted.command : null;
    for (const [id, el] of this.board.pileEls) {
      el.classList.toggle('hint-source', !!hinted && (hinted.type === 'draw' ? this.kindOf(id) === 'stock'
        : hinted.from === id));
      el.classList.toggle('hint-target', !!hinted && hinted.type === 'move' && (hinted.to === id
        || (hinted.to === 'foundation' && id.startsWith('foundation/'))));
    }
    this.el.undo.disabled = !(this.canUndo && this.movesSeq === this.state.seq);
  }

  async refreshMoves() {
    if (this.movesBusy) {
      this.movesDirty = true;
      return;
    }
    this.movesBusy = true;
    try {
      do {
        this.movesDirty = false;
        const answer = await this.api.moves(this.gameId);
        if (this.state && answer.seq === this.state.seq) {
          this.moves = answer.moves;
          this.canUndo = answer.can_undo;
          this.movesSeq = answer.seq;
          this.el.board.dataset.movesSeq = String(answer.seq);
          this.renderHighlights();
        } else if (this.state && answer.seq < this.state.seq) {
          this.movesDirty = true;
        }
      } while (this.movesDirty);
    } catch {
      // without the list, nothing is highlighted; commands still go to the server
    } finally {
      this.movesBusy = false;
    }
  }

  // --- input ---------------------------------------------------------------------

  kindOf(pileId) {
    return this.board?.layout.piles.find((p) => p.id === pileId)?.kind;
  }

  select(selection) {
    this.selection = selection;
    this.renderHighlights();
  }

  onBoardClick(event) {
    const pileEl = event.target.closest('[data-pile]');
    if (!pileEl) {
      this.select(null);
      return;
    }
    const cardEl = event.target.closest('.card');
    const index = cardEl && cardEl.dataset.index != null ? Number(cardEl.dataset.index) : null;
    this.clickPile(pileEl.dataset.pile, index);
  }

  /** A click on pile `pileId`, on its face-up card `index` (null: elsewhere on the pile). */
  clickPile(pileId, index) {
    if (!this.state || this.passive) return;
    const pile = this.state.piles[pileId] || { down: 0, up: [] };
    const count = index == null ? null : pile.up.length - index;
    const sel = this.selection;
    const isStock = this.kindOf(pileId) === 'stock';
    if (sel) {
      if (sel.pile !== pileId) {
        this.select(null);
        this.send({ type: 'move', from: sel.pile, to: pileId, count: sel.count });
      } else if (isStock) {
        this.select(null);
        this.send({ type: 'draw' });
      } else if (count != null && count !== sel.count) {
        this.select({ pile: pileId, count });
      } else {
        this.select(null);
      }
      return;
    }
    if (isStock) {
      // A move from the stock (Gate fills a space from it) is picked up like a card;
      // a second click on the stock then draws.
      if (this.legal().some((m) => m.type === 'move' && m.from === pileId)) {
        this.select({ pile: pileId, count: 1 });
        this.say('Click a highlighted pile to place the stock\'s top card there, or the stock again to draw.');
      } else {
        this.send({ type: 'draw' });
      }
      return;
    }
    if (count != null && count > 0) this.select({ pile: pileId, count });
  }

  onBoardDoubleClick(event) {
    const cardEl = event.target.closest('.card.face[data-index]');
    const pileEl = cardEl && cardEl.closest('[data-pile]');
    if (!pileEl || !this.state || this.passive) return;
    const pile = this.state.piles[pileEl.dataset.pile];
    if (!pile || Number(cardEl.dataset.index) !== pile.up.length - 1) return;
    this.select(null);
    this.send({ type: 'move', from: pileEl.dataset.pile, to: 'foundation', count: 1 });
  }

  dragStart(pileId, index) {
    if (!this.state || this.passive) return false;
    const pile = this.state.piles[pileId];
    if (!pile || index >= pile.up.length) return false;
    this.select({ pile: pileId, count: pile.up.length - index });
    return true;
  }

  dragDrop(pileId, index, target) {
    const pile = this.state.piles[pileId];
    this.select(null);
    this.send({ type: 'move', from: pileId, to: target, count: pile.up.length - index });
  }

  undo() {
    this.select(null);
    this.send({ type: 'undo' });
  }

  resign() {
    const button = this.el.resign;
    if (!button.classList.contains('confirm')) {
      button.classList.add('confirm');
      button.textContent = 'Really resign?';
      this.confirmTimer = setTimeout(() => this.resetResign(), CONFIRM_MS);
      return;
    }
    this.resetResign();
    this.select(null);
    this.send({ type: 'resign' });
  }

  resetResign() {
    clearTimeout(this.confirmTimer);
    this.el.resign.classList.remove('confirm');
    this.el.resign.textContent = 'Resign';
  }

  // --- the solver ----------------------------------------------------------------

  /** Ask the server for a hint; highlight its card and target until the game moves on. */
  async askHint() {
    if (!this.state || this.passive) return;
    const button = this.el.hint;
    button.disabled = true;
    this.say('Thinking…');
    try {
      const hint = await this.api.hint(this.gameId);
      if (!this.state || hint.seq !== this.state.seq) {
        this.say('');
        return; // the game moved on meanwhile
      }
      this.hinted = { seq: hint.seq, command: hint.command };
      this.renderHighlights();
      if (!hint.command) this.say('No command to suggest here.', 'hint');
      else this.say(`Hint: ${describe(hint.command)} (won ${hint.wins} of ${hint.samples} sampled deals of the face-down cards).`, 'hint');
    } catch (err) {
      this.sayError(err);
    } finally {
      button.disabled = FINAL_STATUSES.has(this.state?.status);
    }
  }

  /** Fetch the solution and open a new game of the same deal to step through it. */
  async showSolution() {
    const s = this.state;
    try {
      const solution = await this.api.solution(this.gameId);
      if (solution.result !== 'won') {
        this.say(solution.result === 'lost' ? 'The solver proved this deal cannot be won.'
          : 'The solver found no winning line within its budget.', 'info', solution.result);
        return;
      }
      const seed = s.seed ?? (await this.api.game(this.gameId)).seed;
      const created = await this.api.createGame({ variant: s.variant, seed, options: s.options });
      writeReplay(created.game_id, { commands: solution.commands, index: 0, of: this.gameId });
      location.hash = `g=${encodeURIComponent(created.game_id)}`;
    } catch (err) {
      this.sayError(err);
    }
  }

  renderReplay() {
    const r = this.replay;
    const e = this.el.replay;
    e.hidden = !r;
    if (!r) return;
    const next = r.commands[r.index];
    fill(e,
      h('span', { id: 'replay-step', 'data-index': String(r.index), 'data-total': String(r.commands.length) },
        `Winning line: step ${r.index} of ${r.commands.length}`),
      h('button', { type: 'button', id: 'replay-back', disabled: r.index === 0 || this.replayBusy,
        onclick: () => this.stepReplay(-1) }, '◀ Back'),
      h('button', { type: 'button', id: 'replay-next', disabled: !next || this.replayBusy,
        onclick: () => this.stepReplay(1) }, 'Next ▶'),
      h('span', { class: 'muted' }, next ? `next: ${describe(next)}` : 'won'));
  }

  /** One step forward (the line's next command) or back (undo) in the replay game. */
  async stepReplay(direction) {
    const r = this.replay;
    if (!r || !this.state || this.replayBusy) return;
    const command = direction > 0 ? r.commands[r.index] : { type: 'undo' };
    if (!command || (direction < 0 && r.index === 0)) return;
    this.replayBusy = true;
    this.renderReplay();
    try {
      await this.commands.send(command, this.state.seq);
      r.index += direction;
      writeReplay(this.gameId, r);
    } catch (err) {
      this.sayError(err);
    } finally {
      this.replayBusy = false;
      this.renderReplay();
    }
  }

  // --- commands --------------------------------------------------------------------

  /** Send a command at the state's seq; a refusal is shown as the server words it. */
  async send(command) {
    if (!this.state) return;
    this.say('');
    try {
      await this.commands.send(command, this.state.seq);
    } catch (err) {
      this.sayError(err);
    }
  }

  say(text, kind = 'info', code = '') {
    const m = this.el.message;
    m.textContent = text;
    m.dataset.kind = text ? kind : '';
    m.dataset.code = code;
  }

  sayError(err) {
    const code = err.code || 'error';
    this.say(err.message || String(err), 'error', code);
  }
}
