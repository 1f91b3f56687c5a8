/**
 * `ScreenTracker`: the terminal model of one session, created lazily, fed without awaiting, and holding
 * the session's reading back when the emulator falls behind.
 *
 * - **Eager** (`screen: true`): the model is created at spawn; every byte of output reaches it, so
 *   snapshots are exact.
 * - **Lazy** (default): until someone asks for a screen, only an {@link OutputHistory} of the most recent
 *   output is kept (a silent session holds nothing). The first request creates the model and replays that
 *   history; when older output had already been dropped, every snapshot of this model says
 *   `partial: true`. From then on all output reaches the model.
 *
 * While xterm is loading, output is queued; queued and unparsed output both count towards the
 * {@link Watermarks} that pause reading.
 *
 * @module
 */
import { TIMED_OUT, within } from "../clock.ts";
import { type HistoryEntry, OutputHistory, SCREEN_HISTORY, type Size } from "./history.ts";
import { TerminalModel } from "./model.ts";
import type { ScreenSnapshot } from "../protocol/mod.ts";
import type { SnapshotOptions } from "./snapshot.ts";
import { HIGH_WATERMARK, LOW_WATERMARK, Watermarks } from "./watermarks.ts";

/** What the tracker needs of a model (a {@link TerminalModel}; tests pass a fake). */
export interface ScreenModel {
  /** Feeds output; returns the units it counts for in `onParsed` (default: its length). */
  write(data: string): number | void;
  resize(cols: number, rows: number): void;
  settled(): Promise<void>;
  snapshot(options?: SnapshotOptions): ScreenSnapshot;
  readonly applicationCursor: boolean;
  /** Drops unparsed and later output; returns the units dropped (see {@link TerminalModel.abandon}). */
  abandon?(): number;
  /** Times the emulator failed and was replaced (its modes were lost with it; see `TerminalModel.faults`). */
  readonly faults?: number;
}

/** Creates a model of `size` that reports parsed units to `onParsed`. */
export type ModelFactory = (size: Size, onParsed: (units: number) => void) => Promise<ScreenModel>;

/** Options of a {@link ScreenTracker}. */
export interface ScreenTrackerOptions {
  /** The terminal's size at spawn. */
  readonly size: Size;
  /** Create the model now rather than on the first request (default false). */
  readonly eager?: boolean;
  /** Units of recent output kept for a model created late (default {@link SCREEN_HISTORY}; 0: none). */
  readonly history?: number;
  /** Told `true` when reading must pause (the model is behind), `false` when it may go on. */
  readonly onPressure: (paused: boolean) => void;
  /** Watermarks on unparsed units (defaults {@link HIGH_WATERMARK}, {@link LOW_WATERMARK}). */
  readonly high?: number;
  readonly low?: number;
  /** Makes the model; default: a {@link TerminalModel} (xterm, loaded on first use). */
  readonly createModel?: ModelFactory;
}

const defaultFactory: ModelFactory = (size, onParsed) => TerminalModel.create({ ...size, onParsed });

/** The screen of one session. */
export class ScreenTracker {
  readonly #options: ScreenTrackerOptions;
  readonly #watermarks: Watermarks;
  #size: Size;
  #history: OutputHistory | null = null;
  #model: ScreenModel | null = null;
  #loading: Promise<ScreenModel> | null = null;
  /** Output and resizes that arrived while the model was loading, in order. */
  #queue: HistoryEntry[] = [];
  #partial = false;
  /** Output was lost when creating a model failed: a later model is partial. */
  #lost = false;
  /** Output is no longer modelled (see {@link abandon}). */
  #abandoned = false;

