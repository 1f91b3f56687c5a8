import assert from "node:assert/strict";
import type { Frame } from "../protocol/mod.ts";
import { type FrameSource, type Page, readPage } from "./paging.ts";
import { tokenCount } from "./truncate.ts";

function out(seq: number, data: string): Frame {
  return { seq, ts: 0, type: "stdout", data } as Frame;
}

/** A source over `frames` (by seq), of which those before `oldest` were dropped. */
function source(frames: readonly Frame[], oldest = 0): FrameSource & { reads: number } {
  const s = {
    reads: 0,
    oldest: () => oldest,
    read(from: number, to: number, limit: number): Frame[] {
      s.reads++;
      return frames.filter((f) => f.seq >= Math.max(from, oldest) && f.seq <= to).slice(0, limit);
    },
  };
  return s;
}

const raw = (frames: readonly Frame[]) =>
  Promise.resolve(frames.map((f) => f.type === "stdout" ? f.data : "").join(""));

function request(from: number, to: number, maxTokens: number, fromOffset = 0) {
  return {
    from,
    fromOffset,
    to,
    maxTokens,
    render: raw,
    call: (a: number, b: number, t: number) => `read_output {"from_seq": ${a}, "to_seq": ${b}, "max": ${t}}`,
  };
}

async function all(frames: readonly Frame[], maxTokens: number, oldest = 0): Promise<Page[]> {
  const pages: Page[] = [];
  let from = 0;
  let offset = 0;
  const to = frames.at(-1)!.seq;
  for (;;) {
    const page = await readPage(source(frames, oldest), request(from, to, maxTokens, offset));
    pages.push(page);
    if (!page.more) return pages;
    assert.ok(page.nextFromSeq > from || page.nextFromOffset > offset, "a page moves on");
    from = page.nextFromSeq;
    offset = page.nextFromOffset;
  }
}

const lines = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join("");

Deno.test("readPage: pages of whole lines inside big frames add up to every byte, once, in order", async () => {
  const frames = [{ seq: 0, ts: 0, type: "start" } as unknown as Frame];
  for (let i = 0; i < 6; i++) frames.push(out(i + 1, lines(i * 2000 + 1, i * 2000 + 2000)));
  const pages = await all(frames, 700);
  const text = pages.map((p) => p.text).join("");
  assert.equal(text, frames.map((f) => f.type === "stdout" ? f.data : "").join(""));
  assert.ok(pages.length > 20, `${pages.length} pages`);
  for (const page of pages) {
    assert.ok(tokenCount(page.text) <= 700, `${tokenCount(page.text)} tokens`);
    assert.ok(page.text === "" || page.text.endsWith("\n"), "a page ends at the end of a line");
    assert.equal(page.truncated, false);
    assert.equal(page.dropped, null);
  }
  assert.equal(pages.at(-1)!.more, false);
});

Deno.test("readPage: a range that starts before the oldest frame held names exactly what is gone", async () => {
  const frames = [1, 2, 3, 4, 5].map((seq) => out(seq, `frame ${seq}\n`));
  const page = await readPage(source(frames, 3), request(1, 5, 1000));
  assert.deepEqual(page.dropped, { from_seq: 1, to_seq: 2 });
  assert.equal(page.truncated, true);
  assert.equal(
    page.text,
    "[frames 1-2 were dropped by the output log's budget; they cannot be read]\nframe 3\nframe 4\nframe 5\n",
  );
  assert.equal(page.more, false);
  // A gap inside the range (dropped while reading) is named where it is: the page before it ends there
  // (text on either side is never joined), and the next one starts with it.
  const holed = source(frames.filter((f) => f.seq !== 3));
  const before = await readPage(holed, request(1, 5, 1000));
  assert.equal(before.text, "frame 1\nframe 2\n");
  assert.deepEqual([before.dropped, before.more, before.nextFromSeq], [null, true, 3]);
  const after = await readPage(holed, request(3, 5, 1000));
  assert.deepEqual(after.dropped, { from_seq: 3, to_seq: 3 });
  assert.match(after.text, /cannot be read\]\nframe 4\nframe 5\n$/);
  // An overflow frame of a memory window stands for the frames it lost.
  const lagged = source([
    out(1, "half a li"),
    { seq: 4, ts: 0, type: "overflow", reason: "lagged", missed_from: 2, missed_to: 4 } as unknown as Frame,
    out(5, "ne\ne\n"),
  ]);
  const first = await readPage(lagged, request(1, 5, 1000));
  assert.deepEqual([first.text, first.nextFromSeq, first.more], ["half a li", 2, true]);
  const window = await readPage(lagged, request(2, 5, 1000));
  assert.deepEqual(window.dropped, { from_seq: 2, to_seq: 4 });
  assert.equal(
    window.text,
    "[frames 2-4 are no longer held (no output log kept them, and the memory window " +
      "passed them); they cannot be read]\nne\ne\n",
  );
});

Deno.test("readPage: a budget of one token still moves on, never splitting a character", async () => {
  const frames = [out(0, "🙂🙂🙂 wide line without a newline")];
  const pages = await all(frames, 1);
  assert.equal(pages.map((p) => p.text).join(""), frames[0]!.type === "stdout" ? frames[0]!.data : "");
  for (const page of pages) {
    const last = page.text.charCodeAt(page.text.length - 1);
    assert.ok(!(last >= 0xd800 && last <= 0xdbff), "no half surrogate pair at a page's end");
  }
});

Deno.test("readPage: a range past the newest frame is an empty last page, not a loop", async () => {
  const page = await readPage(source([out(1, "x\n")]), request(5, 9, 100));
  assert.equal(page.text, "");
  assert.equal(page.more, false);
  assert.equal(page.nextFromSeq, 5);
});

Deno.test("readPage: a full page ends at a line's end even when a frame ended inside the line", async () => {
  // Frames end mid-line, as terminal reads do.
  const text = lines(1, 3000);
  const frames: Frame[] = [];
  for (let at = 0, seq = 0; at < text.length; at += 1000, seq++) {
    frames.push(out(seq, text.slice(at, at + 1000)));
  }
  const pages = await all(frames, 300);
  assert.equal(pages.map((p) => p.text).join(""), text);
  for (const page of pages) assert.ok(page.text.endsWith("\n"), JSON.stringify(page.text.slice(-20)));
  // A frame that fits whole but ends inside a line whose rest does not fit: the page ends before the line.
  const split = [out(0, "a\nb\nc\nhalf"), out(1, "x".repeat(200) + "\nend\n")];
  const parts = await all(split, 30);
  assert.equal(parts.map((p) => p.text).join(""), "a\nb\nc\nhalf" + "x".repeat(200) + "\nend\n");
  assert.equal(parts[0]!.text, "a\nb\nc\n");
  assert.deepEqual([parts[0]!.nextFromSeq, parts[0]!.nextFromOffset], [0, 6]);
  for (const page of parts) assert.ok(page.text.endsWith("\n"), JSON.stringify(page.text));
});
