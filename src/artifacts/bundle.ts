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
 * @module
 */
import { join, relative } from "node:path";
import { SessionError } from "../errors.ts";
import { sha256 } from "../sandbox/fingerprint.ts";

/** The checksum file's name. */
export const CHECKSUMS_FILE = "checksums.json";

/** Where `specter replay` writes inside a bundle, after it was sealed: not covered by its checksums. */
export const REPLAY_DIR = "replay";

/** Writes files into one run's artifacts directory. */
export class ArtifactBundle {
  /** The directory. */
  readonly dir: string;
  #events: Deno.FsFile | null = null;

  /** Creates `dir` (and `snapshots/`) if needed (throws `E_IO`). */
  constructor(dir: string) {
    this.dir = dir;
    try {
      Deno.mkdirSync(join(dir, "snapshots"), { recursive: true, mode: 0o700 });
    } catch (error: unknown) {
      throw new SessionError(
        "E_IO",
        `Cannot create the artifacts directory "${dir}": ${(error as Error).message}`,
        {
          cause: error,
          details: { dir },
        },
      );
    }
  }

  /** Writes `value` as pretty JSON to `name`. */
  writeJson(name: string, value: unknown): void {
    Deno.writeTextFileSync(join(this.dir, name), JSON.stringify(value, null, 2) + "\n");
  }

  /** Writes text to `name` (relative to the bundle). */
  writeText(name: string, text: string): void {
    Deno.writeTextFileSync(join(this.dir, name), text);
  }

  /** Appends one frame (or any JSON value) to `events.ndjson`, written through at once. */
  event(value: unknown): void {
    this.#events ??= Deno.openSync(join(this.dir, "events.ndjson"), { append: true, create: true });
    const bytes = new TextEncoder().encode(JSON.stringify(value) + "\n");
    for (let written = 0; written < bytes.length;) written += this.#events.writeSync(bytes.subarray(written));
  }

  /** The relative path of snapshot number `index` (1-based) named `name`, without extension. */
  static snapshotPath(index: number, name: string): string {
    return `snapshots/${String(index).padStart(3, "0")}-${name}`;
  }

  /** Closes `events.ndjson` and writes `checksums.json` over every other file. */
  finish(): Record<string, string> {
    this.#events?.close();
    this.#events = null;
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
