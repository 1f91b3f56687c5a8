import assert from "node:assert/strict";
import { SpecterError } from "../errors.ts";
import { InputEnd } from "./input_end.ts";

/** Runs `settle` and says whether it shut the input down. */
function settles(end: InputEnd, idle: boolean): boolean {
  let shut = false;
  end.settle(idle, () => shut = true);
  return shut;
}

Deno.test("InputEnd: open input is read freely and never shut down", () => {
  const end = new InputEnd();
  assert.equal(end.room(64), 64);
  assert.equal(end.take(10), true);
  assert.equal(settles(end, true), false);
  assert.equal(end.closed, false);
});

Deno.test("InputEnd: a close that comes before its bytes waits for them, reads no further, then shuts once", () => {
  const end = new InputEnd();
  end.take(2);
  end.close(6);
  assert.equal(end.closed, true);
  assert.equal(settles(end, true), false, "4 bytes before the end are still on the relay");
  assert.equal(end.room(64), 4);
  assert.equal(end.take(3), true);
  assert.equal(end.room(64), 1);
  assert.equal(end.take(1), true);
  assert.equal(end.room(64), 0, "nothing past the end is read while its bytes wait");
  assert.equal(settles(end, false), false, "the last bytes are not written yet");
  assert.equal(settles(end, true), true);
  assert.equal(end.shut, true);
  assert.equal(settles(end, true), false, "shut down once");
  // Whatever comes after the end is read (so that the relay's end is seen) and dropped.
  assert.equal(end.room(64), 64);
  assert.equal(end.take(5), false);
});

Deno.test("InputEnd: closing again changes nothing; a count below what was relayed is E_PROTOCOL", () => {
  const end = new InputEnd();
  end.take(8);
  assert.throws(() => end.close(7), (e: unknown) => e instanceof SpecterError && e.code === "E_PROTOCOL");
  assert.equal(end.closed, false);
  end.close(8);
  end.close(100);
  assert.equal(settles(end, true), true);
});

Deno.test("InputEnd: a relay lost before the end's bytes came ends the input at once", () => {
  const end = new InputEnd();
  end.close(10);
  end.take(4);
  assert.equal(settles(end, true), false);
  end.relayClosed();
  assert.equal(settles(end, true), true);
  assert.equal(end.closed, true);
  // The next relay's input comes after the end: dropped.
  assert.equal(end.take(3), false);
});
