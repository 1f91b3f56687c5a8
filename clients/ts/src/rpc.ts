/**
 * The JSON-RPC 2.0 connection to a `specter agent` process: one request or response per line (NDJSON) on
 * its stdin and stdout. Lines of any length are read (a 1 MB output line is one line); notifications go to
 * the listener; when the process ends, every pending call and open stream fails with `E_AGENT_EXITED`
 * and the last of its stderr.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { SpecterError } from "./errors.js";

/** The longest a timer waits: 2^31 - 1 ms. A longer delay fires at once, so waits are cut to it. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** How much of the agent's stderr is kept for error messages. */
const STDERR_TAIL = 8192;

/** A JSON-RPC notification from the server. */
export interface Notification {
  readonly method: string;
  readonly params: Record<string, unknown>;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: SpecterError): void;
}

/** How the agent process ended. */
export interface AgentExit {
  readonly code: number | null;
  readonly signal: string | null;
}

/** A running `specter agent` and the calls in flight to it. */
export class RpcConnection {
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, Pending>();
  readonly #listeners = new Set<
    (message: Notification | null, error?: SpecterError) => void
  >();
  #next = 1;
  #stderr = "";
  #failure: SpecterError | null = null;
  #closing = false;
  /** Settles once the process has ended. */
  readonly exited: Promise<AgentExit>;

  constructor(
    argv: readonly string[],
    options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
  ) {
    if (argv.length === 0) {
      throw new SpecterError("E_AGENT_START", "The agent command is empty");
    }
    this.#child = spawn(argv[0]!, argv.slice(1), {
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    let resolveExit: (exit: AgentExit) => void;
    this.exited = new Promise((resolve) => resolveExit = resolve);
    this.#child.on("error", (cause) => {
      // Spawning failed (no such program): no exit event follows.
      this.#fail(
        new SpecterError(
          "E_AGENT_START",
          `Could not start "${argv.join(" ")}": ${cause.message}` +
            ((cause as NodeJS.ErrnoException).code === "ENOENT"
              ? ". Put specter on PATH (./scripts/dev install in a Specter checkout) or set SPECTER_COMMAND"
              : ""),
          { cause },
        ),
      );
      resolveExit({ code: null, signal: null });
    });
    this.#child.on("close", (code, signal) => {
      const how = signal === null ? `exit code ${code}` : `signal ${signal}`;
      const said = this.#stderr.trim() === "" ? "" : `; it said: ${this.#stderr.trim().slice(-2000)}`;
      this.#fail(
        new SpecterError(
          this.#closing ? "E_CLIENT_CLOSED" : "E_AGENT_EXITED",
          `The agent ended (${how})${said}`,
          { data: { exit_code: code, signal } },
        ),
      );
      resolveExit({ code, signal });
    });
    // A write to an agent that already ended fails here; the close event reports it.
    this.#child.stdin!.on("error", () => {});
    this.#child.stderr!.setEncoding("utf8");
    this.#child.stderr!.on("data", (text: string) => {
      this.#stderr = (this.#stderr + text).slice(-STDERR_TAIL);
    });
    this.#readLines();
  }

  /** The agent's process id. */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Calls `method`; rejects with a `SpecterError` carrying the server's code. */
  request<T>(method: string, params: unknown): Promise<T> {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, {
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.#child.stdin!.write(
        JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n",
      );
    });
  }

  /** Listens to notifications; `null` with an error once the connection failed. Returns the unlistener. */
  listen(
    listener: (message: Notification | null, error?: SpecterError) => void,
  ): () => void {
    if (this.#failure !== null) {
      const failure = this.#failure;
      queueMicrotask(() => listener(null, failure));
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Ends the agent: closes its stdin (it ends every session and exits), and after `graceMs` kills it.
   * Resolves once it has exited.
   */
  async close(graceMs = 10_000): Promise<AgentExit> {
    this.#closing = true;
    this.#child.stdin!.end();
    // A grace no timer can wait would kill at once: it waits the longest a timer can instead.
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), Math.min(graceMs, MAX_TIMER_MS));
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  #readLines(): void {
    const decoder = new StringDecoder("utf8");
    let pieces: string[] = [];
    this.#child.stdout!.on("data", (chunk: Buffer) => {
      // Split on newlines without joining a long line more than once.
      let text = decoder.write(chunk);
      for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n")) {
        pieces.push(text.slice(0, nl));
        const line = pieces.join("");
        pieces = [];
        text = text.slice(nl + 1);
        if (line.trim() !== "") this.#line(line);
      }
      if (text !== "") pieces.push(text);
    });
  }

  #line(line: string): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return; // Not a protocol line (the agent writes only JSON to stdout; nothing to answer).
    }
    if (typeof message.method === "string") {
      const notification = {
        method: message.method,
        params: (message.params ?? {}) as Record<string, unknown>,
      };
      for (const listener of this.#listeners) listener(notification);
      return;
    }
    const pending = typeof message.id === "number" ? this.#pending.get(message.id) : undefined;
    if (pending === undefined) return;
    this.#pending.delete(message.id as number);
    const error = message.error as {
      code?: number;
      message?: string;
      data?: { code?: string };
    } | undefined;
    if (error !== undefined) {
      const code = typeof error.data?.code === "string" ? error.data.code : "E_RPC";
      const options = {
        data: error.data,
        ...(typeof error.code === "number" ? { rpcCode: error.code } : {}),
      };
      pending.reject(
        new SpecterError(
          code,
          error.message ?? "The agent refused the call",
          options,
        ),
      );
    } else pending.resolve(message.result);
  }

  #fail(error: SpecterError): void {
    if (this.#failure !== null) return;
    this.#failure = error;
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    for (const listener of this.#listeners) listener(null, error);
  }
}
