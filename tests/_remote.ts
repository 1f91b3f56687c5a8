/**
 * Helpers for the daemon's TCP listener: a daemon started with `--bind 127.0.0.1:0`, its address and
 * tokens (from `remote.json`, as `specter url` reads them), and WebSocket clients speaking its JSON-RPC.
 */
import { join } from "node:path";
import { type RemoteInfo, RemoteInfoSchema } from "../src/protocol/mod.ts";
import { cleanUp, startDaemon, type TestDaemon } from "./_daemon.ts";

/** A daemon with a TCP listener. */
export interface RemoteDaemon extends TestDaemon {
  readonly info: RemoteInfo;
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  readonly origin: string;
  readonly host: string;
}

/** Starts a daemon listening on 127.0.0.1 (a free port) too. */
export async function startRemoteDaemon(
  dir: string,
  extra: string[] = [],
  wrapper: string[] = [],
): Promise<RemoteDaemon> {
  const daemon = await startDaemon(dir, ["--bind", "127.0.0.1:0", ...extra], wrapper);
  const path = join(daemon.stateDir, "remote.json");
  for (let i = 0; i < 200; i++) {
    try {
      const info = RemoteInfoSchema.parse(JSON.parse(Deno.readTextFileSync(path)));
      const url = new URL(info.url);
      return Object.assign(daemon, { info, origin: url.origin, host: url.host });
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  throw new Error(`The daemon wrote no remote.json: ${daemon.log.join("\n")}`);
}

/**
 * Runs `fn` with a daemon listening on TCP too (in `dir`, made if needed; `wrapper` runs it, e.g. under
 * `prlimit`); its log is printed when `fn` fails; the daemon and its keeper are gone afterwards.
 */
export async function withRemoteDaemon(
  dir: string,
  extra: string[],
  fn: (daemon: RemoteDaemon) => Promise<void>,
  wrapper: string[] = [],
): Promise<void> {
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const daemon = await startRemoteDaemon(dir, extra, wrapper);
  try {
    await fn(daemon);
  } catch (error) {
    console.error(daemon.log.join("\n"));
    throw error;
  } finally {
    await cleanUp(daemon);
  }
}

/** A JSON-RPC client on the daemon's WebSocket. */
export class WsRpc {
  readonly socket: WebSocket;
  readonly notifications: { method: string; params: Record<string, unknown> }[] = [];
  readonly closed: Promise<CloseEvent>;
  #next = 1;
  #pending = new Map<number, (message: Record<string, unknown>) => void>();
  #waiters: (() => void)[] = [];
  /** Bytes received on the wire (compressed ones as they came). */
  wireBytes = 0;
  #decode: (data: ArrayBuffer) => string;

  private constructor(socket: WebSocket, decode: (data: ArrayBuffer) => string) {
    this.socket = socket;
    this.#decode = decode;
    socket.binaryType = "arraybuffer";
    this.closed = new Promise((resolve) => socket.addEventListener("close", (event) => resolve(event)));
    socket.onmessage = (event) => {
      const text = typeof event.data === "string" ? event.data : this.#decode(event.data as ArrayBuffer);
      this.wireBytes += typeof event.data === "string"
        ? event.data.length
        : (event.data as ArrayBuffer).byteLength;
      for (const line of text.split("\n")) {
        if (line === "") continue;
        const message = JSON.parse(line) as Record<string, unknown>;
        if (typeof message.id === "number" && this.#pending.has(message.id)) {
          this.#pending.get(message.id)!(message);
          this.#pending.delete(message.id);
        } else if (typeof message.method === "string") {
          this.notifications.push({
            method: message.method,
            params: message.params as Record<string, unknown>,
          });
        }
      }
      for (const waiter of this.#waiters.splice(0)) waiter();
    };
  }

  /** Opens a WebSocket with `token` (as a bearer header, or as a browser offers it: a subprotocol). */
  static async open(
    daemon: RemoteDaemon,
    token: string,
    options: { via?: "header" | "subprotocol"; decode?: (data: ArrayBuffer) => string } = {},
  ): Promise<WsRpc> {
    const url = `ws://${daemon.host}/v1/ws`;
    const socket = options.via === "subprotocol"
      ? new WebSocket(url, ["specter.v1", `specter.token.${token}`])
      // Deno's WebSocket takes headers (the DOM library's type, in the graph through xterm.js, does not).
      : new WebSocket(url, { headers: { authorization: `Bearer ${token}` } } as unknown as string[]);
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = (event) => reject(new Error(`WebSocket refused: ${(event as ErrorEvent).message}`));
    });
    return new WsRpc(
      socket,
      options.decode ?? (() => {
        throw new Error("A binary message nobody asked for");
      }),
    );
  }

  /** Calls `method`; the whole answer (`result` or `error`). */
  call(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = this.#next++;
    this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return new Promise((resolve) => this.#pending.set(id, resolve));
  }

  /** `daemon.hello`'s result. */
  async hello(params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const answer = await this.call("daemon.hello", { protocol: 1, ...params });
    if (answer.error !== undefined) throw new Error(JSON.stringify(answer.error));
    return answer.result as Record<string, unknown>;
  }

  /** Frames of session `name` received so far. */
  frames(name: string): Record<string, unknown>[] {
    return this.notifications.filter((n) => n.method === "frame" && n.params.name === name).map((n) =>
      n.params.frame as Record<string, unknown>
    );
  }

  /** Waits until `test` holds. */
  async until(test: () => boolean, ms = 20_000, what = "a condition"): Promise<void> {
    const deadline = Date.now() + ms;
    while (!test()) {
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  close(): void {
    this.socket.close();
  }
}

/** A plain HTTP request to the listener (status and JSON body); `headers` as given (Host is the daemon's). */
export async function request(
  daemon: RemoteDaemon,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> | string; headers: Headers }> {
  const response = await fetch(`${daemon.origin}${path}`, { headers });
  const text = await response.text();
  let body: Record<string, unknown> | string = text;
  try {
    body = JSON.parse(text);
  } catch {
    // A page or an asset.
  }
  return { status: response.status, body, headers: response.headers };
}

/** A WebSocket handshake's answer: its status, its error code (a refusal's body), the head, the connection. */
export interface Handshake {
  readonly status: number;
  readonly code: string | null;
  readonly head: string;
  /** Open after a 101 (the caller closes it); closed otherwise. */
  readonly conn: Deno.TcpConn;
}

/**
 * A WebSocket handshake on a raw TCP connection: `Host` is the daemon's unless given, then `headers` (an
 * empty value leaves the header out).
 */
export async function handshake(
  daemon: RemoteDaemon,
  headers: Record<string, string> = {},
): Promise<Handshake> {
  const [hostname, port] = [daemon.host.split(":")[0]!, Number(daemon.host.split(":")[1])];
  const conn = await Deno.connect({ hostname, port });
  const all: Record<string, string> = {
    Host: daemon.host,
    Upgrade: "websocket",
    Connection: "Upgrade",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version": "13",
    ...headers,
  };
  const lines = [
    "GET /v1/ws HTTP/1.1",
    ...Object.entries(all).filter(([, v]) => v !== "").map(([k, v]) => `${k}: ${v}`),
  ];
  await conn.write(new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n"));
  const buffer = new Uint8Array(65536);
  let text = "";
  for (;;) {
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0 && text.startsWith("HTTP/1.1 101")) break;
    const n = await conn.read(buffer).catch(() => null);
    if (n === null) break;
    text += new TextDecoder().decode(buffer.subarray(0, n));
  }
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const body = text.slice(text.indexOf("\r\n\r\n") + 4);
  let code: string | null = null;
  try {
    code = JSON.parse(body).error.code;
  } catch {
    // A 101, or no body.
  }
  if (status !== 101) {
    try {
      conn.close();
    } catch {
      // Closed by the daemon.
    }
  }
  return { status, code, head: text, conn };
}
