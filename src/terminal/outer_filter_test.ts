// deno-lint-ignore-file no-control-regex -- the tests look for control characters in the output.
import assert from "node:assert/strict";
import { MAX_CLIPBOARD, MAX_SEQUENCE, OuterFilter, type OuterFilterOptions } from "./outer_filter.ts";
import { MAX_TITLE } from "./_outer_rules.ts";
import { loadXterm } from "./model.ts";

/**
 * `text` through a fresh filter in one piece, and split in two at every position (every position up to
 * `cuts` of them, for long input): all must agree, as must feeding it one character at a time.
 */
function filter(text: string, options: OuterFilterOptions = {}, cuts = Infinity): string {
  const whole = new OuterFilter(options).feed(text);
  const step = Math.max(1, Math.ceil(text.length / cuts));
  for (let cut = 1; cut < text.length; cut += step) {
    const split = new OuterFilter(options);
    assert.equal(split.feed(text.slice(0, cut)) + split.feed(text.slice(cut)), whole, `split at ${cut}`);
  }
  if (text.length <= 4096) {
    const single = new OuterFilter(options);
    assert.equal([...text].map((ch) => single.feed(ch)).join(""), whole, "one character at a time");
  }
  return whole;
}

/** Each of `sequences` between two words: the words are kept and the sequence is dropped. */
function assertDropped(sequences: readonly string[], options: OuterFilterOptions = {}): void {
  for (const sequence of sequences) {
    assert.equal(filter(`a${sequence}b`, options), "ab", JSON.stringify(sequence));
  }
}

/** Each of `sequences` between two words passes unchanged. */
function assertPassed(sequences: readonly string[], options: OuterFilterOptions = {}): void {
  for (const sequence of sequences) {
    assert.equal(filter(`a${sequence}b`, options), `a${sequence}b`, JSON.stringify(sequence));
  }
}

Deno.test("text and the C0 controls that draw pass; other C0 controls and DEL are dropped", () => {
  assert.equal(
    filter("héllo wörld 日本 🎉\tx\by\r\n\x07\x0b\x0c\x0e\x0f"),
    "héllo wörld 日本 🎉\tx\by\r\n\x07\x0b\x0c\x0e\x0f",
  );
  assert.equal(filter("a\x00\x01\x05\x06\x10\x11\x18\x1a\x1c\x1f\x7fb"), "ab", "ENQ (answerback) among them");
  assert.equal(filter("x".repeat(100_000), {}, 8), "x".repeat(100_000));
});

Deno.test("drawing control sequences pass unchanged", () => {
  assertPassed([
    "\x1b[m",
    "\x1b[0;1;4;38;5;196;48;2;10;20;30m",
    "\x1b[38:2::255:0:0m",
    "\x1b[H",
    "\x1b[12;40H",
    "\x1b[3A\x1b[B\x1b[10C\x1b[D\x1b[2E\x1b[F\x1b[5G\x1b[7d\x1b[3;4f\x1b[5`\x1b[2a\x1b[e",
    "\x1b[J\x1b[2J\x1b[K\x1b[1K\x1b[?2J\x1b[?K",
    "\x1b[3L\x1b[2M\x1b[4P\x1b[3@\x1b[5X\x1b[2S\x1b[T\x1b[I\x1b[Z\x1b[3b\x1b[3g",
    "\x1b[5;20r\x1b[r\x1b[s\x1b[u\x1b[1;40s",
    "\x1b[?1049h\x1b[?1049l\x1b[?47h\x1b[?1047l\x1b[?1048h",
    "\x1b[?1000h\x1b[?1002h\x1b[?1003h\x1b[?1006h\x1b[?1015h\x1b[?1000;1006h\x1b[?1004h",
    "\x1b[?2004h\x1b[?25l\x1b[?25h\x1b[?1h\x1b[?7l\x1b[?12h\x1b[?2026h\x1b[?2026l",
    "\x1b[?1049s\x1b[?1049r",
    "\x1b[4h\x1b[4l\x1b[20h",
    '\x1b[2 q\x1b[ q\x1b[!p\x1b[1"q',
    "\x1b[>4;2m\x1b[>4n\x1b[>1u\x1b[<u\x1b[=1;1u\x1b[>2p",
    "\x1b[22;0t\x1b[23;0t\x1b[22t",
    "\x1b[2'}\x1b[2'~\x1b[1 @\x1b[1 A",
  ]);
});

