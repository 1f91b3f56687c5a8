/**
 * `SessionScreen`: a session's screen. The terminal model (a `ScreenTracker`) is made on first use (at spawn
 * with `screen: true`, else at the first output, resize or request); `snapshot` requests from drivers are
 * answered with frames, and `exit` waits for those still owed ({@link SessionScreen.owed}). Which cursor
 * keys the program expects is answered here too: the model knows when it has caught up, otherwise a
 * scanner of the output that is never behind does.
 *
 * @module
 */
import type { FrameBody, ScreenSnapshot } from "../protocol/mod.ts";
import { ScreenTracker, type SnapshotOptions } from "../terminal/mod.ts";
import { CursorKeyMode } from "./output_tail.ts";

/** What the screen needs to know of the session's options. */
export interface SessionScreenOptions {
  readonly cols: number;
  readonly rows: number;
  /** Make the model at once (every byte of output reaches it: snapshots are exact). */
  readonly screen: boolean;
  /** Units of recent output kept for a model made late (see `ScreenTracker`). */
  readonly screenHistory?: number;
}

/** What {@link SessionScreen} needs of its session. */
export interface SessionScreenHost {
  emit(body: FrameBody): void;
  /** The model fell behind (`true`: pause reading) or caught up. */
  pressure(behind: boolean): void;
  /** A `snapshot` frame (or its `error` frame) was emitted: `exit` may have waited for it. */
  answered(): void;
}

/** The screen of one session. */
export class SessionScreen {
  readonly #options: SessionScreenOptions;
  readonly #host: SessionScreenHost;
  readonly #cursorMode = new CursorKeyMode();
  #tracker: ScreenTracker | null = null;
  #owed = 0;

  constructor(options: SessionScreenOptions, host: SessionScreenHost) {
    this.#options = options;
    this.#host = host;
    if (options.screen) this.#model();
  }

  /** `snapshot` requests not answered yet. */
  get owed(): number {
    return this.#owed;
  }

  /**
   * True when the program switched on application cursor keys. The model decides when there is one and
   * it has parsed all output; otherwise the scanner does (never behind, but blind to resets like `ESC c`).
   */
  get applicationCursor(): boolean {
    return this.#tracker?.applicationCursor ?? this.#cursorMode.application;
  }

  /** Decoded output, in order. */
  output(text: string): void {
    this.#cursorMode.push(text);
    this.#model().output(text);
  }

  /** The terminal was resized: output from now on is drawn at this size. */
  resize(cols: number, rows: number): void {
    this.#model().resize(cols, rows);
  }

  /** The screen once everything read so far is parsed (with `waitMs`: as parsed by then, see SnapshotOptions). */
  snapshot(options: SnapshotOptions = {}): Promise<ScreenSnapshot> {
    return this.#model().snapshot(options);
  }

  /** Answers a driver's `snapshot` message with a `snapshot` frame, or an `error` frame if that fails. */
  request(name: string | undefined, cells: boolean): void {
    this.#owed++;
    void this.snapshot({ cells }).then(
      (screen) => this.#host.emit({ type: "snapshot", ...(name === undefined ? {} : { name }), screen }),
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        this.#host.emit({
          type: "error",
          code: "E_IO",
          message: `The screen could not be snapshotted: ${message}`,
        });
      },
    ).finally(() => {
      this.#owed--;
      this.#host.answered();
    });
  }

  /** The program is gone: what it left to parse gets at most `budgetMs` more (see `ScreenTracker.finish`). */
  finish(budgetMs: number): void {
    this.#tracker?.finish(budgetMs);
  }

  /** The model, made on first use: a session that never prints or resizes holds none. */
  #model(): ScreenTracker {
    this.#tracker ??= new ScreenTracker({
      size: { cols: this.#options.cols, rows: this.#options.rows },
      eager: this.#options.screen,
      ...(this.#options.screenHistory === undefined ? {} : { history: this.#options.screenHistory }),
      onPressure: (behind) => this.#host.pressure(behind),
    });
    return this.#tracker;
  }
}
