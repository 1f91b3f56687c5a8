/// <reference lib="dom" />
/**
 * The web viewer's exit notice: what a `pty_exited` frame says in words, shown as a plain element under the
 * terminal once everything written before it is on the screen (a full-screen program owns the terminal, so
 * nothing is drawn into it).
 *
 * @module
 */
import type { PtyExitedFrame } from "../../../src/protocol/mod.ts";
import { $, state } from "./page.ts";
import type { XtermTerminal } from "./xterm.ts";

/** The notice's text and kind (`ok`, `failed`, `timed-out`) for an exit. */
export function describeExit(notice: PtyExitedFrame): { text: string; kind: string } {
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
export function showNotice(
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