Deno.test("modes are filtered one by one: only drawing modes pass", () => {
  assert.equal(filter("\x1b[?3;1049h"), "\x1b[?1049h", "132 columns would resize the window");
  assert.equal(filter("\x1b[?1043;2031;2048h"), "", "raise on bell, theme and size reports");
  assert.equal(filter("\x1b[?1001h"), "", "highlight tracking waits for an answer");
  assert.equal(filter("\x1b[2h\x1b[12l\x1b[4;2h"), "\x1b[4h", "KAM locks the keyboard, SRM echoes");
});

Deno.test("escape sequences for cursor, keypad and charsets pass; DECID, S8C1T and ESC % are dropped", () => {
  assertPassed(["\x1b7\x1b8", "\x1b=\x1b>", "\x1b(0lqk\x1b(B", "\x1b)0\x1b*A\x1b+B", "\x1bD\x1bE\x1bH\x1bM"]);
  assertPassed(["\x1b#8", "\x1b#6", "\x1bc", "\x1bN\x1bO\x1bn\x1bo\x1b~"]);
  assertDropped(["\x1bZ", "\x1b G", "\x1b F", "\x1b%@", "\x1b%G", "\x1b\\", "\x1b#1", "\x1b([", "\x1bl"]);
});

Deno.test("queries and reports are dropped: DA, DSR, DECRQM, XTVERSION, window reports", () => {
  assertDropped([
    "\x1b[c",
    "\x1b[0c",
    "\x1b[>c",
    "\x1b[>0c",
    "\x1b[=c",
    "\x1b[=0c",
    "\x1b[5n",
    "\x1b[6n",
    "\x1b[?6n",
    "\x1b[?15n",
    "\x1b[?996n",
    "\x1b[?25$p",
    "\x1b[4$p",
    "\x1b[>q",
    "\x1b[>0q",
    "\x1b[?u",
    "\x1b[?4m",
    "\x1b[x",
    "\x1b[1;1;1;1;1*y",
    "\x1b[?1$w",
    "\x1b[1$u",
    "\x1b[?S",
    "\x1b[?1;1;0S",
    "\x1b[11t",
    "\x1b[13t",
    "\x1b[14t",
    "\x1b[16t",
    "\x1b[18t",
    "\x1b[19t",
    "\x1b[20t",
    "\x1b[21t",
  ]);
});

Deno.test("what would act on the person's window, printer or terminal settings is dropped", () => {
  assertDropped([
    "\x1b[1t",
    "\x1b[2t",
    "\x1b[3;0;0t",
    "\x1b[4;1000;1000t",
    "\x1b[5t",
    "\x1b[6t",
    "\x1b[8;50;200t",
    "\x1b[9;1t",
    "\x1b[10;1t",
    "\x1b[t",
    "\x1b[>0t",
    "\x1b[>3T",
    "\x1b[5i",
    "\x1b[?5i",
    '\x1b[62;2"p',
    "\x1b[132$|",
    "\x1b[60*|",
    "\x1b[1;2;3;4;5T",
    "\x1b[1q",
  ]);
});

Deno.test("every DCS, SOS, PM and APC string is dropped, however it ends", () => {
  assertDropped([
    "\x1bP$qm\x1b\\",
    '\x1bP$q"p\x1b\\',
    "\x1bP+q544e;636f6c6f7273\x1b\\",
    "\x1bPq#0;2;0;0;0#0~~@@vv@@~~@@~~$-\x1b\\",
    "\x1bP1000p\x1b\\",
    "\x1b_Gf=100,a=T;iVBORw0KGgo=\x1b\\",
    "\x1b^privacy\x1b\\",
    "\x1bXstart of string\x1b\\",
    "\u0090$qm\u009c",
    "\u009f_apc\u009c",
    "\x1bPdata\x07more\x1b\\",
  ]);
  // A DCS ends only at ST: the BEL above did not end it. An ESC that is not ST abandons it, as in xterm,
  // and starts a sequence of its own, which is filtered like any other.
  assert.equal(filter("\x1bPtmux;\x1b\x1b]52;c;cm0gLXJm\x07\x1b\\ok"), "ok");
  assert.equal(filter("\x1bPq\x1b[31mred"), "\x1b[31mred");
});

