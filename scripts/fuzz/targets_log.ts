/**
 * The fuzz target of the daemon's frame log (`frame_store`): a log directory as the writer leaves it (one
 * to three segments with their sparse indexes, small sizes so that cases roll and prune), then left whole,
 * torn at any byte (a crash while writing), or damaged (flipped, inserted, zeroed bytes; foreign files),
 * written to a scratch directory on tmpfs; then opened (recovery), read (`readLog`, `readLogText`, from a
 * seq, to a seq, the tail only), appended to, closed and opened again.
 *
 * Oracle: only the documented errors, and
 * - recovery only truncates the last segment (or removes trailing segments whose header is torn): every
 *   other byte stays; a torn log keeps exactly the records written whole before the tear;
 * - reading returns seqs in increasing order, none at or past the next seq recovery hands out, within the
 *   range asked; `readLogText` and `readLog` agree on a log damaged only at its end;
 * - an append after recovery is read back last, and a second open cuts nothing.
 *
 * @module
 */
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { FrameStore, listSegments, readLog, readLogText } from "../../src/daemon/frame_store.ts";
import { type Frame, LOG_FORMAT, LogHeaderSchema } from "../../src/protocol/mod.ts";
import type { DaemonError } from "../../src/errors.ts";
import { Crash, expectTyped, type FuzzTarget } from "./_common.ts";
import { bytesOf, mutateBytes, utf8 } from "./_bytes.ts";
import type { Prng } from "./_prng.ts";
import { scratchDir } from "./targets_files.ts";

const DATA = [
  "$ ls\r\n",
  "é😀中",
  "\u001b[31mred\u001b[0m",
  '"quoted" \\ back',
  "a".repeat(120),
  "\ud800",
  "",
  "\r",
];

function segmentName(first: number): string {
  return `${String(first).padStart(20, "0")}.ndjson`;
}

/** What a case holds: the files, how the store is opened and read, and (for a log whole or torn) what it keeps. */
interface LogCase {
  readonly kind: "whole" | "torn" | "damaged";
  readonly files: [name: string, bytes: string][];
  /** Names made directories instead of files. */
  readonly dirs: string[];
  readonly segmentBytes: number;
  readonly maxBytes: number;
  readonly indexEvery: number;
  readonly from?: number;
  readonly to?: number;
  readonly tail?: number;
  /** For a whole or torn log: the seqs kept, the next seq and the last raw offset. */
  readonly expect?: { seqs: number[]; next: number; raw: number };
}

function generateLog(rng: Prng): LogCase {
  const count = 1 + rng.below(3);
  let seq = rng.chance(0.8) ? 0 : rng.below(1000);
  let raw = 0;
  const segments: { first: number; text: string; index: string | null; headerEnd: number }[] = [];
  const records: { seq: number; raw: number | null; end: number; segment: number }[] = [];
  for (let s = 0; s < count; s++) {
    const first = seq;
    let text = utf8(
      JSON.stringify({ format: LOG_FORMAT, log_id: "L-1", session: "s", first_seq: first, created: 1.5 }) +
        "\n",
    );
    const headerEnd = text.length;
    let index = "";
    const every = 1 + rng.below(4);
    // Every segment but the last holds a record: the writer starts one only to append to it.
    for (let n = s < count - 1 ? 1 + rng.below(9) : rng.below(10); n > 0; n--) {
      const withRaw = rng.chance(0.6);
      if (withRaw) raw += rng.below(5000);
      const frame = {
        seq,
        ts: 1 + seq / 10,
        type: rng.chance(0.9) ? "stdout" : "resize",
        data: rng.pick(DATA),
      };
      if (seq % every === 0) index += `${seq} ${text.length}\n`;
      text += utf8(JSON.stringify(withRaw ? { ...frame, raw } : frame) + "\n");
      records.push({ seq, raw: withRaw ? raw : null, end: text.length, segment: s });
      seq++;
    }
    segments.push({ first, text, index: index !== "" || rng.chance(0.5) ? index : null, headerEnd });
  }
  const options = {
    segmentBytes: 200 + rng.below(2000),
    maxBytes: 500 + rng.below(6000),
    indexEvery: 1 + rng.below(400),
    ...(rng.chance(0.3) ? { from: rng.below(seq + 2) } : {}),
    ...(rng.chance(0.2) ? { to: rng.below(seq + 2) } : {}),
    ...(rng.chance(0.2) ? { tail: rng.below(2000) } : {}),
  };
  const last = count - 1;
  const roll = rng.below(10);
  let kind: LogCase["kind"] = "damaged";
  let expect: LogCase["expect"];
  if (roll < 3) {
    kind = "whole";
    expect = { seqs: records.map((r) => r.seq), next: seq, raw: lastRawOf(records) };
  } else if (roll < 6) {
    // Torn: the last segment cut at any byte (a crash while writing).
    kind = "torn";
    const segment = segments[last]!;
    const cut = rng.below(segment.text.length + 1);
    segment.text = segment.text.slice(0, cut);
    let kept = records.filter((r) => r.segment < last || r.end <= cut);
    let next = kept.at(-1) === undefined ? segment.first : kept.at(-1)!.seq + 1;
    if (cut < segment.headerEnd) {
      // Its header torn: the segment goes, the one before is the last (or a new log starts at 0).
      kept = records.filter((r) => r.segment < last);
      next = kept.at(-1)?.seq !== undefined
        ? kept.at(-1)!.seq + 1
        : last === 0
        ? 0
        : segments[last - 1]!.first;
    }
    expect = { seqs: kept.map((r) => r.seq), next, raw: lastRawOf(kept) };
  }
  const files: [string, string][] = [];
  for (const segment of segments) {
    files.push([segmentName(segment.first), segment.text]);
    if (segment.index !== null) {
      files.push([segmentName(segment.first).replace(".ndjson", ".idx"), segment.index]);
    }
  }
  const dirs: string[] = [];
  if (kind === "damaged") {
    for (let n = 1 + rng.below(3); n > 0; n--) {
      const pick = rng.below(10);
      if (pick < 7) {
        const i = rng.below(files.length);
        files[i] = [files[i]![0], mutateBytes(rng, files[i]![1], DAMAGE_TOKENS)];
      } else if (pick < 8) files.push([segmentName(rng.below(2000)), rng.chance(0.5) ? files[0]![1] : "\n"]);
      else if (pick < 9) dirs.push(segmentName(rng.below(2000)));
      else files.push([files[0]![0].replace(".ndjson", ".idx"), rng.pick(BAD_INDEXES)]);
    }
  }
  return { kind, files, dirs, ...options, ...(expect === undefined ? {} : { expect }) };
}

