// The one error every call of the package rejects with: a refusal of the service
// ({"error": {"code", "message", "details"}}, docs/protocol.md "Errors"), or a request
// that never got an answer (code `network`, status 0).

/** @typedef {import('../types/wire.js').ErrorInfo} ErrorInfo */
/** @typedef {ErrorInfo['code'] | 'network' | 'http_error'} ErrorCode */
/** @typedef {ErrorInfo['details']} ErrorDetails */

const RETRY_DEFAULT_S = 5; // a 429 or 503 that does not say how long (retryDelayMs, for a screen)
/** The longest wait the client sits out by itself (REST calls and a live game's commands);
 *  a longer one asked for is the caller's: the error is thrown, `retryAfterS` saying it. */
export const WAIT_MAX_S = 60;
/** A client's own wait when a 429 or 503 does not say how long: per attempt, doubling. */
export const WAIT_DEFAULT_S = 0.2;
const RETRY_MAX_S = 30;

/** The HTTP status of each code, for an error that came over the socket. */
const STATUS_OF = /** @type {Record<string, number>} */ ({
  bad_request: 400, unauthorized: 401, forbidden: 403, not_found: 404,
  conflict: 409, illegal_move: 422, rate_limited: 429, unavailable: 503,
});

export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status (a socket's error: the status of its code;
   *   0 when the service could not be reached)
   * @param {ErrorCode} code one of the contract's codes, or `network`, or `http_error`
   *   (an answer that is not the contract's error body, a proxy's page)
   * @param {string} message for people
   * @param {ErrorDetails} [details] for programs: `rule` (422), `seq` (409, 422),
   *   `retry_after_s` (429, 503), `outcome` (503 after a write reached the store)...
   * @param {string | null} [commandId] the `command_id` of the command it answers
   */
  constructor(status, code, message, details = {}, commandId = null) {
    super(message);
    this.name = 'ApiError';
    /** @type {number} */
    this.status = status;
    /** @type {ErrorCode} */
    this.code = code;
    /** @type {ErrorDetails} */
    this.details = details;
    /** @type {string | null} */
    this.commandId = commandId;
  }

  /** The rule that refused a command (422), or null. @returns {string | null} */
  get rule() {
    return typeof this.details.rule === 'string' ? this.details.rule : null;
  }

  /** The game's seq when a command was refused (409, 422), or null. @returns {number | null} */
  get seq() {
    return typeof this.details.seq === 'number' ? this.details.seq : null;
  }

  /** How long the service asked to wait (429, 503), or null. @returns {number | null} */
  get retryAfterS() {
    return typeof this.details.retry_after_s === 'number' ? this.details.retry_after_s : null;
  }

  /** A 409 because the game was not at the command's `expected_seq`: someone (another
   *  device) moved first; `seq` is where the game is. @returns {boolean} */
  get staleSeq() {
    return this.code === 'conflict' && typeof this.details.expected_seq === 'number';
  }

  /** A 503 after the write reached the store: it may have been applied. @returns {boolean} */
  get unknownOutcome() {
    return this.details.outcome === 'unknown';
  }

  /** The token was refused (missing, malformed, forged or expired). @returns {boolean} */
  get unauthorized() {
    return this.code === 'unauthorized';
  }

  /** Whether the same request may be sent again later: a 429, a 503 where nothing was
   *  written, a 503 of unknown outcome to a command (its `command_id` makes the service
   *  apply it once), or no answer at all to a read. @returns {boolean} */
  get retryable() {
    if (this.code === 'network') return true;
    if (this.code !== 'rate_limited' && this.code !== 'unavailable') return false;
    return !this.unknownOutcome || this.commandId !== null;
  }

  /** How long to wait before asking again, in ms, when that may work (`retryable`):
   *  what a 429 or a 503 says (`retry_after_s`, at least 1 s, however long; else 5 s), or
   *  a growing wait while the service cannot be reached (the `attempt`-th in a row, at most
   *  30 s); null when asking again would get the same answer.
   *  @param {number} [attempt] @returns {number | null} */
  retryDelayMs(attempt = 0) {
    if (!this.retryable) return null;
    if (this.code === 'network') return 1000 * Math.min(RETRY_MAX_S, 2 ** attempt);
    return 1000 * Math.max(1, this.retryAfterS ?? RETRY_DEFAULT_S);
  }

  /** The error of an `{"error": {...}}` object (a socket's `error` message).
   *  @param {Partial<ErrorInfo> | null | undefined} info
   *  @param {number} [status]
   *  @param {string | null} [commandId]
   *  @returns {ApiError} */
  static fromInfo(info, status, commandId = null) {
    const code = /** @type {ErrorCode} */ (info?.code ?? 'http_error');
    return new ApiError(status ?? STATUS_OF[code] ?? 400, code, info?.message ?? 'unknown error',
      info?.details ?? {}, commandId);
  }
}
