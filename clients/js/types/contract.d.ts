/** A seed (deal number) is a whole number 0 <= seed < MAX_SEED (2^53). service/engine/game.py */
export const MAX_SEED: 9007199254740992;
/** A player's name has at most this many characters. protocol/fields.py */
export const PLAYER_NAME_MAX: 32;
/** The close codes of a game's socket (docs/protocol.md "Close codes"). protocol/ws.py */
export const CloseCode: Readonly<{
    NORMAL: 1000;
    GOING_AWAY: 1001;
    PROTOCOL_ERROR: 1002;
    INVALID_PAYLOAD: 1007;
    POLICY_VIOLATION: 1008;
    MESSAGE_TOO_BIG: 1009;
    INTERNAL_ERROR: 1011;
    TRY_AGAIN_LATER: 1013;
}>;
