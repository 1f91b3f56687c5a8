/**
 * `WatchView`: what `specter attach` shows a watcher. The session's output goes into a terminal model of
 * the session's size (resized as the session is), and the model's screen is painted into this window
 * (`ViewPainter`: clipped or padded, a status line at the bottom) at most every {@link PAINT_MS}.
 *
 * @module
 */
import { payloadText } from "../frames/mod.ts";
import type { Frame } from "../protocol/mod.ts";
import { TerminalModel } from "../terminal/mod.ts";
import { clipLine, VIEW_ENTER, VIEW_LEAVE, ViewPainter } from "./attach_view.ts";

/** Least time between two paints (ms). */
const PAINT_MS = 30;
/** How long a notice (a refused key, control lost) stays on the status line (ms). */
const NOTICE_MS = 3000;

/** A watcher's view of one session in this terminal. */
export class WatchView {
  readonly #model: TerminalModel;
  readonly #painter = new ViewPainter();
  readonly #name: string;
  readonly #detachLabel: string;
  readonly #write: (text: string) => void;
  #paintTimer: ReturnType<typeof setTimeout> | undefined;
  #notice = "";
  #noticeTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  private constructor(
    model: TerminalModel,
    name: string,
    detachLabel: string,
    write: (text: string) => void,
  ) {
    this.#model = model;
    this.#name = name;
    this.#detachLabel = detachLabel;
    this.#write = write;
  }

  /**
   * Opens a view of session `name`, of `size` until the frames say otherwise: enters the alternate screen
   * (through `write`) and paints.
   */
  static async open(
    size: { cols: number; rows: number },
    name: string,
    detachLabel: string,
    write: (text: string) => void,
  ): Promise<WatchView> {
    const view = new WatchView(await TerminalModel.create(size), name, detachLabel, write);
    // Until the history went through the model (seconds, for megabytes of it), the status line says so.
    const { columns, rows } = Deno.consoleSize();
    const wait = clipLine(
      [{ text: ` watching ${name} (read-only) · reading its screen…`, inverse: true }],
      0,
      columns,
    );
    write(`${VIEW_ENTER}\x1b[${rows};1H${wait}`);
    view.#schedule();
    return view;
  }

  /** Takes the session's next frame: output and sizes go into the model. */
  feed(frame: Frame): void {
    if (frame.type === "start" || frame.type === "resize_ack") this.#model.resize(frame.cols, frame.rows);
    else if (frame.type === "stdout") this.#model.write(payloadText(frame));
    else return;
    this.#schedule();
  }

  /** This window changed size: everything is painted again. */
  resized(): void {
    this.#painter.invalidate();
    this.#schedule();
  }

  /** Shows `text` on the status line for a while (with a bell for a refused key). */
  flash(text: string, bell = false): void {
    if (this.#closed) return;
    this.#notice = text;
    clearTimeout(this.#noticeTimer);
    this.#noticeTimer = setTimeout(() => {
      this.#notice = "";
      this.#schedule();
    }, NOTICE_MS);
    if (bell) this.#write("\x07");
    this.#schedule();
  }

  /** Ends the view: what leaves it (the normal screen back, autowrap and cursor on). */
  close(): string {
    this.#closed = true;
    clearTimeout(this.#paintTimer);
    clearTimeout(this.#noticeTimer);
    this.#model.dispose();
    return VIEW_LEAVE;
  }

  #status(cols: number, rows: number): string {
    const head = `${this.#notice === "" ? "" : `${this.#notice}: `}watching ${this.#name} (read-only)`;
    const size = `${this.#model.cols}×${this.#model.rows} in ${cols}×${rows}`;
    return ` ${head} · ${size} · t: take control · ${this.#detachLabel}: detach`;
  }

  #schedule(): void {
    if (this.#paintTimer !== undefined || this.#closed) return;
    this.#paintTimer = setTimeout(() => {
      // Painted once what came so far is parsed (a long history first goes through the model whole).
      this.#model.whenParsed(() => {
        this.#paintTimer = undefined;
        if (this.#closed) return;
        const { columns: cols, rows } = Deno.consoleSize();
        const snapshot = this.#model.snapshot({ cells: true });
        this.#write(this.#painter.paint(snapshot, { cols, rows }, this.#status(cols, rows)));
      });
    }, PAINT_MS);
  }
}
