/**
 * Several subscribers of one real session (the frame log, issue 12): 1 GB of output passes through while an
 * authoritative reader takes every frame, a slow reader takes a batch now and then, a reader that never reads
 * waits, and a late reader joins after 10 000 frames. The authoritative reader gets every byte; every other
 * reader gets a stream whose seqs only increase, each gap filled by an `overflow` frame naming exactly the
 * frames it stands for; the frames the session holds stay within the log's windows and the authoritative
 * reader's buffer.
 *
 * In tests/serial/ (run after the parallel suite, alone): 1 GB through a terminal takes both cores for half a
 * minute, which would make the timing tests that run beside it meaningless.
 */
import assert from "node:assert/strict";
import type { Frame } from "../../src/protocol/mod.ts";
import { sessionTest, spawnSession } from "../_helpers.ts";

const LINE = "0123456789012345678901234567890123456789"; // 41 bytes with its newline, 42 through the terminal.
const BYTES = 1_000_000_000;

/** Checks that `frames` are in order and that every gap is one overflow frame covering exactly that gap. */
function assertGapFreeOrMarked(frames: readonly Frame[], what: string): number {
  let expected = frames[0]?.seq === 0 || frames[0]?.type === "overflow" ? 0 : frames[0]!.seq;
  let overflows = 0;
  for (const frame of frames) {
    if (frame.type === "overflow" && frame.reason === "lagged") {
      assert.equal(frame.missed_from, expected, `${what}: overflow starts where the stream left off`);
      assert.equal(frame.seq, frame.missed_to, `${what}: overflow takes the seq of the last missed frame`);
      overflows++;
    } else {
      assert.equal(frame.seq, expected, `${what}: frame ${frame.seq} after ${expected - 1}`);
    }
    expected = frame.seq + 1;
  }
  return overflows;
}

sessionTest(
  "three subscribers of one session through 1 GB: authoritative, slow, late, and one that never reads",
  async () => {
    const session = spawnSession({
      argv: ["sh", "-c", `yes ${LINE} | head -c ${BYTES}`],
      sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" },
    });
    let heldPeak = 0;
    const idle = session.subscribe(); // Never reads until the end.

    const slowFrames: Frame[] = [];
    const slow = (async () => {
      const sub = session.subscribe();
      for (;;) {
        const batch = await sub.take();
        if (batch.length === 0) return;
        slowFrames.push(...batch.map((f) => ("data" in f ? { ...f, data: "" } : f))); // Keep seqs, not bytes.
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();

    const lateFrames: Frame[] = [];
    let late: Promise<void> | undefined;
    let outputBytes = 0;
    let lastSeq = -1;
    for await (const frame of session.frames()) {
      assert.equal(frame.seq, lastSeq + 1, "the authoritative reader misses nothing");
      lastSeq = frame.seq;
      if (frame.type === "stdout") outputBytes += frame.data.length;
      if (frame.seq === 10_000) {
        late = (async () => {
          for await (const f of session.subscribe()) lateFrames.push("data" in f ? { ...f, data: "" } : f);
        })();
      }
      heldPeak = Math.max(heldPeak, session.heldFrameBytes);
    }
    await slow;
    await late;
    const idleFrames = await idle.take();

    const exit = await session.exited;
    assert.equal(exit.code, 0);
    // Through the terminal every newline became CRLF.
    assert.equal(outputBytes, BYTES + Math.floor(BYTES / (LINE.length + 1)));
    assert.ok(lastSeq > 10_000, `only ${lastSeq + 1} frames`);
    assert.ok(late !== undefined);
    for (
      const [what, frames] of [["slow", slowFrames], ["late", lateFrames], ["idle", idleFrames]] as const
    ) {
      const overflows = assertGapFreeOrMarked(frames, what);
      assert.ok(overflows > 0, `${what}: fell behind the log and was told so (${frames.length} frames)`);
      assert.equal(frames.at(-1)?.type, "exit", `${what}: ends with the exit frame`);
      assert.equal(frames[0]?.type, "start", `${what}: the head keeps the start frame`);
    }
    // The log's head (64 KiB) and tail (1 MiB) windows and what the authoritative reader has not read yet
    // (reading pauses beyond its 8 MiB buffer, plus one read): keeping what the idle reader has not read
    // would hold the whole 1 GB.
    const bound = 64 * 1024 + 1024 * 1024 + 8 * 1024 * 1024 + 1024 * 1024;
    assert.ok(heldPeak > 0 && heldPeak <= bound, `held ${heldPeak} bytes, bound ${bound}`);
  },
  600_000,
);
