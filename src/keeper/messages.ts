/**
 * The daemon's messages to the keeper on the wire, one JSON document per packet: what the keeper makes of a
 * packet. Pure (the descriptors that travel beside a message are the caller's), so that it can be tested on
 * bytes alone. The check is `_request_check.ts`, generated from `KeeperRequestSchema`'s JSON Schema, so that
 * the keeper never loads zod or the protocol's schemas (about 20 MiB of a process's memory for this one
 * shape); `request_check_test.ts` holds it to the zod schema. The daemon's side is
 * `daemon/keeper_events.ts`.
 *
 * @module
 */
import type { KeeperEvent, KeeperRequest } from "../protocol/mod.ts";
import { isKeeperRequest } from "./_request_check.ts";

const decoder = new TextDecoder();

/**
 * A packet from the daemon: its request, or the `error` event that refuses it (`E_PROTOCOL`, with the
 * request's id when one can be read, so that the daemon's waiting request fails at once).
 */
export function decodeKeeperRequest(
  payload: Uint8Array,
): { readonly request: KeeperRequest } | { readonly refusal: KeeperEvent } {
  let raw: unknown = null;
  // A `__proto__` key anywhere: JSON text makes it an own property, which the generated check then reads as
  // any other key (in `env` it would become a variable named `__proto__`), where zod drops it from its
  // output. Neither is what the daemon meant, so such a message is refused.
  let protoKey = false;
  try {
    raw = JSON.parse(decoder.decode(payload), (key: string, value: unknown) => {
      if (key === "__proto__") protoKey = true;
      return value;
    });
    // The check reads the document as it is: the schema has no default or transform to apply (the
    // differential test holds zod's output to its input).
    if (!protoKey && isKeeperRequest(raw)) return { request: raw as KeeperRequest };
  } catch {
    // Not JSON (or not UTF-8): refused below, like a document of the wrong shape.
  }
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
