// The REST half of the contract (docs/protocol.md "REST", openapi.yaml): one method per
// operation, named after its operationId. Answers come back as the service sends them
// (the types of ../types/wire.d.ts); refusals as an ApiError.

import { ApiError, WAIT_DEFAULT_S, WAIT_MAX_S } from './errors.js';
import { LiveGame } from './live.js';
import { randomId } from './ids.js';

/** @typedef {import('../types/wire.js').Variants} Variants */
/** @typedef {import('../types/wire.js').PlayerCreated} PlayerCreated */
/** @typedef {import('../types/wire.js').Player} Player */
/** @typedef {import('../types/wire.js').Me} Me */
/** @typedef {import('../types/wire.js').PlayerGames} PlayerGames */
/** @typedef {import('../types/wire.js').GameSummary} GameSummary */
/** @typedef {GameSummary['status']} GameStatus */
/** @typedef {import('../types/wire.js').GameCreated} GameCreated */
/** @typedef {import('../types/wire.js').GameState} GameState */
/** @typedef {import('../types/wire.js').Command} Command */
/** @typedef {import('../types/wire.js').CommandResult} CommandResult */
/** @typedef {import('../types/wire.js').LegalMoves} LegalMoves */
/** @typedef {import('../types/wire.js').Events} Events */
/** @typedef {import('../types/wire.js').Event} Event */
/** @typedef {import('../types/wire.js').Solution} Solution */
/** @typedef {import('../types/wire.js').Hint} Hint */
/** @typedef {import('../types/wire.js').DailyDay} DailyDay */
/** @typedef {import('../types/wire.js').Leaderboard} Leaderboard */
/** @typedef {import('../types/wire.js').Health} Health */
/** @typedef {import('../types/wire.js').CreateGame} CreateGame */
/** @typedef {import('./live.js').LiveOptions} LiveOptions */

/**
 * @typedef {object} ClientOptions
 * @property {string} [baseUrl] the service's origin, `https://cards.example`; '' (the
 *   default) means the page's own origin, in a browser
 * @property {string | null} [token] a player's token (`createPlayer` sets it)
 * @property {typeof fetch} [fetch] where there is no global `fetch`
 * @property {any} [WebSocket] a WebSocket constructor, where there is no global one
 *   (React Native has one; Node 20 without --experimental-websocket does not)
 * @property {number} [retries] how many times a 429 or a retryable 503 is waited out
 *   and sent again, by a REST call or a live game's command (default 3; a wait of more
 *   than WAIT_MAX_S is not); 0 gives every refusal to the caller at once
 * @property {() => void} [onUnauthorized] called when the service refuses the token (401)
 */


/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @param {string} part */
const seg = (part) => encodeURIComponent(part);

