/**
 * Streaming asciicast v2 writer. Every event is written to the file as it happens (no user-space
 * buffer), so a recording stays valid up to the last event even when Specter is killed.
 *
 * Format: a header line `{"version":2,"width":…,"height":…,"timestamp":…,"env":{…},"title":…}`, then one
 * `[seconds, code, data]` line per event: `o` output, `i` input, `r` resize (`"COLSxROWS"`), `m` marker.
 *
 * @module
 */
import { SessionError } from "../errors.ts";

/** The asciicast v2 header fields Specter writes. */
export interface CastHeader {
  /** Terminal columns at start. */
  readonly width: number;
  /** Terminal rows at start. */
  readonly height: number;
  /** Unix time (seconds) of the start. */
  readonly timestamp: number;
  /** Environment facts players use (`TERM`, `SHELL`); never other variables. */
  readonly env: Readonly<Record<string, string>>;
  /** Title shown by players; omitted when absent. */
  readonly title?: string;
}

/** The event codes of asciicast v2 that Specter writes. */
export type CastEventCode = "o" | "i" | "r" | "m";

const encoder = new TextEncoder();

/** Writes one `.cast` file. */
export class CastWriter {
  #file: Deno.FsFile;
  #path: string;
  #closed = false;

  private constructor(file: Deno.FsFile, path: string) {
    this.#file = file;
    this.#path = path;
  }

  /** Creates (truncates) `path` and writes the header (throws `E_RECORD`). */
  static create(path: string, header: CastHeader): CastWriter {
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(path, { write: true, create: true, truncate: true });
    } catch (error: unknown) {
      throw new SessionError("E_RECORD", `Cannot create recording "${path}": ${(error as Error).message}`, {
        cause: error,
        details: { path },
      });
    }
    const writer = new CastWriter(file, path);
    const { title, ...rest } = header;
    writer.#line({ version: 2, ...rest, ...(title === undefined ? {} : { title }) });
    return writer;
  }

  /** The file being written. */
  get path(): string {
    return this.#path;
  }

  /** Appends an event at `seconds` since the start. */
  event(seconds: number, code: CastEventCode, data: string): void {
    this.#line([Math.round(seconds * 1e6) / 1e6, code, data]);
  }

  /** Closes the file; later events are ignored. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#file.close();
  }

  #line(value: unknown): void {
    if (this.#closed) return;
    const bytes = encoder.encode(JSON.stringify(value) + "\n");
    try {
      for (let written = 0; written < bytes.length;) written += this.#file.writeSync(bytes.subarray(written));
    } catch (error: unknown) {
      this.#closed = true;
      this.#file.close();
      throw new SessionError(
        "E_RECORD",
        `Cannot write recording "${this.#path}": ${(error as Error).message}`,
        {
          cause: error,
          details: { path: this.#path },
        },
      );
    }
  }
}
