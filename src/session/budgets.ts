/**
 * `Budgets`: what one session may spend (wall-clock time, output bytes, and the memory, CPU and process
 * ceilings of its process tree) and the single `capsule_kill` frame that reports the first breach.
 *
 * The kernel holds a ceiling wherever it can (the session's cgroup, rlimits); these are measured here
 * only to report the breach and end the session, and sampled (every {@link LIMIT_SAMPLE_MS}) where no
 * kernel mechanism applies. Ending the program is the host's job: this part decides, it never signals.
 *
 * @module
 */
import type { Frame, FrameBody } from "../protocol/mod.ts";
import type { Breach, Mechanism } from "../ceilings/mod.ts";

/** How often the process tree is measured against memory, CPU and process ceilings. */
export const LIMIT_SAMPLE_MS = 100;

/** What ran out: the `capsule_kill` frame's `reason`. */
export type BreachReason = "memory" | "cpu" | "wall" | "processes" | "output";

/** The session's own budgets (the tree's ceilings come as {@link TreeCeilings}). */
export interface BudgetLimits {
  /** Wall-clock limit in ms, or `null`. */
  readonly timeoutMs: number | null;
  /** Output budget in bytes, or `null`. */
  readonly maxOutputBytes: number | null;
  /** CPU seconds of the tree, or `null` (RLIMIT_CPU may end a process before a sample sees it). */
  readonly cpuSeconds: number | null;
  /** Output a previous host already counted (a session a restarted daemon took back); default 0. */
  readonly outputBefore?: number;
  /** What a previous host already reported (its frames): see {@link reportedBefore}. */
  readonly before?: ReportedBefore;
}

/** The breach and the cut a previous host of the session reported before it went away. */
export interface ReportedBefore {
  /** The `capsule_kill` frame's reason, or `null`. */
  readonly breached: BreachReason | null;
  /** An `overflow` frame of reason `max_output` was sent. */
  readonly truncated: boolean;
}

/**
 * What `frames` (the end of a session's log, as a restarted daemon reads it) say was already reported: a
 * host that died between reporting a breach and the program's end must not leave the exit to say less
 * (`timed_out`, `truncated`) than the frames before it.
 */
export function reportedBefore(frames: readonly Frame[]): ReportedBefore {
  let breached: BreachReason | null = null;
  let truncated = false;
  for (const frame of frames) {
    if (frame.type === "capsule_kill") breached ??= frame.reason;
    else if (frame.type === "overflow" && frame.reason === "max_output") truncated = true;
  }
  return { breached, truncated };
}

/** What {@link Budgets} needs of the tree's ceilings (a `Ceilings`; tests pass a fake). */
export interface TreeCeilings {
  /** True when a memory, CPU or process ceiling is set and must be measured. */
  readonly watched: boolean;
  /** Measures once; the first ceiling breached, or `null`. */
  check(sessionPid: number): Breach | null;
}

/** What {@link Budgets} needs of its session. */
export interface BudgetHost {
  /** Emits a frame (`capsule_kill`, `overflow`). */
  emit(body: FrameBody): void;
  /** Runs `fn` after `ms`, unless the session ended first. */
  later(ms: number, fn: () => void): void;
  /** SIGKILLs every process of the program. */
  kill(): void;
  /** Ends the program gracefully (the wall clock ran out). */
  terminate(): void;
  /** True once the program's leader was reaped. */
  reaped(): boolean;
  /** The program's session id (its leader's pid): the sampler's scope without a sandbox. */
  readonly pid: number;
}

/** The budgets of one session; started by its constructor. */
export class Budgets {
  readonly #limits: BudgetLimits;
  readonly #ceilings: TreeCeilings;
  readonly #host: BudgetHost;
  #breached: BreachReason | null = null;
  #timedOut = false;
  #outputBytes = 0;
  #truncated = false;

