// A command whose answer is lost with the connection is sent again, once, with the same
// command_id when the socket is back; the service applies it once and the play() promise
// resolves with its ack.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { Client } from '../src/index.js';
import { newPlayer, Proxy, same, serviceUrl, until } from './helpers.js';

const url = serviceUrl();
const lines = JSON.parse(readFileSync(process.env.SOLITAIRE_LINES, 'utf8'));

test('a command whose answer is lost is resent once with its command_id and applied once', async () => {
  const [variant, { seed, commands }] = Object.entries(lines)[1];
  const proxy = await new Proxy(url).start();
  const owner = await newPlayer(url, 'Unanswered');
  const { game_id: gameId } = await owner.createGame({ variant, seed });
  const viaProxy = new Client({ baseUrl: proxy.url, token: owner.token });
  const game = viaProxy.open(gameId, { moves: true });
  const sent = [];
  const send = game.socket.send.bind(game.socket);
  game.socket.send = (message) => {
    if (message.type === 'command') sent.push(message.command_id);
    return send(message);
  };
  try {
    await until(() => game.status === 'live', 'the socket live');
    await game.play(commands[0]);
    proxy.deaf = true; // the service's answers are lost from now on
    const answer = game.play(commands[1]);
    await until(async () => (await owner.getGame(gameId)).seq === 2, 'the command applied');
    assert.equal(game.state.seq, 1); // neither its diff nor its ack arrived
    assert.equal(game.unanswered, 1);
    proxy.cut(); // ... and the connection dies
    const ack = await answer;
    assert.equal(ack.seq, 2);
    assert.equal(sent.length, 3, `sent: ${sent}`); // the first, the second, its resend
    assert.equal(sent[2], sent[1]); // the same command_id
    assert.equal(ack.command_id, sent[1]);
    assert.equal(game.unanswered, 0);
    same(game.state, await owner.getGame(gameId));
    const events = (await owner.getEvents(gameId)).events;
    assert.deepEqual(events.map((e) => e.seq), [1, 2]); // applied once
    assert.deepEqual(game.moves, (await owner.getLegalMoves(gameId)).moves);
  } finally {
    game.close();
    await proxy.close();
  }
});
