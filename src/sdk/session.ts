/**
 * The in-process SDK's `Session`: a program on a terminal in the sandbox, driven from Deno without a
 * process boundary. The same shape as the clients' `Session` (`frames`, `expect`, `send`, `press`), plus
 * what only an in-process host has: the screen (`screen()`) and the frames' `Subscription`s directly.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { SessionError } from "../errors.ts";
import type { ScreenSnapshot, TokenMode } from "../protocol/mod.ts";
import { payloadText } from "../frames/mod.ts";
import { type Session as CoreSession, spawn, type SpawnOptions } from "../session/mod.ts";
import { snapshotText } from "../terminal/mod.ts";
import { AGENT_ENV, AGENT_PROMPTS, type ViewFrame, viewFrames } from "../agent/mod.ts";

/** Options of {@link Session.spawn}: the core spawn options (sandbox, policy, limits, size, env, …). */
export type SessionSpawnOptions = Omit<SpawnOptions, "argv">;

/** Most text `expect` keeps to search (the newest). */
const EXPECT_WINDOW = 1 << 20;

/** What `expect` found. */
export interface ExpectMatch {
  /** The match (groups included). */
  readonly match: RegExpExecArray;
  /** The output searched, up to the end of the match. */
  readonly before: string;
}

/** The text a frame adds to what the program showed ("" for frames that are not output). */
export function frameText(frame: ViewFrame): string {
  switch (frame.type) {
    case "stdout":
      return payloadText(frame);
    case "text":
    case "line_update":
      return frame.data;
    case "screen":
      return frame.rows.join("\n") + "\n";
    case "rows":
      return frame.rows.map((row) => row.text).join("\n") + "\n";
    default:
      return "";
  }
}

/** A program on a terminal in the sandbox (see the module documentation). */
export class Session {
  /** The core session underneath (frames, signals, resize, the driver protocol). */
  readonly core: CoreSession;
  readonly #expect;
  #text = "";

  private constructor(core: CoreSession) {
    this.core = core;
    this.#expect = viewFrames(core.subscribe({ from: 0 }), "raw");
  }

  /**
   * Starts `argv` (an argv, or a line for the policy's shell) in the sandbox the options choose (the
   * default: the strict preset), with the screen modelled, an interactive bash or zsh marked (OSC 133),
   * and pagers and colour tamed as for agents (`options.env` wins).
   */
  static spawn(argv: string | readonly string[], options: SessionSpawnOptions = {}): Promise<Session> {
    const line = typeof argv === "string";
    const core = spawn({
      screen: true,
      shellIntegration: true,
      promptRegex: [...AGENT_PROMPTS],
      ...options,
      argv: line ? [argv] : [...argv],
      ...(line && options.shell === undefined
        ? { shell: existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh" }
        : {}),
      env: { ...AGENT_ENV, ...options.env },
    });
    return Promise.resolve(new Session(core));
  }

  /** The session's frames from the first, in a view (raw by default); each call is its own stream. */
  frames(options: { mode?: TokenMode; fromSeq?: number } = {}): AsyncGenerator<ViewFrame> {
    return viewFrames(this.core.subscribe({ from: options.fromSeq ?? 0 }), options.mode ?? "raw");
  }

  /**
   * Waits until the output since the last match matches `pattern` (a string matches literally); throws
   * `E_EXPECT_TIMEOUT` after `timeoutMs` (default 10 000) and `E_SESSION_CLOSED` when the program ends first.
   */
  async expect(pattern: RegExp | string, options: { timeoutMs?: number } = {}): Promise<ExpectMatch> {
    const regex = typeof pattern === "string"
      ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      : new RegExp(pattern.source, pattern.flags.replace("g", "").replace("y", ""));
    const timeoutMs = options.timeoutMs ?? 10_000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = regex.exec(this.#text);
      if (match !== null) {
        const end = match.index + match[0].length;
        const before = this.#text.slice(0, end);
        this.#text = this.#text.slice(end);
        return { match, before };
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new SessionError("E_EXPECT_TIMEOUT", `No match for ${regex} within ${timeoutMs} ms`);
      }
      const next = await this.#nextBefore(left);
      if (next === null) {
        throw new SessionError("E_SESSION_CLOSED", `The program ended before ${regex} matched`);
      }
      if (next !== "") this.#text = (this.#text + next).slice(-EXPECT_WINDOW);
    }
  }

  /** Output text of the next frame, "" for one without, null at the end; waits at most `ms`. */
  #pending: Promise<IteratorResult<ViewFrame>> | null = null;
  async #nextBefore(ms: number): Promise<string | null> {
    // The pending read is kept across a timeout, so no frame is lost.
    this.#pending ??= this.#expect.next();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => timer = setTimeout(() => resolve("timeout"), ms));
    try {
      const result = await Promise.race([this.#pending, timeout]);
      if (result === "timeout") return "";
      this.#pending = null;
      return result.done ? null : frameText(result.value);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Types `text` (no Enter is added). */
  send(text: string): void {
    this.core.write(text);
  }

  /** Presses a named key (`enter`, `up`, `ctrl-c`, …). */
  press(key: string): void {
    this.core.press(key);
  }

  /** The screen as text, once the model has caught up with the output. */
  async screen(): Promise<string> {
    return snapshotText(await this.core.screen());
  }

  /** The screen with cells, colours and cursor. */
  snapshot(): Promise<ScreenSnapshot> {
    return this.core.screen();
  }

  /** Ends the program (SIGHUP/SIGTERM, a grace, SIGKILL) and resolves with its exit frame. */
  async close(): Promise<void> {
    await this.core.terminate();
  }
}
