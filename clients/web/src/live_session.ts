/// <reference lib="dom" />
/**
 * The web viewer's live terminal for one session: xterm.js fed by the session's frames (each validated; a
 * malformed one dropped with a warning, a legacy bare `exit` understood), keystrokes and resizes sent back
 * when the page has control, reattaching from the last seq when the link comes back.
 *
 * @module
 */
import { FrameSchema, PtyExitedFrameSchema } from "../../../src/protocol/mod.ts";
import { z } from "zod";
import { describeExit, showNotice } from "./exit_notice.ts";
import { AttachResultSchema, connect, diagnose, retry } from "./link.ts";
import { $, setLink, state, warn } from "./page.ts";
import type { Rpc } from "./rpc.ts";
import { type FitAddon, load, type XtermTerminal } from "./xterm.ts";

const LegacyExitSchema = z.object({ type: z.literal("exit"), code: z.int().nullable() });

function decodeBase64(data: string): Uint8Array {
  const text = atob(data);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** Shows one session's live terminal and attaches to it. */
export async function showSession(token: string, name: string): Promise<void> {
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