Deno.test("OSC 52 is dropped; --allow-clipboard passes writes, never the read", () => {
  const write = "\x1b]52;c;ZWNobyBwd25lZA==\x07";
  assertDropped([
    write,
    "\x1b]52;c;ZWNobyBwd25lZA==\x1b\\",
    "\x1b]52;;\x07",
    "\x1b]52;c;?\x07",
    "\u009d52;p;QQ==\u009c",
  ]);
  assertPassed([write, "\x1b]52;c;ZWNobyBwd25lZA==\x1b\\", "\x1b]52;;\x07"], { allowClipboard: true });
  assertDropped(["\x1b]52;c;?\x07", "\x1b]52;c;?\x1b\\", "\x1b]52;c;not base64!\x07"], {
    allowClipboard: true,
  });
  assert.equal(filter("\u009d52;p;QQ==\u009c", { allowClipboard: true }), "\x1b]52;p;QQ==\x1b\\");
});

Deno.test("OSC 8 passes http(s) links; any other link is removed and its text kept", () => {
  assertPassed([
    "\x1b]8;;https://example.com/a?b=1#c\x1b\\link\x1b]8;;\x1b\\",
    "\x1b]8;id=42;http://example.com/\x07link\x1b]8;;\x07",
    "\x1b]8;;HTTPS://EXAMPLE.COM/\x1b\\x",
  ]);
  for (
    const uri of [
      "file:///etc/passwd",
      "file://host/home/me/.ssh/id_rsa",
      "ssh://host",
      "javascript:alert(1)",
      "x-man-page://ls",
      "https://exa mple.com",
      "https://exämple.com",
      "http:",
    ]
  ) {
    assert.equal(filter(`\x1b]8;;${uri}\x1b\\link\x1b]8;;\x1b\\`), "link\x1b]8;;\x1b\\", uri);
  }
  assert.equal(filter("\x1b]8;https://example.com\x07x"), "x", "no parameters field: not a link");
});

Deno.test("titles pass without their unprintable characters, at most MAX_TITLE long", () => {
  assertPassed(["\x1b]0;vim — notes.txt\x07", "\x1b]2;build\x1b\\", "\x1b]1;icon\x07"]);
  assert.equal(filter("\x1b]2;a\x01b\x7fc\u202ed\u2066e\x08f\x07"), "\x1b]2;abcdef\x07");
  assert.equal(filter(`\x1b]0;${"t".repeat(2000)}\x07`), `\x1b]0;${"t".repeat(MAX_TITLE)}\x07`);
  assert.equal(filter("\u009d0;eight-bit\u009c"), "\x1b]0;eight-bit\x1b\\");
  // An ESC or a C1 control in a title ends it unfinished (as xterm does): the title is not set, and what
  // follows is read as what it is.
  assert.equal(filter("\x1b]0;evil\x1b[6n\x07rest"), "\x07rest");
  assert.equal(filter("\x1b]0;evil\u009b31mred\x07"), "\x1b[31mred\x07");
  assert.equal(filter("\x1b]0;evil\x1b]52;c;QQ==\x07"), "");
});

Deno.test("OSC colour sets and resets pass; colour queries and other OSCs are dropped", () => {
  assertPassed([
    "\x1b]4;1;rgb:ff/00/00\x07",
    "\x1b]4;1;#ff0000;2;red\x1b\\",
    "\x1b]10;#ffffff\x07",
    "\x1b]11;rgb:00/00/00\x1b\\",
    "\x1b]12;green\x07",
    "\x1b]104\x07",
    "\x1b]104;1\x07",
    "\x1b]110\x07\x1b]111\x07\x1b]112\x1b\\",
  ]);
  assertDropped([
    "\x1b]4;1;?\x07",
    "\x1b]4;1;red;2;?\x07",
    "\x1b]10;?\x07",
    "\x1b]11;?\x1b\\",
    "\x1b]12;?\x07",
    "\x1b]17;?\x07",
    "\x1b]7;file://host/tmp\x07",
    "\x1b]9;notification\x07",
    "\x1b]777;notify;title;body\x07",
    "\x1b]1337;File=name=eA==;inline=0:QUJD\x07",
    "\x1b]1337;SetUserVar=x=eQ==\x07",
    "\x1b]50;?\x07",
    "\x1b]46;/tmp/log\x07",
    "\x1b]133;A\x07",
    "\x1b]633;E;ls\x07",
    "\x1b]22;pointer\x07",
    "\x1b]l\x07",
    "\x1b];x\x07",
  ]);
});

