/**
 * The check between bwrap's setup and the program's first instruction: bwrap reports its child, blocks
 * on the gate, and the child's mount table is compared with the plan. Only then is it released.
 *
 * @module
 */
import { FileError, SandboxError, SpawnError } from "../errors.ts";
import { closeFd, fdInfo, openBeneath, openProcessRoot } from "../fsafe/mod.ts";
import {
  closeQuietly,
  GATE_DEADLINE_MS,
  type GatePipes,
  holdSandboxInit,
  libc,
  readInfo,
  type SandboxInit,
  sleepMs,
  type SpawnedChild,
  waitBlocked,
} from "../pty/mod.ts";
import { checkMounts, type LaunchPlan, parseMountInfo } from "../sandbox/mod.ts";

/** What the gate learned: the sandbox's first process, or that the setup failed (bwrap said why on the terminal). */
export interface GateResult {
  readonly childPid: number | null;
  readonly started: boolean;
  /**
   * The sandbox's init held by a pidfd, opened while it waited at the gate (so it is certainly bwrap's
   * init); `null` when it could not be held (the session then signals the launcher's session).
   */
  readonly init: SandboxInit | null;
}

/**
 * Waits for bwrap's sandbox to be set up and checks its mounts against `plan`; the caller then releases
 * it with `releaseGate` (or kills it: closing the gate unreleased is not enough, bwrap reads EOF as go). Throws
 * `E_SANDBOX_MOUNTS` when the mounts differ (the program has not run; the caller kills the helper),
 * `E_SPAWN` when bwrap does not get there in time; whatever `verify` throws. When bwrap fails during setup there is nothing to
 * release: it exits with its own message on the terminal, which the session reports.
 */
export function passGate(
  helperPid: number,
  plan: LaunchPlan,
  gate: GatePipes,
  verify: (childPid: number) => void = () => {},
): GateResult {
  if (plan.gate === null) return { childPid: null, started: true, init: null };
  const deadline = performance.now() + GATE_DEADLINE_MS;
  const info = readInfo(gate, deadline);
  if (info === null) return { childPid: null, started: false, init: null };
  const childPid = childPidOf(info);
  try {
    // The caller's own steps on the held sandbox (joining its cgroup), while bwrap still sets up: neither
    // bwrap nor its child forks before the gate is released. Throws to refuse it.
    verify(childPid);
  } catch (error: unknown) {
    libc().sym.kill(childPid, libc().table.signals.KILL);
    throw error;
  }
  if (!waitBlocked(childPid, plan.gate.block, deadline)) return { childPid, started: false, init: null };
  let problems: string[];
  try {
    problems = mountProblems(childPid, plan);
  } catch (error: unknown) {
    libc().sym.kill(childPid, libc().table.signals.KILL);
    throw error;
  }
  if (problems.length > 0) {
    libc().sym.kill(childPid, libc().table.signals.KILL);
    throw new SandboxError(
      "E_SANDBOX_MOUNTS",
      `The sandbox's mounts differ from its plan, so the program was not run: ${problems[0]}`,
      { details: { problems, helper_pid: helperPid } },
    );
  }
  // Released by the caller once its session is ready to read (releaseGate), so the program's first
  // output is not waiting on Specter's own setup.
  const init = holdSandboxInit(childPid);
  return { childPid, started: true, init };
}

/**
 * The typed error for a sandbox whose setup failed: bwrap's own words, read from the terminal it wrote
 * them to (a bind whose source vanished, "Race condition binding dirfd" when a path was swapped after it
 * was opened). Reads what is buffered without blocking; at most 4 KiB.
 */
export function setupFailure(child: SpawnedChild): SandboxError {
  const lib = libc();
  const buffer = new Uint8Array(4096);
  let text = "";
  // The helper is exiting; give its last words a moment to reach the terminal.
  for (let i = 0; i < 50 && text === ""; i++) {
    // Without a terminal, bwrap's stderr is the socket on the program's fds.
    const n = Number(lib.sym.read(child.io ?? child.master, buffer, BigInt(buffer.length)));
    if (n > 0) text = new TextDecoder().decode(buffer.subarray(0, n));
    else sleepMs(2);
  }
  const said = text.split(/\r?\n/).find((line) => line.trim() !== "")?.slice(0, 300) ?? "no message";
  return new SandboxError(
    "E_SANDBOX_START",
    `The sandbox failed to set up, so the program was not run: ${said}`,
    {
      details: { helper: said },
    },
  );
}

function childPidOf(info: string): number {
  let pid: unknown;
  try {
    pid = (JSON.parse(info) as Record<string, unknown>)["child-pid"];
  } catch (cause) {
    throw new SpawnError("E_SPAWN", "The sandbox helper's info is not JSON", { cause });
  }
  if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 1) {
    throw new SpawnError("E_SPAWN", "The sandbox helper's info has no child pid");
  }
  return pid;
}

function mountProblems(childPid: number, plan: LaunchPlan): string[] {
  const table = Deno.readTextFileSync(`/proc/${childPid}/mountinfo`);
  const root = openProcessRoot(childPid);
  try {
    return checkMounts(parseMountInfo(table), plan.descriptors, (dest) => {
      let fd: number;
      try {
        fd = openBeneath(root, dest.replace(/^\/+/, ""));
      } catch (error: unknown) {
        if (error instanceof FileError) return null; // Missing, or reached through a link: not the bind.
        throw error;
      }
      try {
        const { identity, kind } = fdInfo(fd);
        return { identity, kind };
      } finally {
        closeFd(fd);
      }
    });
  } finally {
    closeFd(root);
  }
}

/** Kills a helper held at the gate (its sandbox dies with it: `--die-with-parent`), reaps it, closes its terminal. */
export function killHelper(child: SpawnedChild): void {
  const lib = libc();
  lib.sym.kill(child.pid, lib.table.signals.KILL);
  const status = new Int32Array(1);
  // Blocking, but the process was just SIGKILLed: it is gone at once. EINTR: wait again.
  while (lib.sym.waitpid(child.pid, new Uint8Array(status.buffer), 0) < 0 && lib.errno() === 4);
  closeQuietly(child.master);
  if (child.io !== undefined) closeQuietly(child.io);
}
