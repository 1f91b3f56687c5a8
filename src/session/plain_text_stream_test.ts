import assert from "node:assert/strict";
import { plainText } from "./plain_text.ts";
import { type PlainTextSink, PlainTextStream } from "./plain_text_stream.ts";

/** A sink as plain as can be: one growing buffer. */
class BytesSink implements PlainTextSink {
  #bytes = new Uint8Array(16);
  length = 0;
  longest = 0;
  get text(): string {
    return new TextDecoder("utf-8", { ignoreBOM: true, fatal: true }).decode(
      this.#bytes.subarray(0, this.length),
    );
  }
  appendBytes(bytes: Uint8Array): void {
    if (this.length + bytes.length > this.#bytes.length) {
      const next = new Uint8Array(2 * (this.length + bytes.length));
      next.set(this.#bytes.subarray(0, this.length));
      this.#bytes = next;
    }
    this.#bytes.set(bytes, this.length);
    this.length += bytes.length;
    this.longest = Math.max(this.longest, this.length);
  }
  truncate(length: number): void {
    this.length = Math.min(this.length, length);
  }
}

function streamed(pieces: readonly string[]): string {
  const sink = new BytesSink();
  const stream = new PlainTextStream(sink);
  for (const piece of pieces) stream.push(piece);
  stream.end();
  return sink.text;
}

/** Every way of cutting `text` in two, and in single characters. */
function assertSplitsAgree(text: string): void {
  const expected = plainText(text);
  assert.equal(streamed([text]), expected, `whole: ${JSON.stringify(text)}`);
  assert.equal(streamed([...text]), expected, `by character: ${JSON.stringify(text)}`);
  for (let cut = 1; cut < text.length; cut++) {
    assert.equal(
      streamed([text.slice(0, cut), text.slice(cut)]),
      expected,
      `cut at ${cut}: ${JSON.stringify(text)}`,
    );
  }
}

Deno.test("plain text as a stream is plainText of the whole, however the output is cut", () => {
  const cases = [
    "",
    "hello\r\nworld\r\n",
    "y\r\ny\r\ny",
    "progress 10%\rprogress 50%\rprogress 100%\r\ndone\n",
    "a\r\r\nb\r\r",
    "a\rb\r",
    "\r",
    "\r\r",
    "x\r\r",
    "\x1b[1;31mred\x1b[0m plain\n",
    "\x1b]0;title\x07after\n",
    "\x1b]0;title\x1b\\after\n",
    "\x1b]0;multi\nline\x07kept?\n",
    "\x1b]0;no end\nat all",
    "\x1b]0;bad st\x1bXmore\x1b[mtext",
    "\x1bPdcs\x07body\x1b\\after",
    "\x1bPdcs\x1bQnot st\x1b\\x",
    "\x1bXsos\x1b",
    "\x1b^pm\x1b\\\x1b_apc\x1b\\z",
    "\x1b(Bcharset\x1b)0\x1b7\x1b8\x1b=\x1b>",
    "\x1b( \x01intermediates then a control",
    "\x1b[12;3 q\x1b[?25l\x1b[1 2m\x1b[1\x08m",
    "\x1b[",
    "\x1b[12",
    "\x1b[12 ",
    "\x1b",
    "\x1b\x1b[m\x1b\x1b",
    "bell\x07back\bspace\x7fdel\x00nul\ttab\x0bvt",
    "é€😀\x1b[mé\r😀\n",
    "\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\\n",
  ];
  for (const text of cases) assertSplitsAgree(text);
});

Deno.test("plain text as a stream agrees with plainText on random escape-heavy output cut at random", () => {
  // A seeded generator: a failure names its seed and is reproducible.
  let seed = 0x5eed;
  const random = (n: number): number => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const atoms = [
    "\x1b",
    "[",
    "]",
    "P",
    "X",
    "^",
    "_",
    "\\",
    "\x07",
    "\r",
    "\n",
    "\r\n",
    "1",
    ";",
    "?",
    " ",
    "(",
    "m",
    "A",
    "~",
    "@",
    "0",
    "text",
    "é",
    "😀",
    "\x00",
    "\x08",
    "\t",
    "\x7f",
    "\x1b[",
    "\x1b]",
    "\x1bP",
    "\x1b[31m",
    "\x1b]0;t\x07",
    "\x1b\\",
  ];
  for (let round = 0; round < 3000; round++) {
    const start = seed;
    let text = "";
    const length = 1 + random(40);
    for (let i = 0; i < length; i++) text += atoms[random(atoms.length)];
    const pieces: string[] = [];
    for (let at = 0; at < text.length;) {
      const size = 1 + random(8);
      pieces.push(text.slice(at, at + size));
      at += size;
    }
    assert.equal(streamed(pieces), plainText(text), `seed ${start}: ${JSON.stringify(pieces)}`);
  }
});

Deno.test("a redrawn line is taken back from the sink, not held: a progress bar keeps one line", () => {
  const sink = new BytesSink();
  const stream = new PlainTextStream(sink);
  stream.push("start\n");
  for (let i = 0; i <= 10_000; i++) stream.push(`\r${i} of 10000`);
  stream.push("\r\n");
  stream.end();
  assert.equal(sink.text, "start\n10000 of 10000\n");
  assert.ok(sink.longest < 64, `the sink held at most ${sink.longest} characters`);
});

Deno.test("an OSC that never ends is held, then given back as the regex gives it back", () => {
  // 4 MiB in 64 KiB pieces: the regex, too, cannot know before the end that it is not a sequence.
  const piece = "x".repeat(64 * 1024);
  const pieces = ["\x1b]0;", ...Array.from({ length: 64 }, () => piece), "\x07done"];
  assert.equal(streamed(pieces), plainText(pieces.join("")));
  assert.equal(streamed(pieces), "done");
  assert.equal(streamed(pieces.slice(0, -1)), "0;" + piece.repeat(64));
});
