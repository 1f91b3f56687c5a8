/**
 * `specter run`: stream frames on stdout, read NDJSON driver messages on stdin.
 *
 * @module
 */
import { SessionError, type SpecterError, toSpecterError, UsageError } from "../errors.ts";
import {
  type DriverLineResult,
  DriverLineSplitter,
  encodeFrames,
  type Framing,
  FRAMINGS,
} from "../frames/mod.ts";
import { type Frame, parseDriverLine } from "../protocol/mod.ts";
import { type Session, spawn } from "../session/mod.ts";
import { nowSeconds } from "../clock.ts";
import { exitCodeForError, exitCodeForExit } from "./exit_codes.ts";
import { type FlagValues, parseCommandLine, sessionOptions, UNSAFE_BANNER } from "./flags.ts";
import { parseDuration } from "./units.ts";
import { openSessionRows } from "./history_rows.ts";
import { terminateOnSignals } from "./signals.ts";
import type { CommandDoc, FlagTable } from "./flag_table.ts";
import { SESSION_GROUPS } from "./session_flags.ts";
import {
  auditError,
  auditFrame,
  auditLaunch,
  lostRecords,
  type RunAudit,
  startRunAudit,
  warnProtected,
} from "./audit_run.ts";
import { type RunNet, startRunNet } from "./net_run.ts";

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
    stderr: (text) => {
      try {
        Deno.stderr.writeSync(new TextEncoder().encode(text + "\n"));
      } catch {
        // stderr is closed too (its reader went away): there is nowhere left to say it.
      }
    },
  };
}

/**
 * Input typed but not yet read by the program beyond which driver input is no longer read (1 MiB): the
 * driver's writes then block (back-pressure) instead of Specter buffering without limit. Messages queued
 * behind unread input (even `terminate`) wait with it; SIGTERM/SIGINT to Specter and `--timeout` do not.
 */
export const INPUT_HIGH_WATER = 1 << 20;

const RUN_FLAGS = {
  framing: {
    type: "string",
    value: FRAMINGS.join("|"),
    description: "Frame encoding (default ndjson; length = 4-byte big-endian size + JSON)",
  },
  "close-on-eof": {
    type: "boolean",
    description: "Terminate the session when stdin ends (default: keep running)",
  },
  heartbeat: { type: "string", value: "DUR", description: "Emit a ping frame every DUR" },
} as const satisfies FlagTable;

/** `specter run`'s help: its own flags, then the sandbox and session flags. */
export const RUN_DOC: CommandDoc = {
  name: "run",
  usage: ["specter run [flags] -- CMD ARGS…"],
  about: `Streams frames (spec/protocol.md) on stdout and reads NDJSON driver messages on stdin, e.g.
  {"v":1,"type":"input","data":"ls\\r"}   {"v":1,"type":"key","key":"ctrl-c"}
  {"v":1,"type":"resize","cols":120,"rows":40}   {"v":1,"type":"signal","signal":"INT"}
  {"v":1,"type":"terminate","grace_ms":500}   {"v":1,"type":"ping","id":1}`,
  groups: [{ title: "Run flags", flags: RUN_FLAGS }, ...SESSION_GROUPS],
};

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
  let net: RunNet | null = null;
  try {
    const parsed = parseCommandLine(args, RUN_DOC);
    values = parsed.values;
    framing = framingOf(values);
    // From here on the run is audited, also when it fails to start (bad policy, no sandbox).
    audit = startRunAudit(values, parsed.command, "run");
    const options = sessionOptions(values, parsed.command);
    const heartbeat = typeof values.heartbeat === "string" ? parseDuration(values.heartbeat, "heartbeat") : 0;
    if (options.sandbox?.mode === "none") io.stderr(UNSAFE_BANNER);
    net = startRunNet(options, audit.log);
    session = spawn({
      ...options,
      heartbeatMs: heartbeat,
      id: audit.runId,
      artifacts: audit.dir,
      ...(net === null ? {} : { netRelay: net.relay }),
    });
    net?.attach(session);
    auditLaunch(audit, session);
  } catch (error: unknown) {
    await net?.close();
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
  // Opened once the program runs: its start does not wait on the database.
  const rows = openSessionRows(session, "human", io.stderr);
  // The recording stopped (disk full): the run goes on and the error frame is in the stream.
  let recordError: { code: string; message: string } | null = null;
  // Frames could not be written: the program is stopped, and its remaining frames are still taken (and
  // audited) so that the session can drain its terminal and end.
  let writeFailure: SpecterError | null = null;
  try {
    for (;;) {
      const batch = await session.nextFrames();
      if (batch.length === 0) break;
      for (const frame of batch) {
        auditFrame(audit, frame);
        rows.frame(frame);
        if (frame.type === "error" && frame.code === "E_RECORD") recordError ??= frame;
      }
      if (writeFailure !== null) continue;
      try {
        await writer.write(encodeFrames(batch, framing));
      } catch (error: unknown) {
        writeFailure = frameWriteFailure(error);
        io.stderr(`specter: ${writeFailure.code}: ${writeFailure.message}`);
        auditError(audit, writeFailure);
        // Nobody is reading the frames any more: end the program rather than let it run unobserved.
        void session.terminate();
      }
    }
  } finally {
    stopForwarding();
    reading.cancel();
    writer.releaseLock();
    // Its last connections are reported (audited) as it closes: before the audit log is.
    await net?.close();
    audit.log.close();
    rows.close();
  }
  const exit = await session.exited;
  warnProtected(exit, io.stderr);
  if (writeFailure !== null) return exitCodeForError(writeFailure.code);
  return lostRecords(audit, recordError, exitCodeForExit(exit), io.stderr);
}

