import assert from "node:assert/strict";
import { join } from "node:path";
import { FrameStore, listSegments, readLog, readLogText } from "./frame_store.ts";
import type { Frame } from "../protocol/mod.ts";
import { DaemonError } from "../errors.ts";

function frame(seq: number, data = `line ${seq}\n`): Frame {
  return { seq, ts: 1, type: "stdout", data } as Frame;
}

function tempDir(): string {
  return Deno.makeTempDirSync({ prefix: "specter-log-" });
}

Deno.test("a log reopens where it ended, with its id and last output offset", () => {
  const dir = tempDir();
  const store = FrameStore.open({ dir, session: "s" });
  for (let i = 0; i < 10; i++) store.append(frame(i), i * 10);
  store.close();
  const again = FrameStore.open({ dir, session: "s" });
  assert.equal(again.nextSeq, 10);
  assert.equal(again.lastRaw, 90);
  assert.equal(again.logId, store.logId);
  assert.deepEqual(again.recovery, { cutBytes: 0, segment: null });
  again.append(frame(10));
  assert.throws(() => again.append(frame(12)), (e: DaemonError) => e.code === "E_LOG_WRITE");
  again.close();
  assert.deepEqual(readLog(dir).map((r) => r.frame.seq), [...Array(11).keys()]);
  assert.equal(readLog(dir, { from: 9 })[0]!.raw, 90);
});

Deno.test("a torn last record is cut on open, and the next append follows the last whole one", () => {
  for (
    const tail of ['{"seq":5,"ts":1,"type":"std', '{"seq":7,"ts":1,"type":"stdout","data":"x"}\n', "\0\0\0\0"]
  ) {
    const dir = tempDir();
    const store = FrameStore.open({ dir, session: "s", indexEvery: 1 });
    for (let i = 0; i < 5; i++) store.append(frame(i), i);
    store.close();
    const [segment] = listSegments(dir);
    const path = join(dir, `${String(segment).padStart(20, "0")}.ndjson`);
    const before = Deno.statSync(path).size;
    Deno.writeTextFileSync(path, tail, { append: true });
    const again = FrameStore.open({ dir, session: "s", indexEvery: 1 });
    assert.equal(again.recovery.cutBytes, new TextEncoder().encode(tail).length);
    assert.equal(Deno.statSync(path).size, before);
    assert.equal(again.nextSeq, 5);
    assert.equal(again.lastRaw, 4);
    again.append(frame(5), 5);
    again.close();
    assert.deepEqual(readLog(dir).map((r) => r.frame.seq), [0, 1, 2, 3, 4, 5]);
  }
});

Deno.test("segments roll, old ones are removed past the size cap, and seek uses names and indexes", () => {
  const dir = tempDir();
  const store = FrameStore.open({ dir, session: "s", segmentBytes: 2000, maxBytes: 6000, indexEvery: 300 });
  for (let i = 0; i < 400; i++) store.append(frame(i), i);
  store.close();
  const segments = listSegments(dir);
  assert.ok(segments.length >= 3 && segments.length <= 4, `${segments}`);
  assert.ok(segments[0]! > 0);
  const from = segments[1]! + 3;
  const records = readLog(dir, { from, to: from + 4 });
  assert.deepEqual(records.map((r) => r.frame.seq), [from, from + 1, from + 2, from + 3, from + 4]);
  assert.throws(() => readLog(dir, { from: 0 }), (e: DaemonError) => e.code === "E_LOG_SEEK");
  assert.throws(
    () => readLog(dir, { from: segments[0]!, logId: "other" }),
    (e: DaemonError) => e.code === "E_LOG_SEEK",
  );
  const reopened = FrameStore.open({ dir, session: "s", segmentBytes: 2000, maxBytes: 6000 });
  assert.equal(reopened.nextSeq, 400);
  assert.equal(reopened.lastRaw, 399);
  reopened.close();
});