export class Client {
  /** @param {ClientOptions} [options] */
  constructor(options = {}) {
    /** @type {string} */
    this.baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '');
    /** @type {string | null} */
    this.token = options.token ?? null;
    /** @type {number} */
    this.retries = options.retries ?? 3;
    /** @type {(() => void) | null} */
    this.onUnauthorized = options.onUnauthorized ?? null;
    /** @type {typeof fetch} */
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    /** @type {any} */
    this.WebSocket = options.WebSocket ?? null;
  }

  /** Use this token from now on (null: none). @param {string | null} token */
  setToken(token) {
    this.token = token || null;
  }

  // --- players ---------------------------------------------------------------------

  /** Every game: id, name, decks, piles, options, rules. @returns {Promise<Variants>} */
  listVariants() {
    return this.request('GET', '/v1/variants');
  }

  /** A new player; its token becomes this client's. Not resent after an unknown outcome.
   *  @param {string} name @returns {Promise<PlayerCreated>} */
  async createPlayer(name) {
    /** @type {PlayerCreated} */
    const created = await this.request('POST', '/v1/players', { body: { name }, idempotent: false });
    this.token = created.token;
    return created;
  }

  /** The player the token acts as. @returns {Promise<Me>} */
  getMe() {
    return this.request('GET', '/v1/players/me');
  }

  /** A page of the caller's games, newest first (on any device: they follow the token);
   *  `next_cursor` asks for the next page. With `status`, a page may hold fewer than
   *  `limit` games while more follow.
   *  @param {{status?: GameStatus, variant?: string, limit?: number, cursor?: string | null}} [filter]
   *  @returns {Promise<PlayerGames>} */
  listMyGames({ status, variant, limit, cursor } = {}) {
    return this.request('GET', '/v1/players/me/games', { query: { status, variant, limit, cursor } });
  }

  /** Rename the caller. @param {string} name @returns {Promise<Player>} */
  updatePlayer(name) {
    return this.request('PATCH', '/v1/players/me', { body: { name } });
  }

  // --- games -----------------------------------------------------------------------

  /** A new game (201). Not resent after an unknown outcome (it would be a second game).
   *  @param {CreateGame} game @returns {Promise<GameCreated>} */
  createGame(game) {
    return this.request('POST', '/v1/games', { body: game, idempotent: false });
  }

  /** @param {string} gameId @returns {Promise<GameState>} */
  getGame(gameId) {
    return this.request('GET', `/v1/games/${seg(gameId)}`);
  }

  /** Send a command. It always carries a `command_id` (a new one unless given): after a
   *  503 of unknown outcome it is sent again with that id, and the service applies it
   *  once. Without `expectedSeq` it applies at whatever seq the game is.
   *  @param {string} gameId @param {Command} command
   *  @param {{expectedSeq?: number | null, commandId?: string}} [options]
   *  @returns {Promise<CommandResult>} */
  sendCommand(gameId, command, { expectedSeq, commandId } = {}) {
    const id = commandId ?? randomId();
    /** @type {Record<string, unknown>} */
    const body = { command, command_id: id };
    if (expectedSeq != null) body.expected_seq = expectedSeq;
    return this.request('POST', `/v1/games/${seg(gameId)}/commands`, { body, commandId: id });
  }

  /** @param {string} gameId @returns {Promise<LegalMoves>} */
  getLegalMoves(gameId) {
    return this.request('GET', `/v1/games/${seg(gameId)}/moves`);
  }

  /** One page of the log: the commands after seq `after`, at most `limit`.
   *  @param {string} gameId @param {{after?: number, limit?: number}} [page]
   *  @returns {Promise<Events>} */
  getEvents(gameId, { after, limit } = {}) {
    return this.request('GET', `/v1/games/${seg(gameId)}/events`, { query: { after, limit } });
  }

  /** Every event after `after`, page by page.
   *  @param {string} gameId @param {{after?: number, limit?: number}} [from]
   *  @returns {AsyncGenerator<Event, void, undefined>} */
  async * allEvents(gameId, { after = 0, limit } = {}) {
    /** @type {number | null} */
    let next = after;
    while (next !== null) {
      const page = await this.getEvents(gameId, { after: next, limit });
      yield* page.events;
      next = page.next_after;
    }
  }

  /** A winning line from the deal, for a game that is over.
   *  @param {string} gameId @returns {Promise<Solution>} */
  getSolution(gameId) {
    return this.request('GET', `/v1/games/${seg(gameId)}/solution`);
  }

  /** A suggested command now (the owner). Not resent after an unknown outcome (it counts).
   *  @param {string} gameId @returns {Promise<Hint>} */
  getHint(gameId) {
    return this.request('POST', `/v1/games/${seg(gameId)}/hint`, { idempotent: false });
  }

  // --- daily challenges -----------------------------------------------------------

  /** The day's challenges (today, the service's UTC day, when `date` is left out).
   *  @param {string} [date] YYYY-MM-DD @returns {Promise<DailyDay>} */
  getDaily(date) {
    return this.request('GET', '/v1/daily', { query: { date } });
  }

  /** The caller's ranked attempt at a challenge (201).
   *  @param {string} date @param {string} variant @returns {Promise<GameCreated>} */
  startDailyAttempt(date, variant) {
    return this.request('POST', `/v1/daily/${seg(date)}/${seg(variant)}/attempts`, { idempotent: false });
  }

  /** @param {string} date @param {string} variant
   *  @param {{limit?: number, cursor?: string | null}} [page]
   *  @returns {Promise<Leaderboard>} */
  getLeaderboard(date, variant, { limit, cursor } = {}) {
    return this.request('GET', `/v1/daily/${seg(date)}/${seg(variant)}/leaderboard`,
      { query: { limit, cursor } });
  }

  // --- the service ----------------------------------------------------------------

  /** @returns {Promise<Health>} */
  healthz() {
    return this.request('GET', '/healthz', { retry: false });
  }

  /** @returns {Promise<Health>} */
  readyz() {
    return this.request('GET', '/readyz', { retry: false });
  }

  /** Prometheus text. @returns {Promise<string>} */
  metrics() {
    return this.request('GET', '/metrics', { text: true });
  }

  /** The REST contract, YAML. @returns {Promise<string>} */
  openapi() {
    return this.request('GET', '/openapi.yaml', { text: true });
  }

  /** The WebSocket contract, YAML. @returns {Promise<string>} */
  asyncapi() {
    return this.request('GET', '/asyncapi.yaml', { text: true });
  }

  // --- the socket -----------------------------------------------------------------

  /** A game's live view over its WebSocket (`watchGame`); call `start()` on it, or use
   *  `open`, which does. @param {string} gameId @param {LiveOptions} [options]
   *  @returns {LiveGame} */
  live(gameId, options = {}) {
    return new LiveGame(this, gameId, { token: this.token, ...options });
  }

  /** A game's live view, started: it connects, and keeps its state.
   *  @param {string} gameId @param {LiveOptions} [options] @returns {LiveGame} */
  open(gameId, options = {}) {
    const game = this.live(gameId, options);
    game.start();
    return game;
  }

  /** The ws:// or wss:// URL of a game's socket. @param {string} gameId @returns {string} */
  socketUrl(gameId) {
    let base = this.baseUrl;
    if (!base) {
      const loc = /** @type {any} */ (globalThis).location;
      if (!loc) throw new Error('no baseUrl: give the service\'s origin to new Client({baseUrl})');
      base = `${loc.protocol}//${loc.host}`;
    }
    return base.replace(/^http/, 'ws') + `/v1/games/${seg(gameId)}/ws`;
  }

  // --- plumbing -------------------------------------------------------------------

  /**
   * One request, waited out and sent again (up to `retries` times) while the service
   * answers 429 or a 503 that may be sent again (ApiError.retryable).
   * @param {string} method @param {string} path
   * @param {{body?: unknown, query?: Record<string, unknown>, idempotent?: boolean,
   *          commandId?: string | null, retry?: boolean, text?: boolean}} [options]
   * @returns {Promise<any>}
   */
  async request(method, path, { body, query, idempotent = true, commandId = null, retry = true,
    text = false } = {}) {
    let url = this.baseUrl + path;
    if (query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v != null) q.set(k, String(v));
      const s = q.toString();
      if (s) url += '?' + s;
    }
    for (let attempt = 0; ; attempt += 1) {
      /** @type {Record<string, string>} */
      const headers = { Accept: text ? 'text/plain, application/yaml' : 'application/json' };
      if (this.token) headers.Authorization = `Bearer ${this.token}`;
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      /** @type {ApiError} */
      let error;
      /** @type {string | null} */
      let retryAfter = null;
      try {
        const response = await this.fetchImpl(url, {
          method, headers, body: body === undefined ? undefined : JSON.stringify(body),
        });
        const raw = await response.text();
        if (response.ok) return text ? raw : (raw ? JSON.parse(raw) : null);
        error = errorOf(response.status, raw, commandId);
        retryAfter = response.headers.get('Retry-After');
        if (response.status === 401 && this.token && this.onUnauthorized) this.onUnauthorized();
      } catch (err) {
        if (err instanceof ApiError) throw err;
        error = new ApiError(0, 'network', `the service cannot be reached (${errorText(err)})`,
          {}, commandId);
        // no answer: a write without a command_id may have been done
        if (!idempotent && method !== 'GET') throw error;
      }
      if (!retry || attempt >= this.retries || !error.retryable) throw error;
      if (error.unknownOutcome && !idempotent) throw error;
      // A longer wait (a day's renames used up) is the caller's to decide: retryAfterS says it.
      if ((askedS(error, retryAfter) ?? 0) > WAIT_MAX_S) throw error;
      await sleep(1000 * waitS(error, retryAfter, attempt + 1));
    }
  }
}

