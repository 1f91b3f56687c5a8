import assert from "node:assert/strict";
import { OuterFilter } from "./outer_filter.ts";
import { OuterModes } from "./outer_modes.ts";

function restoreAfter(...chunks: string[]): string {
  const modes = new OuterModes();
  const filter = new OuterFilter();
  for (const chunk of chunks) modes.observe(filter.feed(chunk));
  return modes.restore();
}

Deno.test("OuterModes: nothing set, only SGR reset and the title pushed on entry popped", () => {
  assert.equal(restoreAfter("plain text\r\n\x1b[31mred\x1b[0m"), "\x1b[0m\x1b[23;0t");
});

Deno.test("OuterModes: vim's modes are all switched off, the alternate screen left last of the screen", () => {
  const vim = "\x1b[?1049h\x1b[22;0;0t\x1b[?1h\x1b=\x1b[?2004h\x1b[?1004h\x1b[?1000;1002;1006h\x1b[?25l" +
    "\x1b]2;file - VIM\x07\x1b[1;39r\x1b[2 q\x1b[4h";
  assert.equal(
    restoreAfter(vim),
    "\x1b[0m" +
      "\x1b[?6l\x1b[?69l\x1b[r\x1b[?1049l" + // Margins reset on the alternate screen, then left.
      "\x1b[?1;1000;1002;1004;1006;2004l\x1b[?25h\x1b>\x1b[4l\x1b[0 q" +
      "\x1b]0;\x07\x1b[23;0t\x1b[23;0t", // The program's push and ours.
  );
});

Deno.test("OuterModes: modes the program switched off again are still reset, the alternate screen is not left twice", () => {
  const out = restoreAfter("\x1b[?1049h\x1b[?1000h", "\x1b[?1000l\x1b[?1049l");
  assert.equal(out, "\x1b[0m\x1b[?1000l\x1b[23;0t");
});

Deno.test("OuterModes: a sequence split across chunks is seen once whole (the filter holds it)", () => {
  assert.equal(restoreAfter("\x1b[?10", "06h"), "\x1b[0m\x1b[?1006l\x1b[23;0t");
});

Deno.test("OuterModes: margins on the normal screen keep the cursor; origin mode puts it on the last row", () => {
  assert.equal(restoreAfter("\x1b[5;20r"), "\x1b[0m\x1b7\x1b[?69l\x1b[r\x1b8\x1b[23;0t");
  assert.equal(restoreAfter("\x1b[5;20r\x1b[?6h"), "\x1b[0m\x1b[?6l\x1b[?69l\x1b[r\x1b[999;1H\x1b[23;0t");
  assert.equal(restoreAfter("\x1b[5;20r\x1b[!p"), "\x1b[0m\x1b[23;0t");
});

Deno.test("OuterModes: colours, charsets, keyboard protocols and a synchronized update are put back", () => {
  const out = restoreAfter(
    "\x1b]10;#ffffff\x07\x1b]4;1;#ff0000\x1b\\\x1b(0\x0e\x1b[>1u\x1b[>4;2m\x1b[?2026h",
  );
  assert.equal(
    out,
    "\x1b[?2026l\x1b[0m\x0f\x1b(B\x1b[<1u\x1b[>4m\x1b]104\x07\x1b]110\x07\x1b[23;0t",
  );
});

Deno.test("OuterModes: RIS forgets what came before it, the title aside", () => {
  assert.equal(restoreAfter("\x1b[?1000h\x1b]2;t\x07\x1bc"), "\x1b[0m\x1b]0;\x07\x1b[23;0t");
});

Deno.test("OuterModes: the program's own title pushes are bounded (xterm keeps ten)", () => {
  const out = restoreAfter("\x1b[22;0t".repeat(50));
  assert.equal(out, "\x1b[0m" + "\x1b[23;0t".repeat(11));
});
