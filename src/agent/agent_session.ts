/**
 * `AgentSession`: one program an agent runs, as the agent tools see it. It drains the session's frames
 * (so the program is never held back by an agent that does not call), remembers what the agent has read
 * (a cursor into the frame log), and waits for the events that end a call: exit, a prompt, new output
 * followed by quiet, or the yield time.
 *
 * @module
 */
import type { ExitFrame, Frame, FrameOf, TokenMode } from "../protocol/mod.ts";
import type { Session, Subscription } from "../session/mod.ts";
import { CompactView, ParsedView, renderText } from "../views/mod.ts";
import { payloadText } from "../frames/mod.ts";
import { feedView } from "./view_stream.ts";
import type { OutputLog } from "./output_log.ts";
import type { OutputCut } from "./truncate.ts";
import { waitsForInput } from "../launch/mod.ts";
import {
  INPUT_POLL_MS,
  INPUT_QUIET_MS,
  INPUT_SETTLE_MS,
  type ReturnedOn,
  SHELL_SETTLE_MS,
  type WaitRules,
} from "./wait_rules.ts";
import { type FrameSource, type Page, readPage } from "./paging.ts";

/** Entering (`h`) or leaving (`l`) the alternate screen, in any of its three spellings. */
// deno-lint-ignore no-control-regex -- the sequence starts with ESC
const ALTERNATE_SCREEN = /\x1b\[\?(?:1049|1047|47)([hl])/g;

/**
 * How long a call may spend reading back, from the output log, frames the memory window passed (about 50 MB
 * of output at this machine's ~10 MB/s for the compact view and the token count): the clock wins over the
 * scan, and the rest of such a gap is a marker `read_output` pages through.
 */
const GAP_READ_MS = 5_000;
/** Frames read back from the output log at a time. */
const GAP_BATCH = 64;
export type { ReturnedOn, WaitRules } from "./wait_rules.ts";

/** Output taken for the agent (its text went to the call's {@link OutputCut}). */
export interface Taken {
  readonly fromSeq: number;
  readonly toSeq: number;
  /** Frames of the range the text does not show (the memory window passed them), if any. */
  readonly missed?: { readonly from_seq: number; readonly to_seq: number };
  /** Of those, the ones no output log holds either (gone for good). */
  readonly dropped?: { readonly from_seq: number; readonly to_seq: number };
}

/** A session of the agent tools. */
export class AgentSession {
  readonly id: string;
  readonly session: Session;
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly shell: string | undefined;
  readonly started = new Date();
  lastActivity = new Date();
  /** Tokens of output returned to the agent so far. */
  outputTokens = 0;
  /** Ended by the idle sweep. */
  timedOut = false;
  /** Calls in progress on the session: its result is owed, so it is never pruned. */
  busy = 0;
  /** The last call on the session (start or end): the most recently used are never pruned. */
  lastUsed = performance.now();
  #exit: ExitFrame | null = null;
  /** The last `seq` seen by the drain, and of the last prompt frame. */
  #lastSeq = 0;
  #lastPromptSeq = -1;
  /** The terminal's size (from the start frame, then each resize): the parsed view models it. */
  #size = { cols: 80, rows: 24 };
  /** The last `command` frame (a shell's OSC 133 marks). */
  #lastCommand: FrameOf<"command"> | null = null;
  #lastOutputAt = 0;
  /** The program is a shell that marks its prompts and commands (OSC 133): those end its calls. */
  #shellMarks = false;
  #alternate = false;
  #waiters: (() => void)[] = [];
  /** The client is gone: waits that only wait (empty write_stdin) end at once. */
  #waitsCancelled = false;
  /** The agent's cursor: frames before it were returned by an earlier call. */
  readonly #reader: Subscription;
  #views = new Map<TokenMode, CompactView | ParsedView>();

  readonly #audit: { frame(frame: Frame): void; close(): void } | undefined;
  /** The frames it reads: the session's main reader, or a subscription (a session another host owns). */
  readonly #frames: AsyncIterable<Frame>;
  /** Every frame, for `read_output` (null: the session's memory window serves it). */
  readonly #log: OutputLog | null;
  /** The seq of the first frame the output log failed to keep (later ones are read from memory). */
  #logBroken: number | null = null;

  constructor(
    id: string,
    session: Session,
    cwd: string,
    shell: string | undefined,
    audit?: { frame(frame: Frame): void; close(): void },
    frames?: AsyncIterable<Frame>,
    log?: OutputLog | null,
  ) {
    this.#audit = audit;
    this.#log = log ?? null;
    this.#frames = frames ?? session.frames();
    // A session taken over mid-way (a restarted daemon's): its frames so far are in its log already.
    if (frames !== undefined && "cursor" in frames) {
      this.#lastSeq = Math.max(0, (frames as Subscription).cursor - 1);
    }
    this.id = id;
    this.session = session;
    this.argv = session.argv;
    this.cwd = cwd;
    this.shell = shell;
    this.#reader = session.subscribe({ from: 0 });
    void this.#drain().catch((error: unknown) => {
      // Draining cannot fail short of a bug; keep the server up and let the session's exit stand.
      console.error(
        `specter: agent session ${id}: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  }

  /** The `exit` frame once the program ended. */
  get exit(): ExitFrame | null {
    return this.#exit;
  }

  /** True while a full-screen program holds the alternate screen. */
  get alternate(): boolean {
    return this.#alternate;
  }

  /** The last command a shell marked as finished (OSC 133), if any. */
  get lastCommand(): FrameOf<"command"> | null {
    return this.#lastCommand;
  }

  /** The `seq` of the newest frame. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Reads every frame as the authoritative reader, so the program never waits for the agent. */
  async #drain(): Promise<void> {
    for await (const frame of this.#frames) {
      this.#audit?.frame(frame);
      this.#keep(frame);
      this.#lastSeq = frame.seq;
      if (frame.type === "stdout") {
        this.#lastOutputAt = performance.now();
        this.lastActivity = new Date();
        if (!frame.binary && frame.data.includes("\x1b[?")) {
          // The last switch of the alternate screen in this frame says where the program is.
          for (const match of frame.data.matchAll(ALTERNATE_SCREEN)) this.#alternate = match[1] === "h";
        }
      } else if (frame.type === "start" || frame.type === "resize_ack") {
        this.#size = { cols: frame.cols, rows: frame.rows };
      } else if (frame.type === "prompt") {
        this.#lastPromptSeq = frame.seq;
        if (frame.regex === "OSC 133;A") this.#shellMarks = true;
      } else if (frame.type === "command") {
        this.#lastCommand = frame;
        this.#shellMarks = true;
      } else if (frame.type === "exit") {
        this.#exit = frame;
        this.#alternate = false;
      }
      this.#wake();
    }
    this.#audit?.close();
    this.#log?.close();
  }

  /** Appends `frame` to the output log; a log that fails (a full disk) keeps what it has, memory the rest. */
  #keep(frame: Frame): void {
    if (this.#log === null || this.#logBroken !== null) return;
    try {
      this.#log.append(frame);
    } catch (error: unknown) {
      this.#logBroken = frame.seq;
      console.error(
        `specter: agent session ${this.id}: its output log stopped at frame ${frame.seq}: ${
          error instanceof Error ? error.message : String(error)
        }`,
      );
    }
  }

  /** True when the output log holds every frame from `seq` on (as far as the session has gone). */
  #logHolds(seq: number): boolean {
    return this.#log !== null && this.#logBroken === null && this.#log.oldest() <= seq;
  }

  /**
   * What `read_output` can give of frames `from`…`to`, as the end of a cut marker: the exact call when the
   * output log holds them, what is gone when its budget dropped some, and no promise without a log.
   */
  readHint(from: number, to: number): string {
    const call = (a: number) => `read_output {"session_id": "${this.id}", "from_seq": ${a}, "to_seq": ${to}}`;
    if (this.#log !== null && this.#logBroken === null) {
      const oldest = this.#log.oldest();
      if (oldest <= from) return `${call(from)} pages through all of it`;
      if (oldest <= to) {
        return `frames ${from}-${oldest - 1} were dropped by the output log's budget; ${
          call(oldest)
        } pages through the rest`;
      }
      return "the output log's budget dropped all of it";
    }
    return `${
      call(from)
    } returns what the session's memory still holds of it (its first 64 KiB and last MiB)`;
  }
  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  /** Ends every pure wait (an empty `write_stdin`) now and from now on: nobody is left to tell. */
  cancelWaits(): void {
    this.#waitsCancelled = true;
    this.#wake();
  }

  /**
   * Waits for the end of a call (see {@link WaitRules}). With `prompt`, a program that has been quiet for
   * {@link INPUT_QUIET_MS} after output and waits for input from its terminal (`waitsForInput`: a question
   * the prompt patterns do not know) ends it as a prompt (see `silentInput`).
   */
  async wait(rules: WaitRules): Promise<ReturnedOn> {
    const started = performance.now();
    const deadline = started + rules.yieldMs;
    const fromSeq = this.#lastSeq;
    let looked = 0;
    let seen: { at: number; seq: number } | null = null;
    rules.signal?.addEventListener("abort", () => this.#wake(), { once: true });
    for (;;) {
      if (this.#exit !== null) return "exit";
      if (rules.signal?.aborted) return "yield";
      if (rules.prompt && (this.#lastCommand?.seq ?? -1) > fromSeq) return "command";
      if (rules.prompt && this.#lastPromptSeq > fromSeq) return "prompt";
      if (rules.quietMs !== undefined && this.#waitsCancelled) return "yield";
      const now = performance.now();
      let until = deadline;
      if (rules.quietMs !== undefined && this.#lastOutputAt > started) {
        const quietAt = this.#lastOutputAt + rules.quietMs;
        if (now >= quietAt) return "quiet";
        until = Math.min(until, quietAt);
      }
      if (rules.prompt && (rules.silentInput === true || this.#lastOutputAt > started)) {
        // Output already written may not have reached the frames yet (the shell's prompt and its command
        // mark): a program seen waiting is believed only when it still waits INPUT_SETTLE_MS later with
        // no frame come meanwhile.
        if (seen !== null && this.#lastSeq !== seen.seq) seen = null;
        const inputQuietAt = Math.max(started, this.#lastOutputAt) + INPUT_QUIET_MS;
        // A shell that marks its commands ends the call with its mark, with the exit code: the look only
        // serves what it runs that asks (read -p), so it waits longer for the mark to come first.
        const settle = this.#shellMarks ? SHELL_SETTLE_MS : INPUT_SETTLE_MS;
        const lookAt = Math.max(inputQuietAt, looked + (seen === null ? INPUT_POLL_MS : settle));
        if (now >= lookAt) {
          looked = now;
          if (!waitsForInput(this.session.pid)) seen = null;
          else if (seen !== null && now - seen.at >= settle) return "prompt";
          else seen ??= { at: now, seq: this.#lastSeq };
          until = Math.min(until, now + (seen === null ? INPUT_POLL_MS : settle));
        } else until = Math.min(until, lookAt);
      }
      if (now >= deadline) return "yield";
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(1, until - now));
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.#waiters.push(done);
      });
    }
  }

  /** Calls that render output, one at a time (a view's state must not interleave). */
  #turn: Promise<unknown> = Promise.resolve();

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#turn.then(fn, fn);
    this.#turn = next.catch(() => {
      // The caller gets the failure; the next call still runs.
    });
    return next;
  }

  /**
   * Output the agent has not read yet, rendered in `mode` into `cut` (the cursor moves past it). Frames the
   * memory window passed are read back from the output log through the same view, so the text is whole:
   * its lines, their numbers and the lines that report problems are those of all the output. Where that
   * cannot be (no log holds them, or reading them back passed {@link GAP_READ_MS}), the text before the gap
   * is ended, a marker line stands in its place, and a fresh view takes the rest: nothing is joined across.
   */
  take(mode: TokenMode, cut: OutputCut): Promise<Taken> {
    return this.#serial(() => this.#take(mode, cut));
  }

  async #take(mode: TokenMode, cut: OutputCut): Promise<Taken> {
    const fromSeq = this.#reader.cursor;
    const frames = this.#reader.takeNow();
    let missed: { from_seq: number; to_seq: number } | undefined;
    let dropped: { from_seq: number; to_seq: number } | undefined;
    let view = await this.#keptView(mode);
    const put = (frame: Frame) => {
      if (view !== null) feedView(view, frame);
      else if (frame.type === "stdout") cut.push(payloadText(frame));
    };
    const flush = async () => {
      if (view !== null) cut.push(renderText(await view.flush()));
    };
    const deadline = performance.now() + GAP_READ_MS;
    for (const frame of frames) {
      if (frame.type !== "overflow" || frame.reason !== "lagged") {
        put(frame);
        continue;
      }
      const from = frame.missed_from ?? frame.seq;
      const to = frame.missed_to ?? frame.seq;
      const next = await this.#fill(from, to, put, flush, deadline);
      if (next > to) continue;
      // A gap stays: what came before it ends there, and the marker has a line of its own.
      if (view !== null && mode !== "raw") {
        cut.push(renderText(await view.end()));
        view = await this.#newView(mode);
        this.#views.set(mode, view);
      }
      cut.breakLine();
      missed = { from_seq: Math.min(missed?.from_seq ?? next, next), to_seq: to };
      if (this.#logHolds(next)) {
        cut.push(`[frames ${next}-${to} are not shown here: ${this.readHint(next, to)}]\n`);
      } else {
        dropped = { from_seq: Math.min(dropped?.from_seq ?? next, next), to_seq: to };
        cut.push(`[frames ${next}-${to} are no longer held]\n`);
      }
    }
    if (view !== null) {
      const ended = this.#exit !== null && frames.some((f) => f.type === "exit");
      cut.push(renderText(ended ? await view.end() : await view.flush({ partial: true })));
      if (ended) this.#views.delete(mode);
    }
    return {
      fromSeq,
      toSeq: frames.at(-1)?.seq ?? Math.max(0, fromSeq - 1),
      ...(missed === undefined ? {} : { missed }),
      ...(dropped === undefined ? {} : { dropped }),
    };
  }

  /**
   * Feeds frames `from`…`to` from the output log to `put`, `flush`ing after each batch, until `deadline`;
   * returns the first seq it did not feed (`to + 1` once all were).
   */
  async #fill(
    from: number,
    to: number,
    put: (frame: Frame) => void,
    flush: () => Promise<void>,
    deadline: number,
  ): Promise<number> {
    const log = this.#log;
    if (log === null || !this.#logHolds(from)) return from;
    let next = from;
    while (next <= to && performance.now() < deadline) {
      let batch: Frame[];
      try {
        batch = log.read(next, to, GAP_BATCH);
      } catch (error: unknown) {
        // The log cannot be read (a disk error): what is left stays a gap, said so by its marker.
        console.error(`specter: agent session ${this.id}: reading its output log back: ${String(error)}`);
        break;
      }
      if (batch.length === 0) break;
      for (const frame of batch) {
        if (frame.seq !== next) return next; // A frame the log lacks: the gap starts there.
        put(frame);
        next++;
      }
      await flush();
      // The reads and the view are synchronous: other sessions and clients get their turn between batches.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    return next;
  }

  /** The view `take` renders `mode` with, kept from call to call (null: raw). */
  async #keptView(mode: TokenMode): Promise<CompactView | ParsedView | null> {
    if (mode === "raw") return null;
    const kept = this.#views.get(mode);
    if (kept !== undefined) return kept;
    const view = await this.#newView(mode);
    this.#views.set(mode, view);
    return view;
  }

  #newView(mode: "compact" | "parsed"): Promise<CompactView | ParsedView> {
    return mode === "compact" ? Promise.resolve(new CompactView()) : ParsedView.create(this.#size);
  }

  /**
   * One page of frames `from`…`to` (default: the newest), rendered in `mode` with a fresh view, within
   * `maxTokens` (see `paging.ts`); the agent's cursor stays. From the output log when there is one.
   */
  readPage(
    from: number,
    to: number | undefined,
    mode: TokenMode,
    maxTokens: number,
    fromOffset = 0,
  ): Promise<Page> {
    return this.#serial(() =>
      readPage(this.#source(), {
        from,
        fromOffset,
        to: Math.min(to ?? this.#lastSeq, this.#lastSeq),
        maxTokens,
        render: (frames) => this.#render(frames, mode),
        call: (a, b, tokens) =>
          `read_output {"session_id": "${this.id}", "from_seq": ${a}, "to_seq": ${b}, ` +
          `"max_output_tokens": ${tokens}}`,
      })
    );
  }

  /** The frames `read_output` pages through: the output log, and memory past a failure of it. */
  #source(): FrameSource {
    const memory: FrameSource = {
      oldest: () => 0,
      read: (from, to, limit) => {
        const reader = this.session.subscribe({ from });
        try {
          return reader.takeNow().filter((f) => f.seq <= to).slice(0, limit);
        } finally {
          reader.close();
        }
      },
    };
    const log = this.#log;
    if (log === null) return memory;
    return {
      oldest: () => log.oldest(),
      read: (from, to, limit) => {
        const broken = this.#logBroken;
        if (broken === null || to < broken) return log.read(from, to, limit);
        return from < broken ? log.read(from, broken - 1, limit) : memory.read(from, to, limit);
      },
    };
  }

  /** Renders output frames in `mode` with a fresh view (a page of `read_output`). */
  async #render(frames: readonly Frame[], mode: TokenMode): Promise<string> {
    let raw = "";
    let missed = "";
    const view = mode === "raw" ? null : await this.#newView(mode);
    for (const frame of frames) {
      if (view !== null) feedView(view, frame);
      else if (frame.type === "stdout") raw += payloadText(frame);
      if (frame.type === "overflow" && frame.reason === "lagged") {
        missed += `[frames ${frame.missed_from ?? frame.seq}-${
          frame.missed_to ?? frame.seq
        } are no longer held]\n`;
      }
    }
    if (view === null) return missed + raw;
    return missed + renderText(await view.end());
  }

  /** Stops reading (the session is gone from the store); its output log goes. */
  close(): void {
    this.#reader.close();
    try {
      this.#log?.remove();
    } catch (error: unknown) {
      // The session is forgotten either way; the files stay for the host's budget to reclaim.
      console.error(
        `specter: agent session ${this.id}: its output log could not be removed: ${String(error)}`,
      );
    }
  }
}
