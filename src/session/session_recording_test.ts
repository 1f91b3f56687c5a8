import assert from "node:assert/strict";
import { SessionRecording } from "./session_recording.ts";

Deno.test("SessionRecording: events are timed from the session's start", () => {
  const events: [number, string, string][] = [];
  const startedAt = performance.now() - 1500;
  const recording = new SessionRecording(
    { event: (s, c, d) => void events.push([s, c, d]), close: () => {} },
    startedAt,
    () => assert.fail("no error expected"),
  );
  recording.event("o", "hi");
  assert.equal(events.length, 1);
  assert.ok(events[0]![0] >= 1.5 && events[0]![0] < 5, `${events[0]![0]}`);
  assert.deepEqual(events[0]!.slice(1), ["o", "hi"]);
});

Deno.test("SessionRecording: a failing writer is reported, and the session goes on", () => {
  const reports: [string, string][] = [];
  let closed = 0;
  const recording = new SessionRecording(
    {
      event: () => {
        throw new Error("No space left on device");
      },
      close: () => void closed++,
    },
    performance.now(),
    (code, message) => void reports.push([code, message]),
  );
  recording.event("i", "x");
  assert.deepEqual(reports, [["E_RECORD", "No space left on device"]]);
  recording.close();
  assert.equal(closed, 1);
});

Deno.test("SessionRecording: without a writer nothing happens", () => {
  const recording = new SessionRecording(null, 0, () => assert.fail("no error expected"));
  recording.event("o", "x");
  recording.close();
});
