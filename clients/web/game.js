// One game on screen: the board, the counters and the controls, and the player's input
// (clicks, drag and drop, the keyboard). The live state, the legal moves and the
// commands are the client package's LiveGame (clients/js/src/live.js); the page judges
// nothing itself: an illegal attempt goes to the server, whose reason is shown and announced.

import { Announcer, cardList, describeDiff, pileName, statusWords } from './announce.js';
import { createBoard, layoutOf, renderPiles, setHighlights } from './board.js';
import { enableDrag } from './drag.js';
import { clock, fill, h } from './dom.js';
import { enableKeyboard } from './keyboard.js';
import { askHint, readReplay, renderReplay, showSolution, stepReplay } from './solver.js';
import { FINAL_STATUSES } from '../js/src/index.js';

const CONFIRM_MS = 4000;
// The state of each game kept for this tab (sessionStorage): a reload resumes with `since`.
const CACHE_PREFIX = 'solitaire.state.';
const STATE_CACHE = {
  read(gameId) {
    try {
      return JSON.parse(sessionStorage.getItem(CACHE_PREFIX + gameId) || 'null');
    } catch {
      return null;
    }
  },
  write(state) {
    try {
      sessionStorage.setItem(CACHE_PREFIX + state.game_id, JSON.stringify(state));
    } catch {
      // storage full or disabled: resuming will take a snapshot instead
    }
  },
};
const CONNECTION_LABELS = {
  idle: '', connecting: 'connecting…', syncing: 'syncing…', live: 'live', offline: 'reconnecting…',
  refused: 'disconnected', closed: '',
};
// The codes of the messages that only said the server could not be reached in time.
const STALE_ONCE_LIVE = new Set(['network', 'timeout']);
const MISSED_TOLD = 3; // moves replayed after a reconnection told one by one; more are counted
// Why the Hint button is off in a ranked daily attempt (the service answers 403 there).
const NO_HINT_IN_DAILY = 'No hints in a ranked daily attempt: its leaderboard ranks unaided play.';
// A command refused because another device moved first (409 at a stale seq), in a player's words.
const CONFLICT_CATCHING_UP = 'The game changed on another device; bringing the board up to date…';
const CONFLICT_UP_TO_DATE = 'The game changed on another device; the board is up to date.';

export class GameView {
  constructor({ api, gameId, identity, variants, daily = null, onLeave }) {
    this.api = api;
    this.gameId = gameId;
    this.identity = identity;
    this.variants = variants; // id -> variant description
    this.onLeave = onLeave;
    // "date/variant" when the game is a ranked daily attempt, as the page knows it (the
    // state does not say): from how it was opened, or from a hint the service refused.
    this.daily = daily;
    this.board = null;
    this.selection = null;
    this.confirmTimer = null;
    this.hinted = null; // {seq, command}: the suggestion shown on the board
    this.conflictSeq = null; // the game's seq when a command of ours found it moved on (409)
    this.wasLive = false; // the socket was live once: later replays are news to tell
    this.lostConnection = false; // it was lost since (and that was said)
    this.missed = []; // the words for the diffs replayed since the socket was last live
    this.replay = readReplay(gameId); // stepping through a solution in this game
    // The game, live (the package's LiveGame): its socket, its state and its commands.
    this.session = api.live(gameId, { token: identity ? identity.token : null, moves: true, cache: STATE_CACHE });
    this.session.on('state', (state, { before, diff, live }) => this.onChange(state, before, diff, live));
    this.session.on('moves', (legal) => this.onMoves(legal));
    this.session.on('status', (status) => this.onConnection(status));
    this.session.on('error', (err) => this.onSessionError(err));
    this.onKey = (event) => {
      if (event.key === 'Escape' && this.selection) {
        this.select(null);
        this.announcer.say('Selection cancelled.');
      }
    };
  }

  // The session's parts, as tests and tools reach them (window.solitaire.game).
  get state() {
    return this.session.state;
  }

  get socket() {
    return this.session.socket;
  }

