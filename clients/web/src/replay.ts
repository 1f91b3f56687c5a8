/// <reference lib="dom" />
/**
 * The web viewer's replay page: a recording opened from a file, or a logged session's frames fetched from
 * the daemon (with a progress line), played in asciinema-player with its time slider.
 *
 * @module
 */
import { FrameSchema } from "../../../src/protocol/mod.ts";
import { castOf } from "./cast.ts";
import { AttachResultSchema, connect } from "./link.ts";
import { $, warn } from "./page.ts";
import { progressText } from "./progress.ts";

/** The part of asciinema-player this page uses (a script the page loads, not bundled). */
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

/** Shows the replay page: a file the user picks, or the named session's log when there is a token. */
export async function showReplay(token: string | null, name: string | null): Promise<void> {
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
