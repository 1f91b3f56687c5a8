import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { DetachScanner, parseDetachKey } from "./detach_key.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

Deno.test("parseDetachKey: ctrl-X, C-X, ^X and a tmux-like prefix and key", () => {
  assert.deepEqual(parseDetachKey("ctrl-]"), { prefix: 0x1d, key: null, label: "ctrl-]" });
  assert.deepEqual(parseDetachKey("C-a"), { prefix: 0x01, key: null, label: "ctrl-a" });
  assert.deepEqual(parseDetachKey("^Q"), { prefix: 0x11, key: null, label: "ctrl-q" });
  assert.deepEqual(parseDetachKey("ctrl-b d"), { prefix: 0x02, key: 0x64, label: "ctrl-b d" });
  assert.deepEqual(parseDetachKey("ctrl-a ctrl-d"), { prefix: 0x01, key: 0x04, label: "ctrl-a ctrl-d" });
});

Deno.test("parseDetachKey: anything else is E_USAGE naming the accepted forms", () => {
  for (const bad of ["", "ctrl-1", "x", "alt-x", "ctrl-b dd", "ctrl-b d e", "ctrl-é"]) {
    assert.throws(() => parseDetachKey(bad), (error: unknown) => {
      assert.ok(error instanceof UsageError, bad);
      assert.equal(error.code, "E_USAGE");
      assert.match(error.message, /^Flag "--detach-key" must be ctrl-X .* \("ctrl-b d"\), got "/);
      return true;
    });
  }
});

Deno.test("DetachScanner: a single key cuts the input there", () => {
  const scanner = new DetachScanner(parseDetachKey("ctrl-]"));
  assert.deepEqual(scanner.scan(bytes("abc")), { send: bytes("abc"), detach: false });
  const cut = scanner.scan(bytes("ab\x1dcd"));
  assert.equal(text(cut.send), "ab");
  assert.equal(cut.detach, true);
});

Deno.test("DetachScanner: a prefix twice sends it once, with another key sends both, split across reads", () => {
  const scanner = new DetachScanner(parseDetachKey("ctrl-b d"));
  let out = scanner.scan(bytes("x\x02\x02y\x02z"));
  assert.equal(text(out.send), "x\x02y\x02z");
  assert.equal(out.detach, false);
  out = scanner.scan(bytes("q\x02"));
  assert.equal(text(out.send), "q");
  out = scanner.scan(bytes("dafter"));
  assert.equal(text(out.send), "");
  assert.equal(out.detach, true);
});
