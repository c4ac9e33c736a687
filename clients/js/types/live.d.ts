/**
 * @typedef {object} Pending
 * @property {CommandMessage} message
 * @property {(ack: Ack) => void} resolve
 * @property {(err: ApiError) => void} reject
 * @property {any} timer
 * @property {number} [waits] how many refusals (429, 503) it has waited out
 * @property {any} [waitTimer] set while it waits out a refusal, before it is sent again
 */
export class LiveGame {
    /** @param {Client} client @param {string} gameId @param {LiveOptions} [options] */
    constructor(client: Client, gameId: string, options?: LiveOptions);
    client: import("./rest.js").Client;
    gameId: string;
    /** @type {string | null} */
    token: string | null;
    wantMoves: boolean;
    cache: {
        read: (gameId: string) => GameState | null;
        write: (state: GameState) => void;
    } | null;
    commandTimeoutMs: number;
    /** @type {GameState | null} the state held, as the server's at `state.seq` */
    state: GameState | null;
    /** @type {LegalMoves | null} */
    legal: LegalMoves | null;
    forceSnapshot: boolean;
    resyncs: number;
    /** @type {Map<number, string>} seq -> hash of the latest diffs applied */
    hashes: Map<number, string>;
    restMoves: {
        busy: boolean;
        again: boolean;
    };
    /** @type {Map<string, Pending>} command_id -> a command sent and not answered */
    pending: Map<string, Pending>;
    /** @type {Map<string, Set<(...args: any[]) => void>>} */
    listeners: Map<string, Set<(...args: any[]) => void>>;
    socket: GameSocket;
    /** The connection's status. @returns {Status} */
    get status(): Status;
    /** The legal moves of the state held ([] until known; needs `moves: true`).
     *  @returns {LegalMoves['moves']} */
    get moves(): LegalMoves["moves"];
    /** @returns {boolean} */
    get canUndo(): boolean;
    /** Listen; returns the function that stops listening.
     *  @template {keyof LiveEvents} K
     *  @param {K} event @param {(...args: LiveEvents[K]) => void} listener
     *  @returns {() => void} */
    on<K extends keyof LiveEvents>(event: K, listener: (...args: LiveEvents[K]) => void): () => void;
    /** @template {keyof LiveEvents} K @param {K} event @param {LiveEvents[K]} args */
    emit<K extends keyof LiveEvents>(event: K, ...args: LiveEvents[K]): void;
    /** Connect (a kept state from the cache resumes with `since`). */
    start(): this;
    /** Disconnect for good; commands still unanswered are rejected (code `closed`). */
    close(): void;
    /** The next state whose seq is at least `seq` (the state held, if it is already there).
     *  @param {number} seq @returns {Promise<GameState>} */
    waitForSeq(seq: number): Promise<GameState>;
    /**
     * Send a command at the state's seq (or at `expectedSeq`; null: at whatever seq the
     * game is). Resolves with its ack once it is in the game's log (its diff is applied to
     * `state` by then when it came over the socket), or rejects with an ApiError: a 422
     * (`rule`), a 409 for a seq the game has left (`staleSeq`, with the game's `seq`),
     * 401/403... An answer lost with the connection is not an error: the command is sent
     * again with the same command_id when the socket is back, and the service applies it once;
     * a 429 or 503 is waited out and the command sent again as the REST calls are.
     * @param {Command} command
     * @param {{expectedSeq?: number | null, commandId?: string}} [options]
     * @returns {Promise<Ack>}
     */
    play(command: Command, options?: {
        expectedSeq?: number | null;
        commandId?: string;
    }): Promise<Ack>;
    /** How many commands are sent and not answered yet. @returns {number} */
    get unanswered(): number;
    /** @param {CommandMessage} message @returns {Promise<Ack>} */
    overSocket(message: CommandMessage): Promise<Ack>;
    /** @param {Pending} p */
    armTimer(p: Pending): void;
    /** An `ack` or an `error` message: true if it answered one of ours.
     *  @param {any} msg */
    answer(msg: any): boolean;
    /** After a reconnection: send again, with the same command_id, what was never answered. */
    resend(): void;
    /** @param {ApiError} err */
    failPending(err: ApiError): void;
    hello(): Record<string, unknown>;
    /** @param {Status} status @param {string | undefined} reason */
    onStatus(status: Status, reason: string | undefined): void;
    /** @param {any} msg */
    onMessage(msg: any): void;
    /** Apply the next diff; a gap or a diff that does not fit means: resynchronise.
     *  @param {Diff} diff @param {boolean} live it happens now (not a replay) */
    onDiff(diff: Diff, live: boolean): void;
    /** Reconnect now: with `since` (the diffs missed), or for a snapshot.
     *  @param {boolean} snapshot */
    resynchronise(snapshot: boolean): void;
    /** @param {GameState} state @param {Diff | null} diff @param {boolean} [live] */
    setState(state: GameState, diff: Diff | null, live?: boolean): void;
    /** @param {LegalMoves} legal */
    setMoves(legal: LegalMoves): void;
    /** The final state read again: a server-chosen seed is shown once the game is over. */
    fetchFinalState(): Promise<void>;
    /** GET /moves, while the socket cannot send them; one request at a time. */
    fetchMoves(): Promise<void>;
}
export type GameState = import("../types/wire.js").GameState;
export type Diff = import("../types/wire.js").Diff;
export type Command = import("../types/wire.js").Command;
export type Ack = import("../types/wire.js").Ack;
export type LegalMoves = import("../types/wire.js").LegalMoves;
export type ServerMessage = import("../types/wire.js").ServerMessage;
export type CommandMessage = import("../types/wire.js").CommandMessage;
export type Status = import("./socket.js").Status;
export type Client = import("./rest.js").Client;
export type LiveOptions = {
    /**
     * the player's token (the client's by default); none
     * to watch a public game
     */
    token?: string | null | undefined;
    /**
     * keep the legal moves of the state (`moves` messages, or
     * GET /moves while the socket is down)
     */
    moves?: boolean | undefined;
    /**
     * a WebSocket constructor (else the client's, else the global one)
     */
    WebSocket?: any;
    /**
     * where a state is kept between page loads: a kept state resumes with `since`
     */
    cache?: {
        read: (gameId: string) => GameState | null;
        write: (state: GameState) => void;
    } | undefined;
    /**
     * in a browser, reconnect at once when the page comes
     * back to the foreground or the network comes back (default true)
     */
    wakeOnFocus?: boolean | undefined;
    /**
     * a command unanswered this long on a live socket
     * makes it reconnect (the connection is presumed dead); the command is then sent again
     * with its command_id (default 15000)
     */
    commandTimeoutMs?: number | undefined;
};
export type StateChange = {
    /**
     * the state before
     */
    before: GameState | null;
    /**
     * the diff that made it (null for a snapshot or a fresh read)
     */
    diff: Diff | null;
    /**
     * whether it happens now (not a diff replayed while resynchronising)
     */
    live: boolean;
};
export type LiveEvents = {
    /**
     * a new state
     */
    state: [GameState, StateChange];
    /**
     * the connection's status, and the close reason
     */
    status: [Status, string | undefined];
    /**
     * the legal moves of the state held
     */
    moves: [LegalMoves];
    /**
     * an error about the connection, not a command (a refused
     * hello says why here before the status turns `refused`)
     */
    error: [ApiError];
};
export type Pending = {
    message: CommandMessage;
    resolve: (ack: Ack) => void;
    reject: (err: ApiError) => void;
    timer: any;
    /**
     * how many refusals (429, 503) it has waited out
     */
    waits?: number | undefined;
    /**
     * set while it waits out a refusal, before it is sent again
     */
    waitTimer?: any;
};
import { GameSocket } from './socket.js';
import { ApiError } from './errors.js';
