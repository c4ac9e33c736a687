// What a screen reader hears: each change of the game told in words (what moved where,
// what turned up, won or lost), from the diff alone, and the selection as it is made.

import { cardName } from './cards.js';

const STATUS_WORDS = {
  won: 'You won! Every card is on the foundations.',
  lost: 'No moves left: the game is lost. Undo to try another way, or resign.',
  resigned: 'Game resigned.',
};
// To someone watching another player's game: not theirs to win, undo or resign.
const STATUS_WORDS_WATCHING = {
  won: 'The game is won: every card is on the foundations.',
  lost: 'No moves left: the game is lost, unless its player undoes.',
  resigned: 'The game was resigned.',
};

/** The words for a game that is won, lost or resigned (else undefined), said to its
 *  player or to a watcher. */
export function statusWords(status, watching = false) {
  return (watching ? STATUS_WORDS_WATCHING : STATUS_WORDS)[status];
}

/** "tableau 3", "foundation 1", "the stock", "the waste". */
export function pileName(pileId) {
  if (pileId === 'stock' || pileId === 'waste') return `the ${pileId}`;
  if (pileId === 'foundation') return 'a foundation';
  return pileId.replace('/', ' ');
}

/** "Seven of hearts", "Seven of hearts and Six of spades", "A, B and C". */
export function cardList(cards) {
  const names = cards.map(cardName);
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/** A pile as a sentence: "tableau 3: 2 face-down cards, then Seven of hearts." */
export function describePile(pileId, pile) {
  const { down = 0, up = [] } = pile || {};
  const parts = [];
  if (down) parts.push(down === 1 ? '1 face-down card' : `${down} face-down cards`);
  if (up.length) parts.push(up.length > 3 ? `${up.length} cards up to ${cardName(up[up.length - 1])}`
    : cardList(up));
  return `${pileName(pileId)}: ${parts.length ? parts.join(', then ') : 'empty'}`;
}

/** The words for one diff (as the socket or REST sends it), from `before`'s status;
 *  `watching`: said to a watcher of someone else's game. */
export function describeDiff(diff, before, watching = false) {
  const command = diff.command || {};
  const pushes = diff.ops.filter((op) => op.op === 'push');
  const flips = diff.ops.filter((op) => op.op === 'flip');
  const sentences = [];
  if (command.type === 'move') {
    const landed = pushes.find((op) => op.pile === command.to) || pushes[0];
    const what = landed ? cardList(landed.cards) : `${command.count || 1} card(s)`;
    sentences.push(`${what} moved from ${pileName(command.from)} to ${pileName(landed ? landed.pile : command.to)}.`);
  } else if (command.type === 'draw') {
    if (pushes.length) {
      sentences.push(`Drew ${pushes.map((op) => `${cardList(op.cards)} to ${pileName(op.pile)}`).join('; ')}.`);
    } else {
      sentences.push('Turned the waste over into the stock.');
    }
  } else if (command.type === 'undo') {
    sentences.push('Undid the last move.');
  }
  for (const op of flips) sentences.push(`${cardName(op.card)} turned up on ${pileName(op.pile)}.`);
  if (diff.status !== (before && before.status) && statusWords(diff.status)) {
    sentences.push(statusWords(diff.status, watching));
  }
  return sentences.join(' ');
}

/** A polite live region: `say(text)` is read out once, even when the text repeats. */
export class Announcer {
  constructor(el) {
    this.el = el;
    this.toggle = false;
  }

  say(text) {
    if (!text) return;
    // The same words twice in a row are still news: vary them invisibly.
    this.toggle = !this.toggle;
    this.el.textContent = this.toggle ? text : `${text}\u00a0`;
  }
}
