/**
 * `specter exec`: run a program to completion and print one JSON result.
 *
 * @module
 */
import { toSpecterError } from "../errors.ts";
import { encodeExecResult, encodeExecResultAround, type ExecResult } from "../protocol/mod.ts";
import { spawn } from "../session/mod.ts";
import { exitCodeForError, exitCodeForExit } from "./exit_codes.ts";
import { parseCommandLine, sessionOptions, UNSAFE_BANNER } from "./flags.ts";
import { openSessionRows } from "./history_rows.ts";
import { parseEscapes } from "./units.ts";
import {
  auditError,
  auditFrame,
  auditLaunch,
  lostRecords,
  startRunAudit,
  warnProtected,
} from "./audit_run.ts";
import { terminateOnSignals } from "./signals.ts";
import type { CommandDoc, FlagTable } from "./flag_table.ts";
import { SESSION_GROUPS } from "./session_flags.ts";
import { ExecOutput } from "./exec_output.ts";
import { execPolicyHint, OutputTail } from "./exec_hint.ts";
import { type RunNet, startRunNet } from "./net_run.ts";

const EXEC_FLAGS = {
  input: {
    type: "string",
    value: "TEXT",
    description: "Type TEXT into the terminal at start; escapes \\r \\n \\t \\e \\xHH \\\\ are " +
      "interpreted (\\r is Enter)",
  },
  raw: {
    type: "boolean",
    description: "Keep output raw (default: ANSI stripped, CRLF → LF, CR redraws collapsed)",
  },
} as const satisfies FlagTable;

/** `specter exec`'s help: its own flags, then the sandbox and session flags. */
export const EXEC_DOC: CommandDoc = {
  name: "exec",
  usage: ["specter exec [flags] -- CMD ARGS…"],
  about: `Runs the command to completion and prints one JSON object:
  {success, session_id, output, exit_code, signal, timed_out, truncated, duration_ms}
Exits non-zero when the program failed.`,
  groups: [{ title: "Exec flags", flags: EXEC_FLAGS }, ...SESSION_GROUPS],
};

/**
 * `exec`'s output budget when `--max-output` is not given: 16 MiB. `exec` holds the whole output to print
 * it as one document, so a program that prints without end (`exec -- yes`) must meet a ceiling: it ends
 * with `truncated: true` (an `overflow` frame, max_output) instead of growing without bound.
 */
export const EXEC_DEFAULT_MAX_OUTPUT = 16 * 1024 * 1024;

const encoder = new TextEncoder();

/**
 * Runs `specter exec ARGS`, writing the result (one line of JSON) with `write`, in pieces: the output is
 * written as it is escaped, never built into one document. Resolves with the process exit code.
 */
export async function execCommand(
  args: readonly string[],
  write: (bytes: Uint8Array) => void,
  warn: (text: string) => void,
): Promise<number> {
  const { values, command } = parseCommandLine(args, EXEC_DOC);
  // From here on the run is audited, also when it fails to start (bad policy, no sandbox).
  const audit = startRunAudit(values, command, "exec");
  const started = performance.now();
  let session;
  let input: string | undefined;
  let options;
  let net: RunNet | null = null;
  try {
    options = sessionOptions(values, command);
    input = typeof values.input === "string" ? parseEscapes(values.input, "input") : undefined;
    if (options.sandbox?.mode === "none") warn(UNSAFE_BANNER);
    net = startRunNet(options, audit.log);
    session = spawn({
      maxOutputBytes: EXEC_DEFAULT_MAX_OUTPUT,
      ...options,
      id: audit.runId,
      artifacts: audit.dir,
      ...(net === null ? {} : { netRelay: net.relay }),
    });
    net?.attach(session);
    auditLaunch(audit, session);
  } catch (error: unknown) {
    await net?.close();
    const failure = toSpecterError(error);
    auditError(audit, failure);
    audit.log.close();
    // Usage and policy errors are the caller's mistake: reported like every other usage error.
    if (exitCodeForError(failure.code) === 2) throw failure;
    const result: ExecResult = {
      success: false,
      session_id: null,
      output: "",
      exit_code: null,
      signal: null,
      timed_out: false,
      truncated: false,
      duration_ms: Math.round(performance.now() - started),
      error: { code: failure.code, message: failure.message },
    };
    write(encoder.encode(encodeExecResult(result) + "\n"));
    warn(`specter: ${failure.code}: ${failure.message}`);
    return exitCodeForError(failure.code);
  }
  terminateOnSignals(session);
  if (input !== undefined) session.write(input);
  // Opened once the program runs: its start does not wait on the database.
  const rows = openSessionRows(session, "human", warn);
  // Kept as it comes, in proportion to the result (see ExecOutput): `exec -- yes` keeps 16 MiB at most.
  const output = new ExecOutput(values.raw === true);
  const lastText = new OutputTail();
  let recordError: { code: string; message: string } | null = null;
  for await (const frame of session.frames()) {
    auditFrame(audit, frame);
    rows.frame(frame);
    if (frame.type === "error" && frame.code === "E_RECORD") recordError ??= frame;
    if (frame.type === "stdout") {
      output.stdout(frame.data, frame.binary === true);
      if (frame.binary !== true) lastText.push(frame.data);
    }
  }
  output.end();
  // Its last connections are reported (audited) as it closes: before the audit log is.
  await net?.close();
  audit.log.close();
  rows.close();
  const exit = await session.exited;
  const result: ExecResult = {
    success: exit.code === 0 && !exit.timed_out,
    session_id: exit.session.id,
    output: "", // Written in pieces below.
    exit_code: exit.code,
    signal: exit.signal,
    timed_out: exit.timed_out,
    truncated: session.truncated,
    duration_ms: exit.duration_ms,
  };
  if (exit.protected_created !== undefined) result.protected_created = exit.protected_created;
  warnProtected(exit, warn);
  // Once, on stderr: stdout is the result's one JSON document.
  const hint = execPolicyHint(lastText.text, options.sandbox, options.cwd ?? Deno.cwd());
  if (hint !== undefined) warn(hint);
  // The run went on, but Specter could not keep all of its record (e.g. the disk filled).
  const lost = audit.log.failure ?? recordError;
  if (lost !== null) result.error = { code: lost.code, message: lost.message };
  const { head, tail } = encodeExecResultAround(result);
  write(encoder.encode(head));
  output.writeJson(write);
  write(encoder.encode(tail + "\n"));
  return lostRecords(audit, recordError, result.success ? 0 : Math.max(1, exitCodeForExit(exit)), warn);
}
