/**
 * The in-process SDK's `Session`: a program on a terminal in the sandbox, driven from Deno without a
 * process boundary. The same shape as the clients' `Session` (`frames`, `expect`, `send`, `press`), plus
 * what only an in-process host has: the screen (`screen()`) and the frames' `Subscription`s directly.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { SessionError } from "../errors.ts";
import { MAX_DURATION_MS, type ScreenSnapshot, type TokenMode } from "../protocol/mod.ts";
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
  /**
   * The core session underneath (signals, resize, the driver protocol, `subscribe`). Its `frames()` are
   * read by this Session (the authoritative reader); read frames through {@link Session.frames}.
   */
  readonly core: CoreSession;
  /** Output not yet consumed by a match (the newest {@link EXPECT_WINDOW} characters). */
  #text = "";
  #ended = false;
  #waiters: (() => void)[] = [];

  private constructor(core: CoreSession) {
    this.core = core;
    void this.#drain();
  }

  /**
   * Reads every frame as the authoritative reader, so the program never waits for (and is never ended
   * because of) a slow reader of `frames()`; collects the output `expect` searches.
   */
  async #drain(): Promise<void> {
    try {
      for await (const frame of this.core.frames()) {
        if (frame.type !== "stdout") continue;
        this.#text = (this.#text + payloadText(frame)).slice(-EXPECT_WINDOW);
        this.#wake();
      }
    } finally {
      this.#ended = true;
      this.#wake();
    }
  }

  #wake(): void {
    for (const waiter of this.#waiters.splice(0)) waiter();
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

  /**
   * The session's frames from `fromSeq` (default: the first), in a view (raw by default); each call is its
   * own stream. A stream that falls behind the frames the session still holds gets an `overflow` frame
   * (`reason: "lagged"`); the program never waits for it.
   */
  frames(options: { mode?: TokenMode; fromSeq?: number } = {}): AsyncGenerator<ViewFrame> {
    const start = this.core.subscribe({ from: options.fromSeq ?? 0 });
    return viewFrames(start, options.mode ?? "raw");
  }

  /**
   * Waits until the output since the last match matches `pattern` (a string matches literally); throws
   * `E_EXPECT_TIMEOUT` after `timeoutMs` (default 10 000) and `E_SESSION_CLOSED` when the program ended
   * without it.
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
      if (this.#ended) {
        throw new SessionError("E_SESSION_CLOSED", `The program ended before ${regex} matched`);
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new SessionError("E_EXPECT_TIMEOUT", `No match for ${regex} within ${timeoutMs} ms`);
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        // A host timer waits at most 2^31 - 1 ms (a longer one fires at once): a longer expect re-arms.
        timer = setTimeout(resolve, Math.min(left, MAX_DURATION_MS));
      });
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

/**
 * Runs `cmd` (see {@link Session.spawn}) and yields its frames in `mode` (raw by default) until it ends:
 * the adapter contract's `run`. Leaving the loop early ends the program.
 */
export async function* run(
  cmd: string | readonly string[],
  options: SessionSpawnOptions & { mode?: TokenMode } = {},
): AsyncGenerator<ViewFrame> {
  const { mode, ...spawnOptions } = options;
  const session = await Session.spawn(cmd, spawnOptions);
  try {
    yield* session.frames({ mode: mode ?? "raw" });
  } finally {
    await session.close();
  }
}
