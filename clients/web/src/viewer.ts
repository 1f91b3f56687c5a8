/// <reference lib="dom" />
/**
 * The web viewer's page code (bundled into `src/remote/_assets/viewer.js` by `deno task build:web`): the
 * session list, a live terminal per session, the exit notice, and the replay page. It speaks the daemon's
 * JSON-RPC over `/v1/ws`, with its token offered as a subprotocol: the token comes from the address's
 * fragment (`#token=…`), which the browser never sends, and is kept in this tab's sessionStorage only.
 * Every frame is validated with the protocol module's zod schemas; a frame that fails is dropped with a
 * warning (a legacy bare `{"type":"exit","code":N}` is understood).
 *
 * @module
 */
import {
  FrameSchema,
  type PtyExitedFrame,
  PtyExitedFrameSchema,
  SessionEntrySchema,
  TOKEN_PATH,
  WS_PATH,
  WS_SUBPROTOCOL,
  WS_TOKEN_PREFIX,
} from "../../../src/protocol/mod.ts";
import { z } from "zod";
import { castOf } from "./cast.ts";
import { progressText } from "./progress.ts";

/** The part of xterm.js's Terminal this page uses (the module is loaded from /assets at run time). */
interface XtermTerminal {
  cols: number;
  rows: number;
  options: { disableStdin?: boolean; cursorBlink?: boolean };
  open(element: HTMLElement): void;
  write(data: string | Uint8Array, callback?: () => void): void;
  resize(cols: number, rows: number): void;
  reset(): void;
  focus(): void;
  onData(listener: (data: string) => void): void;
  loadAddon(addon: unknown): void;
  buffer: {
    active: { length: number; getLine(y: number): { translateToString(trim?: boolean): string } | undefined };
  };
}
interface FitAddon {
  fit(): void;
  proposeDimensions(): { cols: number; rows: number } | undefined;
}

const LegacyExitSchema = z.object({ type: z.literal("exit"), code: z.int().nullable() });
const ListResultSchema = z.object({ sessions: z.array(SessionEntrySchema) });
const HelloResultSchema = z.object({ scope: z.enum(["local", "viewer", "control"]).optional() });
const AttachResultSchema = z.object({
  next_seq: z.int(),
  control: z.boolean().optional(),
  log_id: z.string().nullable().optional(),
});

const TOKEN_KEY = "specter.token";

/** What tests (and curious people) can look at: `window.specterViewer`. */
interface ViewerState {
  term: XtermTerminal | null;
  /** Why the link is down, once known: the token no longer holds, or the daemon is not reachable. */
  link: "up" | "token-invalid" | "unreachable" | null;
  scope: string | null;
  frames: number;
  dropped: number;
  notice: string | null;
  lastSeq: number;
  screenText(): string;
}
const state: ViewerState = {
  term: null,
  link: null,
  scope: null,
  frames: 0,
  dropped: 0,
  notice: null,
  lastSeq: -1,
  screenText() {
    const term = state.term;
    if (term === null) return "";
    const lines: string[] = [];
    for (let y = 0; y < term.buffer.active.length; y++) {
      lines.push(term.buffer.active.getLine(y)?.translateToString(true) ?? "");
    }
    return lines.join("\n");
  },
};
(globalThis as unknown as { specterViewer: ViewerState }).specterViewer = state;

function $(id: string): HTMLElement {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`The page has no #${id}`);
  return element;
}

function fragment(): URLSearchParams {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}

