// Playing with the keyboard alone. Every pile is a focusable button (Tab, or the
// arrow keys between neighbouring piles of the layout); Enter or Space chooses the
// focused pile, as a click would; F sends its top card to a foundation; Escape
// cancels a selection (game.js). What a choice means is the view's business.

const ARROWS = {
  ArrowLeft: { dr: 0, dc: -1 },
  ArrowRight: { dr: 0, dc: 1 },
  ArrowUp: { dr: -1, dc: 0 },
  ArrowDown: { dr: 1, dc: 0 },
};

/** The pile of the layout nearest to `from` in direction `dir` (null: none that way). */
export function neighbour(layout, fromId, dir) {
  const from = layout.piles.find((p) => p.id === fromId);
  if (!from) return null;
  let best = null;
  let bestScore = Infinity;
  for (const p of layout.piles) {
    if (p.id === fromId) continue;
    const dr = p.row - from.row;
    const dc = p.col - from.col;
    // Ahead in the arrow's direction, then as straight as possible.
    const ahead = dir.dr ? dr * dir.dr : dc * dir.dc;
    if (ahead <= 0) continue;
    const aside = dir.dr ? Math.abs(dc) : Math.abs(dr);
    const score = ahead * 100 + aside;
    if (score < bestScore) {
      best = p;
      bestScore = score;
    }
  }
  return best ? best.id : null;
}

/**
 * @param boardEl the element holding the piles ([data-pile])
 * @param {{layout: () => ?object, choose: (pileId) => void, toFoundation: (pileId) => void}} actions
 */
export function enableKeyboard(boardEl, { layout, choose, toFoundation }) {
  boardEl.addEventListener('keydown', (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const pileEl = event.target.closest && event.target.closest('[data-pile]');
    if (!pileEl) return;
    const pileId = pileEl.dataset.pile;
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault(); // Space would scroll the page
      if (!event.repeat) choose(pileId);
    } else if (event.key === 'f' || event.key === 'F') {
      event.preventDefault();
      toFoundation(pileId);
    } else if (ARROWS[event.key]) {
      const current = layout();
      const next = current && neighbour(current, pileId, ARROWS[event.key]);
      if (!next) return;
      event.preventDefault();
      boardEl.querySelector(`[data-pile="${CSS.escape(next)}"]`)?.focus();
    }
  });
}
