import assert from "node:assert/strict";
import { PROTECTED_RECENT, victimFor } from "./pruning.ts";

function session(lastUsed: number, options: { busy?: number; exited?: boolean } = {}) {
  return { lastUsed, busy: options.busy ?? 0, exit: options.exited ? {} : null };
}

Deno.test("victimFor: room left, nobody goes; at the cap the least recently used exited one, else the oldest", () => {
  assert.equal(victimFor([session(1)], 2), null);
  const all = Array.from({ length: 64 }, (_, i) => session(i, { exited: i === 5 }));
  assert.equal(victimFor(all, 64), all[5]);
  const running = Array.from({ length: 64 }, (_, i) => session(i));
  assert.equal(victimFor(running, 64), running[0]);
});

Deno.test("victimFor: a session with a call in progress and the 8 most recently used are never chosen", () => {
  const all = Array.from({ length: 64 }, (_, i) => session(i, { busy: i < 56 ? 1 : 0, exited: i === 60 }));
  // Every unprotected one is busy; the exited one is among the 8 most recent.
  assert.throws(
    () => victimFor(all, 64),
    (e: unknown) => (e as { code?: string }).code === "E_SESSION_LIMIT",
  );
  all[30] = session(30);
  assert.equal(victimFor(all, 64), all[30]);
  assert.equal(PROTECTED_RECENT, 8);
});

Deno.test("victimFor: a cap below 9 protects all but one", () => {
  const two = [session(2), session(1)];
  assert.equal(victimFor(two, 2), two[1]);
  assert.throws(() => victimFor([session(1, { busy: 1 }), session(2)], 2), /in use/);
  assert.equal(victimFor([session(1)], 1)?.lastUsed, 1);
});