Deno.test("a damaged segment is reported and skipped; reading goes on with the next", () => {
  const dir = tempDir();
  const store = FrameStore.open({ dir, session: "s", segmentBytes: 1000 });
  for (let i = 0; i < 60; i++) store.append(frame(i));
  store.close();
  const segments = listSegments(dir);
  assert.ok(segments.length >= 3);
  const middle = join(dir, `${String(segments[1]).padStart(20, "0")}.ndjson`);
  const text = Deno.readTextFileSync(middle).split("\n");
  text[2] = "garbage";
  Deno.writeTextFileSync(middle, text.join("\n"));
  const errors: DaemonError[] = [];
  const seqs = readLog(dir, { onCorrupt: (e) => errors.push(e) }).map((r) => r.frame.seq);
  assert.equal(errors.length, 1);
  assert.equal(errors[0]!.code, "E_LOG_CORRUPT");
  assert.ok(seqs.includes(59) && seqs.includes(0));
  assert.ok(!seqs.includes(segments[1]! + 1)); // The damaged line and the rest of its segment are skipped.
});

Deno.test("a damaged record with whole records after it is kept out of reads but not cut: no seq is reused", () => {
  const dir = tempDir();
  const store = FrameStore.open({ dir, session: "s" });
  for (let i = 0; i < 6; i++) store.append(frame(i), i);
  store.close();
  const [segment] = listSegments(dir);
  const path = join(dir, `${String(segment).padStart(20, "0")}.ndjson`);
  const text = Deno.readTextFileSync(path).split("\n");
  text[3] = "x".repeat(text[3]!.length); // The record of seq 2, damaged in place.
  Deno.writeTextFileSync(path, text.join("\n") + '{"seq":6,"ts":1,"ty');
  const again = FrameStore.open({ dir, session: "s" });
  assert.equal(again.nextSeq, 6, "the seqs after the damage stay taken");
  assert.equal(again.lastRaw, 5);
  assert.equal(again.recovery.cutBytes, '{"seq":6,"ts":1,"ty'.length, "only the torn tail was cut");
  again.close();
  const errors: DaemonError[] = [];
  const seqs = readLog(dir, { onCorrupt: (e) => errors.push(e) }).map((r) => r.frame.seq);
  assert.deepEqual(seqs, [0, 1, 3, 4, 5]);
  assert.equal(errors.length, 1);
});

Deno.test("reading a tail within a byte budget reports what it dropped; a wrong log id is refused mid-segment", () => {
  const dir = tempDir();
  const store = FrameStore.open({ dir, session: "s", indexEvery: 100 });
  for (let i = 0; i < 50; i++) store.append(frame(i, "x".repeat(100)));
  store.close();
  let dropped: [number, number] | null = null;
  const records = readLog(dir, { tailBytes: 1500, onDropped: (from, to) => dropped = [from, to] });
  assert.ok(records.length > 5 && records.length < 15, `${records.length}`);
  assert.equal(records.at(-1)!.frame.seq, 49);
  assert.deepEqual(dropped, [0, records[0]!.frame.seq - 1]);
  assert.throws(
    () => readLog(dir, { from: 30, logId: "another" }),
    (e: DaemonError) => e.code === "E_LOG_SEEK",
  );
  assert.equal(readLog(dir, { from: 30, logId: store.logId })[0]!.frame.seq, 30);
});

Deno.test("readLogText gives each frame's JSON as logged, without raw; damaged and foreign lines as readLog does", () => {
  const dir = tempDir();
  const store = FrameStore.open({ dir, session: "s" });
  for (let i = 0; i < 5; i++) store.append(frame(i, `"raw": ${i}\n`), i % 2 === 0 ? i * 7 : null);
  store.close();
  const [segment] = listSegments(dir);
  const path = join(dir, `${String(segment).padStart(20, "0")}.ndjson`);
  const text = Deno.readTextFileSync(path).split("\n");
  text[2] = "x".repeat(text[2]!.length); // seq 1, damaged in place.
  text[4] = JSON.stringify({ ts: 1, type: "stdout", data: "foreign", raw: 21, seq: 3 }); // Not the writer's order.
  Deno.writeTextFileSync(path, text.join("\n"));
  const errors: DaemonError[] = [];
  const lines = readLogText(dir, { onCorrupt: (e) => errors.push(e) });
  const records = readLog(dir);
  assert.deepEqual(lines.map((l) => l.seq), [0, 2, 3, 4]);
  assert.equal(errors.length, 1);
  // Each text is a frame with no raw, equal to what readLog decodes.
  assert.deepEqual(lines.map((l) => JSON.parse(l.text)), records.map((r) => r.frame));
  for (const line of lines) assert.ok(!("raw" in JSON.parse(line.text)), line.text);
  // The writer's lines are passed on byte for byte (less raw), not encoded again.
  assert.equal(lines[1]!.text, JSON.stringify(frame(2, `"raw": 2\n`)));
  // From, to and a tail budget select as readLog's do.
  assert.deepEqual(readLogText(dir, { from: 2, to: 3 }).map((l) => l.seq), [2, 3]);
});

