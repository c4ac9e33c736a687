/** A random command id, `c_` and 24 hex digits (96 bits; crypto.getRandomValues, which
 *  unlike crypto.randomUUID needs no secure context, where there is one).
 *  @returns {string} */
export function randomId(): string;
