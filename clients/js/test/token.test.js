// An expired token is reported as such: over REST a 401 `unauthorized`; on the live game's
// socket its command is refused `unauthorized`, the socket closed with 1008, and the live
// game stops retrying (`refused`).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ApiError, Client } from '../src/index.js';
import { serviceUrl, until } from './helpers.js';

test('an expired token is reported as such, and the socket is not retried',
  { skip: !process.env.SOLITAIRE_SHORT_TOKEN }, async () => {
    const url = serviceUrl();
    const token = process.env.SOLITAIRE_SHORT_TOKEN;
    const gameId = process.env.SOLITAIRE_SHORT_GAME;
    const unauthorized = [];
    const client = new Client({ baseUrl: url, token, onUnauthorized: () => unauthorized.push('rest') });
    const game = client.open(gameId);
    const errors = [];
    game.on('error', (err) => errors.push(err));
    try {
      await until(() => game.status === 'live', 'the socket live');
      await until(async () => {
        try {
          await client.getGame(gameId);
          return false;
        } catch (err) {
          assert.ok(err instanceof ApiError);
          assert.equal(err.status, 401);
          assert.equal(err.code, 'unauthorized');
          assert.ok(err.unauthorized);
          return true;
        }
      }, 'the token expired', 60000);
      assert.deepEqual(unauthorized, ['rest']);
      const refused = await game.play({ type: 'draw' }).catch((e) => e);
      assert.ok(refused instanceof ApiError);
      assert.equal(refused.code, 'unauthorized');
      await until(() => game.status === 'refused', 'the socket refused (1008)');
      assert.ok(errors.some((e) => e.code === 'unauthorized'));
      const connections = game.socket.connections;
      await new Promise((resolve) => setTimeout(resolve, 1500)); // longer than any backoff's start
      assert.equal(game.socket.connections, connections); // not retried
      assert.equal(game.status, 'refused');
    } finally {
      game.close();
    }
  });
