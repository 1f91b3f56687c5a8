/**
 * `specter attach NAME`: this terminal as a client of a daemon session, as tmux attach is.
 *
 * Two ways to show the session:
 * - *raw*, for the client that controls it (and for a session that has ended): what the program prints
 *   passes through {@link OuterFilter} to this terminal, drawn for this window's size (the controller
 *   resizes the session to it). {@link OuterModes} follows the modes the program switched on, and every
 *   way out (detach, the session's end, an error, SIGTERM/SIGHUP/SIGINT, the daemon going away) switches
 *   them off again and pops the title pushed on entry.
 * - *view*, for a watcher: the session's screen kept in a terminal model of the session's size and drawn
 *   into this window, clipped or padded (src/cli/attach_view.ts), with a status line that says it
 *   watches. Keys are not sent; `t` takes control (the daemon tells the controller, which becomes a
 *   watcher), any other key is refused on the status line.
 *
 * Switching between the two is a detach and a new attach: the history is replayed from the frame log
 * into the new way of showing it, so neither has to keep the other's state.
 *
 * @module
 */
import { DaemonError, SpecterError, UsageError } from "../errors.ts";
import type { DaemonClient } from "../daemon/mod.ts";
import { payloadText } from "../frames/mod.ts";
import { type ExitFrame, type Frame, PROTOCOL_VERSION, type SessionEntry } from "../protocol/mod.ts";
import { exitCodeForExit } from "./exit_codes.ts";
import { OuterFilter, OuterModes } from "../terminal/mod.ts";
import { WatchView } from "./attach_watch.ts";
import { type DetachKey, DetachScanner } from "./detach_key.ts";
import type { FlagValues } from "./flags.ts";
import { connectDaemon } from "./daemon_client.ts";

const encoder = new TextEncoder();

/** Signals that end an attach (the terminal is restored first); their exit status is 128 + number. */
const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;
type SignalName = keyof typeof SIGNALS;

type Ending =
  | { kind: "detach" }
  | { kind: "ended" }
  | { kind: "signal"; signal: SignalName }
  | { kind: "hangup" }
  | { kind: "closed" }
  | { kind: "error"; error: unknown };

/** What `specter attach` was asked. */
export interface AttachRequest {
  readonly name: string;
  readonly from: number | undefined;
  readonly watch: boolean;
  readonly take: boolean;
  readonly allowClipboard: boolean;
  readonly detachKey: DetachKey;
}

/** Runs `specter attach` with parsed flags; the exit status. */
export async function runAttach(
  values: FlagValues,
  request: AttachRequest,
  warn: (text: string) => void,
): Promise<number> {
  const stdin = Deno.stdin.isTerminal();
  const stdout = Deno.stdout.isTerminal();
  // The daemon's socket is checked first even without a terminal (an untrusted one is the graver news),
  // but no daemon is started only to be refused.
  const client = await connectDaemon(stdin && stdout ? values : { ...values, "no-autostart": true }).catch(
    (error: unknown) => {
      if (stdin && stdout) throw error;
      if (error instanceof SpecterError && error.code === "E_DAEMON_UNAVAILABLE") return null;
      throw error;
    },
  );
  if (client === null || !stdin || !stdout) {
    client?.close();
    throw new UsageError(
      `specter attach needs a terminal, and its ${stdin ? "stdout" : "stdin"} is not one: use ` +
        `"specter send ${request.name} TEXT" to type into the session and "specter logs ${request.name}" ` +
        "to read it",
      { details: { reason: "not_a_terminal", stdin_terminal: stdin, stdout_terminal: stdout } },
    );
  }
  return await new Attachment(client, request, warn).run();
}

