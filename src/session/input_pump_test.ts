import assert from "node:assert/strict";
import { InputPump, type WriteOutcome } from "./input_pump.ts";

/** A terminal that takes up to `room` bytes, then reports EAGAIN, with scripted outcomes first. */
function terminal(room: number, script: WriteOutcome[] = []) {
  const written: number[] = [];
  const write = (chunk: Uint8Array): WriteOutcome => {
    const next = script.shift();
    if (next !== undefined) return next;
    if (room === 0) return "again";
    const n = Math.min(room, chunk.length);
    room -= n;
    written.push(...chunk.subarray(0, n));
    return n;
  };
  return { write, written, grow: (n: number) => room += n };
}

Deno.test("input the terminal takes at once is written in order", () => {
  const t = terminal(100);
  const pump = new InputPump(t.write);
  pump.push(new Uint8Array([1, 2, 3]));
  pump.push(new Uint8Array([4]));
  assert.deepEqual(t.written, [1, 2, 3, 4]);
  assert.equal(pump.pending, 0);
  assert.equal(pump.waiting, false);
});

Deno.test("input the program does not read waits, counted, and goes on when it reads", () => {
  const t = terminal(2);
  const pump = new InputPump(t.write);
  pump.push(new Uint8Array([1, 2, 3, 4, 5]));
  assert.deepEqual(t.written, [1, 2]);
  assert.equal(pump.pending, 3);
  assert.equal(pump.waiting, true);
  t.grow(10);
  pump.flush();
  assert.deepEqual(t.written, [1, 2, 3, 4, 5]);
  assert.equal(pump.pending, 0);
  assert.equal(pump.waiting, false);
});

Deno.test("an interrupted write is retried; a gone terminal drops what waits", () => {
  const t = terminal(100, ["interrupted"]);
  const pump = new InputPump(t.write);
  pump.push(new Uint8Array([7]));
  assert.deepEqual(t.written, [7]);
  const gone = new InputPump(() => "gone");
  gone.push(new Uint8Array(10));
  assert.equal(gone.pending, 0);
  assert.equal(gone.waiting, false);
});
