/**
 * Streaming asciicast v2 writer. Every event is written to the file as it happens (no user-space
 * buffer), so a recording stays valid up to the last event even when Specter is killed.
 *
 * Each event line goes to the file in one `write()`. When the disk fills part way through a line, the
 * file is truncated back to the last whole line and recording stops (`E_RECORD`, `details.reason`
 * `disk_full`): a `.cast` never ends in a torn line, and the run itself goes on.
 *
 * Format (its schemas, writers and reader are in `protocol/`): a header line
 * `{"version":2,"width":…,"height":…,"timestamp":…,"env":{…},"title":…}`, then one `[seconds, code, data]`
 * line per event: `o` output, `i` input, `r` resize (`"COLSxROWS"`), `m` marker.
 *
 * @module
 */
import { basename, dirname } from "node:path";
import { FileError, SessionError } from "../errors.ts";
import { closeFd, fdProcPath, LineFile, openFileBeneath, openWriteDir } from "../fsafe/mod.ts";
import { type CastEventCode, type CastStart, encodeCastEvent, encodeCastHeader } from "../protocol/mod.ts";

const encoder = new TextEncoder();

/** Writes one `.cast` file. */
export class CastWriter {
  #file: LineFile;
  #path: string;
  #closed = false;

  private constructor(file: LineFile, path: string) {
    this.#file = file;
    this.#path = path;
  }

  /**
   * Creates (truncates) `path` and writes the header. Throws `E_RECORD`: also when `path` is, or passes
   * through, a symlink a sandboxed program could have planted (`details.reason` `symlink`), or is not a
   * regular file (a FIFO would hang the run: `not_regular`). `exclusive`: a new file only (`O_EXCL`, which
   * follows no link, mode 0600): an existing one is refused (`details.reason` `exists`).
   */
  static create(path: string, header: CastStart, options: { exclusive?: boolean } = {}): CastWriter {
    const first = encodeCastHeader(header); // Before the file exists: a header it refuses leaves none.
    let file: Deno.FsFile;
    let dirFd = -1;
    try {
      // The directory by descriptor (links only where no sandbox can write), the file beneath it: an
      // earlier run's program may have left a link here to the caller's ~/.bashrc.
      dirFd = openWriteDir(dirname(path));
      if (options.exclusive === true) {
        const name = basename(path);
        if (name === "" || name === "." || name === "..") {
          throw new FileError("E_PATH_ESCAPE", "Not a file name");
        }
        file = Deno.openSync(`${fdProcPath(dirFd)}/${name}`, { write: true, createNew: true, mode: 0o600 });
      } else {
        const opened = openFileBeneath(dirFd, basename(path), { how: "truncate", mode: 0o666 });
        closeFd(opened.existing);
        file = opened.file;
      }
    } catch (error: unknown) {
      const code = error instanceof FileError ? error.code : null;
      const reason = error instanceof Deno.errors.AlreadyExists
        ? "exists"
        : code === "E_PATH_SYMLINK"
        ? "symlink"
        : code === "E_FILE_TYPE"
        ? "not_regular"
        : "io";
      const fix = reason === "symlink" ? "; name the real path instead" : "";
      const why = reason === "exists"
        ? "it exists already (the recording is made a new file: name another)"
        : (error as Error).message;
      throw new SessionError(
        "E_RECORD",
        `Cannot create recording "${path}": ${why}${fix}`,
        { cause: error, details: { path, reason, ...(code === null ? {} : { cause_code: code }) } },
      );
    } finally {
      closeFd(dirFd);
    }
    const writer = new CastWriter(new LineFile(file, path, 0, "recording"), path);
    writer.#line(first);
    return writer;
  }

  /** The file being written. */
  get path(): string {
    return this.#path;
  }

  /** Appends an event at `seconds` since the start. */
  event(seconds: number, code: CastEventCode, data: string): void {
    if (this.#closed) return;
    this.#line(encodeCastEvent([Math.round(seconds * 1e6) / 1e6, code, data]));
  }

  /** Closes the file; later events are ignored. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#file.close();
  }

  /** Appends one encoded line (`protocol/asciicast.ts` is its only encoder). */
  #line(line: string): void {
    if (this.#closed) return;
    try {
      this.#file.append(encoder.encode(line + "\n"));
    } catch (error: unknown) {
      // The file ends at the last whole line; nothing more is recorded (later events are ignored).
      this.close();
      const details = (error as { details?: Record<string, unknown> }).details ?? {};
      throw new SessionError(
        "E_RECORD",
        `Recording to "${this.#path}" stopped: ${(error as Error).message}`,
        {
          cause: error,
          details: { path: this.#path, reason: String(details.reason ?? "io"), torn: details.torn === true },
        },
      );
    }
  }
}
