// The peer's game: the shape of the service's (benchmarks/README.md, "The peer"):
// a deal of 52 cards in 13 piles of 4 with 4 foundations, the state about the size
// of a snapshot of ours; a move takes a pile's top card to another pile (or a
// foundation) and turns the card under it face up, so it changes two cards.
// Its rules are simpler than any of ours (see the README: that favours the peer).
'use strict';

const { INVALID_MOVE } = require('boardgame.io/core');

const PILES = 13;
const MAX_PILE = 8; // a tableau pile takes a card while it has fewer

function deal(random) {
  const cards = [];
  for (const suit of ['clubs', 'diamonds', 'hearts', 'spades']) {
    for (let rank = 1; rank <= 13; rank++) cards.push({ rank, suit, face_up: false });
  }
  const shuffled = random.Shuffle(cards);
  const tableau = [];
  for (let i = 0; i < PILES; i++) {
    const pile = shuffled.slice(i * 4, i * 4 + 4);
    pile[3].face_up = true;
    tableau.push(pile);
  }
  return tableau;
}

function legal(G, from, to) {
  if (!Number.isInteger(from) || from < 0 || from >= PILES) return false;
  const pile = G.tableau[from];
  if (pile.length === 0) return false;
  if (typeof to === 'string' && to.startsWith('f')) {
    const foundation = G.foundations[Number(to.slice(1))];
    if (!foundation) return false;
    const card = pile[pile.length - 1];
    const top = foundation[foundation.length - 1];
    return top ? top.suit === card.suit && top.rank + 1 === card.rank : card.rank === 1;
  }
  return Number.isInteger(to) && to >= 0 && to < PILES && to !== from
    && G.tableau[to].length < MAX_PILE;
}

const Solitaire = {
  name: 'solitaire',
  disableUndo: true, // or every state would carry the turn's past states
  setup: ({ random }) => ({
    tableau: deal(random),
    foundations: [[], [], [], []],
    moves: 0,
  }),
  moves: {
    move: ({ G }, from, to) => {
      if (!legal(G, from, to)) return INVALID_MOVE;
      const pile = G.tableau[from];
      const card = pile.pop();
      if (pile.length) pile[pile.length - 1].face_up = true;
      if (typeof to === 'string') G.foundations[Number(to.slice(1))].push(card);
      else G.tableau[to].push(card);
      G.moves += 1;
    },
  },
};

module.exports = { Solitaire, legal, PILES };
