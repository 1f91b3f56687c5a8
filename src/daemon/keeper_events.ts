/**
 * The keeper's messages to the daemon on the wire, one JSON document per packet: what the daemon makes of a
 * packet from its keeper, and the error a keeper's refusal fails a request with. Pure, so that both can be
 * tested on bytes alone. (The keeper's side, the daemon's requests, is `keeper/messages.ts`: the keeper
 * checks them without zod.)
 *
 * @module
 */
import { ERROR_CODES, type ErrorCode, SpecterError } from "../errors.ts";
import { type KeeperEvent, KeeperEventSchema } from "../protocol/mod.ts";

const decoder = new TextDecoder();

/** A packet from the keeper: its event, or null when it is not one (the daemon ignores it). */
export function decodeKeeperEvent(payload: Uint8Array): KeeperEvent | null {
  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(payload));
  } catch {
    return null;
  }
  const parsed = KeeperEventSchema.safeParse(json);
  return parsed.success ? parsed.data : null;
}

/**
 * The error a keeper's `error` event fails the daemon's request with: its code when it is one of Specter's,
 * else `E_KEEPER`. The table's own codes only: `in` would also take "toString" or "constructor", names every
 * object has, and make an error whose code no client knows.
 */
export function keeperFailure(event: Extract<KeeperEvent, { op: "error" }>): SpecterError {
  const code = (Object.hasOwn(ERROR_CODES, event.code) ? event.code : "E_KEEPER") as ErrorCode;
  return new SpecterError(code, event.message);
}
