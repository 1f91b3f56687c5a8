/**
 * `spawn()`: the library entry point that starts a session, inside its sandbox.
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import { DEFAULT_PRESET, loadPolicy } from "../policy/mod.ts";
import type { Policy } from "../policy/types.ts";
import { closeQuietly } from "../pty/_libc.ts";
import { contentFd } from "../pty/content_fd.ts";
import { raiseOpenFileLimit } from "../pty/process.ts";
import { resolveProgram, spawnOnPty } from "../pty/spawn.ts";
import { CastWriter } from "../recording/asciicast.ts";
import { compileLaunchPlan, type LaunchPlan, type SandboxBackend } from "../sandbox/plan.ts";
import { hostFacts } from "../sandbox/probe.ts";
import { type ResolvedOptions, resolveOptions, type SandboxOption, type SpawnOptions } from "./options.ts";
import { nowSeconds, Session } from "./session.ts";

let limitRaised = false;

/** The backend `auto` means on this platform (throws `E_SANDBOX_UNAVAILABLE` elsewhere). */
export function platformBackend(os: string = Deno.build.os): "bwrap" | "seatbelt" {
  switch (os) {
    case "linux":
      return "bwrap";
    case "darwin":
      return "seatbelt";
    default:
      throw new SandboxError("E_SANDBOX_UNAVAILABLE", `No sandbox backend exists for "${os}"`, {
        details: { os, fix: "Run on Linux (bubblewrap) or macOS (Seatbelt)" },
      });
  }
}

/** The default sandbox: `auto` with the strict preset, for a run in `cwd`. */
export function defaultSandbox(cwd: string): SandboxOption {
  const policy = loadPolicy(DEFAULT_PRESET, {
    workspace: cwd,
    home: Deno.env.get("HOME") ?? "/",
    acks: { unsafeWrite: false, network: false },
  });
  return { mode: "auto", policy };
}

function planFor(resolved: ResolvedOptions, program: string): LaunchPlan {
  const sandbox = resolved.sandbox ?? defaultSandbox(resolved.cwd);
  const policy: Policy | null = "policy" in sandbox ? sandbox.policy : null;
  // Variables the policy passes through come from this process; explicit `env` options still win.
  const passed: Record<string, string> = {};
  for (const name of policy?.env ?? []) {
    const value = Deno.env.get(name);
    if (value !== undefined) passed[name] = value;
  }
  const request = {
    program,
    args: resolved.argv.slice(1),
    argv0: resolved.argv[0]!,
    cwd: resolved.cwd,
    env: { ...resolved.env, ...passed, ...resolved.explicitEnv },
  };
  const backend: SandboxBackend = sandbox.mode === "auto" ? platformBackend() : sandbox.mode;
  const host = backend === "bwrap" ? hostFacts(policy?.network === "on") : NO_HOST;
  const strictWrite = "strictWrite" in sandbox && sandbox.strictWrite === true;
  return compileLaunchPlan(policy, request, backend, host, { strictWrite });
}

// Backends other than bwrap read no host facts.
const NO_HOST = {
  bwrap: "",
  mergedUsr: true,
  seccompFilter: new Uint8Array(),
  dropPrivileges: null,
} as const;

/**
 * Starts `options.argv` on a new terminal, inside the sandbox, and returns its {@link Session}. Frames
 * are buffered until consumed (`frames()` / `nextFrames()`); a session nobody reads pauses once
 * `bufferBytes` are queued.
 *
 * Throws `E_USAGE` for bad options, `E_POLICY_*` for a bad policy, `E_SANDBOX_UNAVAILABLE` when the
 * sandbox cannot run (never a silent fallback), `E_SPAWN_NOT_FOUND` / `E_SPAWN_NOT_EXECUTABLE` /
 * `E_SPAWN_CWD` / `E_SPAWN` / `E_PTY_OPEN` when the program cannot start, `E_RECORD` when the recording
 * cannot be created.
 *
 * @example
 * ```ts
 * import { spawn } from "./src/mod.ts";
 * const session = spawn({ argv: ["python3", "-q"], promptRegex: [">>> $"] });
 * for await (const frame of session.frames()) {
 *   if (frame.type === "prompt") session.write("print(6 * 7)\r");
 *   if (frame.type === "stdout" && frame.data.includes("42")) await session.terminate();
 * }
 * ```
 */
export function spawn(options: SpawnOptions): Session {
  const resolved = resolveOptions(options);
  if (!limitRaised) {
    raiseOpenFileLimit();
    limitRaised = true;
  }
  const program = resolveProgram(resolved.argv[0]!, resolved.env.PATH, resolved.cwd);
  const plan = planFor(resolved, program);
  const recorder = resolved.record === null ? null : CastWriter.create(resolved.record.path, {
    width: resolved.cols,
    height: resolved.rows,
    timestamp: Math.floor(nowSeconds()),
    env: { TERM: resolved.env.TERM ?? "", ...(resolved.env.SHELL ? { SHELL: resolved.env.SHELL } : {}) },
    ...(resolved.title === null ? {} : { title: resolved.title }),
  });
  const passed: number[] = [];
  try {
    for (const file of plan.files) passed.push(contentFd(file.content));
    const child = spawnOnPty({
      argv: plan.argv,
      argv0: plan.argv0,
      env: plan.env,
      cwd: plan.cwd,
      cols: resolved.cols,
      rows: resolved.rows,
      inheritFds: [
        ...resolved.inheritFds,
        ...plan.files.map((file, i) => ({ fd: passed[i]!, target: file.target })),
      ],
    });
    return new Session(
      child,
      { ...resolved, argv: [program, ...resolved.argv.slice(1)], cwd: plan.programCwd },
      recorder,
      {
        backend: plan.backend,
        policy: plan.policy?.source ?? null,
      },
    );
  } catch (error: unknown) {
    recorder?.close();
    throw error;
  } finally {
    for (const fd of passed) closeQuietly(fd);
  }
}
