/**
 * Verifying a bundle before a replay: `checksums.json` against the tree (by descriptor) and every later
 * read, and `events.ndjson` frame by frame. Failures are thrown, or collected under `--allow-unverified`.
 *
 * @module
 */
import { CHECKSUMS_FILE, verifyChecksums } from "../artifacts/mod.ts";
import { SpecterError } from "../errors.ts";
import { FrameSchema } from "../protocol/mod.ts";
import { type BundleDir, POLICY_FILE } from "./_bundle.ts";

/** A failed bundle check: thrown, or (with `--allow-unverified`) recorded in the report. */
export type Fail = (
  code: "E_REPLAY_INCOMPLETE" | "E_REPLAY_TAMPERED" | "E_REPLAY_EVENTS",
  message: string,
) => void;

function tampered(dir: string, message: string, files: readonly string[]): SpecterError {
  return new SpecterError("E_REPLAY_TAMPERED", `Bundle "${dir}": ${message}`, { details: { dir, files } });
}

/**
 * Checks `checksums.json` against the bundle tree (by descriptor, no link followed) and arms `bundle`
 * to check every later read against it. A missing `checksums.json` is `E_REPLAY_INCOMPLETE`; any other
 * difference `E_REPLAY_TAMPERED`; the recorded policy altered or removed always throws.
 */
export function checkChecksums(bundle: BundleDir, fail: Fail): void {
  const dir = bundle.path;
  const report = verifyChecksums(bundle.fd);
  if (report.checksumsFile === "missing") {
    return fail(
      "E_REPLAY_INCOMPLETE",
      `Bundle "${dir}": "${CHECKSUMS_FILE}" is missing: nothing vouches for it`,
    );
  }
  if (report.checksumsFile === "invalid" || report.listed === null) {
    return fail(
      "E_REPLAY_TAMPERED",
      `Bundle "${dir}": "${CHECKSUMS_FILE}" is not a regular file holding an object of digests`,
    );
  }
  // The recorded policy is never let through unverified: altered, removed, or present but unlisted is
  // tampering. Neither listed nor present is an incomplete bundle (recordedPolicyText says so).
  if ([...report.altered, ...report.missing, ...report.added].includes(POLICY_FILE)) {
    throw tampered(
      dir,
      `"${POLICY_FILE}" does not match "${CHECKSUMS_FILE}" (altered, removed or unlisted)`,
      [
        POLICY_FILE,
      ],
    );
  }
  bundle.vouch(report.listed, (name) => {
    if (name === POLICY_FILE) {
      throw tampered(dir, `"${name}" changed after the bundle was verified`, [name]);
    }
    fail("E_REPLAY_TAMPERED", `Bundle "${dir}": "${name}" changed after the bundle was verified`);
  });
  if (report.ok) return;
  const what = [
    ...report.altered.map((f) => `"${f}" altered`),
    ...report.missing.map((f) => `"${f}" missing`),
    ...report.added.map((f) => `"${f}" added`),
  ];
  const shown = what.length > 20 ? [...what.slice(0, 20), `and ${what.length - 20} more`] : what;
  fail("E_REPLAY_TAMPERED", `Bundle "${dir}" does not match its checksums: ${shown.join(", ")}`);
}

/** Checks that `events.ndjson` exists (`E_REPLAY_INCOMPLETE`) and every line is a valid frame (`E_REPLAY_EVENTS`). */
export function checkEvents(bundle: BundleDir, fail: Fail): void {
  const dir = bundle.path;
  const text = bundle.read("events.ndjson");
  if (text === null) return fail("E_REPLAY_INCOMPLETE", `Bundle "${dir}": "events.ndjson" is missing`);
  const bad = (why: string) => fail("E_REPLAY_EVENTS", `Bundle "${dir}": events.ndjson ${why}`);
  const lines = text.split("\n").filter((l) => l !== "");
  if (lines.length === 0) return bad("is empty");
  for (const [i, line] of lines.entries()) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return bad(`line ${i + 1} is not JSON`); // The parse error adds nothing for the reader.
    }
    if (!FrameSchema.safeParse(value).success) return bad(`line ${i + 1} is not a valid frame`);
  }
}
