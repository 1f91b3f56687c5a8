/**
 * Writes that leave whole data or nothing, for when the disk fills: a file is written to a temporary
 * name beside it and renamed over the target (whole or absent), and a line-oriented log appends each
 * line with one `write()` and, when that write was cut short, truncates back to the last whole line.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { FileError } from "../errors.ts";
import { closeFd } from "./open.ts";
import { openFileBeneath } from "./write_beneath.ts";

/** True when `error` is the kernel's "no space left on device" (ENOSPC) or "quota exceeded" (EDQUOT). */
export function isDiskFull(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === "ENOSPC" || code === "EDQUOT" || /os error (28|122)\)/.test(error.message);
}

function writeError(what: string, path: string, error: unknown, torn = false): FileError {
  const full = isDiskFull(error);
  const why = full ? "the disk is full" : error instanceof Error ? error.message : String(error);
  return new FileError("E_FILE_WRITE", `Could not write the ${what} "${path}": ${why}`, {
    cause: error,
    details: { path, reason: full ? "disk_full" : "io", torn },
  });
}

/**
 * Writes `data` to `path` whole or not at all: into a fresh temporary file in the same directory, then
 * renamed over `path` (atomic on one file system). On failure the temporary file is removed and
 * `E_FILE_WRITE` is thrown (`details.reason` `disk_full` for ENOSPC/EDQUOT); `path` keeps its old content.
 */
export function writeFileWhole(path: string, data: Uint8Array | string, what = "file", mode = 0o600): void {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const temp = join(dirname(path), `.${crypto.randomUUID()}.tmp`);
  try {
    Deno.writeFileSync(temp, bytes, { createNew: true, mode });
    Deno.renameSync(temp, path);
  } catch (error: unknown) {
    try {
      Deno.removeSync(temp);
    } catch {
      // Never created, or already renamed: nothing to clean.
    }
    throw writeError(what, path, error);
  }
}

/**
 * A file of whole lines (NDJSON, asciicast). Each {@link append} is one `write()`; when the disk fills
 * part way, the file is truncated back to its last whole line and every later append fails at once, so
 * the file always ends in a newline (or is empty).
 */
export class LineFile {
  readonly #file: Deno.FsFile;
  readonly #path: string;
  readonly #what: string;
  #size: number;
  #failure: FileError | null = null;

  /** Takes over `file`, whose current length is `size` (it must end in a newline, or be empty). */
  constructor(file: Deno.FsFile, path: string, size: number, what = "file") {
    this.#file = file;
    this.#path = path;
    this.#size = size;
    this.#what = what;
  }

  /**
   * Opens `name` in the directory `dirFd` for appending, created with `mode` if missing, never through a
   * symlink (`openFileBeneath`); `shown` names it in messages. Throws `E_FILE_WRITE`, `E_PATH_SYMLINK`,
   * `E_FILE_TYPE`.
   */
  static appendBeneath(dirFd: number, name: string, shown: string, what = "file", mode = 0o600): LineFile {
    const { file, existing } = openFileBeneath(dirFd, name, { how: "append", mode });
    closeFd(existing);
    try {
      return new LineFile(file, shown, file.statSync().size, what);
    } catch (error: unknown) {
      file.close();
      throw writeError(what, shown, error);
    }
  }

  /** The first write failure, or `null` while every line was written. */
  get failure(): FileError | null {
    return this.#failure;
  }

  /** Bytes of whole lines in the file. */
  get size(): number {
    return this.#size;
  }

  /**
   * Appends `line` (which must end in `\n`) with one `write()`. Throws `E_FILE_WRITE` when it could not
   * be written whole (then the file ends at the previous line, and later appends throw the same error).
   */
  append(line: string | Uint8Array): void {
    if (this.#failure !== null) throw this.#failure;
    const bytes = typeof line === "string" ? new TextEncoder().encode(line) : line;
    let written = 0;
    try {
      while (written < bytes.length) {
        // A regular file takes the whole buffer in one write() unless the disk fills part way.
        const n = this.#file.writeSync(bytes.subarray(written));
        if (n <= 0) throw new Deno.errors.WriteZero("write() wrote nothing");
        written += n;
      }
      this.#size += bytes.length;
    } catch (error: unknown) {
      let torn = false;
      if (written > 0) {
        try {
          this.#file.truncateSync(this.#size);
        } catch {
          torn = true; // Shrinking a file frees space and does not fail in practice; said in the error if it does.
        }
      }
      this.#failure = writeError(this.#what, this.#path, error, torn);
      throw this.#failure;
    }
  }

  /** Closes the file (idempotent). */
  close(): void {
    try {
      this.#file.close();
    } catch {
      // Already closed.
    }
  }
}