Deno.test("C1 controls are read as a terminal reads them, and no C1 character is passed", () => {
  assert.equal(filter("\u009b31mred\u009b0m"), "\x1b[31mred\x1b[0m");
  assertDropped([
    "\u009b6n",
    "\u009bc",
    "\u009b>c",
    "\u009a",
    "\u0080",
    "\u0099",
    "\u009c",
    "\u008e",
    "\u0096",
  ]);
  assert.equal(filter("a\u0084b\u0085c\u0088d\u008de"), "a\x1bDb\x1bEc\x1bHd\x1bMe");
  // A C1 control inside a sequence abandons it and is read anew.
  assert.equal(filter("\x1b[31\u009b6nx"), "x");
  assert.equal(filter("\x1b(\u009b32mx"), "\x1b[32mx");
});

Deno.test("C0 controls inside a sequence run at once; CAN, SUB and ESC abandon it", () => {
  assert.equal(filter("\x1b[3\r1m"), "\r\x1b[31m");
  assert.equal(filter("\x1b[3\x051m"), "\x1b[31m", "ENQ inside is dropped, the sequence goes on");
  assert.equal(filter("\x1b[31\x18mx"), "mx");
  assert.equal(filter("\x1b[31\x1amx"), "mx");
  assert.equal(filter("\x1b[31\x1b[32m"), "\x1b[32m");
  assert.equal(filter("\x1b\x1b[32m"), "\x1b[32m");
  assert.equal(filter("\x1b\r7"), "\r\x1b7", "a C0 after ESC runs, the escape goes on");
  assert.equal(filter("\x1b[3\x7f1m"), "\x1b[31m", "DEL is ignored inside");
  assert.equal(filter("\x1b[1;2$3m"), "", "a parameter after an intermediate: ignored by xterm");
  assert.equal(filter("\x1b[1?2h"), "", "a private marker after parameters");
  assert.equal(filter("\x1b[3é"), "é", "a non-ASCII character abandons the sequence");
});

Deno.test("an over-long sequence is dropped whole, and what follows it passes", () => {
  const digits = "1".repeat(MAX_SEQUENCE + 10);
  assert.equal(filter(`\x1b[${digits}mok`, {}, 50), "ok");
  assert.equal(
    filter(`\x1b[${"1;".repeat(MAX_SEQUENCE / 2 - 2)}1mok`, {}, 20),
    `\x1b[${"1;".repeat(MAX_SEQUENCE / 2 - 2)}1mok`,
  );
  assert.equal(filter(`\x1b${" ".repeat(MAX_SEQUENCE + 1)}7ok`, {}, 20), "ok");
  assert.equal(filter(`\x1b]0;${"t".repeat(MAX_SEQUENCE)}\x07ok`, {}, 50), "ok");
  assert.equal(filter(`\x1b]8;;https://e.com/${"a".repeat(MAX_SEQUENCE)}\x07ok`, {}, 50), "ok");
  // A clipboard write that is allowed may be longer, up to its own bound.
  const long = "QUJD".repeat(100_000);
  assert.equal(filter(`\x1b]52;c;${long}\x07ok`, { allowClipboard: true }, 20), `\x1b]52;c;${long}\x07ok`);
  assert.equal(filter(`\x1b]52;c;${long}\x07ok`, {}, 20), "ok");
  const huge = "QUJD".repeat(MAX_CLIPBOARD / 4 + 1);
  assert.equal(filter(`\x1b]52;c;${huge}\x07ok`, { allowClipboard: true }, 10), "ok");
});

Deno.test("a dropped string is not held: 16 MiB of DCS in chunks costs nothing and ends at its ST", () => {
  const outer = new OuterFilter();
  assert.equal(outer.feed("before\x1bP"), "before");
  const chunk = "q#0;2;0;0;0~".repeat(100_000);
  let total = 0;
  while (total < 16 * 1024 * 1024) {
    assert.equal(outer.feed(chunk), "");
    total += chunk.length;
  }
  assert.ok(outer.holding);
  assert.equal(outer.feed("\x1b\\after"), "after");
  assert.ok(!outer.holding);
});

Deno.test("a sequence split across chunks is held until complete", () => {
  const outer = new OuterFilter();
  assert.equal(outer.feed("a\x1b"), "a");
  assert.ok(outer.holding);
  assert.equal(outer.feed("[3"), "");
  assert.equal(outer.feed("1mb\x1b]0;ti"), "\x1b[31mb");
  assert.equal(outer.feed("tle\x1b"), "");
  assert.equal(outer.feed("\\c"), "\x1b]0;title\x1b\\c");
  assert.ok(!outer.holding);
});

/** A deterministic generator (mulberry32). */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

