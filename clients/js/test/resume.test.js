// A socket dropped by the network (server side: the service sees it go) mid-game resumes
// with `since`: every diff is applied once, in order, none lost, none twice.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { Client } from '../src/index.js';
import { newPlayer, Proxy, same, serviceUrl, until } from './helpers.js';

const url = serviceUrl();
const lines = JSON.parse(readFileSync(process.env.SOLITAIRE_LINES, 'utf8'));

test('a socket dropped mid-game resumes with since: no diff lost or applied twice', async () => {
  const [variant, { seed, commands }] = Object.entries(lines)[0];
  const proxy = await new Proxy(url).start();
  const owner = await newPlayer(url, 'Dropped');
  const { game_id: gameId } = await owner.createGame({ variant, seed });
  // The constructor passed in is the one used (React Native's, or a library's in Node).
  let made = 0;
  class CountedWebSocket extends globalThis.WebSocket {
    constructor(url) {
      super(url);
      made += 1;
    }
  }
  const viaProxy = new Client({ baseUrl: proxy.url, token: owner.token, WebSocket: CountedWebSocket });
  const game = viaProxy.open(gameId);
  const applied = [];
  const statuses = [];
  game.on('state', (state, { diff }) => {
    if (diff) applied.push(diff.seq);
  });
  game.on('status', (status) => statuses.push(status));
  try {
    await until(() => game.status === 'live', 'the socket live');
    const played = commands.slice(0, 24);
    for (const [i, command] of played.entries()) {
      await owner.sendCommand(gameId, command); // another device of the owner plays
      if (i % 6 === 3) {
        await game.waitForSeq(i + 1);
        proxy.cut(); // the connection dies; the next commands happen while it is down
      }
    }
    await game.waitForSeq(played.length);
    await until(() => game.status === 'live', 'the socket live again');
    assert.deepEqual(applied, played.map((_, i) => i + 1)); // each diff once, in order
    same(game.state, await owner.getGame(gameId));
    assert.ok(game.socket.connections >= 5, `connections: ${game.socket.connections}`);
    assert.ok(statuses.includes('offline'));
    assert.equal(game.resyncs, 0); // resumed with since each time: no snapshot needed
    assert.equal(made, game.socket.connections);
  } finally {
    game.close();
    await proxy.close();
  }
});

test('without a global WebSocket, and none passed, opening a game says what to pass', () => {
  const global = globalThis.WebSocket;
  try {
    delete globalThis.WebSocket;
    const client = new Client({ baseUrl: url });
    assert.throws(() => client.open('g_any'), /pass its constructor \(options\.WebSocket\)/);
  } finally {
    globalThis.WebSocket = global;
  }
});
