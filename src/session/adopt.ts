/**
 * `adopt()`: a session whose program runs already, taken over from another host (a daemon that was
 * restarted gets its sessions back from its keeper).
 *
 * @module
 */
import { type ExitWatcher, findSandboxInit, firstChildOf, libc, type SpawnedChild } from "../pty/mod.ts";
import { Ceilings, type SessionCgroupPlacement } from "../ceilings/mod.ts";
import { type Launched, ProcessTree } from "../launch/mod.ts";
import { resolveOptions, type SpawnOptions } from "./options.ts";
import { Session, type SessionHooks } from "./session.ts";

/** A terminal whose program runs already, handed back by the keeper that spawned it. */
export interface AdoptedTerminal {
  readonly child: SpawnedChild;
  /** The backend it was launched under (`bwrap`: its direct child is the sandbox's launcher). */
  readonly backend: string;
  /** Reports the program's exit (the keeper reaps it). */
  readonly watcher: ExitWatcher;
  /**
   * Its cgroups as its launch made them (`LaunchInfo.cgroups`) and the process that owns them (the
   * keeper): watched again, with the sampler for the ceilings `options.limits` sets that no cgroup holds.
   */
  readonly cgroups?: { readonly placements: readonly SessionCgroupPlacement[]; readonly owner: number };
}

/**
 * Takes over a session another host ran (a daemon that was restarted): `options` as it was started
 * (argv, cwd, size, metadata, its timeout, output budget and ceilings as launched), `hooks.resume` with its
 * log, output offset and start time. Its ceilings are watched again: its cgroups (`terminal.cgroups`,
 * which the kernel enforced meanwhile) and the sampler for the rest, so a breach is a `capsule_kill` as
 * before; the wall clock keeps its deadline (counted from `resume.started`) and the output budget counts on
 * from the output offset; no sandbox is set up again, the program runs in the one it was started in.
 */
export function adopt(terminal: AdoptedTerminal, options: SpawnOptions, hooks: SessionHooks): Session {
  const resolved = resolveOptions(options);
  const { child, backend, watcher } = terminal;
  const sandboxed = backend === "bwrap";
  // The sandbox's init, held again: signals then go to the program (pid 2 inside), not to bwrap's group,
  // which the program (leading its own session on the terminal) is not in.
  const init = sandboxed ? findSandboxInit(child.pid) : null;
  const ceilings = Ceilings.resume(
    resolved.id,
    resolved.limits,
    sandboxed,
    terminal.cgroups?.placements ?? [],
    { pid: terminal.cgroups?.owner ?? Deno.pid, launched: child.pid },
    init?.handle.pid ?? (sandboxed ? firstChildOf(child.pid) : null),
  );
  const launched: Launched = {
    child,
    ceilings,
    backend,
    watcher,
    netRelay: null, // A keeper-held sandbox's relay, if any, is the keeper's (see docs/architecture.md).
    processTree: (later) =>
      new ProcessTree({ pid: child.pid, launcher: backend === "bwrap", init, ceilings, later }),
    release: () => {},
    abort: () => {
      libc().sym.kill(-child.pid, libc().table.signals.KILL);
    },
  };
  return new Session(
    launched,
    resolved,
    null,
    {
      backend,
      policy: null,
      plan: null,
      limits: resolved.limits,
      timeoutMs: resolved.timeoutMs,
      maxOutputBytes: resolved.maxOutputBytes,
      enforcedBy: ceilings.enforcedBy,
      cgroups: ceilings.cgroups,
      protectedWatch: null,
    },
    hooks,
  );
}
