// Sending commands: over the socket when it is live (answered by an ack or an error
// with the same command_id), else over REST. A command still unanswered when the
// socket comes back is sent again with the same command_id: the server applies it once.

import { ApiError } from './api.js';
import { randomId } from './dom.js';

const COMMAND_TIMEOUT_MS = 15000;

export class Commander {
  constructor({ api, gameId, socket, onDiff }) {
    this.api = api;
    this.gameId = gameId;
    this.socket = socket;
    this.onDiff = onDiff; // a diff answered over REST
    this.pending = new Map(); // command_id -> {message, resolve, reject, timer}
  }

  /** Send `command` at `expectedSeq`; resolves with the new seq, rejects with an ApiError. */
  async send(command, expectedSeq) {
    const message = { type: 'command', command_id: randomId(), expected_seq: expectedSeq, command };
    if (this.socket.live) return this.overSocket(message);
    const answer = await this.api.command(this.gameId, command, expectedSeq, message.command_id);
    this.onDiff(answer.diff);
    return answer.seq;
  }

  overSocket(message) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(message.command_id);
        reject(new ApiError(0, 'timeout', 'The server has not answered yet; the move may still arrive.'));
      }, COMMAND_TIMEOUT_MS);
      this.pending.set(message.command_id, { message, resolve, reject, timer });
      this.socket.send(message);
    });
  }

  /** An `ack` or an `error` message: true if it answered one of ours. */
  answer(msg) {
    const p = msg.command_id && this.pending.get(msg.command_id);
    if (!p) return false;
    clearTimeout(p.timer);
    this.pending.delete(msg.command_id);
    if (msg.type === 'ack') p.resolve(msg.seq);
    else p.reject(ApiError.fromBody(msg.error));
    return true;
  }

  /** After a reconnection: send again what was never answered. */
  resend() {
    for (const p of this.pending.values()) this.socket.send(p.message);
  }

  clear() {
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
  }
}
