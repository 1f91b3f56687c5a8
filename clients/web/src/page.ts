/// <reference lib="dom" />
/**
 * The web viewer's shared page state and DOM helpers: `window.specterViewer` (what tests look at), finding
 * an element by id, the warnings box and the link line.
 *
 * @module
 */
import type { XtermTerminal } from "./xterm.ts";

/** What tests (and curious people) can look at: `window.specterViewer`. */
export interface ViewerState {
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
/** The page's one state, also published as `window.specterViewer`. */
export const state: ViewerState = {
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

/** The page's element with this id (the page's HTML has them all; a missing one is a bug). */
export function $(id: string): HTMLElement {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`The page has no #${id}`);
  return element;
}

/** Shows a warning under the terminal (and in the console): a frame was dropped, the link broke. */
export function warn(text: string): void {
  console.warn(`specter viewer: ${text}`);
  const box = document.getElementById("warnings");
  if (box === null) return;
  const line = document.createElement("p");
  line.textContent = text;
  box.append(line);
  while (box.childElementCount > 20) box.firstElementChild?.remove();
}

/** Says how the link to the daemon stands, on the page's link line. */
export function setLink(text: string): void {
  const link = document.getElementById("link");
  if (link !== null) link.textContent = text;
}
