/**
 * Helpers for tests against real processes.
 *
 * @module
 */
import { concatBytes } from "../src/frames/mod.ts";
import { raceTimer } from "./_timeout.ts";
import { type Session, spawn, type SpawnOptions, Transcript } from "../src/mod.ts";

// Every CLI run writes an audit log, and sessions' commands go to the command log: keep the tests' logs
// and rows out of the real ~/.local/state and ~/.local/share (a person's `specter history`).
const STATE_DIR = Deno.makeTempDirSync({ prefix: "specter-test-state-" });
Deno.env.set("XDG_STATE_HOME", STATE_DIR);
Deno.env.set("XDG_DATA_HOME", STATE_DIR);
globalThis.addEventListener("unload", () => {
  try {
    Deno.removeSync(STATE_DIR, { recursive: true });
  } catch {
    // Already gone; nothing to clean.
  }
});

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

/** Runs `fn` with a fresh temporary directory, removed afterwards whatever happens. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "specter-test-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Rejects if `promise` does not settle within `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return raceTimer(promise, ms, () => new Error(`Timed out after ${ms} ms: ${what}`));
}

/** Explicitly unsandboxed: for tests of the PTY layer itself (sandbox tests live in tests/sandbox/). */
export const NO_SANDBOX = { mode: "none", acknowledge: "unsafe-no-sandbox" } as const;

let readerThreadDefault: boolean | undefined;

/** Makes {@link start} read every session on the reader thread (unless a test says otherwise). */
export function useReaderThread(): void {
  readerThreadDefault = true;
}

/** `spawn(options)`, on the reader thread after {@link useReaderThread} unless `options` say otherwise. */
export function spawnSession(options: SpawnOptions): Session {
  return spawn({ readerThread: readerThreadDefault, ...options });
}

/**
 * Spawns a session (idle frames off unless asked for; no sandbox unless `options.sandbox` says so) and
 * reads it with a {@link Transcript}.
 */
export function start(options: SpawnOptions): Transcript {
  const session = spawnSession({ idleMs: 0, sandbox: NO_SANDBOX, ...options });
  started.add(session);
  return new Transcript(session);
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
  #seen = "";
  #waiters: { text: string; resolve: () => void }[] = [];

  /** `env` adds to (or overrides) this process's environment. */
  constructor(args: string[], env: Readonly<Record<string, string>> = {}) {
    this.child = new Deno.Command(DENO, {
      // --quiet: Deno's own diagnostics (e.g. "Download …" when it refreshes npm metadata) are not
      // Specter's output, and tests compare stderr exactly.
      args: ["run", "--quiet", "-A", `${ROOT}/main.ts`, ...args],
      env: { ...keepDenoDir(env), ...env },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      cwd: ROOT,
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#stdout = this.#collect(this.child.stdout);
    this.#stderr = new Response(this.child.stderr).bytes();
  }

  async #collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      chunks.push(chunk);
      this.#seen += decoder.decode(chunk, { stream: true });
      this.#waiters = this.#waiters.filter((w) => {
        if (!this.#seen.includes(w.text)) return true;
        w.resolve();
        return false;
      });
    }
    for (const w of this.#waiters) w.resolve(); // the output ended; the caller's assertions decide
    this.#waiters = [];
    return concatBytes(chunks);
  }

  /**
   * Resolves once stdout contains `text` (or stdout ended). Tests signal Specter only after it is
   * ready instead of sleeping a guessed time (a loaded CI machine starts Deno slowly).
   */
  waitForStdout(text: string): Promise<void> {
    if (this.#seen.includes(text)) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ text, resolve }));
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

/**
 * Runs the CLI to completion with `stdinText` (and `env` added to the environment) and returns exit code,
 * parsed NDJSON frames and stderr.
 */
export async function runCli(
  args: string[],
  stdinText = "",
  env: Readonly<Record<string, string>> = {},
): Promise<{ code: number; frames: Record<string, unknown>[]; stdout: string; stderr: string }> {
  const cli = new CliProcess(args, env);
  if (stdinText !== "") await cli.send(stdinText.replace(/\n$/, ""));
  await cli.closeStdin();
  const { code, stdout, stderr } = await cli.result();
  const text = new TextDecoder().decode(stdout);
  const frames = text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  return { code, frames, stdout: text, stderr };
}

/**
 * Drives bash job control through `r`, whose prompt matches `prompt` (anchored at the end): `sleep 100`,
 * ctrl-z (bash reports the job stopped), `jobs`, `fg`, ctrl-c, and `jobs` again (empty). Shared by the
 * PTY tests and the sandbox tests, which must show the same behaviour.
 */
export async function jobControlRoundTrip(r: Transcript, prompt: RegExp): Promise<void> {
  await r.until((f) => f.type === "prompt", 10_000, "prompt");
  let mark = r.text.length;
  r.session.write("sleep 100\r");
  await r.output("sleep 100\r\n", 5_000, mark);
  await new Promise((resolve) => setTimeout(resolve, 300)); // Let bash fork and exec sleep.
  mark = r.text.length;
  r.session.press("ctrl-z");
  await r.output(new RegExp(`Stopped\\s+sleep 100[\\s\\S]*${prompt.source}`), 5_000, mark);
  mark = r.text.length;
  r.session.write("jobs\r");
  await r.output(/\[1\]\+\s+Stopped\s+sleep 100/, 5_000, mark);
  mark = r.text.length;
  r.session.write("fg\r");
  await r.output("sleep 100\r\n", 5_000, mark);
  await new Promise((resolve) => setTimeout(resolve, 200));
  mark = r.text.length;
  r.session.press("ctrl-c");
  await r.output(prompt, 5_000, mark);
  mark = r.text.length;
  r.session.write("jobs; echo jobs-done\r");
  await r.output(/jobs-done\r\n/, 5_000, mark);
  if (r.textSince(mark).includes("sleep 100")) throw new Error("The job is still there after ctrl-c");
}

/**
 * `DENO_DIR` as this process has it, when `env` moves `HOME` (a test's fake home): Deno's cache is found
 * from `HOME`, and a fresh one downloads every npm package again (15 s and more per start).
 */
export function keepDenoDir(env: Readonly<Record<string, string>>): Record<string, string> {
  if (env.HOME === undefined || env.DENO_DIR !== undefined || Deno.env.get("DENO_DIR") !== undefined) {
    return {};
  }
  const cache = Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME") ?? "/root"}/.cache`;
  return { DENO_DIR: `${cache}/deno` };
}

/**
 * Puts the `specter` command into `dir` the way a user gets it (`./scripts/dev install` with
 * `SPECTER_BIN_DIR`), for tests that run the README's command lines as written; returns a PATH with it first.
 */
export async function installSpecter(dir: string): Promise<string> {
  const installed = await new Deno.Command(`${ROOT}/scripts/dev`, {
    args: ["install"],
    env: { SPECTER_BIN_DIR: dir },
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!installed.success) throw new Error(new TextDecoder().decode(installed.stderr));
  return `${dir}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
}