/** One attach of this terminal to a session, from entry to the terminal put back. */
class Attachment {
  readonly #client: DaemonClient;
  readonly #request: AttachRequest;
  readonly #warn: (text: string) => void;
  readonly #ending = Promise.withResolvers<Ending>();
  /** `pending`: frames are queued until an attach's answer says how they are shown; `off`: dropped. */
  #mode: "pending" | "raw" | "view" | "off" = "off";
  #queue: Frame[] = [];
  #controls = false;
  #running = true;
  #exit: ExitFrame | null = null;
  /** The session's terminal size as its frames tell it ("COLSxROWS"; null before the first). */
  #size: string | null = null;
  #filter: OuterFilter;
  #modes = new OuterModes();
  #view: WatchView | null = null;
  #writing: Promise<void> = Promise.resolve();
  #switching = false;
  /** The raw way was entered (the title pushed): leaving it owes the restore. */
  #entered = false;
  /** The terminal was put back: nothing more is written to it (a switch still under way included). */
  #closed = false;
  /** Typed input, decoded as a stream: a character split across two reads is sent whole. */
  readonly #decoder = new TextDecoder();

  constructor(client: DaemonClient, request: AttachRequest, warn: (text: string) => void) {
    this.#client = client;
    this.#request = request;
    this.#warn = warn;
    this.#filter = new OuterFilter({ allowClipboard: request.allowClipboard });
  }

  async run(): Promise<number> {
    const { name } = this.#request;
    const client = this.#client;
    client.onNotification = (method, params) => {
      try {
        this.#notified(method, params);
      } catch (error) {
        // A failure while showing the session ends the attach like any other: the terminal put back first.
        this.#end({ kind: "error", error });
      }
    };
    client.onClose = () => this.#end({ kind: "closed" });
    const signals = Object.keys(SIGNALS).map((signal) => {
      const listener = () => this.#end({ kind: "signal", signal: signal as SignalName });
      Deno.addSignalListener(signal as SignalName, listener);
      return () => Deno.removeSignalListener(signal as SignalName, listener);
    });
    const resize = () => this.#resized();
    Deno.addSignalListener("SIGWINCH", resize);
    let ending: Ending = { kind: "hangup" };
    Deno.stdin.setRaw(true);
    try {
      const listed = await client.call("session.list", {}) as { sessions: SessionEntry[] };
      const entry = listed.sessions.find((entry) => entry.name === name);
      this.#running = entry?.running ?? true;
      // Said once, before the session's screen (an unknown name is the attach's error instead).
      if (entry !== undefined) {
        this.#say(`[attached to ${name}: detach with ${this.#request.detachKey.label}]`);
      }
      await this.#attach(!this.#request.watch, this.#request.take, this.#request.from);
      void this.#readInput();
      ending = await this.#ending.promise;
    } finally {
      for (const remove of signals) remove();
      Deno.removeSignalListener("SIGWINCH", resize);
      // Whatever ended the attach, the terminal is put back: the program's modes off, the title popped,
      // after what was queued for it and before anything else (nothing is queued from now on). A terminal
      // that takes nothing (a hangup, flow control) holds the exit back for a bounded time only.
      const leave = this.#leave();
      this.#closed = true;
      await bounded(this.#writing);
      await bounded(this.#put(leave));
      try {
        Deno.stdin.setRaw(false);
      } catch {
        // The terminal is gone (a hangup): there is nothing left to put back.
      }
    }
    if (ending.kind === "detach") {
      await client.call("session.detach", { name }).catch(() => {
        // The daemon went away meanwhile: the detach has happened anyway.
      });
    }
    client.close();
    return this.#report(ending);
  }

  #report(ending: Ending): number {
    const { name } = this.#request;
    switch (ending.kind) {
      case "detach":
        this.#say(`[detached from ${name}]`);
        return 0;
      case "ended": {
        const exit = this.#exit;
        if (exit === null) {
          this.#say(`[${name} ended]`);
          return 0;
        }
        const how = exit.code !== null
          ? `ended with code ${exit.code}`
          : exit.signal !== null
          ? `was killed (${exit.signal.replace(/^SIG/, "")})`
          : "ended";
        this.#say(`[${name} ${how}]`);
        return exitCodeForExit(exit);
      }
      case "signal":
        this.#say(`[detached from ${name} by ${ending.signal}]`);
        return 128 + SIGNALS[ending.signal];
      case "hangup":
        return 128 + SIGNALS.SIGHUP;
      case "closed":
        throw new DaemonError(
          "E_DAEMON_UNAVAILABLE",
          `The daemon went away while attached to "${name}" (the session may go on: its keeper holds it); ` +
            `specter attach ${name} starts a daemon again and attaches`,
        );
      case "error":
        throw ending.error;
    }
  }

  #say(text: string): void {
    try {
      this.#warn(text);
    } catch {
      // stderr is gone with the terminal: the exit status still tells.
    }
  }

