/** The longest wait the client sits out by itself (REST calls and a live game's commands);
 *  a longer one asked for is the caller's: the error is thrown, `retryAfterS` saying it. */
export const WAIT_MAX_S: 60;
/** A client's own wait when a 429 or 503 does not say how long: per attempt, doubling. */
export const WAIT_DEFAULT_S: 0.2;
export class ApiError extends Error {
    /** The error of an `{"error": {...}}` object (a socket's `error` message).
     *  @param {Partial<ErrorInfo> | null | undefined} info
     *  @param {number} [status]
     *  @param {string | null} [commandId]
     *  @returns {ApiError} */
    static fromInfo(info: Partial<ErrorInfo> | null | undefined, status?: number, commandId?: string | null): ApiError;
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
    constructor(status: number, code: ErrorCode, message: string, details?: ErrorDetails, commandId?: string | null);
    /** @type {number} */
    status: number;
    /** @type {ErrorCode} */
    code: ErrorCode;
    /** @type {ErrorDetails} */
    details: ErrorDetails;
    /** @type {string | null} */
    commandId: string | null;
    /** The rule that refused a command (422), or null. @returns {string | null} */
    get rule(): string | null;
    /** The game's seq when a command was refused (409, 422), or null. @returns {number | null} */
    get seq(): number | null;
    /** How long the service asked to wait (429, 503), or null. @returns {number | null} */
    get retryAfterS(): number | null;
    /** A 409 because the game was not at the command's `expected_seq`: someone (another
     *  device) moved first; `seq` is where the game is. @returns {boolean} */
    get staleSeq(): boolean;
    /** A 503 after the write reached the store: it may have been applied. @returns {boolean} */
    get unknownOutcome(): boolean;
    /** The token was refused (missing, malformed, forged or expired). @returns {boolean} */
    get unauthorized(): boolean;
    /** Whether the same request may be sent again later: a 429, a 503 where nothing was
     *  written, a 503 of unknown outcome to a command (its `command_id` makes the service
     *  apply it once), or no answer at all to a read. @returns {boolean} */
    get retryable(): boolean;
    /** How long to wait before asking again, in ms, when that may work (`retryable`):
     *  what a 429 or a 503 says (`retry_after_s`, at least 1 s, however long; else 5 s), or
     *  a growing wait while the service cannot be reached (the `attempt`-th in a row, at most
     *  30 s); null when asking again would get the same answer.
     *  @param {number} [attempt] @returns {number | null} */
    retryDelayMs(attempt?: number): number | null;
}
export type ErrorInfo = import("../types/wire.js").ErrorInfo;
export type ErrorCode = ErrorInfo["code"] | "network" | "http_error";
export type ErrorDetails = ErrorInfo["details"];
