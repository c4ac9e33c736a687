// The REST half of the contract (PROTOCOL.md, openapi.yaml): one method per endpoint.

const RETRY_DEFAULT_S = 5; // a 429 or 503 without retry_after_s
const RETRY_MAX_S = 30;

/** An error as the contract shapes it: {"error": {"code", "message", "details"}}. */
export class ApiError extends Error {
  constructor(status, code, message, details = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status; // HTTP status; 0 when the server could not be reached
    this.code = code;
    this.details = details;
  }

  /** How long to wait before asking again when that may work, in ms: what a 429 or a 503
   *  says (`retry_after_s`), or a growing wait while the server cannot be reached (the
   *  `attempt`-th in a row); null when asking again would get the same answer. */
  retryDelayMs(attempt = 0) {
    if (this.status === 429 || this.status === 503) {
      const seconds = Number(this.details?.retry_after_s) || RETRY_DEFAULT_S;
      return 1000 * Math.min(RETRY_MAX_S, Math.max(1, seconds));
    }
    if (this.status === 0 && this.code === 'network') return 1000 * Math.min(RETRY_MAX_S, 2 ** attempt);
    return null;
  }

  /** An ApiError from the `error` object of a WebSocket message. */
  static fromBody(body, status = 0) {
    return new ApiError(status, body?.code ?? 'error', body?.message ?? 'unknown error', body?.details ?? {});
  }
}

export class Api {
  constructor(base = '') {
    this.base = base;
    this.token = null;
    this.onUnauthorized = null; // called when the server refuses our token (401)
  }

  setToken(token) {
    this.token = token || null;
  }

  async request(method, path, { body, query } = {}) {
    const headers = { Accept: 'application/json' };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let url = this.base + path;
    if (query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v != null) q.set(k, String(v));
      const s = q.toString();
      if (s) url += '?' + s;
    }
    let response;
    try {
      response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (err) {
      throw new ApiError(0, 'network', `the server cannot be reached (${err.message})`);
    }
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!response.ok) {
      if (response.status === 401 && this.token && this.onUnauthorized) this.onUnauthorized();
      if (data && data.error) throw ApiError.fromBody(data.error, response.status);
      throw new ApiError(response.status, `http_${response.status}`, `HTTP ${response.status} ${response.statusText}`);
    }
    return data;
  }

  variants() {
    return this.request('GET', '/v1/variants');
  }

  createPlayer(name) {
    return this.request('POST', '/v1/players', { body: { name } });
  }

  createGame({ variant, seed, options, isPublic }) {
    const body = { variant };
    if (seed != null) body.seed = seed;
    if (options && Object.keys(options).length) body.options = options;
    if (isPublic) body.public = true;
    return this.request('POST', '/v1/games', { body });
  }

  game(id) {
    return this.request('GET', `/v1/games/${encodeURIComponent(id)}`);
  }

  moves(id) {
    return this.request('GET', `/v1/games/${encodeURIComponent(id)}/moves`);
  }

  command(id, command, expectedSeq, commandId) {
    const body = { command };
    if (expectedSeq != null) body.expected_seq = expectedSeq;
    if (commandId) body.command_id = commandId;
    return this.request('POST', `/v1/games/${encodeURIComponent(id)}/commands`, { body });
  }

  /** One suggested command from what the owner sees: {seq, command|null, samples, wins}. */
  hint(id) {
    return this.request('POST', `/v1/games/${encodeURIComponent(id)}/hint`);
  }

  /** A finished game's solution: {result, commands, nodes, elapsed_ms}. */
  solution(id) {
    return this.request('GET', `/v1/games/${encodeURIComponent(id)}/solution`);
  }

  /** Today's challenges (the server's UTC day) when `date` is left out. */
  daily(date) {
    return this.request('GET', '/v1/daily', { query: { date } });
  }

  startDaily(date, variant) {
    return this.request('POST', `/v1/daily/${encodeURIComponent(date)}/${encodeURIComponent(variant)}/attempts`);
  }

  leaderboard(date, variant, { limit, cursor } = {}) {
    return this.request('GET', `/v1/daily/${encodeURIComponent(date)}/${encodeURIComponent(variant)}/leaderboard`,
      { query: { limit, cursor } });
  }
}
