/**
 * Bytes both ways between the program's connection and the server's, counted, with backpressure: each
 * direction is one loop over two 256 KiB buffers, reading into one while the other is written and never
 * reading into a buffer before its write is done, so a side that does not read stops the other side's
 * reads (nothing is queued beyond the two buffers and the kernel's socket buffers). An end of one direction is passed on as a half-close (`closeWrite`), so a
 * client that shuts down its sending side still gets its answer; an error on either side ends both.
 *
 * @module
 */

/** Bytes passed each way so far. */
export interface TunnelCounts {
  /** Program → server. */
  up: number;
  /** Server → program. */
  down: number;
}

/** Size of each direction's buffer. */
const CHUNK = 1024 * 1024;

/** Closes a connection that may be closed already. */
export function closeQuietly(conn: Deno.Conn | null): void {
  try {
    conn?.close();
  } catch {
    // Already closed (the other direction, or the proxy's close, got there first).
  }
}

/** Writes all of `bytes` (a write may take part of them). */
export async function writeAll(conn: Pick<Deno.Conn, "write">, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
}

/**
 * Passes `from` to `to` until its end, then half-closes `to`. With `limit`, only that many bytes are
 * passed; what comes after them is read and dropped (so that a client's end or reset is still seen) and
 * its end is not passed on (the server is answering the request it has whole).
 */
async function pump(
  from: Deno.Conn,
  to: Deno.Conn,
  count: (n: number) => void,
  limit: number | null = null,
): Promise<void> {
  // Two buffers: the next read fills one while the other's bytes are written (a write is awaited before
  // its buffer is read into again, so at most two chunks are in flight: backpressure holds).
  const buffers = [new Uint8Array(CHUNK), new Uint8Array(CHUNK)];
  let which = 0;
  let writing: Promise<void> = Promise.resolve();
  let left = limit ?? Infinity;
  try {
    for (;;) {
      const buffer = buffers[which]!;
      const n = await from.read(buffer);
      if (n === null) break;
      const passed = Math.min(n, left);
      await writing;
      if (passed > 0) {
        // Counted once written, as before the reads overlapped the writes.
        writing = writeAll(to, buffer.subarray(0, passed)).then(() => count(passed));
        // Handled now (awaited after the next read, or below): a failed write must never be an unhandled
        // rejection while the next read waits.
        writing.catch(() => {});
        left -= passed;
        which ^= 1;
      }
    }
  } catch (error: unknown) {
    // A read that failed leaves the last write pending: let it settle (its failure is the same end).
    await writing.catch(() => {});
    throw error;
  }
  await writing;
  if (left === 0) return;
  try {
    await to.closeWrite();
  } catch {
    // The receiving side is gone already: there is nothing more to tell it.
  }
}

/**
 * Pipes `client` ⇄ `server` until both directions ended (or one failed), counting into `counts`.
 * `http`: plain HTTP, one request per connection: the server's end ends the whole connection (the response
 * is complete), and `upLimit` (the rest of the request's body, or null for a chunked one) caps what goes
 * up, so that bytes a client pipelines after its request never reach the server. Resolves with the first
 * failure's message, or null; never rejects. Closes neither connection unless it has to, to end the other
 * direction after a failure; the caller closes both.
 */
export async function tunnel(
  client: Deno.Conn,
  server: Deno.Conn,
  counts: TunnelCounts,
  http: { readonly upLimit: number | null } | null = null,
): Promise<string | null> {
  let failure: string | null = null;
  let ended = false;
  function end(): void {
    ended = true;
    closeQuietly(client);
    closeQuietly(server);
  }
  function failed(error: unknown): void {
    // After `end`, the other direction's read fails because its connection was closed here: not a failure.
    if (!ended) failure ??= error instanceof Error ? error.message : String(error);
    end();
  }
  const up = pump(client, server, (n) => counts.up += n, http?.upLimit).catch(failed);
  const down = pump(server, client, (n) => counts.down += n).then(() => {
    if (http !== null) end();
  }, failed);
  await Promise.all([up, down]);
  return failure;
}
