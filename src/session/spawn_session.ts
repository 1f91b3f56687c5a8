/**
 * `spawn()`: the library entry point that starts a session, inside its sandbox.
 *
 * What is decided before anything starts is in `prepare_launch.ts`; taking over a running session is
 * `adopt()` (`adopt.ts`).
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import { type ExitWatcher, raiseOpenFileLimit, type SpawnedChild, type SpawnRequest } from "../pty/mod.ts";
import { CastWriter } from "../recording/mod.ts";
import { attachForRoot, idmapNamespace, MountAttachments } from "../sandbox/mod.ts";
import { resolveOptions, type SpawnOptions } from "./options.ts";
import { nowSeconds } from "../clock.ts";
import { Session, type SessionHooks } from "./session.ts";
import { launch, type Launched } from "../launch/mod.ts";
import { prepare } from "./prepare_launch.ts";
import { makePrivateTmp, makeShellDir, removeTmpDir } from "./_run_dirs.ts";

// Tests and scripts that know `prepareLaunch` from here keep finding it.
export { prepareLaunch } from "./prepare_launch.ts";

let limitRaised = false;

/**
 * Starts `options.argv` on a new terminal, inside the sandbox, and returns its {@link Session}. Frames
 * are buffered until consumed (`frames()` / `nextFrames()`); a session nobody reads pauses once
 * `bufferBytes` are queued.
 *
 * Throws `E_USAGE` for bad options, `E_POLICY_*` for a bad policy (also one that resolves through
 * symlinks to a forbidden place), `E_SANDBOX_UNAVAILABLE` when the sandbox cannot run (never a silent
 * fallback), `E_SPAWN_NOT_FOUND` / `E_SPAWN_NOT_EXECUTABLE` / `E_SPAWN_CWD` / `E_SPAWN` / `E_PTY_OPEN`
 * when the program cannot start, `E_RECORD` when the recording cannot be created.
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
export function spawn(options: SpawnOptions, host: SessionHost = {}): Session {
  const resolved = resolveOptions(options);
  if (!limitRaised) {
    raiseOpenFileLimit();
    limitRaised = true;
  }
  // Only macOS runs a Seatbelt plan: elsewhere no directory is made for a run that is refused below.
  const prepared = prepare(resolved, {
    ...(Deno.build.os === "darwin" ? { privateTmp: makePrivateTmp } : {}),
    shellDir: makeShellDir,
  });
  const { plan, program, options: effective, tmpDir } = prepared;
  // Root mode: bwrap binds clones of the opened paths, those the program reads or writes idmapped to the
  // sandbox's own uid (detached from the host again once bwrap has bound them: `opened.close()`).
  let opened = prepared.opened;
  if (opened !== null && plan.sandboxUid !== undefined) {
    try {
      opened = attachForRoot(
        opened,
        MountAttachments.create(plan.sandboxUid, idmapNamespace(plan.sandboxUid)),
        resolved.persistDir,
      );
    } catch (error: unknown) {
      opened.close();
      opened.watch?.close();
      if (tmpDir !== null) removeTmpDir(tmpDir);
      throw error;
    }
  }
  const cleanUp = () => {
    opened?.watch?.close();
    if (tmpDir !== null) removeTmpDir(tmpDir);
  };
  if (plan.backend === "seatbelt" && Deno.build.os !== "darwin") {
    opened?.close();
    cleanUp();
    // Seatbelt plans can be prepared and rendered anywhere (they are text); only macOS can run them.
    throw new SandboxError("E_SANDBOX_UNAVAILABLE", "The Seatbelt backend runs only on macOS", {
      details: {
        backend: plan.backend,
        os: Deno.build.os,
        fix: "On Linux use --sandbox bwrap (the default)",
      },
    });
  }
  const recorder = effective.record === null ? null : CastWriter.create(effective.record.path, {
    width: effective.cols,
    height: effective.rows,
    timestamp: Math.floor(nowSeconds()),
    env: { TERM: effective.env.TERM ?? "", ...(effective.env.SHELL ? { SHELL: effective.env.SHELL } : {}) },
    ...(effective.title === null ? {} : { title: effective.title }),
  }, { exclusive: effective.record.exclusive });
  let launched: Launched;
  try {
    launched = launch({
      plan,
      opened,
      cols: effective.cols,
      rows: effective.rows,
      inheritFds: effective.inheritFds,
      id: effective.id,
      limits: effective.limits,
      ...(effective.tty ? {} : { tty: false }),
      ...(host.spawner === undefined ? {} : { spawner: host.spawner }),
      ...(host.watcher === undefined ? {} : { watcher: host.watcher }),
      ...(host.cgroupOwner === undefined ? {} : { cgroupOwner: host.cgroupOwner }),
      ...(effective.netRelay === null ? {} : { netRelay: effective.netRelay }),
    });
  } catch (error: unknown) {
    recorder?.close();
    cleanUp();
    throw error;
  } finally {
    opened?.close(); // Passed on to the launched process (or not needed any more).
  }
  try {
    const session = new Session(
      launched,
      // Not `[program, ...rest]`: a spread grows the array to 17 slots, and the session keeps its argv.
      { ...effective, argv: [program].concat(effective.argv.slice(1)), cwd: plan.programCwd },
      recorder,
      {
        backend: plan.backend,
        policy: plan.policy,
        // Hashing is left to whoever audits (the CLI): a library host spawning thousands pays nothing.
        plan,
        limits: effective.limits,
        timeoutMs: effective.timeoutMs,
        maxOutputBytes: effective.maxOutputBytes,
        enforcedBy: launched.ceilings.enforcedBy,
        cgroups: launched.ceilings.cgroups,
        protectedWatch: opened?.watch ?? null,
      },
      host.hooks,
    );
    // The session reads its terminal now: let the program run.
    launched.release();
    const relay = launched.netRelay;
    if (relay !== null) void session.exited.then(() => relay.close());
    if (tmpDir !== null) void session.exited.then(() => removeTmpDir(tmpDir));
    return session;
  } catch (error: unknown) {
    launched.abort();
    recorder?.close();
    cleanUp();
    throw error;
  }
}

/** Who else takes part in a session: a daemon spawns through its keeper and logs every frame. */
export interface SessionHost {
  /** Starts the program (default: this process). */
  readonly spawner?: (request: SpawnRequest) => SpawnedChild;
  /** Reports the program's exit (default: this process's child watcher). */
  readonly watcher?: ExitWatcher;
  /** The session's hooks (a frame sink). */
  readonly hooks?: SessionHooks;
  /** The process the session's cgroups belong to (the daemon's keeper; default this process). */
  readonly cgroupOwner?: number;
}
