/**
 * `ServiceLog`: the own log of a long-lived background process (the daemon, the keeper), whose stderr is
 * `/dev/null` once a client started it detached. Timestamped lines appended to a file in the process's
 * private state directory, kept under a size cap by rotating to `NAME.1` (the one before is dropped), so
 * that a week of a busy daemon takes at most twice the cap.
 *
 * Writing never throws: a service whose log cannot be written (a full disk) goes on without it.
 *
 * @module
 */

/** Default cap of one log file (the rotated one holds as much again). */
export const SERVICE_LOG_BYTES = 1024 * 1024;

/** Longest line kept; longer text is cut (a message quoting hostile input stays bounded). */
const MAX_LINE = 4096;

const encoder = new TextEncoder();

/** An appending, size-capped, rotating log file. */
export class ServiceLog {
  readonly #path: string;
  readonly #maxBytes: number;
  #file: Deno.FsFile | null = null;
  #size = 0;

  private constructor(path: string, maxBytes: number) {
    this.#path = path;
    this.#maxBytes = maxBytes;
    this.#reopen();
  }

  /**
   * Opens (creating, mode 0600) the log at `path`, whose directory the caller owns and keeps private.
   * Never throws: when it cannot be opened, lines are dropped until a rotation opens it.
   */
  static open(path: string, maxBytes = SERVICE_LOG_BYTES): ServiceLog {
    return new ServiceLog(path, Math.max(MAX_LINE * 2, maxBytes));
  }

  /** The file written to. */
  get path(): string {
    return this.#path;
  }

  /** Appends `text` as one line, with the time and the process id. */
  write(text: string): void {
    const flat = text.replaceAll(/[\r\n]+/g, " ");
    const body = flat.length > MAX_LINE ? `${flat.slice(0, MAX_LINE)}…` : flat;
    const line = encoder.encode(`${new Date().toISOString()} [${Deno.pid}] ${body}\n`);
    if (this.#size + line.length > this.#maxBytes) this.#rotate();
    if (this.#file === null) return;
    try {
      let done = 0;
      while (done < line.length) done += this.#file.writeSync(line.subarray(done));
      this.#size += line.length;
    } catch {
      // A full disk: this line is lost; the service goes on (its state is in its other files).
    }
  }

  /** Closes the file (idempotent). */
  close(): void {
    try {
      this.#file?.close();
    } catch {
      // Already closed.
    }
    this.#file = null;
  }

  #rotate(): void {
    this.close();
    try {
      Deno.renameSync(this.#path, `${this.#path}.1`);
    } catch {
      // Nothing to rotate, or the directory refuses: the file is cut instead below.
    }
    this.#reopen(true);
  }

  #reopen(truncate = false): void {
    try {
      const file = Deno.openSync(this.#path, {
        append: !truncate,
        write: true,
        create: true,
        truncate,
        mode: 0o600,
      });
      this.#file = file;
      this.#size = file.statSync().size;
    } catch {
      this.#file = null; // Lines are dropped; the next rotation tries again.
      this.#size = 0;
    }
  }
}
