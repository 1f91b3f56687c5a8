/**
 * `specter verify GOLDEN [flags] -- CMD…`: runs a command (in the sandbox, like `run`) and compares its
 * normalized final screen (a `.txt` golden) or transcript (a `.cast` golden, or `--what transcript`) with
 * the golden. Exit 0 on a match; 1 and a unified diff on drift. A CI gate.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { fromBase64 } from "../frames/utf8.ts";
import {
  castTranscript,
  FILTER_NAMES,
  type FilterName,
  normalizeText,
  parseFilters,
  unifiedDiff,
} from "../replay/mod.ts";
import { plainText } from "../session/plain_text.ts";
import { spawn } from "../session/spawn_session.ts";
import { snapshotText } from "../terminal/mod.ts";
import { parseCommandLine, sessionOptions, UNSAFE_BANNER } from "./flags.ts";

const VERIFY_FLAGS = {
  update: { type: "boolean" },
  what: { type: "string" },
  normalize: { type: "string" },
  strict: { type: "boolean" },
} as const;

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
  const { values, command } = parseCommandLine(args, VERIFY_FLAGS);
  const [golden, ...rest] = command;
  const dash = args.indexOf("--");
  if (golden === undefined || dash < 0 || args.indexOf(golden) > dash) {
    throw new UsageError("Usage: specter verify GOLDEN [flags] -- CMD ARGS…");
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
  const raw = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  const actual = normalizeText(
    what === "screen" ? snapshotText(await session.screen()) : plainText(raw),
    filters,
  );

  if (values.update === true) {
    await Deno.writeTextFile(golden, actual);
    out(`verify: wrote ${what} golden "${golden}"`);
    return 0;
  }
  let expectedText: string;
  try {
    expectedText = await Deno.readTextFile(golden);
  } catch {
    throw new UsageError(`Golden "${golden}" cannot be read (create it with --update)`);
  }
  let goldenText = expectedText;
  if (golden.endsWith(".cast")) {
    const cast = castTranscript(expectedText);
    if ("problem" in cast) throw new UsageError(`Golden "${golden}" ${cast.problem}`);
    goldenText = cast.text;
  }
  const expected = normalizeText(goldenText, filters);
  const diff = unifiedDiff(expected, actual, [golden, `${what} of ${rest.join(" ")}`]);
  if (diff === "") {
    out(`verify: OK (${what} matches "${golden}")`);
    return 0;
  }
  out(diff.trimEnd());
  out(`verify: DRIFT (${what} differs from "${golden}")`);
  return 1;
}
