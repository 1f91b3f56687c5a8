import assert from "node:assert/strict";
import type { Frame } from "../protocol/mod.ts";
import { FrameSchema } from "../protocol/mod.ts";
import { frameBytes, FrameLog } from "./frame_log.ts";

function out(seq: number, data = "x".repeat(100)): Frame {
  return { seq, ts: seq / 1000, type: "stdout", data };
}

function fill(log: FrameLog, count: number, data?: string): void {
  for (let i = 0; i < count; i++) log.append(out(log.nextSeq, data));
}

/** The seqs a subscriber reads, with each overflow frame as `[from, to]`. */
function seqs(frames: readonly Frame[]): (number | [number, number])[] {
  return frames.map((f) => f.type === "overflow" ? [f.missed_from!, f.missed_to!] : f.seq);
}

Deno.test("frameBytes counts payloads, and 32 for frames without one", () => {
  assert.equal(frameBytes(out(0, "abc")), 3);
  assert.equal(frameBytes({ seq: 0, ts: 0, type: "idle", dur_ms: 5 }), 32);
});

Deno.test("every subscriber reads the whole stream from its own cursor", async () => {
  const log = new FrameLog();
  const early = log.subscribe();
  fill(log, 5);
  const late = log.subscribe({ from: 3 });
  log.close();
  assert.deepEqual(seqs(await early.take()), [0, 1, 2, 3, 4]);
  assert.deepEqual(await early.take(), []);
  assert.deepEqual(seqs(await late.take()), [3, 4]);
  const all: number[] = [];
  for await (const frame of log.subscribe()) all.push(frame.seq);
  assert.deepEqual(all, [0, 1, 2, 3, 4]);
});

Deno.test("take waits for the next frame, and for the close", async () => {
  const log = new FrameLog();
  const sub = log.subscribe();
  const pending = sub.take();
  log.append(out(0));
  assert.deepEqual(seqs(await pending), [0]);
  const ended = sub.take();
  log.close();
  assert.deepEqual(await ended, []);
});

Deno.test("appending out of order or after close is refused", () => {
  const log = new FrameLog();
  assert.throws(() => log.append(out(1)), RangeError);
  log.append(out(0));
  log.close();
  assert.throws(() => log.append(out(1)), RangeError);
});

Deno.test("memory stays bounded with a subscriber that never reads; a late one gets the head, an overflow, the tail", async () => {
  const log = new FrameLog({ headBytes: 300, tailBytes: 1000 });
  const idle = log.subscribe(); // Never reads.
  fill(log, 10_000);
  assert.ok(log.heldBytes <= 1300, `${log.heldBytes}`);
  assert.equal(log.dropped, 10_000 - 3 - 10);
  const frames = await log.subscribe().take();
  assert.deepEqual(seqs(frames), [0, 1, 2, [3, 9989], ...Array.from({ length: 10 }, (_, i) => 9990 + i)]);
  for (const frame of frames) FrameSchema.parse(frame);
  const overflow = frames[3]!;
  assert.equal(overflow.seq, 9989); // In place of the last missed frame: seqs still only increase.
  assert.equal(overflow.type === "overflow" && overflow.reason, "lagged");
  // The idle subscriber finds the same when it finally reads.
  assert.deepEqual(seqs(await idle.take()), seqs(frames));
});

Deno.test("the lag counts unread frames of the head too", async () => {
  const log = new FrameLog({ headBytes: 300, tailBytes: 1000 });
  const main = log.subscribe({ authoritative: true });
  fill(log, 2);
  assert.equal(log.lagBytes, 200);
  fill(log, 3);
  assert.equal(log.lagBytes, 500);
  assert.equal((await main.take()).length, 5);
  assert.equal(log.lagBytes, 0);
  fill(log, 1);
  assert.equal(log.lagBytes, 100);
});

Deno.test("an authoritative subscriber misses nothing and holds frames back; the lag says how far behind it is", async () => {
  let drained = 0;
  const log = new FrameLog({ headBytes: 0, tailBytes: 1000, onDrain: () => drained++ });
  const main = log.subscribe({ authoritative: true });
  const watcher = log.subscribe();
  fill(log, 50);
  assert.equal(log.lagBytes, 5000);
  assert.equal(log.dropped, 0); // Held for the authoritative reader.
  assert.deepEqual(seqs(await main.take()), Array.from({ length: 50 }, (_, i) => i));
  assert.equal(log.lagBytes, 0);
  assert.equal(drained, 1);
  assert.ok(log.heldBytes <= 1000); // Taken: evicted down to the tail.
  // The watcher, which never slowed anything, gets an overflow for what it missed.
  assert.deepEqual(seqs(await watcher.take()), [[0, 39], ...Array.from({ length: 10 }, (_, i) => 40 + i)]);
  main.close();
  fill(log, 50);
  assert.equal(log.lagBytes, 0); // A closed subscriber holds nothing back.
  assert.ok(log.heldBytes <= 1000);
});

Deno.test("a frame larger than the tail is still kept until a newer one replaces it", async () => {
  const log = new FrameLog({ headBytes: 0, tailBytes: 10 });
  log.append(out(0, "y".repeat(50)));
  assert.deepEqual(seqs(await log.subscribe().take()), [0]);
  log.append(out(1, "z".repeat(50)));
  assert.deepEqual(seqs(await log.subscribe().take()), [[0, 0], 1]);
});

Deno.test("a subscriber from a seq beyond the end starts at the end", async () => {
  const log = new FrameLog();
  fill(log, 3);
  const sub = log.subscribe({ from: 99 });
  assert.equal(sub.cursor, 3);
  log.append(out(3));
  assert.deepEqual(seqs(await sub.take()), [3]);
});

Deno.test("FrameLog: takeNow returns what is there without waiting, [] when nothing new", () => {
  const log = new FrameLog();
  const reader = log.subscribe();
  assert.deepEqual(reader.takeNow(), []);
  log.append({ seq: 0, ts: 1, type: "ping" });
  log.append({ seq: 1, ts: 1, type: "ping" });
  assert.deepEqual(reader.takeNow().map((f) => f.seq), [0, 1]);
  assert.deepEqual(reader.takeNow(), []);
  assert.equal(reader.cursor, 2);
});
