/**
 * Test helpers for the daemon: a daemon in a temporary place (its own socket and state directory), run
 * as `specter daemon` in a child process so that tests can `kill -9` it, clients that collect frames,
 * and a cleanup that leaves no keeper or session behind.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DaemonClient } from "../src/daemon/mod.ts";
import type { Frame } from "../src/protocol/mod.ts";
import { DENO, ROOT } from "./_helpers.ts";

/** A daemon's place and process. */
export interface TestDaemon {
  readonly dir: string;
  readonly socket: string;
  readonly stateDir: string;
  /** The running daemon (replaced by {@link restart}). */
  process: Deno.ChildProcess;
  /** stderr lines of every daemon started so far. */
  readonly log: string[];
  /** Environment given to every daemon started for it (and so to its keeper), beside the test's own. */
  readonly env?: Readonly<Record<string, string>>;
}

/** `specter ARGS` with this daemon's `--socket` and `--state-dir`. */
export function whereArgs(daemon: TestDaemon): string[] {
  return ["--socket", daemon.socket, "--state-dir", daemon.stateDir];
}

function spawnDaemon(
  daemon: { socket: string; stateDir: string; log: string[]; env?: Readonly<Record<string, string>> },
  extra: string[],
  wrapper: string[] = [],
): Deno.ChildProcess {
  const child = new Deno.Command(wrapper[0] ?? DENO, {
    args: [
      ...(wrapper.length > 0 ? [...wrapper.slice(1), DENO] : []),
      "run",
      "-A",
      join(ROOT, "main.ts"),
      "daemon",
      "--socket",
      daemon.socket,
      "--state-dir",
      daemon.stateDir,
      ...extra,
    ],
    // Sessions' audit logs (XDG_STATE_HOME/specter/runs/) go beside the test's state directory.
    // Given here, not set with Deno.env: `deno test --parallel` runs other modules in this process.
    env: { XDG_STATE_HOME: join(daemon.stateDir, "..", "xdg-state"), ...daemon.env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      daemon.log.push(...decoder.decode(chunk).split("\n").filter((l) => l !== ""));
    }
  })();
  return child;
}

/** Waits until the daemon answers on its socket. */
export async function ready(daemon: TestDaemon): Promise<void> {
  for (let i = 0; i < 400; i++) {
    try {
      const client = await DaemonClient.connect({ socketPath: daemon.socket });
      client.close();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  throw new Error(`The daemon did not come up: ${daemon.log.join("\n")}`);
}

/** Starts a daemon in a fresh private directory under `dir`. */
export async function startDaemon(
  dir: string,
  extra: string[] = [],
  wrapper: string[] = [],
  env: Readonly<Record<string, string>> = {},
): Promise<TestDaemon> {
  Deno.chmodSync(dir, 0o700);
  const place = {
    dir,
    socket: join(dir, "run", "d.sock"),
    stateDir: join(dir, "state"),
    log: [] as string[],
    env,
  };
  const daemon: TestDaemon = { ...place, process: spawnDaemon(place, extra, wrapper) };
  await ready(daemon);
  return daemon;
}

/** The audit records of a session (from the path `ls --json` names), after checking the log's chain. */
export async function auditRecords(daemon: TestDaemon, name: string): Promise<Record<string, unknown>[]> {
  const ls = await specter(["ls", ...whereArgs(daemon), "--no-autostart", "--json"]);
  const row = ls.stdout.trim().split("\n").map((line) => JSON.parse(line)).find((r) => r.name === name);
  if (typeof row?.audit !== "string") throw new Error(`Session "${name}" names no audit log: ${ls.stdout}`);
  const verify = await specter(["audit", "verify", row.audit]);
  if (verify.code !== 0) throw new Error(`The audit log of "${name}" does not verify: ${verify.stderr}`);
  return Deno.readTextFileSync(row.audit).trim().split("\n").map((line) => JSON.parse(line));
}

/** Starts a new daemon on the same place (after the last one was killed). */
export async function restart(daemon: TestDaemon, extra: string[] = []): Promise<void> {
  daemon.process = spawnDaemon(daemon, extra);
  await ready(daemon);
}

/** The keeper's pid (from its command line), or null when none runs for this state directory. */
export function keeperPid(daemon: Pick<TestDaemon, "stateDir">): number | null {
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      if (cmdline.includes("keeper") && cmdline.includes(daemon.stateDir)) return Number(entry.name);
    } catch {
      // Gone meanwhile.
    }
  }
  return null;
}

/** Kills the daemon and its keeper (which takes its sandboxed sessions with it) and waits for both. */
export async function cleanUp(daemon: TestDaemon): Promise<void> {
  try {
    daemon.process.kill("SIGKILL");
  } catch {
    // Already gone.
  }
  await daemon.process.status;
  for (let i = 0; i < 100; i++) {
    const pid = keeperPid(daemon);
    if (pid === null) return;
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // Exited meanwhile.
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A connected client that records every frame it is sent, per session. */
export class FrameCollector {
  readonly client: DaemonClient;
  readonly frames: Frame[] = [];
  readonly ended: Promise<void>;
  #waiters: (() => void)[] = [];

  private constructor(client: DaemonClient) {
    this.client = client;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.ended = promise;
    client.onNotification = (method, params) => {
      if (method === "frame") this.frames.push(params.frame as Frame);
      if (method === "session.end") resolve();
      for (const waiter of this.#waiters.splice(0)) waiter();
    };
    client.onClose = () => resolve();
  }

  /** Connects to `daemon` (no autostart). */
  static async connect(daemon: TestDaemon): Promise<FrameCollector> {
    return new FrameCollector(await DaemonClient.connect({ socketPath: daemon.socket }));
  }

  /** Resolves once `test` holds for the frames so far (rejects after `ms`). */
  async until(test: (frames: readonly Frame[]) => boolean, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!test(this.frames)) {
      if (Date.now() > deadline) {
        throw new Error(`Frames never matched; last: ${JSON.stringify(this.frames.at(-1))}`);
      }
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  /** The output text of the collected frames. */
  text(): string {
    return this.frames.filter((f) => f.type === "stdout").map((f) => (f as { data: string }).data).join("");
  }
}

/** `specter new NAME FLAGS -- ARGV` on this daemon (no autostart); asserts that it started. */
export async function create(
  daemon: TestDaemon,
  name: string,
  argv: string[],
  flags: string[] = [],
): Promise<void> {
  const result = await specter([
    "new",
    name,
    ...whereArgs(daemon),
    "--no-autostart",
    "--json",
    ...flags,
    "--",
    ...argv,
  ]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(JSON.parse(result.stdout).name, name);
}

/** Runs `specter ARGS`; its exit code, stdout and stderr. */
export async function specter(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", join(ROOT, "main.ts"), ...args],
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** The numbers of a counting program's output lines (`0`, `1`, …). */
export function numbersIn(text: string): number[] {
  return text.replaceAll("\r", "").split("\n").filter((line) => /^\d+$/.test(line)).map(Number);
}
