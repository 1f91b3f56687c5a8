/**
 * Streaming asciicast v2 writer. Every event is written to the file as it happens (no user-space
 * buffer), so a recording stays valid up to the last event even when Specter is killed.
 *
 * Each event line goes to the file in one `write()`. When the disk fills part way through a line, the
 * file is truncated back to the last whole line and recording stops (`E_RECORD`, `details.reason`
 * `disk_full`): a `.cast` never ends in a torn line, and the run itself goes on.
 *
 * Format: a header line `{"version":2,"width":…,"height":…,"timestamp":…,"env":{…},"title":…}`, then one
 * `[seconds, code, data]` line per event: `o` output, `i` input, `r` resize (`"COLSxROWS"`), `m` marker.
 *
 * @module
 */
import { SessionError } from "../errors.ts";
import { LineFile } from "../fsafe/mod.ts";

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
  #file: LineFile;
  #path: string;
  #closed = false;

  private constructor(file: LineFile, path: string) {
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
    const writer = new CastWriter(new LineFile(file, path, 0, "recording"), path);
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
    try {
      this.#file.append(encoder.encode(JSON.stringify(value) + "\n"));
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
