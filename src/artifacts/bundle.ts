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
import { join } from "node:path";
import { FileError, SessionError, SpecterError } from "../errors.ts";
import {
  closeFd,
  fdInfo,
  fdProcPath,
  LineFile,
  makeDirsBeneath,
  openBeneath,
  openDirectory,
  openWriteDir,
  readFd,
  readFileBeneath,
  walkBeneath,
  writeFileWhole,
} from "../fsafe/mod.ts";
import { sha256 } from "../sandbox/mod.ts";
import { decodeBundleChecksums, encodeBundleChecksums } from "../protocol/mod.ts";

/** The checksum file's name. */
export const CHECKSUMS_FILE = "checksums.json";

/** Where `specter replay` writes inside a bundle, after it was sealed: not covered by its checksums. */
export const REPLAY_DIR = "replay";

/** Writes files into one run's artifacts directory. */
export class ArtifactBundle {
  /** The directory. */
  readonly dir: string;
  /**
   * The directory's descriptor: every file is written beneath it, never by name from the root (an
   * earlier run's program may have planted links in a directory it could write).
   */
  #dirFd: number;
  #events: LineFile | null = null;
  #failure: SessionError | null = null;

  /**
   * Creates `dir` (and `snapshots/`) if needed, one component at a time without following a link a
   * sandboxed program could have planted (throws `E_ARTIFACTS`, `details.reason` `symlink` for one).
   */
  constructor(dir: string) {
    this.dir = dir;
    let dirFd = -1;
    try {
      dirFd = openWriteDir(dir, { create: true, mode: 0o700 });
      closeFd(makeDirsBeneath(dirFd, "snapshots"));
    } catch (error: unknown) {
      closeFd(dirFd);
      const code = error instanceof SpecterError ? error.code : null;
      const symlink = code === "E_PATH_SYMLINK";
      throw new SessionError(
        "E_ARTIFACTS",
        `Cannot create the artifacts directory "${dir}": ${(error as Error).message}${
          symlink ? "; name the real path instead" : ""
        }`,
        {
          cause: error,
          details: {
            dir,
            reason: symlink ? "symlink" : "io",
            ...(code === null ? {} : { cause_code: code }),
          },
        },
      );
    }
    this.#dirFd = dirFd;
  }

  /** The first file that could not be written (`E_ARTIFACTS`), or `null` while all were. */
  get failure(): SessionError | null {
    return this.#failure;
  }

  /** Writes `value` as pretty JSON to `name` (whole or not at all). */
  writeJson(name: string, value: unknown): void {
    this.writeText(name, JSON.stringify(value, null, 2) + "\n");
  }

  /** Writes text to `name` (relative to the bundle; missing folders are made), whole or not at all. */
  writeText(name: string, text: string): void {
    this.#guard(name, () => this.writeFile(name, text));
  }

