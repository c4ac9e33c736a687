// The web client's entry point: the player, the route (#g=<game>, #lb=<date>/<variant>,
// else the lobby) and the view on screen.

import { installSuitSprite } from './cards.js';
import { Client, PLAYER_NAME_MAX } from '../js/src/index.js';
import { fill, h } from './dom.js';
import { GameView } from './game.js';
import { renderLeaderboard, renderLobby } from './lobby.js';

const IDENTITY = 'solitaire.player';
const RECENT = 'solitaire.recent.';
const RECENT_KEEP = 50; // labels of games opened here (the list shown is the service's)

// No waiting inside a call: the page says why it waits (the day's deals being chosen, a
// limit) and asks again itself when the service says (lobby.js).
const api = new Client({ retries: 0 });
const app = {
  api,
  identity: null,
  variants: [],
  variantById: {},
  game: null,
  view: null,
  listed: {}, // game id -> its summary, as the lobby's latest list of the player's games had it
};
window.solitaire = app; // for debugging and the browser tests

function loadIdentity() {
  try {
    const id = JSON.parse(localStorage.getItem(IDENTITY) || 'null');
    return id && id.token && id.player_id ? id : null;
  } catch {
    return null;
  }
}

function setIdentity(identity) {
  app.identity = identity;
  api.setToken(identity ? identity.token : null);
  if (identity) localStorage.setItem(IDENTITY, JSON.stringify(identity));
  else localStorage.removeItem(IDENTITY);
  fill(document.getElementById('who'), identity ? identity.name : '');
}

/** The token is refused: forget the player, and the game on the route, which was the
 *  player's (a new player may not open a private game of another): start in the lobby. */
function forgetPlayer() {
  setIdentity(null);
  if (route().game) history.replaceState(null, '', location.pathname + location.search);
}

/** The games opened in this browser, with the labels they were opened with (a deal
 *  number) and their daily challenge; the list the lobby shows is the service's. */
function recentGames() {
  if (!app.identity) return [];
  try {
    return JSON.parse(localStorage.getItem(RECENT + app.identity.player_id) || '[]');
  } catch {
    return [];
  }
}

/** Keep game `id` among the recent ones; `daily` ("date/variant") when it is a ranked
 *  daily attempt, which the game's state does not say (the game view offers no hint there). */
function remember(id, variant, label, daily = null) {
  const list = [{ id, variant, label, daily, at: Date.now() }, ...recentGames().filter((g) => g.id !== id)];
  localStorage.setItem(RECENT + app.identity.player_id, JSON.stringify(list.slice(0, RECENT_KEEP)));
}

/** "date/variant" when the service listed game `id` as a daily attempt, else null. */
function listedDaily(id) {
  const g = app.listed[id];
  return g && g.daily ? `${g.daily}/${g.variant}` : null;
}

function route() {
  const params = new URLSearchParams(location.hash.slice(1));
  return { game: params.get('g'), leaderboard: params.get('lb') };
}

function leaveGame() {
  if (app.game) {
    app.game.destroy();
    app.game = null;
  }
}

function showWelcome(note) {
  leaveGame();
  const name = h('input', { id: 'player-name', name: 'name', maxlength: String(PLAYER_NAME_MAX), required: true,
    autocomplete: 'nickname', value: 'Player' });
  const error = h('p', { id: 'welcome-message', class: 'message', role: 'status' }, note || '');
  const button = h('button', { id: 'player-create', type: 'submit', class: 'primary' }, 'Play');
  fill(app.view, h('form', { id: 'welcome', class: 'panel narrow', onsubmit: async (event) => {
    event.preventDefault();
    button.disabled = true;
    error.textContent = '';
    try {
      const player = await api.createPlayer(name.value.trim());
      setIdentity(player);
      show();
    } catch (err) {
      error.textContent = err.message;
    } finally {
      button.disabled = false;
    }
  } },
  h('h2', {}, 'Welcome'),
  h('label', { for: 'player-name' }, 'Your name, as the leaderboards will show it'),
  name, button, error));
  name.select();
}

/** `YYYY-MM-DD`, a day of the calendar. */
function isDate(text) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text || '')) return false;
  const day = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().startsWith(text);
}

function showNoLeaderboard(onBack) {
  document.title = 'Solitaire';
  fill(app.view, h('section', { class: 'panel wide' },
    h('button', { type: 'button', class: 'link', id: 'back', onclick: onBack }, '← Lobby'),
    h('h2', {}, 'No such leaderboard'),
    h('p', { class: 'muted' }, 'The address names no daily challenge: a leaderboard\'s address is '
      + '#lb=date/game, as the lobby links to it.')));
}

function show() {
  const where = route();
  if (!app.identity) {
    showWelcome();
    return;
  }
  if (where.game) {
    if (app.game && app.game.gameId === where.game) return;
    leaveGame();
    app.game = new GameView({
      api, gameId: where.game, identity: app.identity, variants: app.variantById,
      daily: recentGames().find((g) => g.id === where.game)?.daily ?? listedDaily(where.game),
      onLeave: () => { location.hash = ''; },
    });
    app.game.mount(app.view);
    return;
  }
  leaveGame();
  document.title = 'Solitaire';
  if (where.leaderboard) {
    const [date, variant, ...rest] = where.leaderboard.split('/');
    const onBack = () => { location.hash = ''; };
    if (rest.length || !isDate(date) || !app.variantById[variant]) {
      showNoLeaderboard(onBack); // a mistyped or cut address
      return;
    }
    renderLeaderboard(app.view, { api, date, variant, variants: app.variants, identity: app.identity, onBack });
    return;
  }
  renderLobby(app.view, {
    api, identity: app.identity, variants: app.variants, recent: recentGames(),
    onListed: (games) => { app.listed = Object.fromEntries(games.map((g) => [g.game_id, g])); },
    openGame: (id, variant, label, daily) => {
      remember(id, variant, label, daily);
      location.hash = `g=${encodeURIComponent(id)}`;
    },
  });
}

async function main() {
  installSuitSprite();
  app.view = document.getElementById('view');
  setIdentity(loadIdentity());
  try {
    const { variants } = await api.listVariants().catch((err) => {
      // The server checks every token it is sent: one it refuses (expired, or another
      // server's) is forgotten here, before the lobby, and the list asked for again.
      if (err.status !== 401 || !app.identity) throw err;
      forgetPlayer();
      return api.listVariants();
    });
    app.variants = variants;
    app.variantById = Object.fromEntries(variants.map((v) => [v.id, v]));
  } catch (err) {
    fill(app.view, h('p', { class: 'message', 'data-kind': 'error' }, `The game server cannot be reached: ${err.message}`),
      h('button', { type: 'button', onclick: () => location.reload() }, 'Try again'));
    return;
  }
  window.addEventListener('hashchange', show);
  // A token the server no longer accepts (expired, or signed by another server): start again.
  api.onUnauthorized = () => {
    forgetPlayer();
    showWelcome('Your player session has expired or is unknown to this server: choose a name to go on.');
  };
  show();
}

main();