Deno.test("for any input, the output is its own filtering, with no C1 control and no query", () => {
  const pieces = [
    "\x1b",
    "[",
    "]",
    "P",
    "_",
    "^",
    "X",
    "\\",
    "\x07",
    "\x18",
    "\x9b",
    "\x9c",
    "\x9d",
    "\x90",
    "\x85",
    "?",
    ">",
    "=",
    "<",
    "$",
    " ",
    "!",
    '"',
    ";",
    ":",
    "0",
    "1",
    "2",
    "5",
    "6",
    "8",
    "52",
    "c",
    "n",
    "q",
    "p",
    "t",
    "m",
    "h",
    "l",
    "u",
    "a",
    "é",
    "\u202e",
    "\x00",
    "\r",
    "\n",
    "file://x",
    "https://x",
    "?",
    "(",
    "#",
    "%",
  ];
  const next = random(23);
  for (let round = 0; round < 2000; round++) {
    let text = "";
    const length = 1 + Math.floor(next() * 40);
    for (let k = 0; k < length; k++) text += pieces[Math.floor(next() * pieces.length)];
    for (const options of [{}, { allowClipboard: true }]) {
      const out = filter(text, options, 8);
      assert.equal(new OuterFilter(options).feed(out), out, `idempotent for ${JSON.stringify(text)}`);
      assert.doesNotMatch(out, /[\x80-\x9f]/, JSON.stringify(text));
      assert.doesNotMatch(
        out,
        /\x1b[P_^X]|\x1b\[[>=]?[\d;]*c|\x1b\[\??[\d;]*n|\x1b\[(?!2[23][;t])[\d;]*t|\x1b\]8;[^;]*;[^h\x07\x1b]/,
        JSON.stringify(text),
      );
      assert.doesNotMatch(out, /\x1b\]52;[^\x07\x1b]*\?/, JSON.stringify(text));
      if (!("allowClipboard" in options)) assert.doesNotMatch(out, /\x1b\]52/, JSON.stringify(text));
    }
  }
});

/** What xterm draws for `text` on a 30×8 screen: each row's text and colours, the cursor, the title. */
async function xtermScreen(text: string): Promise<string> {
  const { Terminal } = await loadXterm();
  const term = new Terminal({ cols: 30, rows: 8, scrollback: 0, allowProposedApi: true, logLevel: "off" });
  let title = "";
  term.onTitleChange((value) => title = value);
  await new Promise<void>((resolve) => term.write(text, resolve));
  const buffer = term.buffer.active;
  const rows = [];
  for (let y = 0; y < 8; y++) {
    const line = buffer.getLine(buffer.baseY + y)!;
    const colours = [];
    for (let x = 0; x < 30; x++) {
      const cell = line.getCell(x)!;
      colours.push(`${cell.getFgColor()}/${cell.getBgColor()}/${cell.isBold()}`);
    }
    rows.push(`${line.translateToString()}|${colours.join(",")}`);
  }
  const screen = JSON.stringify({ rows, x: buffer.cursorX, y: buffer.cursorY, type: buffer.type, title });
  term.dispose();
  return screen;
}

Deno.test("a full-screen program's drawing, queries among it, draws the same screen once filtered", async () => {
  const queries = ["\x1b[c", "\x1b[6n", "\x1bP$qm\x1b\\", "\x1b]11;?\x07", "\x1b[>q", "\x1b]52;c;QQ==\x07"];
  const drawing = [
    "\x1b]0;editor\x07",
    "\x1b[?1049h\x1b[?1000;1006h\x1b[?2004h\x1b[?25l",
    "\x1b[H\x1b[2J\x1b[1;31;44mred on blue\x1b[m plain",
    "\x1b[3;5H\x1b(0lqqk\x1b(B box\x1b[38;5;208m orange\x1b[0m",
    "\x1b[2;7r\x1b[7;1H\nscrolled\x1b[r",
    "\x1b[5;1H\x1b[1Linserted\x1b[6;3H\x1b[2Pcut\x1b7\x1b[8;1Hbottom\x1b8!",
    "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\",
    "\u009b1mbold\u009b0m\x1b[4 q\x1b[?25h",
  ];
  let interleaved = "";
  drawing.forEach((part, k) => interleaved += part + queries[k % queries.length]);
  const filtered = filter(interleaved);
  assert.equal(filtered, drawing.join("").replaceAll("\u009b", "\x1b["));
  assert.equal(await xtermScreen(filtered), await xtermScreen(interleaved));
});