  #end(ending: Ending): void {
    this.#ending.resolve(ending);
  }

  /** Attaches (again): frames are queued until the answer says whether this client controls. */
  async #attach(control: boolean, take: boolean, from?: number): Promise<void> {
    this.#mode = "pending";
    this.#queue = [];
    const result = await this.#client.call("session.attach", {
      name: this.#request.name,
      ...(from === undefined ? {} : { from }),
      control,
      ...(take ? { take: true } : {}),
    }) as { control: boolean };
    if (this.#closed) return;
    this.#controls = result.control;
    if (result.control || !this.#running) this.#enterRaw();
    else await this.#enterView(take);
    const queued = this.#queue;
    this.#queue = [];
    for (const frame of queued) this.#frame(frame);
  }

  #enterRaw(): void {
    this.#filter = new OuterFilter({ allowClipboard: this.#request.allowClipboard });
    this.#modes = new OuterModes();
    this.#mode = "raw";
    this.#entered = true;
    this.#write(OuterModes.ENTER);
    this.#resized();
  }

  async #enterView(refused: boolean): Promise<void> {
    const { name, detachKey } = this.#request;
    const screen = await this.#client.call("session.screen", { name }).catch(() => null) as
      | { cols?: number; rows?: number }
      | null;
    const size = { cols: screen?.cols ?? 80, rows: screen?.rows ?? 24 };
    if (this.#closed) return;
    this.#view = await WatchView.open(size, name, detachKey.label, (text) => this.#write(text));
    this.#mode = "view";
    if (refused) this.#view.flash("control was not given (a viewer token, or the session has ended)");
  }

  /** What leaves the current way of showing the session: the program's modes off, or the view left. */
  #leave(): string {
    if (this.#view !== null) {
      const leave = this.#view.close();
      this.#view = null;
      this.#mode = "off";
      return leave;
    }
    this.#mode = "off";
    if (!this.#entered) return "";
    this.#entered = false;
    // On the normal screen the cursor may be mid-line (a shell's prompt): what attach says next starts a line.
    const restore = this.#modes.restore() + (this.#modes.altScreen ? "" : "\r\n");
    this.#modes = new OuterModes();
    return restore;
  }

  #notified(method: string, params: Record<string, unknown>): void {
    if (params.name !== this.#request.name) return;
    if (method === "session.end") {
      this.#running = false;
      this.#end({ kind: "ended" });
    } else if (method === "session.control") {
      if (params.control === false && this.#controls) void this.#switchTo(false);
    } else if (method === "frame") {
      const frame = params.frame as Frame;
      if (this.#mode === "pending") this.#queue.push(frame);
      else this.#frame(frame);
    }
  }

  #frame(frame: Frame): void {
    if (frame.type === "exit") this.#exit = frame;
    let resized = false;
    if (frame.type === "start" || frame.type === "resize_ack") {
      const size = `${frame.cols}x${frame.rows}`;
      resized = frame.type === "resize_ack" && size !== this.#size;
      this.#size = size;
    }
    if (this.#mode === "raw") {
      if (resized) {
        // The session's terminal changed size, and a real terminal's scroll region is reset when it does:
        // the program redraws for the new size counting on that (vim does). The outer terminal was not
        // resized (the region came from a replay at another size): reset it here, the cursor kept.
        this.#write("\x1b7\x1b[r\x1b8");
      }
      if (frame.type !== "stdout") return;
      const text = this.#filter.feed(payloadText(frame));
      if (text === "") return;
      this.#modes.observe(text);
      this.#write(text);
    } else if (this.#mode === "view") {
      this.#view?.feed(frame);
    }
  }

  /** Control given up (`false`, another client took it) or taken (`true`): detach, and attach anew. */
  async #switchTo(control: boolean): Promise<void> {
    if (this.#switching) return;
    this.#switching = true;
    const demoted = !control;
    try {
      this.#mode = "off"; // Frames of the old attach, still on their way, are not shown.
      await this.#client.call("session.detach", { name: this.#request.name });
      this.#write(this.#leave());
      this.#controls = false;
      await this.#attach(control, control);
      if (demoted) this.#view?.flash(`another client took control of ${this.#request.name}`);
    } catch (error) {
      // Told already when the daemon went away (onClose ended the attach first, and the first end counts).
      this.#end({ kind: "error", error });
    } finally {
      this.#switching = false;
    }
  }

  async #readInput(): Promise<void> {
    const scanner = new DetachScanner(this.#request.detachKey);
    const buffer = new Uint8Array(4096);
    for (;;) {
      const n = await Deno.stdin.read(buffer).catch(() => null);
      if (n === null) return this.#end({ kind: "hangup" });
      const { send, detach } = scanner.scan(buffer.subarray(0, n));
      if (send.length > 0) this.#typed(send);
      if (detach) return this.#end({ kind: "detach" });
    }
  }

  #typed(bytes: Uint8Array): void {
    if (this.#mode === "raw" && this.#controls) {
      const data = this.#decoder.decode(bytes, { stream: true });
      if (data === "") return;
      void this.#client.call("session.send", {
        name: this.#request.name,
        message: { v: PROTOCOL_VERSION, type: "input", data },
      }).catch(() => {
        // Control was taken meanwhile (its notice follows), or the session ended (session.end follows).
      });
    } else if (this.#mode === "view") {
      if (bytes.includes(0x74) || bytes.includes(0x54)) void this.#switchTo(true); // t or T
      else this.#view?.flash("keys are not sent while watching", true);
    }
  }

  #resized(): void {
    if (this.#mode === "view") return this.#view?.resized();
    if (this.#mode !== "raw" || !this.#controls) return;
    const { columns, rows } = Deno.consoleSize();
    void this.#client.call("session.send", {
      name: this.#request.name,
      message: { v: PROTOCOL_VERSION, type: "resize", cols: columns, rows },
    }).catch(() => {
      // As for input: control was lost or the session ended, and that is told otherwise.
    });
  }

  /** Queues `text` for the terminal; a terminal that cannot be written any more ends the attach. */
  #write(text: string): void {
    if (text === "" || this.#closed) return;
    const bytes = encoder.encode(text);
    this.#writing = this.#writing.then(() => writeAll(bytes)).catch(() => this.#end({ kind: "hangup" }));
  }

  /** Writes `text` now (after everything queued), failing quietly: the terminal may be gone. */
  async #put(text: string): Promise<void> {
    await writeAll(encoder.encode(text)).catch(() => {
      // A hung-up terminal: nothing can be put back on it.
    });
  }
}

/** How long the exit waits for the terminal to take what is written to it (ms). */
const EXIT_WRITE_MS = 2000;

/** `promise`, or nothing once {@link EXIT_WRITE_MS} have passed. */
async function bounded(promise: Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => timer = setTimeout(resolve, EXIT_WRITE_MS));
  await Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function writeAll(bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += await Deno.stdout.write(bytes.subarray(done));
}
