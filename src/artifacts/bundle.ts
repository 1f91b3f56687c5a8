/**
 * The artifact bundle of a scenario run, with a predictable layout:
 *
 * ```
 * run.json                 RunResult: status, error code, per-step results and timings
 * scenario.resolved.json   the scenario as run (defaults applied)
 * policy.effective.json    the policy as enforced
 * events.ndjson            every frame, input included
 * session.cast             asciicast v2 recording
 * snapshots/NNN-name.txt   screen snapshots (text) and .json
 * audit.ndjson             the audit log
 * checksums.json           sha256 of every other file
 * ```
 *
 * Files are written as the run goes, so a failing or killed run still leaves what it produced.
 *
 * On a full disk every file is whole or absent: JSON and text files are written to a temporary name and
 * renamed into place, `events.ndjson` gets whole lines only (truncated back to the last one when a write
 * is cut short). Writing never throws into the run: the first failure is kept as {@link
 * ArtifactBundle.failure} (`E_ARTIFACTS`), later writes are skipped, and the run's result says so.
 *
 * @module
 */
import { join, relative } from "node:path";
import { SessionError } from "../errors.ts";
import { LineFile, writeFileWhole } from "../fsafe/mod.ts";
import { sha256 } from "../sandbox/fingerprint.ts";

/** The checksum file's name. */
export const CHECKSUMS_FILE = "checksums.json";

/** Where `specter replay` writes inside a bundle, after it was sealed: not covered by its checksums. */
export const REPLAY_DIR = "replay";

/** Writes files into one run's artifacts directory. */
export class ArtifactBundle {
  /** The directory. */
  readonly dir: string;
  #events: LineFile | null = null;
  #failure: SessionError | null = null;

  /** Creates `dir` (and `snapshots/`) if needed (throws `E_ARTIFACTS`). */
  constructor(dir: string) {
    this.dir = dir;
    try {
      Deno.mkdirSync(join(dir, "snapshots"), { recursive: true, mode: 0o700 });
    } catch (error: unknown) {
      throw new SessionError(
        "E_ARTIFACTS",
        `Cannot create the artifacts directory "${dir}": ${(error as Error).message}`,
        {
          cause: error,
          details: { dir },
        },
      );
    }
  }

  /** The first file that could not be written (`E_ARTIFACTS`), or `null` while all were. */
  get failure(): SessionError | null {
    return this.#failure;
  }

  /** Writes `value` as pretty JSON to `name` (whole or not at all). */
  writeJson(name: string, value: unknown): void {
    this.writeText(name, JSON.stringify(value, null, 2) + "\n");
  }

  /** Writes text to `name` (relative to the bundle), whole or not at all. */
  writeText(name: string, text: string): void {
    this.#guard(name, () => writeFileWhole(join(this.dir, name), text, "artifact"));
  }

  /** Appends one frame (or any JSON value) to `events.ndjson`, written through at once, as a whole line. */
  event(value: unknown): void {
    this.#guard("events.ndjson", () => {
      this.#events ??= LineFile.append(join(this.dir, "events.ndjson"), "artifact", 0o644);
      this.#events.append(JSON.stringify(value) + "\n");
    });
  }

  /** Runs one write; after the first failure nothing more is written (the bundle is already incomplete). */
  #guard(name: string, write: () => void): void {
    if (this.#failure !== null) return;
    try {
      write();
    } catch (error: unknown) {
      const details = (error as { details?: Record<string, unknown> }).details ?? {};
      this.#failure = new SessionError(
        "E_ARTIFACTS",
        `The artifacts bundle "${this.dir}" is incomplete: ${(error as Error).message}`,
        { cause: error, details: { dir: this.dir, file: name, reason: String(details.reason ?? "io") } },
      );
    }
  }

  /** The relative path of snapshot number `index` (1-based) named `name`, without extension. */
  static snapshotPath(index: number, name: string): string {
    return `snapshots/${String(index).padStart(3, "0")}-${name}`;
  }

  /** Closes `events.ndjson` and writes `checksums.json` over every other file. */
  finish(): Record<string, string> {
    this.#events?.close();
    this.#events = null;
    // An incomplete bundle is not sealed: checksums over a partial bundle would vouch for it.
    if (this.#failure !== null) return {};
    const sums = checksums(this.dir);
    this.writeJson(CHECKSUMS_FILE, sums);
    return sums;
  }
}

function files(dir: string, root = dir): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    // Symlinks and special files are listed too (never followed): one added to a bundle is tampering.
    if (entry.isDirectory) out.push(...files(path, root));
    else out.push(relative(root, path));
  }
  return out.sort();
}

/**
 * sha256 of every file in `dir` (recursively) by relative path, except `checksums.json` and the `replay/`
 * folder (a replay writes there after the bundle was sealed; it carries its own checksums).
 */
export function checksums(dir: string): Record<string, string> {
  return Object.fromEntries(
    files(dir).filter((f) => f !== CHECKSUMS_FILE && !f.startsWith(`${REPLAY_DIR}/`)).map((
      f,
    ) => [f, digest(join(dir, f))]),
  );
}

/** sha256 of a regular file; a symlink or special file gets a marker that never equals a digest. */
function digest(path: string): string {
  const info = Deno.lstatSync(path);
  if (info.isSymlink) return `symlink:${Deno.readLinkSync(path)}`;
  return info.isFile ? sha256(Deno.readFileSync(path)) : "special";
}

/** What `verifyChecksums` found. */
export interface ChecksumReport {
  /** True when `checksums.json` exists and every file matches it exactly (none missing, none added). */
  readonly ok: boolean;
  /** Files whose content changed. */
  readonly altered: readonly string[];
  /** Files listed but gone. */
  readonly missing: readonly string[];
  /** Files present but not listed. */
  readonly added: readonly string[];
  /** True when there is no readable `checksums.json`. */
  readonly noChecksums: boolean;
}

/** Compares a bundle with its `checksums.json`. */
export function verifyChecksums(dir: string): ChecksumReport {
  let listed: Record<string, string>;
  try {
    listed = JSON.parse(Deno.readTextFileSync(join(dir, CHECKSUMS_FILE)));
  } catch {
    return { ok: false, altered: [], missing: [], added: [], noChecksums: true }; // Missing or corrupt.
  }
  const actual = checksums(dir);
  const altered = Object.keys(listed).filter((f) => f in actual && actual[f] !== listed[f]).sort();
  const missing = Object.keys(listed).filter((f) => !(f in actual)).sort();
  const added = Object.keys(actual).filter((f) => !(f in listed)).sort();
  return {
    ok: altered.length === 0 && missing.length === 0 && added.length === 0,
    altered,
    missing,
    added,
    noChecksums: false,
  };
}
