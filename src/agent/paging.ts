/**
 * `read_output` as pages: from a `seq`, as many whole frames as fit `max_output_tokens`, rendered in the
 * asked view, with where the next page starts and whether more remains. A range that starts before what
 * the log still holds says exactly which frames are gone (`dropped`); nothing is shown as whole that is not.
 *
 * A page ends at a frame boundary, or inside a frame's output at the end of a line (a terminal read is up to
 * 64 KiB, more than a page of 10,000 tokens): then `next_from_offset` says how many characters of frame
 * `next_from_seq` the pages so far have shown, and the next page starts there (`from_offset`). Only a
 * line longer than a whole page is cut inside (never inside a character).
 *
 * @module
 */
import { payloadText } from "../frames/mod.ts";
import type { Frame } from "../protocol/mod.ts";
import { stripAnsi } from "../session/mod.ts";
import { tokenCount, truncateOutput } from "./truncate.ts";

/** Frames read from a log at once: at most 4 terminal reads (256 KiB), about a page of 10,000 tokens. */
const READ_BATCH = 4;
/** Most frames in one page, whatever their size (frames without output cost no tokens). */
export const MAX_PAGE_FRAMES = 4096;

/** Where the frames of a page come from. */
export interface FrameSource {
  /** The oldest `seq` held (frames before it were dropped). */
  oldest(): number;
  /** Held frames `from`…`to`, in order, at most `limit`; an `overflow` (lagged) frame stands for a gap. */
  read(from: number, to: number, limit: number): Frame[];
}

/** A `seq` range that no log holds any more. */
export interface Dropped {
  readonly from_seq: number;
  readonly to_seq: number;
}

/** One page of a session's output. */
export interface Page {
  readonly text: string;
  readonly fromSeq: number;
  /** The last frame the page covers (`fromSeq - 1` when it covers none, but at least 0). */
  readonly toSeq: number;
  /** Where the next page starts. */
  readonly nextFromSeq: number;
  /** Characters of frame `nextFromSeq`'s output already shown (0: the next page starts at its start). */
  readonly nextFromOffset: number;
  /** True while frames up to the asked `to` remain after this page. */
  readonly more: boolean;
  /** True when the page does not show all of its range whole (a cut frame, or dropped frames). */
  readonly truncated: boolean;
  readonly originalTokens: number;
  /** The frames of the range that are gone (a budget dropped them), if any. */
  readonly dropped: Dropped | null;
}

/** How a page is read. */
export interface PageRequest {
  readonly from: number;
  /** Characters of frame `from`'s output an earlier page showed (default 0). */
  readonly fromOffset?: number;
  /** The last `seq` wanted (inclusive; the caller caps it at the newest frame). */
  readonly to: number;
  readonly maxTokens: number;
  /** Renders the page's frames in the asked view (a fresh one). */
  readonly render: (frames: readonly Frame[]) => Promise<string>;
  /** The exact call that reads `from`…`to` with `maxTokens`, for the marker of a cut frame. */
  readonly call: (from: number, to: number, maxTokens: number) => string;
}

function widen(dropped: Dropped | null, from: number, to: number): Dropped {
  return dropped === null
    ? { from_seq: from, to_seq: to }
    : { from_seq: Math.min(dropped.from_seq, from), to_seq: Math.max(dropped.to_seq, to) };
}

/** An output frame holding `data` (a part of its decoded text) instead of its payload. */
function textPart(frame: Frame & { type: "stdout" }, data: string): Frame {
  const { binary: _binary, ...rest } = frame;
  return { ...rest, data };
}

/** What output costs in a page: its tokens as plain text (views only shorten it). */
function textTokens(text: string): number {
  return tokenCount(stripAnsi(text));
}

/** Characters counted at once while a page is filled (cut after a newline, where the tokenizer splits). */
const COUNT_GROUP = 4096;

/**
 * The longest start of `text` within `budget` tokens that ends at the end of a line (or is all of it),
 * and its tokens; when not even one line fits and `mustMove`, the longest start of the first line that
 * fits (at least one character). Counted a few KiB at a time, so a page costs what it holds, not the frame.
 */
function fitting(text: string, budget: number, mustMove: boolean): { part: string; tokens: number } {
  let end = 0;
  let used = 0;
  while (end < text.length) {
    let stop = text.indexOf("\n", Math.min(text.length, end + COUNT_GROUP) - 1);
    if (stop < 0) stop = text.lastIndexOf("\n");
    // No newline left: the unfinished last line, whole or not at all.
    const next = stop < end ? text.length : stop + 1;
    const cost = textTokens(text.slice(end, next));
    if (used + cost <= budget) {
      used += cost;
      end = next;
      continue;
    }
    // Over: line by line within the group.
    for (;;) {
      const nl = text.indexOf("\n", end);
      if (nl < 0 || nl + 1 > next) break;
      const line = textTokens(text.slice(end, nl + 1));
      if (used + line > budget) break;
      used += line;
      end = nl + 1;
    }
    break;
  }
  if (end > 0 || !mustMove) return { part: text.slice(0, end), tokens: used };
  // Not one whole line fits an empty page: the longest start of the line that does (binary search).
  const nl = text.indexOf("\n");
  const line = nl < 0 ? text : text.slice(0, nl + 1);
  let lo = 1;
  let hi = line.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (textTokens(line.slice(0, mid)) <= budget) lo = mid;
    else hi = mid - 1;
  }
  // Never half a surrogate pair (a whole character when not even one fits).
  const code = line.charCodeAt(lo - 1);
  if (code >= 0xd800 && code <= 0xdbff) lo += lo > 1 ? -1 : 1;
  return { part: line.slice(0, lo), tokens: textTokens(line.slice(0, lo)) };
}

