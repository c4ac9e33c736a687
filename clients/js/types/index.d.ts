export { LiveGame } from "./live.js";
export { GameSocket } from "./socket.js";
export { ApiError } from "./errors.js";
export { randomId } from "./ids.js";
export { Client, waitS } from "./rest.js";
export { applyDiff, applyOps, DiffError, FINAL_STATUSES } from "./state.js";
export { CloseCode, MAX_SEED, PLAYER_NAME_MAX } from "./contract.js";
