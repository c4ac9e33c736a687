// Whole games of each variant, played to `won` from a winning line of the solver, on the
// live game's socket; a watcher of each sees the owner's state after every diff. Also the
// refusals a player meets: a rule (422) and a seq the game has left (409).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { ApiError, Client } from '../src/index.js';
import { newPlayer, same, serviceUrl } from './helpers.js';

const url = serviceUrl();
const lines = JSON.parse(readFileSync(process.env.SOLITAIRE_LINES, 'utf8'));

for (const [variant, { seed, commands }] of Object.entries(lines)) {
  test(`a game of ${variant} is played to won from the solver's line, watched all along`, async () => {
    const owner = await newPlayer(url, `Owner ${variant}`);
    const { game_id: gameId } = await owner.createGame({ variant, seed, public: true });
    const game = owner.open(gameId, { moves: true });
    const watcher = new Client({ baseUrl: url }).open(gameId); // no token: watching
    const ownerStates = new Map();
    const watcherStates = new Map();
    game.on('state', (state) => ownerStates.set(state.seq, state));
    watcher.on('state', (state) => watcherStates.set(state.seq, state));
    try {
      await game.waitForSeq(0);
      await watcher.waitForSeq(0);
      let seq = 0;
      for (const command of commands) {
        const ack = await game.play(command);
        seq += 1;
        assert.equal(ack.seq, seq);
        assert.equal(game.state.seq, seq); // its diff came before its ack
        await watcher.waitForSeq(seq);
        same(watcher.state, game.state); // the watcher's state equals the owner's after every diff
      }
      assert.equal(game.state.status, 'won');
      same(game.state, await owner.getGame(gameId));
      for (let s = 0; s <= seq; s += 1) same(watcherStates.get(s), ownerStates.get(s));
      assert.equal(game.resyncs, 0);
      assert.equal(watcher.resyncs, 0);
      const log = [];
      for await (const event of owner.allEvents(gameId, { limit: 50 })) log.push(event.command);
      same(log, commands);
    } finally {
      game.close();
      watcher.close();
    }
  });
}

test('a refused command says its rule (422), and a seq the game has left says so (409)', async () => {
  const [variant, { seed, commands }] = Object.entries(lines)[0];
  const owner = await newPlayer(url, 'Refused');
  const { game_id: gameId } = await owner.createGame({ variant, seed });
  const game = owner.open(gameId, { moves: true });
  try {
    await game.waitForSeq(0);
    await game.play(commands[0]);
    const pile = Object.keys(game.state.piles)[0];
    const illegal = await game.play({ type: 'move', from: pile, to: pile }).catch((e) => e);
    assert.ok(illegal instanceof ApiError);
    assert.equal(illegal.code, 'illegal_move');
    assert.equal(illegal.status, 422);
    assert.equal(typeof illegal.rule, 'string');
    assert.equal(illegal.seq, 1);

    await owner.sendCommand(gameId, commands[1]); // another device moves first
    const stale = await game.play(commands[2], { expectedSeq: 1 }).catch((e) => e);
    assert.ok(stale instanceof ApiError);
    assert.equal(stale.code, 'conflict');
    assert.ok(stale.staleSeq);
    assert.equal(stale.seq, 2);
    assert.equal(stale.details.expected_seq, 1);
  } finally {
    game.close();
  }
});