const DAMAGE_TOKENS = [
  '{"seq":',
  "\n",
  '"raw":',
  "9".repeat(20),
  " 99999999999999999999\n",
  '{"seq":1,"type":"x"}\n',
];
const BAD_INDEXES = [
  "0 99999999999999999999\n",
  "1 1e5\n",
  `0 ${2 ** 53}\n`,
  "3 7\n2 9\n",
  "0 1\n",
  "999 0\n",
];

function lastRawOf(records: readonly { raw: number | null }[]): number {
  for (let i = records.length - 1; i >= 0; i--) if (records[i]!.raw !== null) return records[i]!.raw!;
  return 0;
}

function validHeader(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, 4096);
  const nl = head.indexOf(10);
  if (nl < 0) return false;
  try {
    return LogHeaderSchema.safeParse(JSON.parse(new TextDecoder().decode(head.subarray(0, nl)))).success;
  } catch {
    return false;
  }
}

/** Reads the log as an attach does; checks order and range; returns the seqs (null: `from` is older than the log). */
function checkedRead(dir: string, next: number, c: LogCase, exact: boolean): number[] | null {
  const options = {
    ...(c.from === undefined ? {} : { from: c.from }),
    ...(c.to === undefined ? {} : { to: c.to }),
    ...(c.tail === undefined ? {} : { tailBytes: c.tail }),
    onCorrupt: (_: DaemonError) => {},
    before: next,
  };
  const records = expectTyped(() => readLog(dir, options), ["E_LOG_SEEK"]);
  const lines = expectTyped(() => readLogText(dir, options), ["E_LOG_SEEK"]);
  if ((records === undefined) !== (lines === undefined)) {
    throw new Crash("readLog and readLogText disagree on seeking");
  }
  if (records === undefined || lines === undefined) {
    if (c.from === undefined || c.from >= (listSegments(dir)[0] ?? 0)) {
      throw new Crash(`Seeking ${c.from} refused`);
    }
    return null;
  }
  const seqs = records.map((r) => r.frame.seq);
  for (const [i, seq] of seqs.entries()) {
    if (i > 0 && seq <= seqs[i - 1]!) {
      throw new Crash(`Read seqs out of order: ${seqs.slice(0, 20).join(",")}`);
    }
    if (seq >= next) throw new Crash(`Read seq ${seq}, at or past the next seq ${next}`);
    if ((c.from !== undefined && seq < c.from) || (c.to !== undefined && seq > c.to)) {
      throw new Crash(`Read seq ${seq} outside ${c.from}…${c.to}`);
    }
  }
  if (exact) {
    const texts = lines.map((l) => ({ seq: l.seq, frame: JSON.parse(l.text) as Frame }));
    if (!isDeepStrictEqual(texts, records.map((r) => ({ seq: r.frame.seq, frame: r.frame })))) {
      throw new Crash("readLogText and readLog read different records");
    }
  }
  return seqs;
}

const OPEN_CODES = ["E_LOG_WRITE", "E_LOG_CORRUPT"];

