// The WebSocket of one game: hello, reconnection with backoff, liveness pings.
//
// Statuses: idle -> connecting -> syncing (hello sent) -> live (synced received) ->
// offline (closed; a retry is scheduled) ... and `refused` when the service closed with
// 1008 (unknown or private game, bad or expired token): retrying would not help.
// `closed` once stop() was called.

import { CloseCode } from './contract.js';

const BACKOFF_MIN_MS = 400;
const BACKOFF_MAX_MS = 15000;
const PING_EVERY_MS = 20000;
const SILENCE_MS = 50000; // nothing heard for this long: the connection is dead

/** @typedef {'idle' | 'connecting' | 'syncing' | 'live' | 'offline' | 'refused' | 'closed'} Status */

/**
 * @typedef {object} SocketHandlers
 * @property {() => Record<string, unknown>} hello the hello's fields ({token?, since?,
 *   moves?}) at each (re)connection
 * @property {(message: any) => void} onMessage every message but `pong`
 * @property {(status: Status, reason?: string) => void} [onStatus]
 * @property {any} [WebSocket] the constructor (else the global one)
 * @property {boolean} [wakeOnFocus] in a browser: reconnect at once when the page comes
 *   back to the foreground or the network comes back (default true)
 */

export class GameSocket {
  /** @param {string} url @param {SocketHandlers} handlers */
  constructor(url, { hello, onMessage, onStatus, WebSocket, wakeOnFocus = true }) {
    this.url = url;
    this.hello = hello;
    this.onMessage = onMessage;
    this.onStatus = onStatus || (() => {});
    /** @type {any} */
    this.WebSocket = WebSocket ?? /** @type {any} */ (globalThis).WebSocket;
    if (!this.WebSocket) {
      throw new Error('no WebSocket here: pass its constructor (options.WebSocket)');
    }
    /** @type {any} */
    this.ws = null;
    /** @type {Status} */
    this.status = 'idle';
    this.attempts = 0;
    this.connections = 0; // how many sockets were opened
    /** @type {any} */
    this.retryTimer = null;
    /** @type {any} */
    this.pingTimer = null;
    this.lastHeard = 0;
    this.stopped = true;
    this.waitAtLeastMs = 0; // the next retry waits this long at least (a Retry-After)
    this.notBefore = 0; // no connection before this time (ms since the epoch): a Retry-After
    const g = /** @type {any} */ (globalThis);
    this.browser = wakeOnFocus && typeof g.addEventListener === 'function' && g.document ? g : null;
    this.wakeUp = () => {
      if (!this.stopped && (this.status === 'offline' || this.status === 'connecting')
          && Date.now() >= this.notBefore) {
        this.connect();
      }
    };
    this.onVisible = () => {
      if (g.document.visibilityState === 'visible') this.wakeUp();
    };
  }

  get live() {
    return this.status === 'live';
  }

  start() {
    this.stopped = false;
    if (this.browser) {
      this.browser.addEventListener('online', this.wakeUp);
      this.browser.document.addEventListener('visibilitychange', this.onVisible);
    }
    this.pingTimer = setInterval(() => this.keepAlive(), PING_EVERY_MS);
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    if (this.browser) {
      this.browser.removeEventListener('online', this.wakeUp);
      this.browser.document.removeEventListener('visibilitychange', this.onVisible);
    }
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close(CloseCode.NORMAL, 'leaving');
    this.setStatus('closed');
  }

  /** Drop this connection and open a new one now (hello() gives the `since`). */
  resync() {
    if (this.stopped) return;
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close(CloseCode.NORMAL, 'resynchronising');
    this.connect();
  }

  /** Send a message if the socket is live; false if it is not. @param {object} message */
  send(message) {
    if (!this.live || !this.ws) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  /** Wait at least this long before the next connection (the service said Retry-After).
   *  @param {number} seconds */
  retryAfter(seconds) {
    this.waitAtLeastMs = Math.max(this.waitAtLeastMs, 1000 * seconds);
  }

  connect() {
    clearTimeout(this.retryTimer);
    if (this.ws) {
      const old = this.ws;
      this.ws = null;
      old.close(CloseCode.NORMAL, 'reconnecting');
    }
    /** @type {any} */
    let ws;
    try {
      ws = new this.WebSocket(this.url);
    } catch (err) {
      this.setStatus('offline', err instanceof Error ? err.message : String(err));
      this.scheduleRetry();
      return;
    }
    this.ws = ws;
    this.connections += 1;
    this.setStatus('connecting');
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.lastHeard = Date.now();
      ws.send(JSON.stringify({ type: 'hello', ...this.hello() }));
      this.setStatus('syncing');
    };
    ws.onmessage = (/** @type {{data: unknown}} */ event) => {
      if (this.ws !== ws) return; // a message from a socket we already left
      this.lastHeard = Date.now();
      let message;
      try {
        message = JSON.parse(String(event.data));
      } catch {
        return;
      }
      if (message.type === 'pong') return;
      if (message.type === 'synced') {
        this.attempts = 0;
        this.setStatus('live');
      }
      this.onMessage(message);
    };
    ws.onclose = (/** @type {{code: number, reason: string}} */ event) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.stopped) return;
      if (event.code === CloseCode.POLICY_VIOLATION) {
        this.setStatus('refused', event.reason);
        return;
      }
      this.setStatus('offline', event.reason);
      this.scheduleRetry();
    };
    ws.onerror = () => {}; // a close event follows
  }

  scheduleRetry() {
    clearTimeout(this.retryTimer);
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.attempts);
    this.attempts += 1;
    const delay = Math.max(this.waitAtLeastMs, base / 2 + Math.random() * (base / 2));
    this.notBefore = this.waitAtLeastMs ? Date.now() + delay : 0; // a wake-up may not cut it short
    this.waitAtLeastMs = 0;
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  keepAlive() {
    if (!this.live) return;
    if (Date.now() - this.lastHeard > SILENCE_MS) {
      this.resync();
      return;
    }
    this.send({ type: 'ping' });
  }

  /** @param {Status} status @param {string} [reason] */
  setStatus(status, reason) {
    this.status = status;
    this.onStatus(status, reason);
  }
}
