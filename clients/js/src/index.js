// solitaire-client: the service's JavaScript client (REST, the live game, the wire types).

export { Client, waitS } from './rest.js';
export { LiveGame } from './live.js';
export { GameSocket } from './socket.js';
export { ApiError } from './errors.js';
export { applyDiff, applyOps, DiffError, FINAL_STATUSES } from './state.js';
export { CloseCode, MAX_SEED, PLAYER_NAME_MAX } from './contract.js';
export { randomId } from './ids.js';
