// 429 and 503 waited out: the client waits as long as the service says (Retry-After)
// and sends the same request again, a command with the same command_id; a socket whose
// hello was refused for a limit (an error with retry_after_s, then 1013) waits as long
// before it connects again.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { newPlayer, recordingFetch, serviceUrl, until } from './helpers.js';

const lines = JSON.parse(readFileSync(process.env.SOLITAIRE_LINES, 'utf8'));
const [variant, { seed, commands }] = Object.entries(lines)[0];

test('429: commands past the rate limit are waited out and all applied, once each',
  { skip: !process.env.SOLITAIRE_LIMITED_URL }, async () => {
    const url = serviceUrl('SOLITAIRE_LIMITED_URL'); // 1 write a second, bursts of 2
    const recorder = recordingFetch();
    const owner = await newPlayer(url, 'Hasty', { fetch: recorder.fetch, retries: 10 });
    const { game_id: gameId } = await owner.createGame({ variant, seed });
    for (const command of commands.slice(0, 4)) await owner.sendCommand(gameId, command);
    assert.ok(recorder.statuses.includes(429), `statuses: ${recorder.statuses}`);
    const { events } = await owner.getEvents(gameId);
    assert.deepEqual(events.map((e) => e.seq), [1, 2, 3, 4]);
  });

test('429 asking for more than a minute: given to the caller at once, saying how long',
  { skip: !process.env.SOLITAIRE_LIMITED_URL }, async () => {
    const url = serviceUrl('SOLITAIRE_LIMITED_URL'); // one rename a day
    const player = await newPlayer(url, 'Renamer', { retries: 3 });
    await player.updatePlayer('Renamed');
    const began = Date.now();
    await assert.rejects(player.updatePlayer('Again'), (err) => {
      assert.equal(err.code, 'rate_limited');
      assert.ok(err.retryAfterS > 80_000, `retry_after_s: ${err.retryAfterS}`);
      assert.equal(err.retryDelayMs(), 1000 * err.retryAfterS);
      return true;
    });
    assert.ok(Date.now() - began < 10_000, `${Date.now() - began} ms`);
  });

test('429 on the socket: commands of a live game past the rate limit are waited out, once each',
  { skip: !process.env.SOLITAIRE_LIMITED_URL }, async () => {
    const url = serviceUrl('SOLITAIRE_LIMITED_URL'); // 1 write a second, bursts of 2
    const owner = await newPlayer(url, 'Steady', { retries: 10 });
    const { game_id: gameId } = await owner.createGame({ variant, seed });
    const game = owner.open(gameId);
    const refusals = [];
    const onMessage = game.onMessage.bind(game);
    game.onMessage = (msg) => {
      if (msg.type === 'error') refusals.push(msg.error.code);
      onMessage(msg);
    };
    try {
      await until(() => game.status === 'live', 'the socket live', 60000);
      for (const command of commands.slice(0, 4)) await game.play(command);
      assert.equal(game.state.seq, 4);
      assert.ok(refusals.includes('rate_limited'), `refusals: ${refusals}`);
    } finally {
      game.close();
    }
    const { events } = await owner.getEvents(gameId);
    assert.deepEqual(events.map((e) => e.seq), [1, 2, 3, 4]); // each applied once
  });

test('503: a command sent while the store is paused is sent again and applied once',
  { skip: !process.env.SOLITAIRE_STORE_PID }, async () => {
    const url = serviceUrl('SOLITAIRE_PAUSABLE_URL'); // on the store of that pid
    const pid = Number(process.env.SOLITAIRE_STORE_PID);
    const recorder = recordingFetch();
    const owner = await newPlayer(url, 'Patient', { fetch: recorder.fetch, retries: 10 });
    const { game_id: gameId } = await owner.createGame({ variant, seed });
    await owner.sendCommand(gameId, commands[0]);
    process.kill(pid, 'SIGSTOP');
    let resumed = false;
    const timer = setTimeout(() => {
      process.kill(pid, 'SIGCONT');
      resumed = true;
    }, 3000);
    try {
      const result = await owner.sendCommand(gameId, commands[1]);
      assert.ok(resumed);
      assert.equal(result.seq, 2);
    } finally {
      clearTimeout(timer);
      process.kill(pid, 'SIGCONT');
    }
    assert.ok(recorder.statuses.includes(503), `statuses: ${recorder.statuses}`);
    const { events } = await owner.getEvents(gameId);
    assert.deepEqual(events.map((e) => e.seq), [1, 2]); // applied once
  });

test('1013: a socket refused for the read limit connects again no sooner than it was told',
  { skip: !process.env.SOLITAIRE_LIMITED_URL }, async () => {
    const url = serviceUrl('SOLITAIRE_LIMITED_URL'); // 1 read a second, bursts of 2
    const owner = await newPlayer(url, 'Reader', { retries: 10 });
    const { game_id: gameId } = await owner.createGame({ variant, seed });
    const games = [];
    const refusals = [];
    try {
      for (let i = 0; i < 3; i += 1) {
        const game = owner.open(gameId);
        const opened = [];
        const connect = game.socket.connect.bind(game.socket);
        game.socket.connect = () => {
          opened.push(Date.now());
          connect();
        };
        game.on('error', (err) => refusals.push({ err, at: Date.now(), opened }));
        games.push(game);
      }
      await until(() => refusals.length > 0, 'a hello refused for the read limit');
      const { err, at, opened } = refusals[0];
      assert.equal(err.code, 'rate_limited');
      assert.ok(err.retryAfterS > 0, JSON.stringify(err.details));
      await until(() => games.every((g) => g.status === 'live'), 'every socket live', 60000);
      const again = opened.find((t) => t > at);
      assert.ok(again !== undefined);
      assert.ok(again - at >= 1000 * err.retryAfterS - 50, `${again - at} ms after ${err.retryAfterS} s`);
    } finally {
      for (const game of games) game.close();
    }
  });