const options = (dir: string, c: LogCase) => ({
  dir,
  session: "s",
  segmentBytes: c.segmentBytes,
  maxBytes: c.maxBytes,
  indexEvery: c.indexEvery,
});

const frameStore: FuzzTarget = {
  name: "frame_store",
  about:
    "frame log directories whole, torn and damaged (FrameStore.open's recovery, readLog, readLogText, append)",
  generate: (rng) => JSON.stringify(generateLog(rng)),
  run(input) {
    const c = JSON.parse(input) as LogCase;
    const dir = join(scratchDir("log"), "frames");
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // The first case of this worker.
    }
    Deno.mkdirSync(dir, { mode: 0o700 });
    const before = new Map<string, Uint8Array>();
    for (const [name, text] of c.files) {
      const bytes = bytesOf(text);
      Deno.writeFileSync(join(dir, name), bytes, { mode: 0o600 });
      before.set(name, bytes);
    }
    for (const name of c.dirs) if (!before.has(name)) Deno.mkdirSync(join(dir, name), { recursive: true });
    const segmentsBefore = listSegments(dir);
    const store = expectTyped(() => FrameStore.open(options(dir, c)), OPEN_CODES);
    if (store === undefined) return;
    const next = store.nextSeq;
    try {
      // Recovery removes trailing segments whose header is torn, and truncates the last one: nothing else.
      let keep = segmentsBefore.length;
      while (keep > 0 && !validHeader(before.get(segmentName(segmentsBefore[keep - 1]!))!)) keep--;
      const kept = segmentsBefore.slice(0, keep);
      const segmentsAfter = listSegments(dir);
      // With none left, a new log starts at seq 0.
      if (!isDeepStrictEqual(segmentsAfter, keep === 0 ? [0] : kept)) {
        throw new Crash(`Segments ${segmentsBefore.join(",")} became ${segmentsAfter.join(",")} on opening`);
      }
      for (const [i, first] of kept.entries()) {
        const old = before.get(segmentName(first))!;
        const now = Deno.readFileSync(join(dir, segmentName(first)));
        const cut = i === kept.length - 1 ? store.recovery.cutBytes : 0;
        if (now.length !== old.length - cut || !now.every((b, j) => b === old[j])) {
          throw new Crash(`Recovery changed segment ${first} other than cutting ${cut} bytes off its end`);
        }
      }
      const exact = c.expect !== undefined;
      const seqs = checkedRead(dir, next, c, exact);
      if (c.expect !== undefined && seqs !== null) {
        if (next !== c.expect.next) throw new Crash(`Next seq ${next}, expected ${c.expect.next}`);
        if (store.lastRaw !== c.expect.raw) {
          throw new Crash(`Last raw ${store.lastRaw}, expected ${c.expect.raw}`);
        }
        const want = c.expect.seqs.filter((s) =>
          (c.from === undefined || s >= c.from) && (c.to === undefined || s <= c.to)
        );
        // The tail option keeps the newest records: a suffix of what is asked.
        const got = seqs;
        const ok = c.tail === undefined
          ? isDeepStrictEqual(got, want)
          : isDeepStrictEqual(got, want.slice(want.length - got.length)) &&
            (got.length > 0 || want.length === 0);
        if (!ok) throw new Crash(`Read ${got.join(",")}, expected ${want.join(",")}`);
      }
      // An append after recovery is read back last; a second open cuts nothing and goes on from it.
      const appended = { seq: next, ts: 9, type: "stdout", data: "after" } as Frame;
      const wrote = expectTyped(() => {
        store.append(appended, 77);
        return true;
      }, ["E_LOG_WRITE"]);
      store.close();
      if (wrote === undefined) return;
      const again = expectTyped(() => FrameStore.open(options(dir, c)), OPEN_CODES);
      if (again === undefined) throw new Crash("A log recovered and appended to does not open again");
      again.close();
      if (again.recovery.cutBytes !== 0 || again.nextSeq !== next + 1 || again.lastRaw !== 77) {
        throw new Crash(
          `Opened again: cut ${again.recovery.cutBytes}, next ${again.nextSeq}, raw ${again.lastRaw}`,
        );
      }
      if (again.logId !== store.logId) throw new Crash("The log's id changed on opening again");
      const all = expectTyped(() =>
        readLog(dir, { onCorrupt: () => {}, before: next + 1 }), ["E_LOG_SEEK"]) ?? [];
      const lastRead = all.at(-1);
      if (lastRead === undefined || !isDeepStrictEqual(lastRead.frame, appended) || lastRead.raw !== 77) {
        throw new Crash(`The appended frame ${next} is not read back last`);
      }
    } finally {
      store.close();
    }
  },
};

/** The targets of this file. */
export const LOG_TARGETS: readonly FuzzTarget[] = [frameStore];
