/**
 * A session's frames in a view: raw frames as they are, or compact/parsed view events (each with the `seq`
 * of the last raw frame it covers) with the other frames (start, exit, …) in their places. One reader of the
 * frame log: what `session.subscribe` streams and what the in-process SDK's `frames({ mode })` yields.
 *
 * @module
 */
import { payloadText } from "../frames/mod.ts";
import type { Frame, TokenMode, ViewEvent } from "../protocol/mod.ts";
import type { Subscription } from "../session/mod.ts";
import { CompactView, ParsedView } from "../views/mod.ts";

/** A frame as a view delivers it: a raw frame, or a view event with the `seq` it covers. */
export type ViewFrame = Frame | (ViewEvent & { seq?: number });

/**
 * Feeds one raw frame to a view: output is pushed, input tells a parsed view that the screen it leads to is
 * reported at once, and a resize resizes its model. The one place a frame reaches a view (the agent's
 * reads and every subscription's stream).
 */
export function feedView(view: CompactView | ParsedView, frame: Frame): void {
  if (frame.type === "stdout") {
    // The parsed view times output by when it came (a screen reported mid-draw is not paced).
    if (view instanceof ParsedView) view.push(payloadText(frame), frame.ts);
    else view.push(payloadText(frame));
  } else if (view instanceof ParsedView) {
    if (frame.type === "stdin") view.input();
    else if (frame.type === "resize_ack") view.resize(frame.cols, frame.rows);
  }
}

/**
 * Yields `subscription`'s frames in `mode` until the session ends (or the subscription is closed). The
 * parsed view models the terminal at the size the session's `start` frame gives when the subscription
 * begins there (else 80×24), and follows every `resize_ack`.
 */
export async function* viewFrames(subscription: Subscription, mode: TokenMode): AsyncGenerator<ViewFrame> {
  let view: CompactView | ParsedView | null = null;
  for (;;) {
    const frames = await subscription.take();
    if (frames.length === 0) break;
    if (mode === "raw") {
      yield* frames;
      continue;
    }
    if (view === null) {
      const first = frames[0]!;
      const size = first.type === "start" ? { cols: first.cols, rows: first.rows } : {};
      view = mode === "compact" ? new CompactView() : await ParsedView.create(size);
    }
    for (const frame of frames) {
      feedView(view, frame);
      if (frame.type === "stdout") continue;
      for (const event of await view.flush({ partial: true })) yield { ...event, seq: frame.seq };
      yield frame;
    }
    const last = frames.at(-1)!;
    for (const event of await view.flush({ partial: true })) yield { ...event, seq: last.seq };
  }
  if (view !== null) yield* await view.end();
}
