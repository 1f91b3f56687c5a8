/**
 * Bytes both ways between the program's connection and the server's, counted, with backpressure: each
 * direction is one loop over one 64 KiB buffer that reads only after the last chunk was written whole, so
 * a side that does not read stops the other side's reads (nothing is queued beyond the buffer and the
 * kernel's socket buffers). An end of one direction is passed on as a half-close (`closeWrite`), so a
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
const CHUNK = 64 * 1024;

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

async function pump(from: Deno.Conn, to: Deno.Conn, count: (n: number) => void): Promise<void> {
  const buffer = new Uint8Array(CHUNK);
  for (;;) {
    const n = await from.read(buffer);
    if (n === null) break;
    await writeAll(to, buffer.subarray(0, n));
    count(n);
  }
  try {
    await to.closeWrite();
  } catch {
    // The receiving side is gone already: there is nothing more to tell it.
  }
}

/**
 * Pipes `client` ⇄ `server` until both directions ended (or one failed), counting into `counts`.
 * `serverEndCloses`: the server's end ends the whole connection (plain HTTP, one request per connection:
 * the response is complete). Resolves with the first failure's message, or null; never rejects. Closes
 * neither connection unless it has to, to end the other direction after a failure; the caller closes both.
 */
export async function tunnel(
  client: Deno.Conn,
  server: Deno.Conn,
  counts: TunnelCounts,
  serverEndCloses: boolean,
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
  const up = pump(client, server, (n) => counts.up += n).catch(failed);
  const down = pump(server, client, (n) => counts.down += n).then(() => {
    if (serverEndCloses) end();
  }, failed);
  await Promise.all([up, down]);
  return failure;
}
