// Command ids: unique within a game (docs/protocol.md "Idempotency").

/** A random command id, `c_` and 24 hex digits (96 bits; crypto.getRandomValues, which
 *  unlike crypto.randomUUID needs no secure context, where there is one).
 *  @returns {string} */
export function randomId() {
  const bytes = new Uint8Array(12);
  const c = /** @type {any} */ (globalThis).crypto;
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i += 1) bytes[i] = Math.floor(Math.random() * 256);
  return 'c_' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