  /**
   * Writes `data` to `name` (relative to the bundle) whole or not at all, making its missing folders, never
   * through a link; throws (`E_FILE_WRITE`, `E_PATH_SYMLINK`, `E_FILE_TYPE`) instead of marking the bundle
   * incomplete: for what is kept on a best-effort basis (the workspace archive).
   */
  writeFile(name: string, data: string | Uint8Array, mode = 0o600): void {
    if (this.#dirFd < 0) {
      throw new FileError(
        "E_FILE_WRITE",
        `The artifacts bundle "${this.dir}" is finished: "${name}" comes too late`,
        {
          details: { path: name, reason: "finished" },
        },
      );
    }
    const slash = name.lastIndexOf("/");
    const parent = slash < 0 ? this.#dirFd : makeDirsBeneath(this.#dirFd, name.slice(0, slash));
    try {
      // A temporary name in the directory checked, renamed over the name: a link there is replaced.
      writeFileWhole(`${fdProcPath(parent)}/${name.slice(slash + 1)}`, data, "artifact", mode);
    } finally {
      if (parent !== this.#dirFd) closeFd(parent);
    }
  }

  /** Appends one frame (or any JSON value) to `events.ndjson`, written through at once, as a whole line. */
  event(value: unknown): void {
    this.#guard("events.ndjson", () => {
      this.#events ??= LineFile.appendBeneath(
        this.#dirFd,
        "events.ndjson",
        join(this.dir, "events.ndjson"),
        "artifact",
        0o644,
      );
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

  /** Closes `events.ndjson`, writes `checksums.json` over every other file, and closes the directory. */
  finish(): Record<string, string> {
    this.#events?.close();
    this.#events = null;
    try {
      // An incomplete bundle is not sealed: checksums over a partial bundle would vouch for it.
      if (this.#failure !== null || this.#dirFd < 0) return {};
      const sums = checksums(this.#dirFd);
      this.writeText(CHECKSUMS_FILE, encodeBundleChecksums(sums));
      return sums;
    } finally {
      closeFd(this.#dirFd);
      this.#dirFd = -1;
    }
  }
}

/**
 * Largest bundle file hashed (or read by a replay), in bytes. A bigger file gets a marker that never
 * equals a digest: a bundle is untrusted input, and a 2 GB sparse file must not be read whole.
 */
export const MAX_BUNDLE_FILE_BYTES = 256 * 1024 * 1024;

/** Largest `checksums.json` read: a line per file, a few KiB in practice. */
const MAX_CHECKSUMS_BYTES = 16 * 1024 * 1024;

/** sha256 (hex) of bytes or text, as `checksums.json` lists them. */
export function bundleDigest(data: Uint8Array | string): string {
  return sha256(data);
}

/** Marker digests start with `!`, which no sha256 hex does: a marker never verifies, whatever is listed. */
const MARKER = "!";

/**
 * Every entry beneath `rootFd` by relative path with its digest. Each entry is opened beneath the root
 * with no symlink in any component (`openBeneath`) and hashed through the descriptor that was opened:
 * a symlink, special file or over-size file gets a marker instead (never followed, never read).
 */
function digests(rootFd: number, out: Map<string, string>): void {
  walkBeneath(rootFd, (entry) => {
    // A symlink (or an entry that vanished or changed under us) is listed, never followed.
    if ("error" in entry) {
      out.set(entry.path, `${MARKER}${entry.error instanceof FileError ? entry.error.code : "unreadable"}`);
    } else if (entry.kind !== "file") out.set(entry.path, `${MARKER}${entry.kind}`);
    else out.set(entry.path, digestFile(rootFd, entry.path, entry.identity));
  });
}

/** sha256 of the regular file `path` beneath `rootFd`, read through one descriptor; a marker otherwise. */
function digestFile(rootFd: number, path: string, identity: string): string {
  let fd: number;
  try {
    fd = openBeneath(rootFd, path);
  } catch (error: unknown) {
    return `${MARKER}${error instanceof FileError ? error.code : "unreadable"}`;
  }
  try {
    // Swapped between the look and the open: whatever it is now, it is not what was looked at.
    if (fdInfo(fd).identity !== identity) return `${MARKER}changed`;
    return sha256(readFd(fd, { maxBytes: MAX_BUNDLE_FILE_BYTES, what: "bundle file" }, path));
  } catch (error: unknown) {
    return `${MARKER}${error instanceof FileError ? error.code : "unreadable"}`;
  } finally {
    closeFd(fd);
  }
}

/**
 * sha256 of every file in `dir` (recursively) by relative path, except `checksums.json` and the `replay/`
 * folder (a replay writes there after the bundle was sealed; it carries its own checksums). Symlinks and
 * special files are listed with a marker (never followed): one added to a bundle is tampering. `dir` is
 * a path the caller trusts or an open directory descriptor.
 */
export function checksums(dir: string | number): Record<string, string> {
  const rootFd = typeof dir === "number" ? dir : openDirectory(dir);
  try {
    const out = new Map<string, string>();
    digests(rootFd, out);
    return Object.fromEntries(
      [...out].filter(([f]) => f !== CHECKSUMS_FILE && f !== REPLAY_DIR && !f.startsWith(`${REPLAY_DIR}/`))
        .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0),
    );
  } finally {
    if (typeof dir !== "number") closeFd(rootFd);
  }
}

/** What `verifyChecksums` found. */
export interface ChecksumReport {
  /** True when `checksums.json` exists and every file matches it exactly (none missing, none added). */
  readonly ok: boolean;
  /** Files whose content changed, or that are not regular files (symlinks, FIFOs, devices, too large). */
  readonly altered: readonly string[];
  /** Files listed but gone. */
  readonly missing: readonly string[];
  /** Files present but not listed. */
  readonly added: readonly string[];
  /** True when there is no usable `checksums.json` (see {@link ChecksumReport.checksumsFile}). */
  readonly noChecksums: boolean;
  /**
   * `present`; `missing` (no such file); `invalid` (a symlink, special or over-size file, or not a JSON
   * object of digests: tampering, not an incomplete bundle).
   */
  readonly checksumsFile: "present" | "missing" | "invalid";
  /** The digests `checksums.json` lists (null without a usable one), to check later reads against. */
  readonly listed: Readonly<Record<string, string>> | null;
}

function readListed(rootFd: number): Record<string, string> | "missing" | "invalid" {
  let bytes: Uint8Array;
  try {
    bytes = readFileBeneath(rootFd, CHECKSUMS_FILE, {
      maxBytes: MAX_CHECKSUMS_BYTES,
      what: "checksums file",
    });
  } catch (error: unknown) {
    return error instanceof FileError && error.code === "E_PATH_NOT_FOUND" ? "missing" : "invalid";
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return "invalid"; // Not UTF-8: the position adds nothing.
  }
  const decoded = decodeBundleChecksums(text);
  return "value" in decoded ? decoded.value : "invalid";
}

/**
 * Compares a bundle with its `checksums.json`, reading everything by descriptor beneath `dir` (a path
 * the caller trusts, or an open directory descriptor) without following any link.
 */
export function verifyChecksums(dir: string | number): ChecksumReport {
  const rootFd = typeof dir === "number" ? dir : openDirectory(dir);
  try {
    const listed = readListed(rootFd);
    if (typeof listed === "string") {
      return {
        ok: false,
        altered: [],
        missing: [],
        added: [],
        noChecksums: true,
        checksumsFile: listed,
        listed: null,
      };
    }
    const actual = checksums(rootFd);
    const has = (o: Record<string, string>, f: string) => Object.hasOwn(o, f);
    const altered = Object.keys(listed).filter((f) =>
      has(actual, f) && (actual[f] !== listed[f] || actual[f]!.startsWith(MARKER))
    ).sort();
    const missing = Object.keys(listed).filter((f) => !has(actual, f)).sort();
    const added = Object.keys(actual).filter((f) => !has(listed, f)).sort();
    return {
      ok: altered.length === 0 && missing.length === 0 && added.length === 0,
      altered,
      missing,
      added,
      noChecksums: false,
      checksumsFile: "present",
      listed,
    };
  } finally {
    if (typeof dir !== "number") closeFd(rootFd);
  }
}
