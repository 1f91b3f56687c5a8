/**
 * Reading a proxy request's head off a connection, bounded: at most {@link MAX_HEAD_BYTES} bytes and one
 * deadline for the whole head (the clock wins over parsing: a client that sends a byte a second is cut as
 * surely as one that sends nothing). One 16 KiB buffer per connection, scanned once (only new bytes are
 * looked at for the head's end, so a head sent byte by byte costs no more per byte).
 *
 * @module
 */
import { TIMED_OUT, within } from "../clock.ts";
import { indexOfHeadEnd, MAX_HEAD_BYTES } from "./proxy_head.ts";

/** What reading a head gave. */
export type HeadRead =
  /** The head (without its blank line) and what the client sent after it. */
  | { readonly kind: "head"; readonly head: Uint8Array; readonly rest: Uint8Array }
  /** The client ended its side before the head's end. */
  | { readonly kind: "closed"; readonly bytes: number }
  /** No head's end within {@link MAX_HEAD_BYTES}. */
  | { readonly kind: "too_large" }
  /** No whole head within the deadline. */
  | { readonly kind: "timeout" }
  /** `stop` came first (the proxy is closing). */
  | { readonly kind: "stopped" }
  /** A read failed (the connection was reset). */
  | { readonly kind: "failed"; readonly message: string };

/** What a head is read from: the one method of `Deno.Conn` used. */
export type HeadSource = Pick<Deno.Conn, "read">;

/** Reads a request head from `conn` within `timeoutMs`, or until `stop` resolves. Never throws. */
export async function readProxyHead(
  conn: HeadSource,
  timeoutMs: number,
  stop: Promise<unknown> = new Promise(() => {}),
): Promise<HeadRead> {
  const buffer = new Uint8Array(MAX_HEAD_BYTES);
  let length = 0;
  const stopped = stop.then(() => "stopped" as const);
  const reading = (async (): Promise<HeadRead> => {
    for (;;) {
      const n = await Promise.race([conn.read(buffer.subarray(length)), stopped]);
      if (n === "stopped") return { kind: "stopped" };
      if (n === null || n === 0) return { kind: "closed", bytes: length };
      const end = indexOfHeadEnd(buffer, length, length + n);
      length += n;
      if (end >= 0) return { kind: "head", head: buffer.slice(0, end), rest: buffer.slice(end + 4, length) };
      if (length >= MAX_HEAD_BYTES) return { kind: "too_large" };
    }
  })();
  try {
    const read = await within(reading, timeoutMs);
    return read === TIMED_OUT ? { kind: "timeout" } : read;
  } catch (error: unknown) {
    return { kind: "failed", message: error instanceof Error ? error.message : String(error) };
  }
}
