/**
 * The network relay: the one piece of Specter that sits in a sandbox's network namespace. It listens on
 * `127.0.0.1:3128` there (the proxy address every sandbox's environment names) and copies the bytes of
 * each accepted connection to and from a unix socket on the host, where the run's proxy listens.
 *
 * It is deliberately dumb: what a sandboxed program sends is hostile, so the relay parses nothing, holds
 * at most one buffer per direction per connection (a read waits until the previous write is taken:
 * backpressure both ways), and bounds the connections it carries. Every decision (which host, which
 * port) is the proxy's, outside. It runs as `specter net-relay` (a hidden command) under
 * `nsenter --target PID --net`, so it is in the sandbox's network namespace but in the host's mount and
 * pid namespaces: the sandbox can neither see its files nor name its process.
 *
 * @module
 */

/** The port the relay listens on inside every sandbox (each sandbox has its own network namespace). */
export const RELAY_PORT = 3128;
/**
 * Connections carried at once; more are closed at accept, each after an empty connection to the proxy so that
 * it is recorded (the proxy bounds them again).
 */
export const RELAY_MAX_CONNECTIONS = 128;
/** How often the relay checks that its sandbox still runs. */
export const RELAY_POLL_MS = 500;
/** One read's buffer, per direction per connection. */
const CHUNK_BYTES = 256 * 1024;

/** What {@link runNetRelay} relays, and when it stops. */
export interface NetRelayOptions {
  /** The unix socket each connection is piped to (the run's proxy). */
  readonly to: string;
  /** The sandbox's process: the relay ends when it is gone. */
  readonly pid: number;
  /** Resolves when the relay should end (its stdin closed: the supervisor is gone or done). */
  readonly stop: Promise<void>;
  /** Called once the listener is bound (the command prints `ready`). */
  readonly ready: () => void;
  /** Default {@link RELAY_PORT}. */
  readonly port?: number;
  /** Default {@link RELAY_MAX_CONNECTIONS}. */
  readonly maxConnections?: number;
}

/**
 * Listens on `127.0.0.1:port` and relays each connection to `options.to` until `options.stop` resolves or
 * the process `options.pid` is gone; then closes the listener and every connection it carries. Throws
 * when it cannot listen (the supervisor then refuses the run: `E_SANDBOX_NETWORK`).
 */
export async function runNetRelay(options: NetRelayOptions): Promise<void> {
  const max = options.maxConnections ?? RELAY_MAX_CONNECTIONS;
  const startTime = processStartTime(options.pid);
  if (startTime === null) return; // The sandbox is gone already: nothing to relay for.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: options.port ?? RELAY_PORT });
  // Every connection end held (both sides of each relayed connection), closed at stop.
  const open = new Set<Deno.Conn>();
  let carried = 0;
  let stopped = false;
  // A pid is reused only after its process is gone: the start time tells the sandbox from a newcomer.
  const timer = setInterval(() => {
    if (processStartTime(options.pid) !== startTime) stop();
  }, RELAY_POLL_MS);
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    closeQuietly(listener);
    for (const conn of open) closeQuietly(conn);
  };
  void options.stop.then(stop);
  options.ready();
  try {
    for await (const conn of listener) {
      if (stopped) {
        conn.close();
        continue;
      }
      if (carried >= max) {
        // Not carried (the relay's buffers are bounded), but never unrecorded: the proxy sees a connection
        // that closed without a request and writes its `net` record, as it does for every attempt.
        void tellProxy(conn, options.to);
        continue;
      }
      open.add(conn);
      carried++;
      void relayOne(conn, options.to, open).finally(() => {
        open.delete(conn);
        carried--;
      });
    }
  } catch (error: unknown) {
    // Closing the listener ends the loop with BadResource (or Interrupted); anything else is real.
    if (!stopped) throw error;
  } finally {
    stop();
  }
}

/** Closes a connection over the limit after opening (and closing) one to the proxy, which records it. */
async function tellProxy(conn: Deno.Conn, to: string): Promise<void> {
  closeQuietly(conn);
  try {
    closeQuietly(await Deno.connect({ transport: "unix", path: to }));
  } catch {
    // The proxy is gone (the run is ending): there is nothing left to record it.
  }
}

/** Pipes one connection to a new connection on the unix socket `to`, both ways, then closes both. */
async function relayOne(conn: Deno.Conn, to: string, open: Set<Deno.Conn>): Promise<void> {
  let upstream: Deno.UnixConn;
  try {
    upstream = await Deno.connect({ transport: "unix", path: to });
  } catch {
    // The proxy is gone (the run is ending): the client sees its connection closed.
    closeQuietly(conn);
    return;
  }
  open.add(upstream);
  try {
    (conn as Deno.TcpConn).setNoDelay?.(true);
    await Promise.all([pump(conn, upstream), pump(upstream, conn)]);
  } finally {
    open.delete(upstream);
    closeQuietly(conn);
    closeQuietly(upstream);
  }
}

/**
 * Copies `from` to `to` until `from` ends (then half-closes `to`, so a request's end reaches the proxy and
 * a response's end the program) or either side fails (then closes both, which ends the other direction).
 */
async function pump(from: Deno.Conn, to: Deno.Conn): Promise<void> {
  const buffer = new Uint8Array(CHUNK_BYTES);
  try {
    for (;;) {
      const n = await from.read(buffer);
      if (n === null) break;
      for (let done = 0; done < n;) done += await to.write(buffer.subarray(done, n));
    }
    await to.closeWrite();
  } catch {
    // A reset or a closed peer on either side ends both directions.
    closeQuietly(from);
    closeQuietly(to);
  }
}

function closeQuietly(resource: { close(): void }): void {
  try {
    resource.close();
  } catch {
    // Closed already (the other direction or stop() got there first).
  }
}

/** Field 22 of `/proc/PID/stat` (its start time in ticks), or `null` when the process is gone. */
export function processStartTime(pid: number): string | null {
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch {
    return null; // Gone (or never was): the same to the relay.
  }
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields[19] ?? null;
}
