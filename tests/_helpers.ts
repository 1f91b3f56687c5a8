/**
 * Helpers for tests against real processes.
 *
 * @module
 */
import { type Frame, type Session, spawn, type SpawnOptions } from "../src/mod.ts";
import { fromBase64 } from "../src/frames/utf8.ts";

/** The repository root. */
export const ROOT: string = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
/** The Deno binary running the tests (used to start the CLI). */
export const DENO: string = Deno.execPath();

/**
 * Session tests leave the reactor's last off-thread poll() settling for a moment after `exit`, which
 * Deno's op sanitizer would report; every test still awaits its sessions' exit.
 */
export function sessionTest(name: string, fn: () => Promise<void>, timeoutMs = 30_000): void {
  Deno.test({ name, sanitizeOps: false, sanitizeResources: false }, async () => {
    try {
      await withTimeout(fn(), timeoutMs, name);
    } finally {
      // A failed test must not leave programs running into the next one.
      const open = [...started].filter((s) => !s.finished);
      started.clear();
      await Promise.all(open.map((s) => s.terminate(0)));
    }
  });
}

const started = new Set<Session>();

/** Rejects if `promise` does not settle within `ms`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a session's frames and keeps all of them, with helpers to wait for output. */
export class FrameReader {
  readonly frames: Frame[] = [];
  readonly session: Session;
  #text = "";
  #bytes: Uint8Array[] = [];
  #iterator: AsyncIterator<Frame>;
  #pending: Promise<IteratorResult<Frame>> | undefined;

  constructor(session: Session) {
    this.session = session;
    this.#iterator = session.frames();
  }

  /** All output so far, decoded (binary frames decoded lossily). */
  get text(): string {
    return this.#text;
  }

  /** All output bytes so far, exact. */
  get bytes(): Uint8Array {
    const out = new Uint8Array(this.#bytes.reduce((n, b) => n + b.length, 0));
    let offset = 0;
    for (const b of this.#bytes) {
      out.set(b, offset);
      offset += b.length;
    }
    return out;
  }

  /** Output after `since` characters of {@link text}. */
  textSince(since: number): string {
    return this.#text.slice(since);
  }

  /** Waits for the next frame matching `predicate` (or throws on timeout / end of stream). */
  async until(predicate: (frame: Frame) => boolean, ms = 10_000, what = "frame"): Promise<Frame> {
    const deadline = Date.now() + ms;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `Timed out waiting for ${what}; output so far: ${JSON.stringify(this.#text.slice(-500))}`,
        );
      }
      this.#pending ??= this.#iterator.next();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"timeout">((resolve) => timer = setTimeout(() => resolve("timeout"), left));
      const result = await Promise.race([this.#pending, timeout]);
      clearTimeout(timer);
      if (result === "timeout") continue;
      this.#pending = undefined;
      if (result.done) {
        throw new Error(
          `Stream ended while waiting for ${what}; output: ${JSON.stringify(this.#text.slice(-500))}`,
        );
      }
      const frame = result.value;
      this.frames.push(frame);
      if (frame.type === "stdout") {
        const bytes = frame.binary ? fromBase64(frame.data) : new TextEncoder().encode(frame.data);
        this.#bytes.push(bytes);
        this.#text += frame.binary ? new TextDecoder().decode(bytes) : frame.data;
      }
      if (predicate(frame)) return frame;
    }
  }

  /** Waits until the output (after `since` characters) contains `needle`. */
  async output(needle: string | RegExp, ms = 10_000, since = 0): Promise<void> {
    const found = () =>
      typeof needle === "string"
        ? this.textSince(since).includes(needle)
        : needle.test(this.textSince(since));
    if (found()) return;
    await this.until(() => found(), ms, `output ${String(needle)}`);
  }

  /** Waits for the `exit` frame. */
  async exit(ms = 10_000): Promise<Extract<Frame, { type: "exit" }>> {
    const frame = this.frames.find((f) => f.type === "exit") ??
      await this.until((f) => f.type === "exit", ms, "exit");
    return frame as Extract<Frame, { type: "exit" }>;
  }
}

/** Spawns a session and wraps it in a {@link FrameReader}. */
export function start(options: SpawnOptions): FrameReader {
  const session = spawn({ idleMs: 0, ...options });
  started.add(session);
  return new FrameReader(session);
}

/** True when `pid` exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false; // No /proc entry: the process is gone.
  }
}

/** A running `specter` CLI process with piped stdio. */
export class CliProcess {
  readonly child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #stdout: Promise<Uint8Array>;
  #stderr: Promise<Uint8Array>;

  constructor(args: string[]) {
    this.child = new Deno.Command(DENO, {
      args: ["run", "-A", `${ROOT}/main.ts`, ...args],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      cwd: ROOT,
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#stdout = new Response(this.child.stdout).bytes();
    this.#stderr = new Response(this.child.stderr).bytes();
  }

  /** Writes driver lines (each JSON-encoded unless already a string). */
  async send(...lines: (string | Record<string, unknown>)[]): Promise<void> {
    const text = lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l)) + "\n").join("");
    await this.#writer.write(new TextEncoder().encode(text));
  }

  /** Closes stdin. */
  async closeStdin(): Promise<void> {
    await this.#writer.close();
  }

  /** Waits for the process and returns its exit code and output. */
  async result(): Promise<{ code: number; stdout: Uint8Array; stderr: string }> {
    const [status, stdout, stderr] = await Promise.all([this.child.status, this.#stdout, this.#stderr]);
    try {
      this.#writer.releaseLock();
      await this.child.stdin.close();
    } catch {
      // Already closed by closeStdin() or by the process exiting.
    }
    return { code: status.code, stdout, stderr: new TextDecoder().decode(stderr) };
  }
}

/** Runs the CLI to completion with `stdinText` and returns exit code, parsed NDJSON frames and stderr. */
export async function runCli(
  args: string[],
  stdinText = "",
): Promise<{ code: number; frames: Record<string, unknown>[]; stdout: string; stderr: string }> {
  const cli = new CliProcess(args);
  if (stdinText !== "") await cli.send(stdinText.replace(/\n$/, ""));
  await cli.closeStdin();
  const { code, stdout, stderr } = await cli.result();
  const text = new TextDecoder().decode(stdout);
  const frames = text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  return { code, frames, stdout: text, stderr };
}