/** The token: from the fragment (then removed from the address bar), else this tab's storage. */
function takeToken(): string | null {
  const params = fragment();
  const token = params.get("token");
  if (token !== null && token !== "") {
    sessionStorage.setItem(TOKEN_KEY, token);
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + location.search + (rest === "" ? "" : `#${rest}`));
    return token;
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Shows a warning under the terminal (and in the console): a frame was dropped, the link broke. */
function warn(text: string): void {
  console.warn(`specter viewer: ${text}`);
  const box = document.getElementById("warnings");
  if (box === null) return;
  const line = document.createElement("p");
  line.textContent = text;
  box.append(line);
  while (box.childElementCount > 20) box.firstElementChild?.remove();
}

function setLink(text: string): void {
  const link = document.getElementById("link");
  if (link !== null) link.textContent = text;
}

/** A JSON-RPC connection to the daemon over the WebSocket. */
class Rpc {
  #socket: WebSocket;
  #next = 1;
  #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  onNotification: (method: string, params: unknown) => void = () => {};
  onClose: (event: CloseEvent) => void = () => {};
  readonly opened: Promise<void>;

  constructor(token: string) {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    this.#socket = new WebSocket(`${scheme}//${location.host}${WS_PATH}`, [
      WS_SUBPROTOCOL,
      WS_TOKEN_PREFIX + token,
    ]);
    this.opened = new Promise((resolve, reject) => {
      this.#socket.onopen = () => resolve();
      this.#socket.onerror = () => reject(new Error("the connection was refused"));
    });
    this.#socket.onmessage = (event) => {
      if (typeof event.data !== "string") {
        warn("A binary message was dropped (this page does not ask for compression)");
        return;
      }
      for (const line of event.data.split("\n")) if (line !== "") this.#line(line);
    };
    this.#socket.onclose = (event) => {
      for (const { reject } of this.#pending.values()) reject(new Error("the connection closed"));
      this.#pending.clear();
      this.onClose(event);
    };
  }

  call(method: string, params: unknown): Promise<unknown> {
    const id = this.#next++;
    this.#socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
  }

  notify(method: string, params: unknown): void {
    if (this.#socket.readyState === WebSocket.OPEN) {
      this.#socket.send(JSON.stringify({ jsonrpc: "2.0", method, params }));
    }
  }

  close(): void {
    this.#socket.close();
  }

  #line(line: string): void {
    let message: {
      id?: number;
      result?: unknown;
      error?: { message?: string };
      method?: string;
      params?: unknown;
    };
    try {
      message = JSON.parse(line);
    } catch {
      warn("A message that is not JSON was dropped");
      return;
    }
    if (typeof message.id === "number" && this.#pending.has(message.id)) {
      const waiter = this.#pending.get(message.id)!;
      this.#pending.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(message.error.message ?? "refused"));
      else waiter.resolve(message.result);
      return;
    }
    if (typeof message.method === "string") this.onNotification(message.method, message.params);
  }
}

/**
 * Why a connection failed or closed: a browser's WebSocket sees a close (1006) whether the daemon refused
 * the token (401) or is gone, so the page asks `/v1/token`. A token that no longer holds is said plainly,
 * with what to run, and the page stops trying.
 */
async function diagnose(token: string): Promise<"token-invalid" | "unreachable" | "ok"> {
  let status: number;
  try {
    // Bounded: a listener being replaced (specter daemon revoke) may take the request and never answer.
    const answer = await fetch(TOKEN_PATH, {
      headers: { authorization: `Bearer ${token}` },
      cache: "no-store",
      signal: AbortSignal.timeout(5000),
    });
    status = answer.status;
  } catch {
    status = 0; // No answer: the daemon is not listening (stopped, or restarting).
  }
  if (status === 401) {
    state.link = "token-invalid";
    setLink("token no longer valid");
    const box = $("token-invalid");
    box.hidden = false;
    if (state.term !== null) state.term.options.disableStdin = true;
    return "token-invalid";
  }
  if (status === 204) return "ok";
  state.link = "unreachable";
  setLink("disconnected: the daemon does not answer (retrying)");
  return "unreachable";
}

/** Tries again every few seconds until connected, or until the token is known not to hold. */
function retry(token: string, again: () => Promise<void>): void {
  setTimeout(async () => {
    if (state.link === "token-invalid") return;
    try {
      await again();
    } catch {
      if (await diagnose(token) !== "token-invalid") retry(token, again);
    }
  }, 2000);
}

async function connect(token: string): Promise<Rpc> {
  const rpc = new Rpc(token);
  await rpc.opened;
  const hello = HelloResultSchema.parse(await rpc.call("daemon.hello", { protocol: 1 }));
  state.scope = hello.scope ?? null;
  state.link = "up";
  return rpc;
}

function formatTime(seconds: number): string {
  return new Date(seconds * 1000).toLocaleString();
}

// ── the session list ─────────────────────────────────────────────────────────────────────────────

