// The peer's load: N clients, each with its own socket.io connection, each playing
// a match of the peer's game and sending its next move as soon as the server's
// update for the last one comes back (closed loop, as ws_load.py saturation does
// against the service). A match ends after --moves-per-match moves; the client
// then creates and joins the next one (as ws_load.py's clients start a new game).
//
//   node load.js --url http://127.0.0.1:8000 --clients 100 --duration 8 --warmup 2
//
// Prints "window start" and "window end" when the measured window opens and
// closes (benchmarks/peer.py samples the server's CPU then), then one JSON line:
// moves, moves_per_s, ack p50/p99 (ms), errors, the generator's own loop lateness.
'use strict';

const { io } = require('socket.io-client');
const { legal, PILES } = require('./game');

function options(argv) {
  const opts = { url: 'http://127.0.0.1:8000', clients: 100, duration: 8, warmup: 2,
    movesPerMatch: 100, seed: 1 };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-(.)/g, (_, c) => c.toUpperCase());
    if (!(key in opts)) throw new Error(`unknown option ${argv[i]}`);
    opts[key] = key === 'url' ? argv[i + 1] : Number(argv[i + 1]);
  }
  return opts;
}

function random(seed) { // mulberry32: seeded, so every run plays the same choices
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function choose(G, rnd) {
  const toFoundation = [];
  const other = [];
  for (let from = 0; from < PILES; from++) {
    if (G.tableau[from].length === 0) continue;
    for (let f = 0; f < 4; f++) if (legal(G, from, `f${f}`)) toFoundation.push([from, `f${f}`]);
    for (let to = 0; to < PILES; to++) if (legal(G, from, to)) other.push([from, to]);
  }
  if (toFoundation.length && rnd() < 0.8) return toFoundation[Math.floor(rnd() * toFoundation.length)];
  if (other.length) return other[Math.floor(rnd() * other.length)];
  return null; // no move: the client starts the next match
}

async function post(url, body) {
  const reply = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body) });
  if (!reply.ok) throw new Error(`${url}: ${reply.status} ${await reply.text()}`);
  return reply.json();
}

const stats = { recording: false, acks: [], errors: 0, lag: [] };

class Client {
  constructor(opts, i) {
    this.opts = opts;
    this.rnd = random(opts.seed * 100003 + i);
    this.waiting = null; // [stateID awaited, resolve]
    this.state = null;
  }

  async start() {
    this.socket = io(`${this.opts.url}/solitaire`, { transports: ['websocket'], forceNew: true,
      reconnection: false });
    this.socket.on('update', (matchID, state) => this.updated(matchID, state));
    this.socket.on('sync', (matchID, info) => this.updated(matchID, info.state));
    await new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('connect_error', reject);
    });
    await this.newMatch();
  }

  updated(matchID, state) {
    if (matchID !== this.matchID) return;
    this.state = state;
    if (this.waiting && state._stateID >= this.waiting[0]) {
      const [, resolve] = this.waiting;
      this.waiting = null;
      resolve();
    }
  }

  until(stateID) {
    return new Promise((resolve) => { this.waiting = [stateID, resolve]; });
  }

  async newMatch() {
    const base = `${this.opts.url}/games/solitaire`;
    const { matchID } = await post(`${base}/create`, { numPlayers: 1 });
    const { playerCredentials } = await post(`${base}/${matchID}/join`,
      { playerID: '0', playerName: 'bench' });
    this.matchID = matchID;
    this.credentials = playerCredentials;
    this.moves = 0;
    this.state = null;
    const synced = this.until(0);
    this.socket.emit('sync', matchID, '0', playerCredentials, 1);
    await synced;
  }

  async step() {
    const move = this.moves < this.opts.movesPerMatch ? choose(this.state.G, this.rnd) : null;
    if (move === null) return this.newMatch();
    const stateID = this.state._stateID;
    const action = { type: 'MAKE_MOVE',
      payload: { type: 'move', args: move, playerID: '0', credentials: this.credentials } };
    const started = performance.now();
    const acked = this.until(stateID + 1);
    this.socket.emit('update', action, stateID, this.matchID, '0');
    await acked;
    if (stats.recording) stats.acks.push(performance.now() - started);
    this.moves += 1;
    return undefined;
  }
}

function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

async function main() {
  const opts = options(process.argv);
  const clients = Array.from({ length: opts.clients }, (_, i) => new Client(opts, i));
  for (let i = 0; i < clients.length; i += 50) {
    await Promise.all(clients.slice(i, i + 50).map((c) => c.start()));
  }
  let stop = false;
  const loops = clients.map(async (c) => {
    while (!stop) {
      try {
        await c.step();
      } catch (err) {
        stats.errors += 1;
        if (stats.errors < 5) console.error(err);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  const sleep = (s) => new Promise((r) => setTimeout(r, s * 1000));
  await sleep(opts.warmup);
  let asked = performance.now() + 10;
  const probe = setInterval(() => {
    const now = performance.now();
    stats.lag.push(Math.max(0, now - asked));
    asked = now + 10;
  }, 10);
  console.log('window start');
  stats.recording = true;
  const started = performance.now();
  await sleep(opts.duration);
  stats.recording = false;
  const elapsed = (performance.now() - started) / 1000;
  console.log('window end');
  clearInterval(probe);
  stop = true;
  // A client waiting for an update that never comes must not hold the exit.
  await Promise.race([Promise.all(loops), sleep(5)]);
  const acks = stats.acks.slice().sort((a, b) => a - b);
  const lag = stats.lag.slice().sort((a, b) => a - b);
  console.log(JSON.stringify({
    moves: acks.length,
    moves_per_s: acks.length / elapsed,
    ack_p50_ms: percentile(acks, 50),
    ack_p99_ms: percentile(acks, 99),
    errors: stats.errors,
    loadgen_lag_p99_ms: percentile(lag, 99),
  }));
  for (const c of clients) c.socket.close();
  process.exit(0);
}

main().catch((err) => { console.error(err); process.exit(1); });
