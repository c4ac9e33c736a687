// Cards drawn with CSS and inline SVG: no images, no fonts beyond the system's.

const SVG_NS = 'http://www.w3.org/2000/svg';
const SUIT_SHAPES = {
  C: '<circle cx="50" cy="28" r="20"/><circle cx="27" cy="58" r="20"/><circle cx="73" cy="58" r="20"/>'
    + '<rect x="40" y="34" width="20" height="26"/><path d="M46 56 Q46 84 32 96 H68 Q54 84 54 56Z"/>',
  D: '<path d="M50 3 L88 50 L50 97 L12 50Z"/>',
  H: '<path d="M50 92 C20 68 4 50 4 30 C4 14 16 5 29 5 C39 5 46 11 50 20 C54 11 61 5 71 5 C84 5 96 14 96 30 C96 50 80 68 50 92Z"/>',
  S: '<path d="M50 3 C40 22 5 40 5 62 C5 77 17 85 29 85 C38 85 44 81 47 75 C46 85 41 92 32 97 H68 C59 92 54 85 53 75 C56 81 62 85 71 85 C83 85 95 77 95 62 C95 40 60 22 50 3Z"/>',
};
export const SUIT_NAMES = { C: 'clubs', D: 'diamonds', H: 'hearts', S: 'spades' };
const RANK_LABELS = { A: 'A', T: '10', J: 'J', Q: 'Q', K: 'K' };
const RANK_NAMES = { A: 'Ace', T: 'Ten', J: 'Jack', Q: 'Queen', K: 'King' };
const CARD_RE = /^[A2-9TJQK][CDHS]$/;

/** Put the suit symbols into the page once (cards refer to them with <use>). */
export function installSuitSprite(doc = document) {
  if (doc.getElementById('suit-sprite')) return;
  const sprite = doc.createElementNS(SVG_NS, 'svg');
  sprite.id = 'suit-sprite';
  sprite.setAttribute('aria-hidden', 'true');
  sprite.style.display = 'none';
  sprite.innerHTML = Object.entries(SUIT_SHAPES)
    .map(([suit, shape]) => `<symbol id="suit-${suit}" viewBox="0 0 100 100">${shape}</symbol>`)
    .join('');
  doc.body.prepend(sprite);
}

export function suitIcon(suit, cls = 'suit') {
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('class', cls);
  svg.setAttribute('viewBox', '0 0 100 100');
  svg.setAttribute('aria-hidden', 'true');
  const use = document.createElementNS(SVG_NS, 'use');
  use.setAttribute('href', `#suit-${suit}`);
  svg.append(use);
  return svg;
}

export function isRed(card) {
  return card[1] === 'D' || card[1] === 'H';
}

/** "Seven of hearts" for "7H". */
export function cardName(card) {
  const rank = RANK_NAMES[card[0]] ?? card[0];
  return `${rank} of ${SUIT_NAMES[card[1]] ?? card[1]}`;
}

/** A face-up card element with data-card="7H". */
export function cardElement(card) {
  const el = document.createElement('div');
  if (!CARD_RE.test(card)) {
    el.className = 'card face unknown';
    el.dataset.card = String(card);
    el.textContent = String(card);
    return el;
  }
  const [rank, suit] = card;
  el.className = `card face ${isRed(card) ? 'red' : 'black'}${'JQK'.includes(rank) ? ' court' : ''}${rank === 'T' ? ' ten' : ''}`;
  el.dataset.card = card;
  el.setAttribute('aria-label', cardName(card));
  el.setAttribute('role', 'img');
  const label = RANK_LABELS[rank] ?? rank;

  const index = document.createElement('span');
  index.className = 'idx';
  const r = document.createElement('b');
  r.textContent = label;
  index.append(r, suitIcon(suit));

  const corner = index.cloneNode(true);
  corner.className = 'idx far';

  const middle = document.createElement('span');
  middle.className = 'mid';
  if ('JQK'.includes(rank)) {
    const letter = document.createElement('b');
    letter.textContent = rank;
    middle.append(letter, suitIcon(suit));
  } else {
    middle.append(suitIcon(suit));
  }
  el.append(index, middle, corner);
  return el;
}

/** A face-down card (nothing about it is known). */
export function backElement() {
  const el = document.createElement('div');
  el.className = 'card back';
  el.setAttribute('aria-label', 'face-down card');
  return el;
}