async function showList(token: string): Promise<void> {
  $("list-view").hidden = false;
  let rpc: Rpc;
  const body = document.querySelector("#sessions tbody")!;
  let timer: ReturnType<typeof setInterval> | undefined;
  const open = async () => {
    rpc = await connect(token);
    setLink(`connected (${state.scope ?? "?"})`);
    rpc.onClose = () => {
      setLink("disconnected");
      clearInterval(timer);
      void diagnose(token).then((why) => {
        if (why !== "token-invalid") retry(token, open);
      });
    };
    await refresh();
    timer = setInterval(() => void refresh().catch(() => clearInterval(timer)), 2000);
  };
  const refresh = async () => {
    const { sessions } = ListResultSchema.parse(await rpc.call("session.list", {}));
    body.replaceChildren(...sessions.map((s) => {
      const row = document.createElement("tr");
      row.dataset.session = s.name;
      const cells = [
        s.name,
        s.title ?? "",
        s.description ?? "",
        s.parent_agent ?? "",
        s.running ? "running" : "exited",
        formatTime(s.started),
        s.exit_code === null ? (s.signal === null ? "" : s.signal) : String(s.exit_code),
      ];
      for (const text of cells) {
        const cell = document.createElement("td");
        cell.textContent = text;
        row.append(cell);
      }
      row.children[4]!.className = s.running ? "running" : "exited";
      const open = document.createElement("td");
      const link = document.createElement("a");
      link.href = `#session=${encodeURIComponent(s.name)}`;
      link.textContent = "open";
      open.append(link);
      row.append(open);
      return row;
    }));
    $("empty").hidden = sessions.length > 0;
  };
  addEventListener("hashchange", () => location.reload(), { once: true });
  await open();
}

// ── one session ──────────────────────────────────────────────────────────────────────────────────

function describeExit(notice: PtyExitedFrame): { text: string; kind: string } {
  if (notice.timed_out) {
    return { text: "Timed out: the session's --timeout ended the program", kind: "timed-out" };
  }
  if (notice.exit_code === null) {
    return { text: `The program was killed by ${notice.signal ?? "a signal"}`, kind: "failed" };
  }
  return {
    text: `The program exited with code ${notice.exit_code}`,
    kind: notice.exit_code === 0 ? "ok" : "failed",
  };
}

/** Shows the exit notice once everything written before it is on the screen. */
function showNotice(
  term: XtermTerminal,
  text: string,
  kind: string,
  lines: readonly string[],
  code: number | null,
  timedOut: boolean,
): void {
  if (state.notice !== null) return;
  state.notice = text;
  term.options.disableStdin = true;
  term.write("", () => {
    const box = $("notice");
    box.replaceChildren();
    box.className = kind;
    box.dataset.exitCode = code === null ? "" : String(code);
    box.dataset.timedOut = String(timedOut);
    const head = document.createElement("strong");
    head.textContent = text;
    box.append(head);
    if (lines.length > 0) {
      const pre = document.createElement("pre");
      pre.textContent = lines.join("\n");
      box.append(pre);
    }
    box.hidden = false;
  });
}

/** Loads a module the daemon serves from its npm package (not bundled: the bundler leaves this alone). */
function load(name: string): Promise<unknown> {
  return import(`/assets/${name}`);
}