  get resyncs() {
    return this.session.resyncs;
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
      // hidden until there is a game to act on (renderCounters)
      hint: h('button', { id: 'hint', type: 'button', hidden: true, 'aria-describedby': 'hint-why',
        onclick: () => this.askHint() }, 'Hint'),
      hintWhy: h('span', { id: 'hint-why', class: 'sr-only' }),
      undo: h('button', { id: 'undo', type: 'button', hidden: true, disabled: true, onclick: () => this.undo() },
        'Undo'),
      resign: h('button', { id: 'resign', type: 'button', hidden: true, onclick: () => this.resign() }, 'Resign'),
      message: h('div', { id: 'message', class: 'message', role: 'status', 'aria-live': 'polite' }),
      announce: h('div', { id: 'announce', class: 'sr-only', 'aria-live': 'polite', 'aria-atomic': 'true' }),
      banner: h('div', { id: 'banner', class: 'banner', hidden: true }),
      replay: h('div', { id: 'replay', class: 'replay', hidden: true }),
      board: h('div', { id: 'board', class: 'board', 'data-moves-seq': '-1', role: 'group',
        'aria-label': 'Board: Tab or the arrow keys go from pile to pile; Enter picks a card up or puts it '
          + 'down; F sends a top card to a foundation; Escape cancels' }),
    };
    const e = this.el;
    this.announcer = new Announcer(e.announce);
    this.root = fill(root, h('section', { class: 'game' },
      h('div', { class: 'bar' },
        h('button', { id: 'back', type: 'button', class: 'link', onclick: () => this.onLeave() }, '← Lobby'),
        h('div', { class: 'heading' }, e.title, e.deal),
        h('div', { class: 'actions' }, e.hint, e.hintWhy, e.undo, e.resign)),
      h('div', { class: 'counters' }, e.moves, e.home, e.timer, e.seq, e.status, e.conn),
      e.message, e.announce, e.replay, e.banner, e.board));
    e.board.addEventListener('click', (event) => this.onBoardClick(event));
    e.board.addEventListener('dblclick', (event) => this.onBoardDoubleClick(event));
    enableDrag(e.board, {
      start: (pile, index) => this.dragStart(pile, index),
      drop: (pile, index, target) => this.dragDrop(pile, index, target),
      cancel: () => this.select(null),
    });
    enableKeyboard(e.board, {
      layout: () => this.board?.layout,
      choose: (pileId) => this.keyPile(pileId),
      toFoundation: (pileId) => this.toFoundation(pileId),
    });
    document.addEventListener('keydown', this.onKey);
    this.ticker = setInterval(() => this.renderTimer(), 500);
    this.session.start();
  }

  destroy() {
    this.session.close();
    clearInterval(this.ticker);
    clearTimeout(this.confirmTimer);
    document.removeEventListener('keydown', this.onKey);
  }

  get watching() {
    const s = this.state;
    return !!s && (!this.identity || s.owner !== this.identity.player_id);
  }

  /** No input from the board: watching someone's game, or stepping through a solution. */
  get passive() {
    return this.watching || !!this.replay;
  }

  // --- what the session says -----------------------------------------------------------

  onConnection(status) {
    this.el.conn.dataset.conn = status;
    this.el.conn.textContent = CONNECTION_LABELS[status] ?? status;
    // Refused before any state came (no such game, or not ours to see): #message says why.
    if (status === 'refused' && !this.state) this.el.title.textContent = 'No game to show';
    // "cannot be reached", "has not answered": not true any more once the server is back.
    if (status === 'live' && STALE_ONCE_LIVE.has(this.el.message.dataset.code)) this.say('');
    // Told in words too: the connection lost, back, and what happened meanwhile (the
    // diffs replayed before `synced`, which is when the socket turns live).
    if (status === 'offline' && this.wasLive && !this.lostConnection) {
      this.lostConnection = true;
      this.announcer.say('The connection to the server is lost: reconnecting…');
    } else if (status === 'live') {
      const missed = this.missed;
      const words = [this.lostConnection ? 'Reconnected.' : '',
        ...(missed.length > MISSED_TOLD ? [`${missed.length} moves were made meanwhile; the last: `
          + missed[missed.length - 1]] : missed)].filter(Boolean);
      if (this.wasLive && words.length) this.announcer.say(words.join(' '));
      this.wasLive = true;
      this.lostConnection = false;
      this.missed = [];
    }
  }

  onSessionError(err) {
    this.sayError(err);
    if (err.code === 'unauthorized' && this.api.onUnauthorized) this.api.onUnauthorized();
  }

  onChange(state, before, diff, live) {
    if (!this.board) this.buildBoard(state.variant);
    if (this.board) renderPiles(this.board, state.piles);
    this.el.seq.querySelector('.value').dataset.resyncs = String(this.session.resyncs);
    if (!before || before.seq !== state.seq) {
      this.selection = null;
      if (this.hinted && this.hinted.seq !== state.seq) this.hinted = null;
    }
    this.renderCounters();
    this.renderHighlights();
    this.renderConflict();
    if (diff && live) this.announcer.say(describeDiff(diff, before, this.watching));
    else if (diff && this.wasLive) this.missed.push(describeDiff(diff, before, this.watching));
  }

  onMoves(legal) {
    this.el.board.dataset.movesSeq = String(legal.seq);
    this.renderHighlights();
  }

  // --- drawing ---------------------------------------------------------------------

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
    this.renderHint();
    const banner = this.replay ? null : statusWords(s.status, this.watching);
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

  /** The Hint button: off in a finished game, and in a ranked daily attempt, saying why. */
  renderHint() {
    const e = this.el;
    e.hint.disabled = FINAL_STATUSES.has(this.state?.status) || !!this.daily;
    e.hint.title = this.daily ? NO_HINT_IN_DAILY : '';
    e.hintWhy.textContent = this.daily ? NO_HINT_IN_DAILY : '';
  }

  renderTimer() {
    const s = this.state;
    if (!s) return;
    const { started_at: started, duration_ms: duration } = s.stats;
    const ms = s.status === 'playing' && started ? Date.now() - Date.parse(started) : duration || 0;
    this.el.timer.querySelector('.value').textContent = clock(ms);
  }

  legal() {
    return this.session.moves;
  }

  /** Where the selection may go, by the server's list. */
  targets(sel = this.selection) {
    return sel ? [...new Set(this.legal()
      .filter((m) => m.type === 'move' && m.from === sel.pile && (m.count ?? 1) === sel.count)
      .map((m) => m.to))] : [];
  }

  renderHighlights() {
    if (!this.board || !this.state) return;
    setHighlights(this.board, this.selection, new Set(this.targets()));
    const hinted = this.hinted && this.hinted.seq === this.state.seq ? this.hinted.command : null;
    for (const [id, el] of this.board.pileEls) {
      el.classList.toggle('hint-source', !!hinted && (hinted.type === 'draw' ? this.kindOf(id) === 'stock'
        : hinted.from === id));
      el.classList.toggle('hint-target', !!hinted && hinted.type === 'move' && (hinted.to === id
        || (hinted.to === 'foundation' && id.startsWith('foundation/'))));
    }
    this.el.undo.disabled = !this.session.canUndo;
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
        this.pick({ pile: pileId, count });
      } else {
        this.select(null);
      }
      return;
    }
    if (isStock) {
      // A move from the stock (Gate fills a space from it) is picked up like a card;
      // a second click on the stock then draws.
      if (this.legal().some((m) => m.type === 'move' && m.from === pileId)) {
        this.pick({ pile: pileId, count: 1 });
        this.say('Click a highlighted pile to place the stock\'s top card there, or the stock again to draw.');
      } else {
        this.send({ type: 'draw' });
      }
      return;
    }
    if (count != null && count > 0) this.pick({ pile: pileId, count });
  }

  /** Enter or Space on a pile: as a click on its top card, but a second Enter on the same
   *  pile takes a longer run (as far as the legal moves go), then puts it back. */
  keyPile(pileId) {
    if (!this.state || this.passive) return;
    const sel = this.selection;
    const pile = this.state.piles[pileId] || { down: 0, up: [] };
    const counts = [...new Set(this.legal()
      .filter((m) => m.type === 'move' && m.from === pileId).map((m) => m.count ?? 1))]
      .sort((a, b) => a - b);
    if (sel && sel.pile === pileId && this.kindOf(pileId) !== 'stock') {
      const longer = counts.find((c) => c > sel.count && c <= pile.up.length);
      if (longer) this.pick({ pile: pileId, count: longer });
      else {
        this.select(null);
        this.announcer.say('Selection cancelled.');
      }
      return;
    }
    if (!sel && this.kindOf(pileId) !== 'stock') {
      if (!pile.up.length) {
        this.announcer.say(`${pileName(pileId)} has no face-up card to pick up.`);
        return;
      }
      this.pick({ pile: pileId, count: counts.find((c) => c <= pile.up.length) ?? 1 });
      return;
    }
    this.clickPile(pileId, null);
  }

  /** Select `selection` and say what was picked up and where it may go. */
  pick(selection) {
    this.select(selection);
    const { pile: pileId, count } = selection;
    const up = this.state.piles[pileId]?.up || [];
    const what = this.kindOf(pileId) === 'stock' ? 'the stock\'s top card' : cardList(up.slice(up.length - count));
    const targets = this.targets();
    this.announcer.say(`Picked up ${what} from ${pileName(pileId)}. `
      + (targets.length ? `It may go to ${targets.map(pileName).join(', ')}. Choose a pile and press Enter, `
        + 'or Escape to cancel.' : 'The server lists no move for it; Escape cancels.'));
  }

  toFoundation(pileId) {
    if (!this.state || this.passive) return;
    const pile = this.state.piles[pileId];
    if (!pile || !pile.up.length) return;
    this.select(null);
    this.send({ type: 'move', from: pileId, to: 'foundation', count: 1 });
  }

  onBoardDoubleClick(event) {
    const cardEl = event.target.closest('.card.face[data-index]');
    const pileEl = cardEl && cardEl.closest('[data-pile]');
    if (!pileEl || !this.state || this.passive) return;
    const pile = this.state.piles[pileEl.dataset.pile];
    if (!pile || Number(cardEl.dataset.index) !== pile.up.length - 1) return;
    this.toFoundation(pileEl.dataset.pile);
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

  // --- the solver (solver.js) ------------------------------------------------------

  askHint() {
    return askHint(this);
  }

  showSolution() {
    return showSolution(this);
  }

  renderReplay() {
    renderReplay(this);
  }

  stepReplay(direction) {
    return stepReplay(this, direction);
  }

  // --- commands --------------------------------------------------------------------

  /** Send a command at the state's seq; a refusal is shown (and read out) as the server words it. */
  async send(command) {
    if (!this.state) return;
    this.say('');
    this.conflictSeq = null;
    try {
      await this.session.play(command);
    } catch (err) {
      if (err.code === 'conflict' && Number.isInteger(err.details?.seq)) {
        this.conflictSeq = Math.max(err.details.seq, this.state.seq); // what the board may show
        this.renderConflict();
      } else {
        this.sayError(err);
      }
    }
  }

  /** Another device moved first: say so (not the protocol's seq numbers) until the board
   *  shows that move, then that the board is up to date; the words go once the game moves on. */
  renderConflict() {
    const at = this.conflictSeq;
    if (at == null || !this.state) return;
    if (this.state.seq > at) {
      this.conflictSeq = null;
      if (this.el.message.dataset.code === 'conflict') this.say('');
      return;
    }
    this.say(this.state.seq === at ? CONFLICT_UP_TO_DATE : CONFLICT_CATCHING_UP, 'info', 'conflict');
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