  /** Starts tracking; with `eager` the model starts loading at once. */
  constructor(options: ScreenTrackerOptions) {
    this.#options = options;
    this.#size = options.size;
    this.#watermarks = new Watermarks(
      options.onPressure,
      options.high ?? HIGH_WATERMARK,
      options.low ?? LOW_WATERMARK,
    );
    if (options.eager) void this.#ensure().catch(() => {/* reported by the first snapshot request */});
  }

  /** True once a model exists or is being created. */
  get active(): boolean {
    return this.#loading !== null;
  }

  /** Units of output not yet parsed by the model (queued while loading included). */
  get pending(): number {
    return this.#watermarks.pending;
  }

  /**
   * DECCKM as the model sees it, or `null` when there is no model, it has not caught up with the output
   * yet, or it failed and was replaced with its modes (then a cheaper scanner that runs as output is read
   * knows better).
   */
  get applicationCursor(): boolean | null {
    // After a fault the model's modes started again from defaults: the scanner knows better.
    if (this.#model === null || this.#watermarks.pending > 0 || (this.#model.faults ?? 0) > 0) return null;
    return this.#model.applicationCursor;
  }

  /** Feeds decoded output. */
  output(text: string): void {
    if (text.length === 0) return;
    if (this.#abandoned) {
      this.#partial = this.#lost = true;
      return;
    }
    if (this.#model !== null) {
      this.#watermarks.add(this.#model.write(text) ?? text.length);
    } else if (this.#loading !== null) {
      this.#queue.push(text);
      this.#watermarks.add(text.length);
    } else {
      this.#history ??= new OutputHistory(this.#options.history ?? SCREEN_HISTORY, this.#size);
      this.#history.push(text);
    }
  }

  /** The terminal was resized: output from now on is drawn for `cols`×`rows`. */
  resize(cols: number, rows: number): void {
    this.#size = { cols, rows };
    if (this.#model !== null) this.#model.resize(cols, rows);
    else if (this.#loading !== null) this.#queue.push({ cols, rows });
    else this.#history?.resize(this.#size);
  }

  /**
   * Stops modelling output, for a session whose program was killed (`--timeout`, a ceiling): what it
   * printed last may cost the terminal model seconds per megabyte (erases, resets, line inserts), and the
   * clock must not wait for it. Output not yet parsed (but at most one slice) and all later output is
   * dropped; snapshots from then on show the screen as parsed, `partial: true` when anything was dropped.
   */
  abandon(): void {
    if (this.#abandoned) return;
    this.#abandoned = true;
    // A lazy session's history (at most SCREEN_HISTORY units) is kept: replaying it is bounded.
    let dropped = 0;
    for (const entry of this.#queue) if (typeof entry === "string") dropped += entry.length;
    this.#queue = this.#queue.filter((entry) => typeof entry !== "string");
    this.#watermarks.done(dropped);
    dropped += this.#model?.abandon?.() ?? 0;
    if (dropped > 0) this.#partial = this.#lost = true;
  }

  /**
   * The program is gone: what it left to parse gets at most `budgetMs` more (0: none), then the rest is
   * abandoned (see {@link abandon}). A screen of ordinary output is parsed well within any budget; a
   * megabyte of resets or line inserts would take seconds, and the clock wins over it.
   */
  finish(budgetMs: number): void {
    if (this.#abandoned) return;
    if (budgetMs <= 0) {
      this.abandon();
      return;
    }
    // Never keeps the process alive: once nothing else runs, nobody waits for the screen either.
    Deno.unrefTimer(setTimeout(() => this.abandon(), budgetMs));
  }

  /**
   * Waits until everything output so far is parsed, then snapshots the screen. With `waitMs`, waits at
   * most that long (for the model to load, then to parse): a screen not caught up by then is `partial`
   * (blank when the model was still loading).
   */
  async snapshot(options: SnapshotOptions = {}): Promise<ScreenSnapshot> {
    const { waitMs } = options;
    if (waitMs === undefined) {
      const model = await this.#ensure();
      await model.settled();
      return this.#take(model, options, false);
    }
    const deadline = performance.now() + Math.max(0, waitMs);
    const loaded = await within(this.#ensure(), waitMs);
    if (loaded === TIMED_OUT) return { ...blankSnapshot(this.#size), partial: true };
    const settled = await within(loaded.settled(), deadline - performance.now());
    return this.#take(loaded, options, settled === TIMED_OUT);
  }

  #take(model: ScreenModel, options: SnapshotOptions, behind: boolean): ScreenSnapshot {
    const snapshot = model.snapshot(options);
    // The model says partial itself after it lost output to a fault (`TerminalModel.faults`).
    return { ...snapshot, partial: behind || this.#partial || snapshot.partial };
  }

  #ensure(): Promise<ScreenModel> {
    if (this.#loading !== null) return this.#loading;
    const history = this.#history;
    this.#history = null;
    this.#partial = this.#lost || (history?.dropped ?? false);
    this.#queue = history?.entries() ?? [];
    for (const entry of this.#queue) if (typeof entry === "string") this.#watermarks.add(entry.length);
    const create = this.#options.createModel ?? defaultFactory;
    this.#loading = create(history?.start ?? this.#size, (units) => this.#watermarks.done(units)).then(
      (model) => {
        // Synchronously, before anyone awaiting the model runs: the queue reaches it in order.
        for (const entry of this.#queue) {
          // Queued output was counted by length; the model may count its costly sequences more.
          if (typeof entry === "string") {
            this.#watermarks.add((model.write(entry) ?? entry.length) - entry.length);
          } else model.resize(entry.cols, entry.rows);
        }
        this.#queue = [];
        this.#model = model;
        return model;
      },
      (error: unknown) => {
        // Nothing will parse the queue: release the reader. A later request tries again with what is
        // retained from now on, knowing that the queued output is lost.
        let queued = 0;
        for (const entry of this.#queue) if (typeof entry === "string") queued += entry.length;
        this.#queue = [];
        this.#loading = null;
        this.#lost ||= queued > 0 || this.#partial;
        this.#watermarks.done(queued);
        throw error;
      },
    );
    return this.#loading;
  }
}

/** The screen of a terminal of `size` that shows nothing yet. */
function blankSnapshot(size: Size): ScreenSnapshot {
  return {
    cols: size.cols,
    rows: size.rows,
    cursor: { x: 0, y: 0, visible: true },
    alt_screen: false,
    title: "",
    partial: false,
    lines: [],
  };
}
