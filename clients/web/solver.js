// The solver's controls in a game view (game.js): a hint on the board, a winning line
// opened as a new game of the same deal, and stepping through that line (the replay,
// kept in sessionStorage so a reload goes on where it was).

import { cardList, pileName } from './announce.js';
import { fill, h } from './dom.js';

const REPLAY_PREFIX = 'solitaire.replay.';

/** A solution being replayed in game `gameId`: {commands, index, of}. */
export function readReplay(gameId) {
  try {
    const replay = JSON.parse(sessionStorage.getItem(REPLAY_PREFIX + gameId) || 'null');
    return replay && Array.isArray(replay.commands) && Number.isInteger(replay.index) ? replay : null;
  } catch {
    return null;
  }
}

function writeReplay(gameId, replay) {
  try {
    sessionStorage.setItem(REPLAY_PREFIX + gameId, JSON.stringify(replay));
  } catch {
    // storage disabled: the replay ends with the page
  }
}

/** A command in the words the board's piles and cards are named by, on `piles`. */
function describe(command, piles) {
  if (command.type === 'draw') return 'draw from the stock';
  if (command.type !== 'move') return command.type;
  const count = command.count ?? 1;
  const up = piles?.[command.from]?.up ?? [];
  const what = command.from === 'stock' ? 'the stock\'s top card'
    : up.length >= count ? cardList(up.slice(up.length - count))
      : count > 1 ? `${count} cards` : 'the top card';
  return `move ${what} from ${pileName(command.from)} to ${pileName(command.to)}`;
}

/** Ask the server for a hint; highlight its card and target until the game moves on. */
export async function askHint(view) {
  if (!view.state || view.passive) return;
  const button = view.el.hint;
  button.disabled = true;
  view.say('Thinking…');
  try {
    const hint = await view.api.getHint(view.gameId);
    if (!view.state || hint.seq !== view.state.seq) {
      view.say('');
      return; // the game moved on meanwhile
    }
    view.hinted = { seq: hint.seq, command: hint.command };
    view.renderHighlights();
    if (!hint.command) view.say('No command to suggest here.', 'hint');
    else view.say(`Hint: ${describe(hint.command, view.state.piles)} (won ${hint.wins} of ${hint.samples} sampled deals of the face-down cards).`, 'hint');
  } catch (err) {
    view.sayError(err);
    // Refused as a ranked daily attempt, which the page did not know: no more asking.
    if (err.details?.daily) view.daily = err.details.daily;
  } finally {
    view.renderHint();
  }
}

/** Fetch the solution and open a new game of the same deal to step through it. */
export async function showSolution(view) {
  const s = view.state;
  try {
    const solution = await view.api.getSolution(view.gameId);
    if (solution.result !== 'won') {
      view.say(solution.result === 'lost' ? 'The solver proved this deal cannot be won.'
        : 'The solver found no winning line within its budget.', 'info', solution.result);
      return;
    }
    const seed = s.seed ?? (await view.api.getGame(view.gameId)).seed;
    const created = await view.api.createGame({ variant: s.variant, seed, options: s.options });
    writeReplay(created.game_id, { commands: solution.commands, index: 0, of: view.gameId });
    location.hash = `g=${encodeURIComponent(created.game_id)}`;
  } catch (err) {
    view.sayError(err);
  }
}

export function renderReplay(view) {
  const r = view.replay;
  const e = view.el.replay;
  e.hidden = !r;
  if (!r) return;
  const next = r.commands[r.index];
  fill(e,
    h('span', { id: 'replay-step', 'data-index': String(r.index), 'data-total': String(r.commands.length) },
      `Winning line: step ${r.index} of ${r.commands.length}`),
    h('button', { type: 'button', id: 'replay-back', disabled: r.index === 0 || view.replayBusy,
      onclick: () => stepReplay(view, -1) }, '◀ Back'),
    h('button', { type: 'button', id: 'replay-next', disabled: !next || view.replayBusy,
      onclick: () => stepReplay(view, 1) }, 'Next ▶'),
    h('span', { class: 'muted' }, next ? `next: ${describe(next, view.state?.piles)}` : 'won'));
}

/** One step forward (the line's next command) or back (undo) in the replay game. */
export async function stepReplay(view, direction) {
  const r = view.replay;
  if (!r || !view.state || view.replayBusy) return;
  const command = direction > 0 ? r.commands[r.index] : { type: 'undo' };
  if (!command || (direction < 0 && r.index === 0)) return;
  view.replayBusy = true;
  renderReplay(view);
  try {
    await view.session.play(command);
    r.index += direction;
    writeReplay(view.gameId, r);
  } catch (err) {
    view.sayError(err);
  } finally {
    view.replayBusy = false;
    renderReplay(view);
  }
}