/** `E_STDOUT_CLOSED` when the reader of stdout went away (EPIPE), `E_IO` for any other write failure. */
function frameWriteFailure(error: unknown): SpecterError {
  const message = error instanceof Error ? error.message : String(error);
  return error instanceof Deno.errors.BrokenPipe
    ? new SessionError("E_STDOUT_CLOSED", `Nobody reads the frames any more: ${message}`, { cause: error })
    : new SessionError("E_IO", `Writing frames failed: ${message}`, { cause: error });
}

function errorFrame(error: SpecterError): Frame {
  return { seq: 0, ts: nowSeconds(), type: "error", ...error.toJSON() };
}

/**
 * Feeds NDJSON driver lines into `session` until stdin ends (or the returned handle is cancelled). Lines
 * are split as bytes, in linear time and capped (`E_PROTOCOL_LINE_TOO_LONG`), then decoded strictly
 * (`E_PROTOCOL_UTF8`); stdin is not read while the program leaves {@link INPUT_HIGH_WATER} bytes of
 * input unread or the frame consumer is behind.
 */
function readDriver(
  session: Session,
  stdin: ReadableStream<Uint8Array>,
  closeOnEof: boolean,
): { cancel(): void } {
  const reader = chunkReader(stdin);
  const splitter = new DriverLineSplitter();
  let cancelled = false;
  const report = (error: unknown) => {
    const failure = toSpecterError(error);
    session.reportError(failure.code, failure.message, { ...failure.details });
  };
  const handle = (result: DriverLineResult) => {
    if (session.finished) return; // The exit frame is out: nothing can be answered any more.
    if ("error" in result) {
      report(result.error);
      return;
    }
    if (result.line.trim() === "") return;
    try {
      session.send(parseDriverLine(result.line));
    } catch (error: unknown) {
      report(error);
    }
  };
  (async () => {
    try {
      for (;;) {
        await session.inputRoom(INPUT_HIGH_WATER);
        if (cancelled) break;
        const value = await reader.read();
        if (value === null || cancelled) break;
        for (const result of splitter.push(value)) handle(result);
      }
      if (!cancelled) { for (const result of splitter.end()) handle(result); }
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

/** Reads a stream in chunks; `null` at its end. */
interface ChunkReader {
  read(): Promise<Uint8Array | null>;
  cancel(): Promise<void>;
}

const READ_CHUNK_BYTES = 64 * 1024;

/**
 * Reads `stream` into one reused buffer when it is a byte stream (stdin is): a flood of input then
 * leaves no garbage per chunk for the collector to catch up with. Other streams are read as they come.
 */
function chunkReader(stream: ReadableStream<Uint8Array>): ChunkReader {
  let byob: ReadableStreamBYOBReader;
  try {
    byob = stream.getReader({ mode: "byob" });
  } catch {
    // Not a byte stream (a test's stream): chunks as the stream makes them.
    const reader = stream.getReader();
    return {
      read: async () => {
        const { value, done } = await reader.read();
        return done ? null : value;
      },
      cancel: () => reader.cancel(),
    };
  }
  let buffer = new Uint8Array(READ_CHUNK_BYTES);
  return {
    read: async () => {
      const { value, done } = await byob.read(buffer);
      if (done || value === undefined) return null;
      // The buffer was transferred into `value`; the splitter copies what it keeps before the next read.
      buffer = new Uint8Array(value.buffer);
      return value;
    },
    cancel: () => byob.cancel(),
  };
}
