// Drag and drop with pointer events (mouse, pen and touch alike).
//
// A press on a face-up card that moves more than a few pixels becomes a drag of
// that card and every card above it; the drop goes to the pile the dragged top
// card overlaps most. A press that does not move is left to the click handler.

const THRESHOLD_PX = 6;

function overlap(a, b) {
  const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
  const hgt = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
  return w > 0 && hgt > 0 ? w * hgt : 0;
}

/**
 * @param {HTMLElement} root the board
 * @param {{start(pile, index): boolean, drop(pile, index, target): void, cancel(): void}} hooks
 *   start() says whether this card may be dragged (and may highlight targets).
 */
export function enableDrag(root, hooks) {
  let press = null; // {pointerId, x, y, pile, index, cardEl}
  let drag = null; // {ghost, dx, dy, originals}
  let swallowClick = false;

  root.addEventListener('pointerdown', (event) => {
    if (event.button !== 0 || press) return;
    const cardEl = event.target.closest('.card.face[data-index]');
    const pileEl = cardEl && cardEl.closest('[data-pile]');
    if (!cardEl || !pileEl) return;
    press = { pointerId: event.pointerId, x: event.clientX, y: event.clientY, pile: pileEl.dataset.pile,
      index: Number(cardEl.dataset.index), cardEl, pileEl };
  });

  root.addEventListener('pointermove', (event) => {
    if (!press || event.pointerId !== press.pointerId) return;
    if (!drag) {
      if (Math.hypot(event.clientX - press.x, event.clientY - press.y) < THRESHOLD_PX) return;
      if (!hooks.start(press.pile, press.index)) {
        press = null;
        return;
      }
      drag = begin(press);
      try {
        root.setPointerCapture(event.pointerId);
      } catch {
        // the pointer may already be gone
      }
    }
    event.preventDefault();
    drag.ghost.style.transform = `translate(${event.clientX - drag.dx}px, ${event.clientY - drag.dy}px)`;
    const target = dropTarget(root, drag.ghost, press.pile);
    root.querySelectorAll('.pile.hover').forEach((p) => p !== target && p.classList.remove('hover'));
    if (target) target.classList.add('hover');
  });

  const finish = (event, dropped) => {
    if (!press || event.pointerId !== press.pointerId) return;
    const current = press;
    press = null;
    if (!drag) return;
    const target = dropped ? dropTarget(root, drag.ghost, current.pile) : null;
    drag.ghost.remove();
    drag.originals.forEach((c) => c.classList.remove('lifted'));
    root.querySelectorAll('.pile.hover').forEach((p) => p.classList.remove('hover'));
    drag = null;
    swallowClick = true;
    setTimeout(() => { swallowClick = false; }, 0);
    if (target) hooks.drop(current.pile, current.index, target.dataset.pile);
    else hooks.cancel();
  };
  root.addEventListener('pointerup', (e) => finish(e, true));
  root.addEventListener('pointercancel', (e) => finish(e, false));
  // The click that follows a drop is not a click on the board.
  root.addEventListener('click', (event) => {
    if (swallowClick) {
      event.stopPropagation();
      event.preventDefault();
      swallowClick = false;
    }
  }, true);
}

function begin(press) {
  const originals = [...press.pileEl.querySelectorAll('.card.face[data-index]')]
    .filter((c) => Number(c.dataset.index) >= press.index);
  const base = press.cardEl.getBoundingClientRect();
  const ghost = document.createElement('div');
  ghost.className = 'drag-ghost';
  for (const card of originals) {
    const r = card.getBoundingClientRect();
    const copy = card.cloneNode(true);
    copy.style.left = `${r.left - base.left}px`;
    copy.style.top = `${r.top - base.top}px`;
    copy.style.width = `${r.width}px`;
    copy.style.height = `${r.height}px`;
    copy.style.setProperty('--cw', `${r.width}px`);
    ghost.append(copy);
    card.classList.add('lifted');
  }
  ghost.style.width = `${base.width}px`;
  ghost.style.height = `${base.height}px`;
  document.body.append(ghost);
  const dx = press.x - base.left;
  const dy = press.y - base.top;
  ghost.style.transform = `translate(${press.x - dx}px, ${press.y - dy}px)`;
  return { ghost, dx, dy, originals };
}

function dropTarget(root, ghost, from) {
  const first = ghost.firstElementChild;
  if (!first) return null;
  const rect = first.getBoundingClientRect();
  let best = null;
  let bestArea = 0;
  for (const pile of root.querySelectorAll('[data-pile]')) {
    if (pile.dataset.pile === from) continue;
    const area = overlap(rect, pile.getBoundingClientRect()) * (pile.classList.contains('target') ? 2 : 1);
    if (area > bestArea) {
      best = pile;
      bestArea = area;
    }
  }
  return best;
}