function segmentPath(dir: string, first: number): string {
  return join(dir, `${String(first).padStart(20, "0")}.ndjson`);
}

Deno.test("a segment that cannot be started fails the append with E_LOG_WRITE; closing never throws", () => {
  const dir = tempDir();
  const store = FrameStore.open({ dir, session: "s", segmentBytes: 300 });
  // Every name the next segment could take is a directory already (a damaged log directory).
  for (let seq = 1; seq < 30; seq++) Deno.mkdirSync(segmentPath(dir, seq));
  let seq = 0;
  let failure: unknown = null;
  for (; seq < 30 && failure === null; seq++) {
    try {
      store.append(frame(seq));
    } catch (error: unknown) {
      failure = error;
    }
  }
  // It used to be Deno's AlreadyExists, and then close() threw BadResource (the old segment closed twice).
  assert.ok(failure instanceof DaemonError && failure.code === "E_LOG_WRITE", String(failure));
  assert.throws(() => store.append(frame(seq - 1)), (e: DaemonError) => e.code === "E_LOG_WRITE");
  store.close();
  store.close();
});

Deno.test("recovery cuts at byte offsets as read: a record that is not all UTF-8 does not move the cut", () => {
  const dir = tempDir();
  const store = FrameStore.open({ dir, session: "s" });
  for (let i = 0; i < 3; i++) store.append(frame(i, `é${i}`), i);
  store.close();
  const path = segmentPath(dir, 0);
  const bytes = Deno.readFileSync(path);
  // The é of seq 2, the last whole record, loses a byte (its line still parses, with U+FFFD); then a torn
  // tail.
  const at = bytes.lastIndexOf(0xc3);
  const damaged = new Uint8Array([...bytes.subarray(0, at), ...bytes.subarray(at + 1)]);
  const tail = new TextEncoder().encode('{"seq":3,"ts":1,"ty');
  Deno.writeFileSync(path, new Uint8Array([...damaged, ...tail]));
  const again = FrameStore.open({ dir, session: "s" });
  // The cut was reckoned from the last record's text encoded again (U+FFFD is 3 bytes, the byte it stands
  // for 1): 2 bytes short, so the torn tail's first 2 bytes stayed, and the next append joined them.
  assert.equal(again.recovery.cutBytes, tail.length);
  assert.equal(Deno.statSync(path).size, damaged.length);
  again.append(frame(3), 3);
  again.close();
  assert.deepEqual(readLog(dir).map((r) => r.frame.seq), [0, 1, 2, 3]);
});

Deno.test("readers take an index entry only where it points at its record; entries past any number are ignored", () => {
  for (const index of ["3 999999\n", "3 7\n", "3 99999999999999999999\n", `0 ${2 ** 53}\n`]) {
    const dir = tempDir();
    const store = FrameStore.open({ dir, session: "s", indexEvery: 1_000_000 });
    for (let i = 0; i < 6; i++) store.append(frame(i));
    store.close();
    Deno.writeTextFileSync(join(dir, `${"0".repeat(20)}.idx`), index);
    // A bad entry made reading start past the end or inside a line: records skipped, or a seek that throws.
    assert.deepEqual(readLog(dir).map((r) => r.frame.seq), [0, 1, 2, 3, 4, 5], index);
    assert.deepEqual(readLog(dir, { from: 3 }).map((r) => r.frame.seq), [3, 4, 5], index);
    assert.deepEqual(readLogText(dir, { from: 4 }).map((r) => r.seq), [4, 5], index);
  }
});

