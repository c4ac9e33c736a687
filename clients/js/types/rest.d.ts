/** Seconds to wait before attempt number `attempt` (1, 2...); the client waits out no
 *  more than WAIT_MAX_S (a longer wait asked for is the caller's: the error is thrown).
 *  @param {ApiError} error @param {string | null} header @param {number} attempt */
export function waitS(error: ApiError, header: string | null, attempt: number): number;
export function sleep(ms: number): Promise<any>;
export class Client {
    /** @param {ClientOptions} [options] */
    constructor(options?: ClientOptions);
    /** @type {string} */
    baseUrl: string;
    /** @type {string | null} */
    token: string | null;
    /** @type {number} */
    retries: number;
    /** @type {(() => void) | null} */
    onUnauthorized: (() => void) | null;
    /** @type {typeof fetch} */
    fetchImpl: typeof fetch;
    /** @type {any} */
    WebSocket: any;
    /** Use this token from now on (null: none). @param {string | null} token */
    setToken(token: string | null): void;
    /** Every game: id, name, decks, piles, options, rules. @returns {Promise<Variants>} */
    listVariants(): Promise<Variants>;
    /** A new player; its token becomes this client's. Not resent after an unknown outcome.
     *  @param {string} name @returns {Promise<PlayerCreated>} */
    createPlayer(name: string): Promise<PlayerCreated>;
    /** The player the token acts as. @returns {Promise<Me>} */
    getMe(): Promise<Me>;
    /** A page of the caller's games, newest first (on any device: they follow the token);
     *  `next_cursor` asks for the next page. With `status`, a page may hold fewer than
     *  `limit` games while more follow.
     *  @param {{status?: GameStatus, variant?: string, limit?: number, cursor?: string | null}} [filter]
     *  @returns {Promise<PlayerGames>} */
    listMyGames({ status, variant, limit, cursor }?: {
        status?: GameStatus;
        variant?: string;
        limit?: number;
        cursor?: string | null;
    }): Promise<PlayerGames>;
    /** Rename the caller. @param {string} name @returns {Promise<Player>} */
    updatePlayer(name: string): Promise<Player>;
    /** A new game (201). Not resent after an unknown outcome (it would be a second game).
     *  @param {CreateGame} game @returns {Promise<GameCreated>} */
    createGame(game: CreateGame): Promise<GameCreated>;
    /** @param {string} gameId @returns {Promise<GameState>} */
    getGame(gameId: string): Promise<GameState>;
    /** Send a command. It always carries a `command_id` (a new one unless given): after a
     *  503 of unknown outcome it is sent again with that id, and the service applies it
     *  once. Without `expectedSeq` it applies at whatever seq the game is.
     *  @param {string} gameId @param {Command} command
     *  @param {{expectedSeq?: number | null, commandId?: string}} [options]
     *  @returns {Promise<CommandResult>} */
    sendCommand(gameId: string, command: Command, { expectedSeq, commandId }?: {
        expectedSeq?: number | null;
        commandId?: string;
    }): Promise<CommandResult>;
    /** @param {string} gameId @returns {Promise<LegalMoves>} */
    getLegalMoves(gameId: string): Promise<LegalMoves>;
    /** One page of the log: the commands after seq `after`, at most `limit`.
     *  @param {string} gameId @param {{after?: number, limit?: number}} [page]
     *  @returns {Promise<Events>} */
    getEvents(gameId: string, { after, limit }?: {
        after?: number;
        limit?: number;
    }): Promise<Events>;
    /** Every event after `after`, page by page.
     *  @param {string} gameId @param {{after?: number, limit?: number}} [from]
     *  @returns {AsyncGenerator<Event, void, undefined>} */
    allEvents(gameId: string, { after, limit }?: {
        after?: number;
        limit?: number;
    }): AsyncGenerator<Event, void, undefined>;
    /** A winning line from the deal, for a game that is over.
     *  @param {string} gameId @returns {Promise<Solution>} */
    getSolution(gameId: string): Promise<Solution>;
    /** A suggested command now (the owner). Not resent after an unknown outcome (it counts).
     *  @param {string} gameId @returns {Promise<Hint>} */
    getHint(gameId: string): Promise<Hint>;
    /** The day's challenges (today, the service's UTC day, when `date` is left out).
     *  @param {string} [date] YYYY-MM-DD @returns {Promise<DailyDay>} */
    getDaily(date?: string): Promise<DailyDay>;
    /** The caller's ranked attempt at a challenge (201).
     *  @param {string} date @param {string} variant @returns {Promise<GameCreated>} */
    startDailyAttempt(date: string, variant: string): Promise<GameCreated>;
    /** @param {string} date @param {string} variant
     *  @param {{limit?: number, cursor?: string | null}} [page]
     *  @returns {Promise<Leaderboard>} */
    getLeaderboard(date: string, variant: string, { limit, cursor }?: {
        limit?: number;
        cursor?: string | null;
    }): Promise<Leaderboard>;
    /** @returns {Promise<Health>} */
    healthz(): Promise<Health>;
    /** @returns {Promise<Health>} */
    readyz(): Promise<Health>;
    /** Prometheus text. @returns {Promise<string>} */
    metrics(): Promise<string>;
    /** The REST contract, YAML. @returns {Promise<string>} */
    openapi(): Promise<string>;
    /** The WebSocket contract, YAML. @returns {Promise<string>} */
    asyncapi(): Promise<string>;
    /** A game's live view over its WebSocket (`watchGame`); call `start()` on it, or use
     *  `open`, which does. @param {string} gameId @param {LiveOptions} [options]
     *  @returns {LiveGame} */
    live(gameId: string, options?: LiveOptions): LiveGame;
    /** A game's live view, started: it connects, and keeps its state.
     *  @param {string} gameId @param {LiveOptions} [options] @returns {LiveGame} */
    open(gameId: string, options?: LiveOptions): LiveGame;
    /** The ws:// or wss:// URL of a game's socket. @param {string} gameId @returns {string} */
    socketUrl(gameId: string): string;
    /**
     * One request, waited out and sent again (up to `retries` times) while the service
     * answers 429 or a 503 that may be sent again (ApiError.retryable).
     * @param {string} method @param {string} path
     * @param {{body?: unknown, query?: Record<string, unknown>, idempotent?: boolean,
     *          commandId?: string | null, retry?: boolean, text?: boolean}} [options]
     * @returns {Promise<any>}
     */
    request(method: string, path: string, { body, query, idempotent, commandId, retry, text }?: {
        body?: unknown;
        query?: Record<string, unknown>;
        idempotent?: boolean;
        commandId?: string | null;
        retry?: boolean;
        text?: boolean;
    }): Promise<any>;
}
export type Variants = import("../types/wire.js").Variants;
export type PlayerCreated = import("../types/wire.js").PlayerCreated;
export type Player = import("../types/wire.js").Player;
export type Me = import("../types/wire.js").Me;
export type PlayerGames = import("../types/wire.js").PlayerGames;
export type GameSummary = import("../types/wire.js").GameSummary;
export type GameStatus = GameSummary["status"];
export type GameCreated = import("../types/wire.js").GameCreated;
export type GameState = import("../types/wire.js").GameState;
export type Command = import("../types/wire.js").Command;
export type CommandResult = import("../types/wire.js").CommandResult;
export type LegalMoves = import("../types/wire.js").LegalMoves;
export type Events = import("../types/wire.js").Events;
export type Event = import("../types/wire.js").Event;
export type Solution = import("../types/wire.js").Solution;
export type Hint = import("../types/wire.js").Hint;
export type DailyDay = import("../types/wire.js").DailyDay;
export type Leaderboard = import("../types/wire.js").Leaderboard;
export type Health = import("../types/wire.js").Health;
export type CreateGame = import("../types/wire.js").CreateGame;
export type LiveOptions = import("./live.js").LiveOptions;
export type ClientOptions = {
    /**
     * the service's origin, `https://cards.example`; '' (the
     * default) means the page's own origin, in a browser
     */
    baseUrl?: string | undefined;
    /**
     * a player's token (`createPlayer` sets it)
     */
    token?: string | null | undefined;
    /**
     * where there is no global `fetch`
     */
    fetch?: typeof fetch | undefined;
    /**
     * a WebSocket constructor, where there is no global one
     * (React Native has one; Node 20 without --experimental-websocket does not)
     */
    WebSocket?: any;
    /**
     * how many times a 429 or a retryable 503 is waited out
     * and sent again, by a REST call or a live game's command (default 3; a wait of more
     * than WAIT_MAX_S is not); 0 gives every refusal to the caller at once
     */
    retries?: number | undefined;
    /**
     * called when the service refuses the token (401)
     */
    onUnauthorized?: (() => void) | undefined;
};
import { ApiError } from './errors.js';
import { LiveGame } from './live.js';
