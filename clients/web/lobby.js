// The lobby (new game, daily challenge, recent games) and a daily leaderboard.

import { MAX_SEED } from '../js/src/index.js';
import { clock, fill, h } from './dom.js';

const PREFERRED_VARIANT = 'solitaire.variant';

function optionInputs(variant) {
  // Options are described by the server; this client offers the boolean ones.
  return Object.entries(variant.options || {})
    .filter(([, spec]) => spec && spec.type === 'boolean')
    .map(([key, spec]) => h('label', { class: 'check' },
      h('input', { type: 'checkbox', name: `option-${key}`, 'data-option': key, checked: !!spec.default }),
      ` ${spec.description || key}`));
}

/**
 * @param ctx {api, identity, variants: [variant], recent: [{id, variant, label, daily, at}]
 *             (the games opened in this browser: their labels), onListed([GameSummary]),
 *             openGame(id, variant, label, daily: "date/variant" for a daily attempt),
 *             showLeaderboard(date, variant)}
 */
export function renderLobby(root, ctx) {
  const variants = ctx.variants;
  let chosen = localStorage.getItem(PREFERRED_VARIANT);
  if (!variants.some((v) => v.id === chosen)) chosen = variants[0]?.id;

  const rules = h('p', { id: 'rules', class: 'rules' });
  const options = h('div', { id: 'options', class: 'options' });
  const seed = h('input', { id: 'seed', type: 'number', min: '0', max: String(MAX_SEED - 1), step: '1',
    inputmode: 'numeric', placeholder: 'random', 'aria-label': 'Deal number' });
  const isPublic = h('input', { id: 'public', type: 'checkbox' });
  const start = h('button', { id: 'start', type: 'submit', class: 'primary' }, 'Start game');
  const error = h('p', { id: 'lobby-message', class: 'message', role: 'status' });

  const showVariant = (id) => {
    chosen = id;
    const variant = variants.find((v) => v.id === id);
    rules.textContent = variant?.rules || '';
    fill(options, variant ? optionInputs(variant) : []);
  };

  const picker = h('div', { class: 'variants', role: 'radiogroup', 'aria-label': 'Game' },
    // Each radio is named by its game's name alone, and described by its decks.
    variants.map((v) => h('label', { class: 'variant' },
      h('input', { type: 'radio', name: 'variant', value: v.id, id: `variant-${v.id}`, checked: v.id === chosen,
        'aria-labelledby': `variant-${v.id}-name`, 'aria-describedby': `variant-${v.id}-decks`,
        onchange: () => showVariant(v.id) }),
      h('span', { class: 'variant-name', id: `variant-${v.id}-name` }, v.name),
      h('span', { class: 'variant-decks', id: `variant-${v.id}-decks` },
        v.decks === 1 ? '1 deck' : `${v.decks} decks`))));

  const form = h('form', { id: 'new-game', class: 'panel', novalidate: true, onsubmit: (event) => {
    event.preventDefault();
    startGame();
  } },
  h('h2', {}, 'New game'), picker, rules, options,
  h('div', { class: 'row' },
    h('label', { for: 'seed' }, 'Deal number '), seed,
    h('label', { class: 'check' }, isPublic, ' others may watch')),
  start, error);

  async function startGame() {
    error.textContent = '';
    const text = seed.value.trim();
    let seedValue = null;
    if (text) {
      seedValue = Number(text);
      // (a safe integer too: a longer number would not be the one typed)
      if (!Number.isSafeInteger(seedValue) || seedValue < 0 || seedValue >= MAX_SEED) {
        error.textContent = `A deal number is a whole number from 0 to ${MAX_SEED - 1}.`;
        return;
      }
    }
    const opts = {};
    options.querySelectorAll('input[data-option]').forEach((input) => {
      opts[input.dataset.option] = input.checked;
    });
    start.disabled = true;
    try {
      localStorage.setItem(PREFERRED_VARIANT, chosen);
      const created = await ctx.api.createGame({ variant: chosen, seed: seedValue ?? undefined,
        options: Object.keys(opts).length ? opts : undefined, public: isPublic.checked || undefined });
      const name = variants.find((v) => v.id === chosen)?.name ?? chosen;
      ctx.openGame(created.game_id, chosen, seedValue == null ? name : `${name} #${seedValue}`);
    } catch (err) {
      error.textContent = err.message;
      error.dataset.code = err.code || '';
    } finally {
      start.disabled = false;
    }
  }

  const daily = h('section', { id: 'daily', class: 'panel' }, h('h2', {}, 'Daily challenge'),
    h('p', { class: 'muted' }, 'Loading…'));
  const recent = h('section', { id: 'recent', class: 'panel' }, h('h2', {}, 'Your recent games'),
    h('p', { class: 'muted' }, 'Loading…'));

  fill(root, h('div', { class: 'lobby' }, form, daily, recent));
  showVariant(chosen);
  loadDaily(daily, ctx);
  loadRecent(recent, ctx);
}

