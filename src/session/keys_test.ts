import assert from "node:assert/strict";
import { encodeKey, KEY_NAMES } from "./keys.ts";

const CASES: readonly [string, string][] = [
  ["enter", "\r"],
  ["return", "\r"],
  ["tab", "\t"],
  ["shift-tab", "\x1b[Z"],
  ["esc", "\x1b"],
  ["escape", "\x1b"],
  ["backspace", "\x7f"],
  ["space", " "],
  ["delete", "\x1b[3~"],
  ["insert", "\x1b[2~"],
  ["up", "\x1b[A"],
  ["down", "\x1b[B"],
  ["right", "\x1b[C"],
  ["left", "\x1b[D"],
  ["home", "\x1b[H"],
  ["end", "\x1b[F"],
  ["pgup", "\x1b[5~"],
  ["pageup", "\x1b[5~"],
  ["pgdn", "\x1b[6~"],
  ["f1", "\x1bOP"],
  ["f4", "\x1bOS"],
  ["f5", "\x1b[15~"],
  ["f6", "\x1b[17~"],
  ["f10", "\x1b[21~"],
  ["f11", "\x1b[23~"],
  ["f12", "\x1b[24~"],
  ["ctrl-a", "\x01"],
  ["ctrl-c", "\x03"],
  ["ctrl-z", "\x1a"],
  ["ctrl-\\", "\x1c"],
  ["ctrl-]", "\x1d"],
  ["ctrl-[", "\x1b"],
  ["ctrl-space", "\x00"],
  ["ctrl-C", "\x03"],
  ["alt-x", "\x1bx"],
  ["alt-enter", "\x1b\r"],
  ["alt--", "\x1b-"],
  ["-", "-"],
  ["shift-a", "A"],
  ["ctrl-up", "\x1b[1;5A"],
  ["shift-up", "\x1b[1;2A"],
  ["alt-left", "\x1b[1;3D"],
  ["ctrl-shift-right", "\x1b[1;6C"],
  ["ctrl-delete", "\x1b[3;5~"],
  ["shift-f5", "\x1b[15;2~"],
  ["ctrl-f1", "\x1b[1;5P"],
  ["é", "é"],
];

for (const [name, bytes] of CASES) {
  Deno.test(`key "${name}" encodes as ${JSON.stringify(bytes)}`, () => assert.equal(encodeKey(name), bytes));
}

Deno.test("application cursor mode changes unmodified arrows and Home/End only", () => {
  const app = { applicationCursor: true };
  assert.equal(encodeKey("up", app), "\x1bOA");
  assert.equal(encodeKey("left", app), "\x1bOD");
  assert.equal(encodeKey("home", app), "\x1bOH");
  assert.equal(encodeKey("ctrl-up", app), "\x1b[1;5A");
  assert.equal(encodeKey("pgup", app), "\x1b[5~");
});

Deno.test("every listed key name encodes", () => {
  for (const name of KEY_NAMES) assert.ok(encodeKey(name).length > 0, name);
});

Deno.test("unknown keys fail with E_PROTOCOL naming the key", () => {
  for (const name of ["hyper-x", "f13", "ctrl-enter", "ctrl-1", "ctrl-", "nope"]) {
    assert.throws(() => encodeKey(name), (e: unknown) => {
      const error = e as { code: string; message: string };
      return error.code === "E_PROTOCOL" && error.message.includes(`"${name}"`);
    }, name);
  }
});
