/**
 * `specter run`: stream frames on stdout, read NDJSON driver messages on stdin.
 *
 * @module
 */
import { type SpecterError, toSpecterError } from "../errors.ts";
import { parseDriverLine } from "../frames/driver.ts";
import { encodeFrames, type Framing, FRAMINGS } from "../frames/encode.ts";
import type { Frame } from "../frames/schema.ts";
import type { Session } from "../session/session.ts";
import { nowSeconds } from "../session/session.ts";
import { spawn } from "../session/spawn_session.ts";
import { exitCodeForError, exitCodeForExit } from "./exit_codes.ts";
import { type FlagValues, parseCommandLine, sessionOptions, UNSAFE_BANNER } from "./flags.ts";
import { parseDuration } from "./units.ts";
import { terminateOnSignals } from "./signals.ts";
import {
  auditError,
  auditFrame,
  auditLaunch,
  lostRecords,
  type RunAudit,
  startRunAudit,
  warnProtected,
} from "./audit_run.ts";
import { UsageError } from "../errors.ts";

/** Where `run` writes and reads; real stdio by default, replaceable in tests. */
export interface RunIo {
  /** Frames go here. */
  readonly stdout: WritableStream<Uint8Array>;
  /** Driver messages come from here. */
  readonly stdin: ReadableStream<Uint8Array>;
  /** Warnings go here. */
  readonly stderr: (text: string) => void;
}

/** Real stdio. */
export function stdio(): RunIo {
  return {
    stdout: Deno.stdout.writable,
    stdin: Deno.stdin.readable,
    stderr: (text) => void Deno.stderr.writeSync(new TextEncoder().encode(text + "\n")),
  };
}

const RUN_FLAGS = {
  framing: { type: "string" },
  "close-on-eof": { type: "boolean" },
  heartbeat: { type: "string" },
} as const;

function framingOf(values: FlagValues): Framing {
  const value = values.framing ?? "ndjson";
  if (typeof value !== "string" || !(FRAMINGS as readonly string[]).includes(value)) {
    throw new UsageError(`Flag "--framing" must be one of ${FRAMINGS.join(", ")}, got "${String(value)}"`);
  }
  return value as Framing;
}

/** Runs `specter run ARGS`; resolves with the process exit code. */
export async function runCommand(args: readonly string[], io: RunIo = stdio()): Promise<number> {
  const writer = io.stdout.getWriter();
  let framing: Framing = "ndjson"; // Until --framing itself is known to be valid.
  let session: Session;
  let values: FlagValues;
  let audit: RunAudit | undefined;
  try {
    const parsed = parseCommandLine(args, RUN_FLAGS);
    values = parsed.values;
    framing = framingOf(values);
    // From here on the run is audited, also when it fails to start (bad policy, no sandbox).
    audit = startRunAudit(values, parsed.command, "run");
    const options = sessionOptions(values, parsed.command);
    const heartbeat = typeof values.heartbeat === "string" ? parseDuration(values.heartbeat, "heartbeat") : 0;
    if (options.sandbox?.mode === "none") io.stderr(UNSAFE_BANNER);
    session = spawn({ ...options, heartbeatMs: heartbeat, id: audit.runId, artifacts: audit.dir });
    auditLaunch(audit, session);
  } catch (error: unknown) {
    const failure = toSpecterError(error);
    if (audit) {
      auditError(audit, failure);
      audit.log.close();
    }
    // Drivers get the failure as a frame too: the stream is the contract.
    await writer.write(encodeFrames([errorFrame(failure)], framing)).catch(() => {
      // Nobody reads stdout: the error still goes to stderr through the caller.
    });
    writer.releaseLock();
    throw failure;
  }

  const stopForwarding = terminateOnSignals(session);
  const reading = readDriver(session, io.stdin, values["close-on-eof"] === true);
  // The recording stopped (disk full): the run goes on and the error frame is in the stream.
  let recordError: { code: string; message: string } | null = null;
  try {
    for (;;) {
      const batch = await session.nextFrames();
      if (batch.length === 0) break;
      for (const frame of batch) {
        auditFrame(audit, frame);
        if (frame.type === "error" && frame.code === "E_RECORD") recordError ??= frame;
      }
      await writer.write(encodeFrames(batch, framing));
    }
  } catch (error: unknown) {
    // Nobody is reading the frames any more: end the program rather than let it run unobserved.
    io.stderr(`specter: E_IO: Writing frames failed: ${(error as Error).message}`);
    auditError(audit, error);
    const exit = await session.terminate(0);
    auditFrame(audit, exit);
    return exitCodeForError("E_IO");
  } finally {
    stopForwarding();
    reading.cancel();
    writer.releaseLock();
    audit.log.close();
  }
  const exit = await session.exited;
  warnProtected(exit, io.stderr);
  return lostRecords(audit, recordError, exitCodeForExit(exit), io.stderr);
}

function errorFrame(error: SpecterError): Frame {
  return { seq: 0, ts: nowSeconds(), type: "error", ...error.toJSON() };
}

/** Feeds NDJSON driver lines into `session` until stdin ends (or the returned handle is cancelled). */
function readDriver(
  session: Session,
  stdin: ReadableStream<Uint8Array>,
  closeOnEof: boolean,
): { cancel(): void } {
  const reader = stdin.pipeThrough(new TextDecoderStream()).getReader();
  let cancelled = false;
  const handle = (line: string) => {
    if (line.trim() === "" || session.finished) return;
    try {
      session.send(parseDriverLine(line));
    } catch (error: unknown) {
      const failure = toSpecterError(error);
      session.reportError(failure.code, failure.message, { ...failure.details });
    }
  };
  (async () => {
    let buffered = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || cancelled) break;
        buffered += value;
        let newline: number;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          handle(buffered.slice(0, newline));
          buffered = buffered.slice(newline + 1);
        }
      }
      if (!cancelled) handle(buffered);
    } catch (error: unknown) {
      if (!cancelled) session.reportError("E_IO", `Reading driver input failed: ${(error as Error).message}`);
    }
    if (!cancelled && closeOnEof) void session.terminate();
  })();
  return {
    cancel() {
      cancelled = true;
      reader.cancel().catch(() => {/* stdin may already be closed: nothing left to release */});
    },
  };
}