  /** Arms the wall clock and, when a tree ceiling is watched, the sampler. `startedAt`: `performance.now()`. */
  constructor(limits: BudgetLimits, ceilings: TreeCeilings, host: BudgetHost, startedAt: number) {
    this.#limits = limits;
    this.#ceilings = ceilings;
    this.#host = host;
    this.#outputBytes = limits.outputBefore ?? 0;
    const before = limits.before;
    if (before !== undefined) {
      this.#breached = before.breached;
      this.#timedOut = before.breached === "wall";
      this.#truncated = before.truncated;
      // The previous host may have died before carrying out the kill it reported: carry it out (a wall
      // breach is carried out by the wall clock below, which fires at once).
      if (before.breached !== null && before.breached !== "wall") {
        host.later(0, () => {
          if (!host.reaped()) host.kill();
        });
      }
    }
    if (limits.timeoutMs !== null) {
      const wall = limits.timeoutMs;
      // What is left of it: a program taken over by a new host keeps the deadline it started with.
      host.later(Math.max(0, Math.ceil(wall - (performance.now() - startedAt))), () => {
        if (host.reaped()) return; // It exited in time; only the wind-down is still going on.
        this.#timedOut = true;
        this.#report("wall", wall, Math.round(performance.now() - startedAt));
        host.terminate();
      });
    }
    if (ceilings.watched) {
      const sample = () => {
        if (this.#breached !== null || host.reaped()) return;
        if (!this.#check()) host.later(LIMIT_SAMPLE_MS, sample);
      };
      host.later(LIMIT_SAMPLE_MS, sample);
    }
  }

  /** True once the wall clock ran out before the program exited. */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** The first budget breached, or `null`. */
  get breached(): BreachReason | null {
    return this.#breached;
  }

  /** Bytes of output counted so far (never more than the output budget). */
  get outputBytes(): number {
    return this.#outputBytes;
  }

  /** True when output was cut at the output budget. */
  get truncated(): boolean {
    return this.#truncated;
  }

  /**
   * Counts output against the output budget and returns the part of `bytes` within it. When that is not
   * all of it, call {@link outputExceeded} once the admitted part was delivered.
   */
  admit(bytes: Uint8Array): Uint8Array {
    const limit = this.#limits.maxOutputBytes;
    const chunk = limit !== null && this.#outputBytes + bytes.length > limit
      ? bytes.subarray(0, Math.max(0, limit - this.#outputBytes))
      : bytes;
    this.#outputBytes += chunk.length;
    return chunk;
  }

  /** The output budget is spent: `overflow` (`max_output`), `capsule_kill`, and the program is killed. */
  outputExceeded(): void {
    const limit = this.#limits.maxOutputBytes;
    if (limit === null || this.#truncated) return;
    this.#truncated = true;
    this.#host.emit({ type: "overflow", reason: "max_output", limit });
    this.#report("output", limit, this.#outputBytes);
    this.#host.kill();
  }

  /**
   * The program's leader is gone (`signal`: the name of the signal that ended it, or `null`). RLIMIT_CPU
   * ends a process with SIGXCPU before a sample may have seen the tree's total; and the tree as the leader
   * left it counts too, so a burst that ended between two samples is still a breach. (Under bwrap the pid
   * namespace has taken the tree with it by now; this matters for the none and external backends.)
   */
  leaderExited(signal: string | null): void {
    const cpu = this.#limits.cpuSeconds;
    if (signal === "XCPU" && cpu !== null) this.#report("cpu", cpu, cpu, "rlimit");
    if (this.#breached === null && this.#ceilings.watched) this.#check();
  }

  /** Measures once; on a breach reports it, kills the tree and returns true. */
  #check(): boolean {
    const breach = this.#ceilings.check(this.#host.pid);
    if (breach === null) return false;
    this.#report(breach.reason, breach.limit, breach.value, breach.enforcedBy);
    this.#host.kill();
    return true;
  }

  /** Emits `capsule_kill` once per session (the first breach is the reason). */
  #report(reason: BreachReason, limit: number, value: number, enforcedBy?: Mechanism): void {
    if (this.#breached !== null) return;
    this.#breached = reason;
    this.#host.emit({
      type: "capsule_kill",
      reason,
      limit,
      value,
      ...(enforcedBy === undefined ? {} : { enforced_by: enforcedBy }),
    });
  }
}
