// 429 and 503 waited out: the client waits as long as the service says (Retry-After)
// and sends the same request again, a command with the same command_id.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { newPlayer, recordingFetch, serviceUrl } from './helpers.js';

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