function decodeBase64(data: string): Uint8Array {
  const text = atob(data);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

async function showSession(token: string, name: string): Promise<void> {
  $("session-view").hidden = false;
  $("session-name").textContent = name;
  ($("replay-link") as HTMLAnchorElement).href = `/replay#session=${encodeURIComponent(name)}`;
  const { Terminal } = await load("xterm.mjs") as { Terminal: new (options: unknown) => XtermTerminal };
  const { FitAddon } = await load("addon-fit.mjs") as { FitAddon: new () => FitAddon };
  const term = new Terminal({
    cols: 80,
    rows: 24,
    scrollback: 1000,
    convertEol: false,
    cursorBlink: false,
    // Links in the program's output (OSC 8) open only as http(s), in a new tab that cannot reach this one.
    linkHandler: {
      activate: (_event: MouseEvent, text: string) => {
        if (/^https?:\/\//i.test(text)) open(text, "_blank", "noopener,noreferrer");
      },
    },
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open($("terminal"));
  state.term = term;
  let rpc: Rpc | null = null;
  let control = false;
  let logId: string | null = null;
  let ended = false;
  let exit: { code: number | null; signal: string | null; timed_out: boolean; last_lines: string[] } | null =
    null;

  const sendResize = () => {
    if (!control || rpc === null || ended) return;
    const size = fit.proposeDimensions();
    if (size === undefined || size.cols < 2 || size.rows < 2) return;
    if (size.cols === term.cols && size.rows === term.rows) return;
    term.resize(size.cols, size.rows);
    rpc.call("session.send", { name, message: { v: 1, type: "resize", cols: size.cols, rows: size.rows } })
      .catch((error: Error) => warn(`Resize refused: ${error.message}`));
  };
  addEventListener("resize", sendResize);
  term.onData((data) => {
    if (!control || rpc === null || ended) return;
    rpc.call("session.send", { name, message: { v: 1, type: "input", data } })
      .catch((error: Error) => warn(`Input refused: ${error.message}`));
  });

  const onFrame = (raw: unknown) => {
    const parsed = FrameSchema.safeParse(raw);
    if (!parsed.success) {
      const type = (raw as { type?: unknown } | null)?.type;
      const legacy = LegacyExitSchema.safeParse(raw);
      if (type === "exit" && legacy.success) {
        // An older producer's bare exit: the plain message, no error.
        ended = true;
        const code = legacy.data.code;
        showNotice(
          term,
          `The program exited with code ${code ?? "unknown"}`,
          code === 0 ? "ok" : "failed",
          [],
          code,
          false,
        );
        return;
      }
      state.dropped++;
      const issue = parsed.error.issues[0];
      warn(
        `A malformed ${typeof type === "string" ? `"${type.slice(0, 40)}" ` : ""}frame was dropped (${
          issue === undefined ? "invalid" : `${issue.path.join(".") || "frame"}: ${issue.message}`
        })`,
      );
      return;
    }
    const frame = parsed.data;
    state.frames++;
    if (frame.type !== "pty_exited") state.lastSeq = Math.max(state.lastSeq, frame.seq);
    switch (frame.type) {
      case "start":
        if (!control) term.resize(frame.cols, frame.rows);
        $("session-title").textContent = frame.session.title ?? "";
        break;
      case "stdout":
        term.write(frame.binary === true ? decodeBase64(frame.data) : frame.data);
        break;
      case "resize":
        if (!control) term.resize(frame.cols, frame.rows);
        break;
      case "exit":
        exit = frame;
        break;
      case "pty_exited": {
        ended = true;
        const { text, kind } = describeExit(frame);
        showNotice(term, text, kind, frame.last_lines, frame.exit_code, frame.timed_out);
        break;
      }
      default:
        break;
    }
  };

  const attach = async () => {
    rpc = await connect(token);
    setLink(`connected (${state.scope ?? "?"})`);
    rpc.onNotification = (method, params) => {
      const p = params as { name?: unknown; frame?: unknown } | null;
      if (p?.name !== name) return;
      if (method === "frame") onFrame(p.frame);
      else if (method === "session.end") {
        ended = true;
        // A producer that sends no pty_exited: the exit frame says as much.
        if (exit !== null) {
          const e = exit as {
            code: number | null;
            signal: string | null;
            timed_out: boolean;
            last_lines: string[];
          };
          const notice = PtyExitedFrameSchema.parse({
            seq: 0,
            ts: 0,
            type: "pty_exited",
            session_id: name,
            exit_code: e.code,
            signal: e.signal,
            last_lines: e.last_lines,
            session_title: null,
            session_description: null,
            parent_agent: null,
            timed_out: e.timed_out,
          });
          const { text, kind } = describeExit(notice);
          showNotice(term, text, kind, notice.last_lines, notice.exit_code, notice.timed_out);
        }
      }
    };
    rpc.onClose = () => {
      setLink("disconnected");
      if (ended) return;
      // Refused (a revoked token), or the daemon went away (it may come back, with this token or not).
      void diagnose(token).then((why) => {
        if (why !== "token-invalid") retry(token, attach);
      });
    };
    const wantControl = state.scope === "control" || state.scope === "local";
    const params: Record<string, unknown> = { name, control: wantControl };
    if (state.lastSeq >= 0 && logId !== null) {
      params.from = state.lastSeq + 1;
      params.log_id = logId;
    }
    const result = AttachResultSchema.parse(await rpc.call("session.attach", params));
    logId = result.log_id ?? logId;
    control = result.control === true;
    $("mode").textContent = control ? "control" : "read-only";
    term.options.disableStdin = !control;
    if (control) {
      fit.fit();
      sendResize();
      term.focus();
    }
  };
  await attach();
}

// ── replay ───────────────────────────────────────────────────────────────────────────────────────

interface Player {
  create(source: unknown, element: HTMLElement, options: Record<string, unknown>): unknown;
}

function play(cast: string): void {
  const player = (globalThis as unknown as { AsciinemaPlayer?: Player }).AsciinemaPlayer;
  if (player === undefined) {
    warn("The player did not load");
    return;
  }
  const element = $("player");
  element.replaceChildren();
  player.create({ data: cast }, element, { controls: true, autoPlay: true, fit: "width", idleTimeLimit: 2 });
  element.dataset.loaded = "true";
}

async function showReplay(token: string | null, name: string | null): Promise<void> {
  ($("cast-file") as HTMLInputElement).addEventListener("change", async (event) => {
    const file = (event.target as HTMLInputElement).files?.[0];
    if (file === undefined) return;
    if (file.size > 64 * 1024 * 1024) {
      warn("The recording is larger than 64 MiB");
      return;
    }
    play(await file.text());
  });
  if (token === null || name === null) return;
  // The logged session: its frames up to now, then the player with its time slider.
  const rpc = await connect(token);
  const frames: unknown[] = [];
  let until = Infinity;
  // Shown as frames arrive, redrawn at most once per animation frame (a long log sends thousands a second).
  const status = $("replay-progress");
  status.hidden = false;
  let lastSeq = -1;
  let drawing = false;
  let loaded = false;
  const showProgress = () => {
    if (drawing) return;
    drawing = true;
    requestAnimationFrame(() => {
      drawing = false;
      if (loaded) return; // "Loaded N frames" stays.
      status.textContent = progressText({
        received: frames.length,
        lastSeq,
        until: Number.isFinite(until) ? until : null,
      });
    });
  };
  showProgress();
  const done = new Promise<void>((resolve) => {
    rpc.onNotification = (method, params) => {
      const p = params as { name?: unknown; frame?: unknown } | null;
      if (p?.name !== name) return;
      if (method === "session.end") resolve();
      if (method !== "frame") return;
      const parsed = FrameSchema.safeParse(p.frame);
      if (!parsed.success) {
        warn("A malformed frame was dropped");
        return;
      }
      frames.push(parsed.data);
      lastSeq = Math.max(lastSeq, parsed.data.seq);
      showProgress();
      if (parsed.data.seq + 1 >= until) resolve();
    };
  });
  const result = AttachResultSchema.parse(
    await rpc.call("session.attach", { name, from: 0, control: false }),
  );
  until = result.next_seq;
  showProgress();
  if (frames.some((f) => (f as { seq: number }).seq + 1 >= until)) { /* history already complete */ }
  await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 5000))]);
  rpc.close();
  loaded = true;
  status.textContent = `Loaded ${frames.length.toLocaleString("en")} frames`;
  status.dataset.done = "true";
  play(castOf(frames.map((f) => FrameSchema.parse(f)), name));
}

// ── start ────────────────────────────────────────────────────────────────────────────────────────

async function main(): Promise<void> {
  const page = $("app").dataset.page;
  const token = takeToken();
  const name = fragment().get("session");
  if (page === "replay") {
    await showReplay(token, name);
    return;
  }
  if (token === null) {
    $("no-token").hidden = false;
    return;
  }
  if (name === null || name === "") await showList(token);
  else await showSession(token, name);
}

main().catch(async (error: Error) => {
  const token = sessionStorage.getItem(TOKEN_KEY);
  // The first connection failed: a token that does not hold is said plainly, else what went wrong.
  if (token !== null && await diagnose(token) === "token-invalid") return;
  warn(`The viewer failed: ${error.message}`);
  setLink("disconnected");
});
