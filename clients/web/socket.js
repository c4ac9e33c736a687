// The WebSocket of one game: hello, reconnection with backoff, liveness pings.
//
// States: connecting -> syncing (hello sent) -> live (synced received) -> offline
// (closed; a retry is scheduled) ... and `refused` when the server closed with
// CloseCode.POLICY_VIOLATION, 1008 (unknown or private game, bad token): retrying
// would not help.

import { CloseCode } from './contract.js';

const BACKOFF_MIN_MS = 400;
const BACKOFF_MAX_MS = 15000;
const PING_EVERY_MS = 20000;
const SILENCE_MS = 50000; // nothing heard for this long: the connection is dead

export function socketUrl(gameId, loc = window.location) {
  const scheme = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${loc.host}/v1/games/${encodeURIComponent(gameId)}/ws`;
}

export class GameSocket {
  /**
   * @param {string} url
   * @param {{hello: () => object, onMessage: (msg: object) => void, onStatus?: (status: string, info?: string) => void}} handlers
   *   hello() gives the hello's fields ({token?, since?}) at each (re)connection.
   */
  constructor(url, { hello, onMessage, onStatus }) {
    this.url = url;
    this.hello = hello;
    this.onMessage = onMessage;
    this.onStatus = onStatus || (() => {});
    this.ws = null;
    this.status = 'idle';
    this.attempts = 0;
    this.connections = 0; // how many sockets were opened (tests and the status line read it)
    this.retryTimer = null;
    this.pingTimer = null;
    this.lastHeard = 0;
    this.stopped = true;
    this.wakeUp = () => {
      if (!this.stopped && (this.status === 'offline' || this.status === 'connecting')) this.connect();
    };
    this.onVisible = () => {
      if (document.visibilityState === 'visible') this.wakeUp();
    };
  }

  get live() {
    return this.status === 'live';
  }

  start() {
    this.stopped = false;
    window.addEventListener('online', this.wakeUp);
    document.addEventListener('visibilitychange', this.onVisible);
    this.pingTimer = setInterval(() => this.keepAlive(), PING_EVERY_MS);
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    window.removeEventListener('online', this.wakeUp);
    document.removeEventListener('visibilitychange', this.onVisible);
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

  /** Send a message if the socket is live; false if it is not. */
  send(message) {
    if (!this.live || !this.ws) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  connect() {
    clearTimeout(this.retryTimer);
    if (this.ws) {
      const old = this.ws;
      this.ws = null;
      old.close(CloseCode.NORMAL, 'reconnecting');
    }
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (err) {
      this.setStatus('offline', err.message);
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
    ws.onmessage = (event) => {
      if (this.ws !== ws) return; // a message from a socket we already left
      this.lastHeard = Date.now();
      let message;
      try {
        message = JSON.parse(event.data);
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
    ws.onclose = (event) => {
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
    const delay = base / 2 + Math.random() * (base / 2);
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

  setStatus(status, info) {
    this.status = status;
    this.onStatus(status, info);
  }
}
