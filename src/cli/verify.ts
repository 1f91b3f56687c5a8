/**
 * `specter verify GOLDEN [flags] -- CMD…`: runs a command (in the sandbox, like `run`) and compares its
 * normalized final screen (a `.txt` golden) or transcript (a `.cast` golden, or `--what transcript`) with
 * the golden. Exit 0 on a match; 1 and a unified diff on drift. A CI gate.
 *
 * @module
 */
import { basename, dirname } from "node:path";
import { FileError, UsageError } from "../errors.ts";
import {
  closeFd,
  fdInfo,
  fdProcPath,
  openBeneath,
  openWriteDir,
  readRegularFile,
  writeFileWhole,
} from "../fsafe/mod.ts";
import { concatBytes, fromBase64 } from "../frames/mod.ts";
import { FILTER_NAMES, type FilterName, normalizeText, parseFilters } from "../policy/mod.ts";
import { castTranscript, unifiedDiff } from "../replay/mod.ts";
import { plainText, spawn } from "../session/mod.ts";
import { snapshotText } from "../terminal/mod.ts";
import { parseCommandLine, sessionOptions, UNSAFE_BANNER } from "./flags.ts";
import type { CommandDoc, FlagTable } from "./flag_table.ts";
import { sessionGroupsWithout } from "./session_flags.ts";
import { paint } from "./colour.ts";

const VERIFY_FLAGS = {
  what: {
    type: "string",
    value: "WHAT",
    description: "screen or transcript (default: transcript for a .cast golden, screen otherwise)",
  },
  normalize: {
    type: "string",
    value: "LIST",
    description: `all (default), none, or filters: ${FILTER_NAMES.join(",")}`,
  },
  strict: { type: "boolean", description: "No normalization at all (wins over --normalize)" },
  update: {
    type: "boolean",
    description: "Write the normalized result as the golden instead of comparing (not a .cast golden: " +
      "that is recorded with specter run --record)",
  },
} as const satisfies FlagTable;

/** `specter verify`'s help: its own flags, then the sandbox and session flags. */
export const VERIFY_DOC: CommandDoc = {
  name: "verify",
  usage: ["specter verify GOLDEN [flags] -- CMD ARGS…"],
  about:
    `Runs the command in the sandbox, like run, and compares its final screen (a .txt golden) or its transcript
(its output as plain text: a .cast golden, or --what transcript) with the golden, both normalized first.
Without --update the golden is read and checked before anything runs. The command gets 60s unless
--timeout says otherwise; its exit status is not compared. No audit log is written. A CI gate.
Exits 0 on a match (verify: OK), 1 with a unified diff on drift (verify: DRIFT), 2 for bad usage or a
golden that is missing (create it with --update), not a regular file, over 64 MiB or not UTF-8. --update
never writes through a symlink the command could have planted (E_PATH_SYMLINK): name the real file.`,
  groups: [{ title: "Verify flags", flags: VERIFY_FLAGS }, ...sessionGroupsWithout(["artifacts"])],
};

/**
 * Largest golden read, in bytes: a screen golden is a few KiB, a `.cast` golden of a long session some
 * MiB. Over the cap is `E_FILE_TOO_LARGE`, before the command runs.
 */
export const MAX_GOLDEN_BYTES = 64 * 1024 * 1024;

/**
 * Reads the golden the user named (a symlink there is the user's choice) through one non-blocking
 * descriptor: a FIFO, device or directory is `E_FILE_TYPE`, a file over {@link MAX_GOLDEN_BYTES}
 * `E_FILE_TOO_LARGE`, a missing one `E_PATH_NOT_FOUND` (with the hint to create it), invalid UTF-8
 * `E_FILE_READ`.
 */
function readGolden(golden: string): string {
  let bytes: Uint8Array;
  try {
    bytes = readRegularFile(golden, { maxBytes: MAX_GOLDEN_BYTES, what: "golden" });
  } catch (error: unknown) {
    if (error instanceof FileError && error.code === "E_PATH_NOT_FOUND") {
      throw new FileError("E_PATH_NOT_FOUND", `Golden "${golden}" does not exist (create it with --update)`, {
        cause: error,
        details: { path: golden },
      });
    }
    throw error;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error: unknown) {
    throw new FileError("E_FILE_READ", `Golden "${golden}" is not valid UTF-8`, {
      cause: error,
      details: { path: golden },
    });
  }
}

/**
 * Writes a golden whole or not at all (temporary file renamed over it; a full disk is `E_FILE_WRITE`
 * and leaves the old golden). The verified command may have been able to write where the golden lies, so
 * nothing there is followed: the directory is opened by descriptor (links only where no sandbox can
 * write), an existing golden that is a symlink is `E_PATH_SYMLINK` (the program could have pointed it at
 * `~/.bashrc`; name the real file), anything but a regular file `E_FILE_TYPE` (a FIFO would block).
 */
