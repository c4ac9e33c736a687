// What the package's Node tests share: the service they run against (started by pytest,
// tests/jsclient), a loopback proxy that can lose what the service sends and cut the
// connection, and a fetch that records the statuses it saw.

import assert from 'node:assert/strict';
import net from 'node:net';

import { Client } from '../src/index.js';

/** The service's base URL (SOLITAIRE_URL, set by tests/jsclient). */
export function serviceUrl(name = 'SOLITAIRE_URL') {
  const url = process.env[name];
  assert.ok(url, `${name} is not set: run these tests through pytest (tests/jsclient)`);
  return url;
}

/** A client of a new player. @param {string} url @param {object} [options] */
export async function newPlayer(url, name = 'Node', options = {}) {
  const client = new Client({ baseUrl: url, ...options });
  await client.createPlayer(name);
  return client;
}

/** A fetch that keeps the status of every answer, in order. */
export function recordingFetch() {
  const statuses = [];
  const fetchImpl = async (input, init) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    return response;
  };
  return { fetch: fetchImpl, statuses };
}

/** Resolves once `predicate()` holds (checked every 20 ms), or rejects after `patienceMs`. */
export async function until(predicate, what, patienceMs = 20000) {
  const deadline = Date.now() + patienceMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`waited in vain for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A TCP proxy in front of the service on loopback. `deaf = true` throws away everything
 * the service sends from then on (what the client sent still goes through): answers lost
 * in flight. `cut()` aborts every connection without a close handshake, as a network that
 * dies; the service sees its socket drop.
 */
export class Proxy {
  constructor(targetUrl) {
    const u = new URL(targetUrl);
    this.target = { host: u.hostname, port: Number(u.port) };
    this.deaf = false;
    this.sockets = new Set();
    this.accepted = 0;
    this.server = net.createServer((client) => this.accept(client));
  }

  async start() {
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${this.server.address().port}`;
    return this;
  }

  accept(client) {
    this.accepted += 1;
    const upstream = net.connect(this.target);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => {});
    }
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (!this.deaf) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  cut() {
    for (const s of this.sockets) s.resetAndDestroy ? s.resetAndDestroy() : s.destroy();
    this.sockets.clear();
    this.deaf = false;
  }

  async close() {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** The state as the service has it, read over REST. */
export async function serverState(client, gameId) {
  return client.getGame(gameId);
}

/** A state without what only a fresh read has (nothing: every field is compared). */
export function same(a, b) {
  assert.deepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
}
