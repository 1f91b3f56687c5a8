/**
 * How a session ends: the leader's wait statuses (`stopped`, `continued`, reaped), the terminal's EOF, a
 * reader that failed, and the `exit` frame once {@link WindDown} says everything is over.
 *
 * @module
 */
import { nowSeconds } from "../clock.ts";
import type { ExitFrame } from "../protocol/mod.ts";
import { libc, signalName, type WaitStatus } from "../pty/mod.ts";
import { protectedReport } from "./protected_report.ts";
import { emit, emitError, type SessionParts } from "./_session_parts.ts";

/** How long the terminal model may still parse a program's output after it exited (ScreenTracker.finish). */
const SCREEN_FINISH_MS = 2000;
/** `waitpid` looks for the program's exit after its terminal's EOF: at once, then 1 ms apart. */
const EXIT_LOOKS = 3;

function lookForExit(p: SessionParts, looks: number): void {
  if (p.reaped !== null || looks <= 0) return;
  if (!p.watcher.look(p.pid)) p.timers.later(1, () => lookForExit(p, looks - 1));
}

/** A wait status of the program's leader. */
export function onStatus(p: SessionParts, status: WaitStatus, at: number): void {
  const table = libc().table;
  switch (status.kind) {
    case "stopped":
      emit(p, { type: "stopped", signal: signalName(status.signal, table) });
      return;
    case "continued":
      emit(p, { type: "continued" });
      return;
    case "exited":
    case "signaled":
      p.budgets.leaderExited(status.kind === "signaled" ? signalName(status.signal, table) : null);
      p.reaped = status;
      p.end.leaderReaped();
      // A sandbox's init may still be on its way out: `exit` waits for it (the wind-down comes back).
      p.tree.leaderReaped(at, () => p.windDown.check());
      // What it printed last must not keep the clock waiting on the terminal model (seconds per MiB of
      // resets or line inserts): none of it after a timeout or ceiling, a bounded time otherwise.
      p.screen.finish(p.budgets.breached !== null ? 0 : SCREEN_FINISH_MS);
      // Nothing of the session may outlive its leader (background jobs, stopped jobs, daemons).
      p.end.kill();
      if (!p.reader.eof) p.reader.readAvailable();
      p.windDown.leaderReaped();
      return;
    default: {
      const never: never = status;
      throw new Error(`Unknown wait status ${JSON.stringify(never)}`);
    }
  }
}

/** The reactor dropped this session after an unexpected exception: report it and end the program. */
export function fail(p: SessionParts, error: unknown): void {
  emitError(
    p,
    "E_IO",
    `Reading the terminal failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  p.flow.discard();
  p.reader.stop();
  p.end.kill();
  p.windDown.check();
}

/** The terminal's output ended (EOF or EIO). */
export function onEof(p: SessionParts): void {
  p.flow.wakeRoomWaiters(); // Input can no longer be written: nobody waits for room.
  p.output.end();
  p.windDown.check();
  // The terminal's last holder closed it: usually the program exiting. Look for its exit now and twice
  // more shortly, rather than wait for SIGCHLD to come through the event loop.
  lookForExit(p, EXIT_LOOKS);
}

/** Everything is over ({@link WindDown}): release what is left and emit `exit`. */
export function finish(p: SessionParts): void {
  p.ceilings.close(); // Empty now: its directories go.
  p.timers.clearAll();
  p.quiet.stop();
  libc().sym.close(p.master);
  if (p.io !== p.master) libc().sym.close(p.io);
  p.tree.close();
  const { code, signal } = p.tree.exitStatus(p.reaped!);
  const frame = {
    seq: p.seq++,
    ts: nowSeconds(),
    type: "exit",
    code,
    signal,
    timed_out: p.budgets.timedOut,
    ...(p.end.stop === undefined ? {} : { stop: p.end.stop }),
    duration_ms: Math.round((performance.now() - p.startedAt) * 1000) / 1000,
    last_lines: p.tail.lastLines(),
    session: p.info,
    output_bytes: p.budgets.outputBytes,
    ...protectedReport(p.launch.protectedWatch),
  } satisfies ExitFrame;
  p.sink?.(frame);
  p.log.append(frame);
  p.log.close();
  p.flow.wakeRoomWaiters();
  p.recording.close();
  p.resolveExited(frame);
}
