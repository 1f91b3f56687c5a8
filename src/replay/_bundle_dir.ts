/**
 * A bundle directory opened once and read by descriptor: every file resolved beneath it with no
 * symlink in any component, checked and read through one descriptor, regular files only, capped, and
 * (once armed) hashed against the bundle's checksums as it is read.
 *
 * @module
 */
import { bundleDigest, MAX_BUNDLE_FILE_BYTES } from "../artifacts/mod.ts";
import { FileError, type FileErrorCode, SpecterError } from "../errors.ts";
import { closeFd, fdInfo, fdProcPath, openBeneath, openDirectory, readFileBeneath } from "../fsafe/mod.ts";

/** An `E_REPLAY_BUNDLE` error about `dir`. */
export function bundleError(dir: string, message: string, file?: string): SpecterError {
  return new SpecterError("E_REPLAY_BUNDLE", `Bundle "${dir}": ${message}`, {
    details: { dir, ...(file === undefined ? {} : { file }) },
  });
}

/** Caps by bundle file (bytes); anything else read from a bundle gets {@link MAX_BUNDLE_FILE_BYTES}. */
const CAPS: Readonly<Record<string, number>> = {
  "scenario.resolved.json": 16 * 1024 * 1024,
  "policy.effective.json": 1024 * 1024,
  "run.json": 64 * 1024 * 1024,
};

/** The cap for snapshots and goldens: the largest screen's JSON is a few MiB. */
export const MAX_SNAPSHOT_BYTES = 32 * 1024 * 1024;

/**
 * A bundle directory opened once: every file is resolved beneath this descriptor (relative, no `..`,
 * no symlink in any component), checked and read through one descriptor, regular files only, capped.
 * The directory's own path is the user's (a symlink there is followed once, when it is opened).
 */
export class BundleDir {
  /** The directory as the user named it (for messages). */
  readonly path: string;
  #fd: number;
  #listed: Readonly<Record<string, string>> | null = null;
  #mismatch: (name: string) => void = () => {};

  /** Opens `path` (throws `E_REPLAY_BUNDLE` when it is not a directory). */
  constructor(path: string) {
    this.path = path;
    try {
      this.#fd = openDirectory(path);
    } catch (error: unknown) {
      throw bundleError(path, `is not a readable directory: ${(error as Error).message}`);
    }
  }

  /** The `O_PATH` descriptor of the directory (valid until {@link BundleDir.close}). */
  get fd(): number {
    return this.#fd;
  }

  /**
   * A file's text, or null when it does not exist. A symlink, `..` or absolute path, FIFO, device,
   * directory or over-size file is the `E_PATH_*`/`E_FILE_*` error naming the bundle and the file;
   * invalid UTF-8 is `E_REPLAY_BUNDLE`.
   */
  read(name: string, maxBytes = CAPS[name] ?? MAX_BUNDLE_FILE_BYTES): string | null {
    let bytes: Uint8Array;
    try {
      bytes = readFileBeneath(this.#fd, name, { maxBytes, what: "bundle file" });
    } catch (error: unknown) {
      if (error instanceof FileError && error.code === "E_PATH_NOT_FOUND") return null;
      if (error instanceof FileError) {
        throw new FileError(error.code as FileErrorCode, `Bundle "${this.path}": ${error.message}`, {
          cause: error,
          details: { dir: this.path, file: clip(name) },
        });
      }
      throw error;
    }
    const listed = this.#listed;
    if (listed !== null && (!Object.hasOwn(listed, name) || listed[name] !== bundleDigest(bytes))) {
      this.#mismatch(name);
    }
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw bundleError(this.path, `"${clip(name)}" is not valid UTF-8`, clip(name)); // Where adds nothing.
    }
  }

  /** True when an entry `name` exists (of any kind: it is only looked at, never followed). */
  has(name: string): boolean {
    try {
      closeFd(openBeneath(this.#fd, name, { mode: "handle" }));
      return true;
    } catch (error: unknown) {
      return !(error instanceof FileError && error.code === "E_PATH_NOT_FOUND");
    }
  }

  /**
   * The names in the sub-directory `sub` (no symlink on the way), or null when it does not exist.
   * Entries are only listed here; each is opened with {@link BundleDir.read}, which refuses links.
   */
  list(sub: string): string[] | null {
    let fd: number;
    try {
      fd = openBeneath(this.#fd, sub, { mode: "handle" });
    } catch (error: unknown) {
      if (error instanceof FileError && error.code === "E_PATH_NOT_FOUND") return null;
      throw error;
    }
    try {
      if (fdInfo(fd).kind !== "dir") throw bundleError(this.path, `"${sub}" is not a directory`, sub);
      return [...Deno.readDirSync(fdProcPath(fd))].map((e) => e.name).sort();
    } finally {
      closeFd(fd);
    }
  }

  /**
   * From now on every file read is checked against `listed` (the bundle's checksums) by the digest of
   * the very bytes read: a file swapped after the tree was verified calls `mismatch` with its name.
   */
  vouch(listed: Readonly<Record<string, string>>, mismatch: (name: string) => void): void {
    this.#listed = listed;
    this.#mismatch = mismatch;
  }

  /** Closes the descriptor. */
  close(): void {
    closeFd(this.#fd);
    this.#fd = -1;
  }
}

export function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** A file's text from the bundle at `dir`, or null when it does not exist (see {@link BundleDir.read}). */
export function readBundleFile(dir: string, name: string): string | null {
  const bundle = new BundleDir(dir);
  try {
    return bundle.read(name);
  } finally {
    bundle.close();
  }
}
