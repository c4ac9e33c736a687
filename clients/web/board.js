// Drawing a board from a variant's pile layout (row, col, spread) and a state's piles.
// The board knows piles and cards, never rules: what may move comes from the server.

import { describePile } from './announce.js';
import { backElement, cardElement, suitIcon } from './cards.js';
import { h } from './dom.js';

const FAN_STEP = 0.3; // a fanned (spread "right") card's offset, in card widths
const FAN_VISIBLE = 3; // cards shown fanned; older ones lie under the first
const DOWN_STEP = 0.09; // offset of a face-down card in a "down" pile, in card heights
const UP_STEP = 0.27; // offset of a face-up card in a "down" pile, in card heights
const UP_STEP_MIN = 0.17; // long piles squeeze down to this
const LONG_PILE = 11;

/** Grid geometry for a variant: columns, rows, how many columns each pile spans. */
export function layoutOf(variant) {
  const piles = variant.piles.map((p) => ({ ...p }));
  const cols = Math.max(...piles.map((p) => p.col)) + 1;
  const rows = Math.max(...piles.map((p) => p.row)) + 1;
  const taken = new Set(piles.map((p) => `${p.row}:${p.col}`));
  const fanWidth = 1 + FAN_STEP * (FAN_VISIBLE - 1); // in card widths
  let fan = 1; // how much narrower than a column a card must be so that every fan fits
  for (const p of piles) {
    p.span = 1;
    if (p.spread === 'right') {
      while (p.col + p.span < cols && !taken.has(`${p.row}:${p.col + p.span}`)) p.span += 1;
      fan = Math.max(fan, fanWidth / p.span);
    }
  }
  return { id: variant.id, name: variant.name, cols, rows, fan, piles };
}

function slotLabel(pile) {
  if (pile.kind === 'foundation') {
    const arrow = pile.direction === 'descending' ? '↓' : pile.direction === 'ascending' ? '↑' : '';
    return [pile.suit ? suitIcon(pile.suit, 'suit slot-suit') : null, h('span', { class: 'slot-dir' }, arrow)];
  }
  if (pile.kind === 'stock') return h('span', { class: 'slot-stock' }, '↻');
  return null;
}

/** Build the empty board; returns {el, pileEls, layout}. */
export function createBoard(layout) {
  const grid = h('div', {
    class: `grid variant-${layout.id}`,
    style: { '--cols': String(layout.cols), '--fan': String(layout.fan) },
  });
  const pileEls = new Map();
  for (const pile of layout.piles) {
    const el = h('div', {
      class: `pile kind-${pile.kind} spread-${pile.spread}`,
      dataset: { pile: pile.id, kind: pile.kind, down: '0', up: '', count: '0' },
      style: {
        'grid-row': String(pile.row + 1),
        'grid-column': `${pile.col + 1} / span ${pile.span}`,
      },
      // A button for the keyboard (keyboard.js) and screen readers; its label says what is on it.
      tabindex: '0',
      role: 'button',
      'aria-label': describePile(pile.id, null),
    }, h('div', { class: 'slot', 'aria-hidden': 'true' }, slotLabel(pile)));
    pileEls.set(pile.id, el);
    grid.append(el);
  }
  return { el: grid, pileEls, layout };
}

/** Draw each pile of `piles` (skipping piles that did not change). */
export function renderPiles(board, piles) {
  for (const pile of board.layout.piles) {
    const el = board.pileEls.get(pile.id);
    const { down = 0, up = [] } = piles[pile.id] || {};
    const upText = up.join(' ');
    if (el.dataset.drawn === '1' && el.dataset.down === String(down) && el.dataset.up === upText) continue;
    el.dataset.drawn = '1';
    el.dataset.down = String(down);
    el.dataset.up = upText;
    el.dataset.count = String(down + up.length);
    el.dataset.top = up.length ? up[up.length - 1] : '';
    el.dataset.label = describePile(pile.id, { down, up });
    drawPile(el, pile.spread, down, up);
    label(el);
  }
}

/** The pile's accessible name: what is on it, and whether it is selected or a target. */
function label(el) {
  const marks = [el.classList.contains('source') ? 'selected' : '',
    el.classList.contains('target') ? 'a legal target' : ''].filter(Boolean);
  el.setAttribute('aria-label', el.dataset.label + (marks.length ? ` (${marks.join(', ')})` : ''));
}

function place(card, x, y, z) {
  card.style.setProperty('--x', String(x));
  card.style.setProperty('--y', String(y));
  card.style.zIndex = String(z);
  return card;
}

function upCard(code, index) {
  const el = cardElement(code);
  el.dataset.index = String(index);
  return el;
}

function drawPile(el, spread, down, up) {
  el.querySelectorAll('.card, .badge').forEach((c) => c.remove());
  const cards = [];
  let width = 1;
  let height = 1;
  if (spread === 'down') {
    const step = up.length > LONG_PILE ? Math.max(UP_STEP_MIN, (UP_STEP * LONG_PILE) / up.length) : UP_STEP;
    let y = 0;
    for (let i = 0; i < down; i++, y += DOWN_STEP) cards.push(place(backElement(), 0, y, cards.length + 1));
    up.forEach((code, i) => {
      cards.push(place(upCard(code, i), 0, y, cards.length + 1));
      if (i < up.length - 1) y += step;
    });
    if (!up.length && down) y -= DOWN_STEP;
    height = 1 + Math.max(0, y);
  } else if (spread === 'right') {
    const first = Math.max(0, up.length - FAN_VISIBLE);
    if (first > 0) cards.push(place(upCard(up[first - 1], first - 1), 0, 0, 1));
    else if (down) cards.push(place(backElement(), 0, 0, 1));
    for (let i = first; i < up.length; i++) {
      cards.push(place(upCard(up[i], i), (i - first) * FAN_STEP, 0, cards.length + 1));
    }
    width = 1 + FAN_STEP * Math.max(0, up.length - first - 1);
  } else {
    if (down && !up.length) cards.push(place(backElement(), 0, 0, 1));
    if (up.length > 1) cards.push(place(upCard(up[up.length - 2], up.length - 2), 0, 0, 1));
    if (up.length) cards.push(place(upCard(up[up.length - 1], up.length - 1), 0, 0, 2));
  }
  if (down && (el.dataset.kind === 'stock' || spread === 'none')) {
    cards.push(h('span', { class: 'badge', title: `${down} face-down cards` }, String(down)));
  }
  el.style.setProperty('--w', String(width));
  el.style.setProperty('--h', String(height));
  el.append(...cards);
}

/**
 * Mark the selected cards and the piles a selection may go to.
 * @param selection {pile, count} or null; @param targets Set of pile ids
 */
export function setHighlights(board, selection, targets) {
  for (const [id, el] of board.pileEls) {
    el.classList.toggle('target', targets.has(id));
    el.classList.toggle('source', !!selection && selection.pile === id);
    const up = el.dataset.up ? el.dataset.up.split(' ') : [];
    const from = selection && selection.pile === id ? up.length - selection.count : Infinity;
    el.querySelectorAll('.card.face').forEach((card) => {
      card.classList.toggle('selected', Number(card.dataset.index) >= from);
    });
    if (selection && selection.pile === id && !up.length) el.classList.add('selected-empty');
    else el.classList.remove('selected-empty');
    if (el.dataset.label) label(el);
  }
}

/** Copies of the cards of `pileEl` from face-up index `index` up, for dragging. */
export function cloneRun(pileEl, index) {
  return [...pileEl.querySelectorAll('.card.face')]
    .filter((c) => Number(c.dataset.index) >= index)
    .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index));
}