Deno.test("no seq is read twice or out of order, nor handed out again: copied lines and segments, foreign seqs", () => {
  const dir = tempDir();
  const store = FrameStore.open({ dir, session: "s", segmentBytes: 200 });
  for (let i = 0; i < 8; i++) store.append(frame(i));
  store.close();
  const segments = listSegments(dir);
  // The first segment copied under a later name (its header says it starts at 0): it is the last one now.
  const copy = segments.at(-1)! + 100;
  Deno.copyFileSync(segmentPath(dir, segments[0]!), segmentPath(dir, copy));
  const again = FrameStore.open({ dir, session: "s", segmentBytes: 200 });
  // Counted from its header, recovery handed out 2, 3… again although the log holds them.
  assert.equal(again.nextSeq, copy);
  again.append(frame(copy));
  again.close();
  const seqs = readLog(dir, { before: copy + 1 }).map((r) => r.frame.seq);
  assert.deepEqual(seqs, [0, 1, 2, 3, 4, 5, 6, 7, copy]);
  // Its record copied, and a record claiming a seq the writer never handed out: skipped as damage.
  const path = segmentPath(dir, copy);
  const lines = Deno.readTextFileSync(path).split("\n");
  Deno.writeTextFileSync(
    path,
    [lines[0], lines[1], lines[1], JSON.stringify(frame(copy + 9)), ""].join("\n"),
  );
  const errors: DaemonError[] = [];
  const read = readLog(dir, { before: copy + 1, onCorrupt: (e) => errors.push(e) }).map((r) => r.frame.seq);
  assert.deepEqual(read, [0, 1, 2, 3, 4, 5, 6, 7, copy]);
  assert.equal(errors.length, 2);
});

Deno.test("recovery keeps the whole records after damage that hides several: a block of zeros, a copied line", () => {
  for (const damage of ["zeros", "copied"] as const) {
    const dir = tempDir();
    const store = FrameStore.open({ dir, session: "s" });
    for (let i = 0; i < 8; i++) store.append(frame(i), i);
    store.close();
    const path = segmentPath(dir, 0);
    const lines = Deno.readTextFileSync(path).split("\n");
    // Lines 3 and 4 (seqs 2, 3) zeroed as one block (a lost disk block: no newline between), or seq 2's
    // line written twice. Counting each damaged line as one lost record, the records after it never
    // matched: recovery cut them all and handed their seqs out again.
    const damaged = damage === "zeros"
      ? [...lines.slice(0, 3), "\0".repeat(lines[3]!.length + 1 + lines[4]!.length), ...lines.slice(5)]
      : [...lines.slice(0, 4), lines[3]!, ...lines.slice(4)];
    Deno.writeTextFileSync(path, damaged.join("\n"));
    const again = FrameStore.open({ dir, session: "s" });
    assert.equal(again.recovery.cutBytes, 0, damage);
    assert.equal(again.nextSeq, 8, damage);
    assert.equal(again.lastRaw, 7, damage);
    again.close();
    const want = damage === "zeros" ? [0, 1, 4, 5, 6, 7] : [0, 1, 2, 3, 4, 5, 6, 7];
    assert.deepEqual(readLog(dir, { onCorrupt: () => {} }).map((r) => r.frame.seq), want, damage);
  }
});

Deno.test("recovery hands out no seq an older segment holds, however the last segment is named", () => {
  const dir = tempDir();
  const store = FrameStore.open({ dir, session: "s", segmentBytes: 300 });
  for (let i = 0; i < 20; i++) store.append(frame(i));
  store.close();
  const segments = listSegments(dir);
  const last = segments.at(-1)!;
  assert.ok(last < 18, `${segments}`);
  // The first segment copied under a name inside the last one's range (it then sorts last).
  Deno.copyFileSync(segmentPath(dir, segments[0]!), segmentPath(dir, last + 1));
  const again = FrameStore.open({ dir, session: "s", segmentBytes: 300 });
  // Counted from its name, recovery handed out last + 1… again, which the segment before holds.
  assert.equal(again.nextSeq, 20);
  again.append(frame(20));
  again.close();
  assert.deepEqual(readLog(dir, { before: 21 }).map((r) => r.frame.seq), [...Array(21).keys()]);
});

