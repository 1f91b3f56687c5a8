import assert from "node:assert/strict";
import { printable, stripUnprintable } from "./printable.ts";

Deno.test("printable: controls, C1 and bidi become visible escapes; other text is left alone", () => {
  assert.equal(printable("vim notes.txt — 日本 🎉 \\path"), "vim notes.txt — 日本 🎉 \\path");
  assert.equal(printable("a\tb\nc\rd\x1b]52;c;QQ==\x07e"), "a\\tb\\nc\\rd\\e]52;c;QQ==\\x07e");
  assert.equal(printable("\x00\x1f\x7f\u0080\u009b6n\u009f"), "\\x00\\x1f\\x7f\\x80\\x9b6n\\x9f");
  assert.equal(
    printable("safe\u202etxt.exe\u2066\u2069\u200e\u200f\u061c"),
    "safe\\u{202e}txt.exe\\u{2066}\\u{2069}\\u{200e}\\u{200f}\\u{61c}",
  );
  // deno-lint-ignore no-control-regex -- no control character may be left.
  assert.doesNotMatch(printable("\x1b[2J\x1b]0;x\x07\u009d"), /[\x00-\x1f\x7f-\x9f]/);
});

Deno.test("stripUnprintable removes the same characters", () => {
  assert.equal(stripUnprintable("ti\x1bt\x07le\u009b\u202e\u2067 ok"), "title ok");
});
