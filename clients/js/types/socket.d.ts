/** @typedef {'idle' | 'connecting' | 'syncing' | 'live' | 'offline' | 'refused' | 'closed'} Status */
/**
 * @typedef {object} SocketHandlers
 * @property {() => Record<string, unknown>} hello the hello's fields ({token?, since?,
 *   moves?}) at each (re)connection
 * @property {(message: any) => void} onMessage every message but `pong`
 * @property {(status: Status, reason?: string) => void} [onStatus]
 * @property {any} [WebSocket] the constructor (else the global one)
 * @property {boolean} [wakeOnFocus] in a browser: reconnect at once when the page comes
 *   back to the foreground or the network comes back (default true)
 */
export class GameSocket {
    /** @param {string} url @param {SocketHandlers} handlers */
    constructor(url: string, { hello, onMessage, onStatus, WebSocket, wakeOnFocus }: SocketHandlers);
    url: string;
    hello: () => Record<string, unknown>;
    onMessage: (message: any) => void;
    onStatus: (status: Status, reason?: string) => void;
    /** @type {any} */
    WebSocket: any;
    /** @type {any} */
    ws: any;
    /** @type {Status} */
    status: Status;
    attempts: number;
    connections: number;
    /** @type {any} */
    retryTimer: any;
    /** @type {any} */
    pingTimer: any;
    lastHeard: number;
    stopped: boolean;
    waitAtLeastMs: number;
    notBefore: number;
    browser: any;
    wakeUp: () => void;
    onVisible: () => void;
    get live(): boolean;
    start(): void;
    stop(): void;
    /** Drop this connection and open a new one now (hello() gives the `since`). */
    resync(): void;
    /** Send a message if the socket is live; false if it is not. @param {object} message */
    send(message: object): boolean;
    /** Wait at least this long before the next connection (the service said Retry-After).
     *  @param {number} seconds */
    retryAfter(seconds: number): void;
    connect(): void;
    scheduleRetry(): void;
    keepAlive(): void;
    /** @param {Status} status @param {string} [reason] */
    setStatus(status: Status, reason?: string): void;
}
export type Status = "idle" | "connecting" | "syncing" | "live" | "offline" | "refused" | "closed";
export type SocketHandlers = {
    /**
     * the hello's fields ({token?, since?,
     * moves?}) at each (re)connection
     */
    hello: () => Record<string, unknown>;
    /**
     * every message but `pong`
     */
    onMessage: (message: any) => void;
    onStatus?: ((status: Status, reason?: string) => void) | undefined;
    /**
     * the constructor (else the global one)
     */
    WebSocket?: any;
    /**
     * in a browser: reconnect at once when the page comes
     * back to the foreground or the network comes back (default true)
     */
    wakeOnFocus?: boolean | undefined;
};