/** A segment as damage leaves it: the writer's header for `first`, then these records as lines. */
function writeSegment(dir: string, first: number, seqs: readonly number[]): void {
  const header = { format: "specter-frame-log/1", log_id: "L-1", session: "s", first_seq: first, created: 1 };
  const lines = [header, ...seqs.map((seq) => ({ ...frame(seq), raw: seq }))].map((v) => JSON.stringify(v));
  Deno.writeTextFileSync(segmentPath(dir, first), lines.join("\n") + "\n");
}

Deno.test("a seq out of order that stays in the log as damage is never handed out again (found by fuzzing)", () => {
  // 3 came too early (damage recovery passes over), 2 is taken after it; a reader takes 3 (above 0) and
  // passes over 2. Recovery handed out 3 again: the frame appended then was hidden behind the damaged 3.
  const dir = tempDir();
  writeSegment(dir, 0, [0, 3, 2]);
  const store = FrameStore.open({ dir, session: "s" });
  assert.equal(store.nextSeq, 4);
  store.append(frame(4, "after"), 99);
  store.close();
  const again = FrameStore.open({ dir, session: "s" });
  assert.equal(again.recovery.cutBytes, 0, "the appended record is cut as damage on the next open");
  assert.equal(again.nextSeq, 5);
  again.close();
  const read = readLog(dir, { before: 5, onCorrupt: () => {} });
  assert.deepEqual(read.at(-1)?.frame, frame(4, "after"));
  assert.deepEqual(readLog(dir, { before: 5, onCorrupt: () => {} }).map((r) => r.frame.seq), [0, 3, 4]);
});

Deno.test("recovery that starts at an index entry counts a damaged seq before it (found by fuzzing)", () => {
  // 9 sits before the index entry recovery starts from (4): it scanned 4…8 only and handed out 9 again,
  // which a reader (reading from the header) had taken already; the appended frame was not read last.
  const dir = tempDir();
  writeSegment(dir, 0, [0, 9, 2, 3, 4, 5, 6, 7, 8]);
  const text = Deno.readTextFileSync(segmentPath(dir, 0));
  const offsetOf = (seq: number) => text.indexOf(`{"seq":${seq},`);
  Deno.writeTextFileSync(
    join(dir, "00000000000000000000.idx"),
    [0, 2, 4].map((seq) => `${seq} ${offsetOf(seq)}\n`).join(""),
  );
  const store = FrameStore.open({ dir, session: "s" });
  assert.equal(store.nextSeq, 10);
  store.append(frame(10, "after"), 99);
  store.close();
  const read = readLog(dir, { before: 11, onCorrupt: () => {} });
  assert.deepEqual(read.map((r) => r.frame.seq), [0, 9, 10]);
  assert.deepEqual(read.at(-1)?.frame, frame(10, "after"));
});

Deno.test("a seq in an older segment at or past a later segment's name is damage to a reader (found by fuzzing)", () => {
  // 305 in the segment before the one named 303: recovery counts from 303's records (it reads only the
  // older segments' last records); a reader took 305, and hid 303, 304 and what was appended after them.
  const dir = tempDir();
  writeSegment(dir, 299, [299, 300, 305, 302]);
  writeSegment(dir, 303, [303, 304]);
  const store = FrameStore.open({ dir, session: "s" });
  assert.equal(store.nextSeq, 305);
  store.append(frame(305, "after"), 99);
  store.close();
  const seqs = readLog(dir, { before: 306, onCorrupt: () => {} }).map((r) => r.frame.seq);
  assert.deepEqual(seqs, [299, 300, 302, 303, 304, 305]);
  assert.deepEqual(readLog(dir, { before: 306, onCorrupt: () => {} }).at(-1)?.frame, frame(305, "after"));
  assert.deepEqual(readLogText(dir, { before: 306, onCorrupt: () => {} }).map((l) => l.seq), seqs);
});