function writeGolden(golden: string, text: string): void {
  const dirFd = openWriteDir(dirname(golden));
  try {
    let handle = -1;
    try {
      handle = openBeneath(dirFd, basename(golden));
      const kind = fdInfo(handle).kind;
      if (kind !== "file") {
        throw new FileError("E_FILE_TYPE", `Golden "${golden}" is a ${kind}, not a regular file`, {
          details: { path: golden, kind },
        });
      }
    } catch (error: unknown) {
      if (!(error instanceof FileError) || error.code !== "E_PATH_NOT_FOUND") throw error;
      // Missing: created below.
    } finally {
      closeFd(handle);
    }
    writeFileWhole(`${fdProcPath(dirFd)}/${basename(golden)}`, text, "golden", 0o666);
  } finally {
    closeFd(dirFd);
  }
}

/** Default wall-clock guard for a verified command (a CI gate must end). */
const DEFAULT_TIMEOUT_MS = 60_000;

function filtersOf(normalize: string | undefined, strict: boolean): FilterName[] {
  if (strict) return [];
  return normalize === undefined ? [...FILTER_NAMES] : parseFilters(normalize);
}

/** Runs `specter verify ARGS`; resolves with the exit code. */
export async function verifyCommand(
  args: readonly string[],
  out: (text: string) => void,
  warn: (text: string) => void,
): Promise<number> {
  const { values, command } = parseCommandLine(args, VERIFY_DOC);
  const [golden, ...rest] = command;
  const dash = args.indexOf("--");
  // Everything after "--" is the command; exactly one positional (the golden) may come before it.
  const before = dash < 0 ? command.length : command.length - (args.length - dash - 1);
  if (golden === undefined || dash < 0 || before !== 1) {
    throw new UsageError("Usage: specter verify GOLDEN [flags] -- CMD ARGS…", {
      details: { positionals_before_dash: before },
    });
  }
  const what = typeof values.what === "string"
    ? values.what
    : golden.endsWith(".cast")
    ? "transcript"
    : "screen";
  if (what !== "screen" && what !== "transcript") {
    throw new UsageError(`Flag "--what" must be screen or transcript, got "${what}"`);
  }
  if (values.update === true && golden.endsWith(".cast")) {
    throw new UsageError(
      "A .cast golden is made by recording a run (specter run --record FILE.cast), not by --update",
    );
  }
  const filters = filtersOf(
    typeof values.normalize === "string" ? values.normalize : undefined,
    values.strict === true,
  );
  const options = sessionOptions(values, rest);
  // The golden is read (and checked) before anything runs: a bad golden fails fast, without a run.
  const expectedText = values.update === true ? "" : readGolden(golden);
  let goldenText = expectedText;
  if (golden.endsWith(".cast") && values.update !== true) {
    const cast = castTranscript(expectedText);
    if ("problem" in cast) throw new UsageError(`Golden "${golden}" ${cast.problem}`);
    goldenText = cast.text;
  }
  if (options.sandbox?.mode === "none") warn(UNSAFE_BANNER);
  const session = spawn({
    ...options,
    screen: what === "screen",
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const chunks: Uint8Array[] = [];
  const encoder = new TextEncoder();
  for await (const frame of session.frames()) {
    if (frame.type === "stdout") {
      chunks.push(frame.binary ? fromBase64(frame.data) : encoder.encode(frame.data));
    }
  }
  const raw = new TextDecoder().decode(concatBytes(chunks));
  const actual = normalizeText(
    what === "screen" ? snapshotText(await session.screen()) : plainText(raw),
    filters,
  );

  if (values.update === true) {
    writeGolden(golden, actual);
    out(`verify: wrote ${what} golden "${golden}"`);
    return 0;
  }
  const expected = normalizeText(goldenText, filters);
  const diff = unifiedDiff(expected, actual, [golden, `${what} of ${rest.join(" ")}`]);
  const colour = paint();
  if (diff === "") {
    out(`verify: ${colour.ok("OK")} (${what} matches "${golden}")`);
    return 0;
  }
  // As git colours a diff: what the golden has red, what the run printed green (headers stay plain).
  out(
    diff.trimEnd().split("\n").map((line) =>
      /^-(?!--)/.test(line) ? colour.bad(line) : /^\+(?!\+\+)/.test(line) ? colour.ok(line) : line
    ).join("\n"),
  );
  out(`verify: ${colour.bad("DRIFT")} (${what} differs from "${golden}")`);
  return 1;
}