/** After a refusal the service says to retry (the day's deals still being chosen: 503, a
 *  limit: 429, the server restarting), ask again when it says, for as long as `shown` is
 *  on screen; `again` gets the next attempt's number. Other errors stay on screen. */
function askAgainWhenSaid(err, attempt, shown, again) {
  const wait = err.retryDelayMs ? err.retryDelayMs(attempt) : null;
  if (wait == null) return;
  setTimeout(() => {
    if (shown.isConnected) again(attempt + 1);
  }, wait);
}

const RECENT_SHOWN = 8;
const STATUS_WORDS = { playing: '', won: 'won', lost: 'lost', resigned: 'resigned' };

/** The player's latest games as the service lists them (GET /v1/players/me/games): the
 *  same on every device the player uses. A game opened here keeps the label it was
 *  opened with (its deal number); another is named by its game (and its daily date). */
async function loadRecent(section, ctx, attempt = 0) {
  const heading = section.querySelector('h2');
  let page;
  try {
    page = await ctx.api.listMyGames({ limit: RECENT_SHOWN });
  } catch (err) {
    fill(section, heading, h('p', { id: 'no-recent', class: 'muted', 'data-code': err.code || '' },
      `Your games cannot be listed now: ${err.message}`));
    askAgainWhenSaid(err, attempt, section, (next) => loadRecent(section, ctx, next));
    return;
  }
  ctx.onListed?.(page.games);
  const known = Object.fromEntries(ctx.recent.map((g) => [g.id, g]));
  const names = Object.fromEntries(ctx.variants.map((v) => [v.id, v.name]));
  const label = (g) => known[g.game_id]?.label
    ?? `${names[g.variant] ?? g.variant}${g.daily ? `, daily ${g.daily}` : ''}`;
  fill(section, heading, page.games.length
    ? h('ul', { class: 'recent' }, page.games.map((g) => h('li', { 'data-status': g.status },
      h('a', { href: `#g=${encodeURIComponent(g.game_id)}`, 'data-game': g.game_id }, label(g)),
      h('span', { class: 'muted' },
        ` ${[STATUS_WORDS[g.status], new Date(g.updated_at).toLocaleString()].filter(Boolean).join(', ')}`))))
    : h('p', { class: 'muted' }, 'None yet.'));
}

async function loadDaily(section, ctx, attempt = 0) {
  const heading = section.querySelector('h2');
  let day;
  try {
    day = await ctx.api.getDaily();
  } catch (err) {
    const text = err.status === 404 ? 'No daily challenge today.' : `No daily challenge: ${err.message}`;
    fill(section, heading, h('p', { id: 'no-daily', class: 'muted', 'data-code': err.code || '' }, text));
    askAgainWhenSaid(err, attempt, section, (next) => loadDaily(section, ctx, next));
    return;
  }
  if (!day || !day.challenges || !day.challenges.length) {
    fill(section, heading, h('p', { id: 'no-daily', class: 'muted' }, 'No daily challenge today.'));
    return;
  }
  const names = Object.fromEntries(ctx.variants.map((v) => [v.id, v.name]));
  const message = h('p', { id: 'daily-message', class: 'message', role: 'status' });
  const play = async (challenge, button) => {
    message.textContent = '';
    button.disabled = true;
    try {
      const created = await ctx.api.startDailyAttempt(challenge.date, challenge.variant);
      ctx.openGame(created.game_id, challenge.variant,
        `${names[challenge.variant] ?? challenge.variant}, daily ${challenge.date}`,
        `${challenge.date}/${challenge.variant}`);
    } catch (err) {
      message.textContent = err.message;
      message.dataset.code = err.code || '';
    } finally {
      button.disabled = false;
    }
  };
  fill(section, heading, h('p', { class: 'muted' }, `${day.date} (UTC): one ranked attempt per game.`),
    h('ul', { class: 'daily' }, day.challenges.map((c) => {
      const button = h('button', { type: 'button', 'data-daily-play': c.variant }, 'Play');
      button.addEventListener('click', () => play(c, button));
      return h('li', { 'data-daily': c.variant },
        h('span', { class: 'variant-name' }, names[c.variant] ?? c.variant),
        c.winnable ? h('span', { class: 'par muted', 'data-par': String(c.par),
          title: 'The solver won this deal; par is its winning line\'s length (not proved the shortest).' },
        `winnable · par ${c.par}`) : null,
        button,
        h('a', { href: `#lb=${encodeURIComponent(c.date)}/${encodeURIComponent(c.variant)}`,
          'data-daily-leaderboard': c.variant }, 'Leaderboard'));
    })), message);
}

