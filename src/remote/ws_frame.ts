/**
 * Reading one WebSocket frame (RFC 6455 §5.2) a client sent, from the bytes received so far: pure, so that
 * the listener's bounds on frames can be tested on bytes alone (the socket in `ws_socket.ts` reads them).
 *
 * @module
 */

/** Longest message taken from a client. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/** One whole client frame, unmasked. */
export interface ClientFrame {
  readonly fin: boolean;
  readonly opcode: number;
  readonly payload: Uint8Array;
  /** Bytes the frame took (header, mask and payload). */
  readonly size: number;
}

/**
 * The frame at the start of `bytes`: null when more bytes are needed, `"too large"` when its declared
 * length passes {@link MAX_MESSAGE_BYTES} (known from the header, before the payload came), `"bad"` when it
 * breaks the protocol (extension bits, an unmasked frame, a control frame over 125 bytes or fragmented).
 */
export function takeFrame(bytes: Uint8Array): ClientFrame | null | "too large" | "bad" {
  const b = bytes;
  if (b.length < 2) return null;
  const fin = (b[0]! & 0x80) !== 0;
  const opcode = b[0]! & 0x0f;
  if ((b[0]! & 0x70) !== 0) return "bad"; // No extension was agreed.
  if ((b[1]! & 0x80) === 0) return "bad"; // Clients must mask.
  let length = b[1]! & 0x7f;
  let at = 2;
  if (length === 126) {
    if (b.length < 4) return null;
    length = (b[2]! << 8) | b[3]!;
    at = 4;
  } else if (length === 127) {
    if (b.length < 10) return null;
    const big = new DataView(b.buffer, b.byteOffset + 2, 8).getBigUint64(0);
    if (big > BigInt(MAX_MESSAGE_BYTES)) return "too large";
    length = Number(big);
    at = 10;
  }
  if (length > MAX_MESSAGE_BYTES) return "too large";
  if (opcode >= 0x8 && (length > 125 || !fin)) return "bad";
  if (b.length < at + 4 + length) return null;
  const mask = b.subarray(at, at + 4);
  const payload = b.slice(at + 4, at + 4 + length);
  for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i & 3]!;
  return { fin, opcode, payload, size: at + 4 + length };
}

/**
 * Bytes the frame at the start of `bytes` takes in all (header, mask and payload), known once its header
 * came; null before.
 */
export function frameLength(bytes: Uint8Array): number | null {
  if (bytes.length < 2) return null;
  const length = bytes[1]! & 0x7f;
  if (length < 126) return 6 + length;
  if (length === 126) return bytes.length < 4 ? null : 8 + ((bytes[2]! << 8) | bytes[3]!);
  if (bytes.length < 10) return null;
  const big = new DataView(bytes.buffer, bytes.byteOffset + 2, 8).getBigUint64(0);
  return 14 + Number(big > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : big);
}