/** Reads one page (see the module documentation). */
export async function readPage(source: FrameSource, request: PageRequest): Promise<Page> {
  const { from, to, maxTokens } = request;
  let dropped: Dropped | null = null;
  let next = from;
  const oldest = source.oldest();
  if (next < oldest && next <= to) {
    dropped = widen(dropped, next, Math.min(oldest - 1, to));
    next = oldest;
  }
  const frames: Frame[] = [];
  let tokens = 0;
  let full = false;
  let exhausted = false;
  let offset = request.fromOffset ?? 0;
  /** Where in its frame the last output taken starts (for a page cut back to a line's end). */
  let lastStart = 0;
  /** The page ends at a gap; a gap it starts with was the memory window's, not a budget's. */
  let atGap = false;
  let memoryGap = false;
  while (!full && next <= to) {
    const batch = source.read(next, to, READ_BATCH);
    if (batch.length === 0) {
      exhausted = true; // The source holds nothing more of the range (never a page that repeats itself).
      break;
    }
    for (const frame of batch) {
      const lagged = frame.type === "overflow" && frame.reason === "lagged";
      // A gap (a budget dropped frames while pages were read; the memory window passed them): said where
      // it is, never skipped silently. A page with text ends before it, so the next one starts with it
      // (and the text on either side is never joined into one line).
      if ((lagged || frame.seq > next) && frames.length > 0) {
        full = true;
        atGap = true;
        break;
      }
      if (lagged) {
        const gone = { from: frame.missed_from ?? frame.seq, to: frame.missed_to ?? frame.seq };
        dropped = widen(dropped, gone.from, gone.to);
        memoryGap = true;
        next = Math.max(next, gone.to + 1);
        offset = 0;
        continue;
      }
      if (frame.seq > next) {
        dropped = widen(dropped, next, frame.seq - 1);
        offset = 0;
      }
      if (frames.length >= MAX_PAGE_FRAMES) {
        full = true;
        break;
      }
      if (frame.type !== "stdout") {
        frames.push(frame);
        next = frame.seq + 1;
        offset = 0;
        continue;
      }
      // Whole lines within what is left (something, on an empty page); all of it when it fits.
      const text = payloadText(frame).slice(offset);
      const { part, tokens: cost } = fitting(text, maxTokens - tokens, tokens === 0);
      if (part.length === text.length) {
        frames.push(offset === 0 ? frame : textPart(frame, text));
        lastStart = offset;
        tokens += cost;
        next = frame.seq + 1;
        offset = 0;
        continue;
      }
      if (part !== "") {
        frames.push(textPart(frame, part));
        lastStart = offset;
        tokens += cost;
        next = frame.seq;
        offset += part.length;
      }
      full = true;
      break;
    }
  }
  // A full page that ends inside a line (a terminal read ends anywhere) ends at that line's start
  // instead: a view would show the line's two halves as two lines.
  const last = frames.at(-1);
  if (full && !atGap && last?.type === "stdout") {
    const shown = payloadText(last);
    const nl = shown.lastIndexOf("\n");
    if (!shown.endsWith("\n") && nl >= 0) {
      frames[frames.length - 1] = textPart(last, shown.slice(0, nl + 1));
      next = last.seq;
      offset = lastStart + nl + 1;
    }
  }
  let text = await request.render(frames);
  const originalTokens = tokenCount(text);
  let truncated = dropped !== null;
  if (originalTokens > maxTokens) {
    // One frame over the budget (or a view longer than its plain text): its head and tail, and the call
    // that shows it whole.
    const first = frames[0]?.seq ?? from;
    const last = frames.at(-1)?.seq ?? from;
    const whole = Math.min(1_000_000, Math.max(originalTokens, maxTokens) * 2);
    text = truncateOutput(text, maxTokens, `${request.call(first, last, whole)} shows it whole`).output;
    truncated = true;
  }
  if (dropped !== null) {
    const why = memoryGap
      ? "are no longer held (no output log kept them, and the memory window passed them)"
      : "were dropped by the output log's budget";
    text = `[frames ${dropped.from_seq}-${dropped.to_seq} ${why}; they cannot be read]\n${text}`;
  }
  return {
    text,
    fromSeq: from,
    toSeq: Math.max(0, offset > 0 ? next : next - 1),
    nextFromSeq: next,
    nextFromOffset: offset,
    more: !exhausted && next <= to,
    truncated,
    originalTokens,
    dropped,
  };
}