/** The leaderboard's marks (docs/protocol.md): an entry after the unmarked ones, and why. */
const MARKS = [
  ['new_player', 'new', 'signed up after the day began'],
  ['machine_paced', 'machine-paced', 'played faster than a person plays'],
];

function marksOf(entry) {
  return MARKS.filter(([field]) => entry[field])
    .map(([field, label, why]) => h('span', { class: 'mark', 'data-mark': field, title: why }, label));
}

function entryRow(entry, me) {
  return h('tr', { class: me && entry.player_id === me ? 'me' : '', 'data-rank': String(entry.rank) },
    h('td', {}, String(entry.rank)),
    h('td', {}, entry.name, marksOf(entry)),
    h('td', {}, entry.won ? 'won' : entry.status),
    h('td', {}, String(entry.foundation_cards)),
    h('td', {}, String(entry.moves)),
    h('td', {}, clock(entry.duration_ms)));
}

function table(entries, me) {
  return h('table', { class: 'leaderboard' },
    h('thead', {}, h('tr', {}, ['#', 'Player', 'Result', 'Home', 'Moves', 'Time'].map((t) => h('th', {}, t)))),
    h('tbody', {}, entries.map((e) => entryRow(e, me))));
}

/** The caller's entry among its neighbours, by rank (`around` may or may not hold it). */
function neighbourhood(mine) {
  const rows = (mine.around || []).filter((e) => e.player_id !== mine.player_id);
  rows.push(mine);
  return rows.sort((a, b) => a.rank - b.rank);
}

/** A daily challenge's leaderboard, page by page. */
export async function renderLeaderboard(root, { api, date, variant, variants, identity, onBack }) {
  const name = variants.find((v) => v.id === variant)?.name ?? variant;
  const body = h('div', { id: 'leaderboard' }, h('p', { class: 'muted' }, 'Loading…'));
  fill(root, h('section', { class: 'panel wide' },
    h('button', { type: 'button', class: 'link', id: 'back', onclick: onBack }, '← Lobby'),
    h('h2', {}, `${name}: daily challenge of ${date}`), body));
  const me = identity?.player_id;
  let entries = [];
  const load = async (cursor, attempt = 0) => {
    let page;
    try {
      page = await api.getLeaderboard(date, variant, { limit: 20, cursor });
    } catch (err) {
      fill(body, h('p', { class: 'message', 'data-kind': 'error', 'data-code': err.code || '' },
        err.status === 404 ? 'No leaderboard for this challenge.' : err.message));
      askAgainWhenSaid(err, attempt, body, (next) => load(cursor, next));
      return;
    }
    entries = entries.concat(page.entries || []);
    const more = page.next_cursor
      ? h('button', { type: 'button', id: 'more', onclick: () => load(page.next_cursor) }, 'More')
      : null;
    const mine = page.me
      ? h('div', { id: 'my-rank' }, h('h3', {}, `Your rank: ${page.me.rank}`),
        table(neighbourhood(page.me), me))
      : null;
    fill(body, entries.length ? table(entries, me) : h('p', { class: 'muted' }, 'No finished attempts yet.'),
      more, mine);
  };
  await load(null);
}
