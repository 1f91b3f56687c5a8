/**
 * The keeper's messages on the wire, one JSON document per packet: what the keeper makes of a packet from
 * the daemon, and what the daemon makes of one from the keeper. Pure (the descriptors that travel beside a
 * message are the caller's), so that both can be tested on bytes alone.
 *
 * @module
 */
import { ERROR_CODES, type ErrorCode, SpecterError } from "../errors.ts";
import {
  type KeeperEvent,
  KeeperEventSchema,
  type KeeperRequest,
  KeeperRequestSchema,
} from "../protocol/mod.ts";

const decoder = new TextDecoder();

/**
 * A packet from the daemon: its request, or the `error` event that refuses it (`E_PROTOCOL`, with the
 * request's id when one can be read, so that the daemon's waiting request fails at once).
 */
export function decodeKeeperRequest(
  payload: Uint8Array,
): { readonly request: KeeperRequest } | { readonly refusal: KeeperEvent } {
  let raw: unknown = null;
  try {
    raw = JSON.parse(decoder.decode(payload));
    return { request: KeeperRequestSchema.parse(raw) };
  } catch {
    const id = (raw as { id?: unknown } | null)?.id;
    return {
      refusal: {
        op: "error",
        ...(typeof id === "string" ? { id } : {}),
        code: "E_PROTOCOL",
        message: "The keeper got a malformed message",
      },
    };
  }
}

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