/** @param {unknown} err */
const errorText = (err) => (err instanceof Error ? err.message : String(err));

/** @param {number} status @param {string} raw @param {string | null} commandId */
function errorOf(status, raw, commandId) {
  try {
    const data = JSON.parse(raw);
    if (data && typeof data.error === 'object' && data.error) {
      return ApiError.fromInfo(data.error, status, commandId);
    }
  } catch {
    // not the contract's error body: a proxy's page
  }
  return new ApiError(status, 'http_error', `HTTP ${status}`, {}, commandId);
}

/** The wait the service asked for, in seconds (`retry_after_s`, else `Retry-After`), or null.
 *  @param {ApiError} error @param {string | null} header @returns {number | null} */
function askedS(error, header) {
  if (error.retryAfterS != null) return error.retryAfterS;
  if (header != null && header.trim() !== '' && Number.isFinite(Number(header))) return Number(header);
  return null;
}

/** Seconds to wait before attempt number `attempt` (1, 2...); the client waits out no
 *  more than WAIT_MAX_S (a longer wait asked for is the caller's: the error is thrown).
 *  @param {ApiError} error @param {string | null} header @param {number} attempt */
export function waitS(error, header, attempt) {
  const seconds = askedS(error, header) ?? WAIT_DEFAULT_S * 2 ** (attempt - 1);
  return Math.min(WAIT_MAX_S, Math.max(0, seconds));
}
