import assert from "node:assert/strict";
import { MAX_DURATION_MS, parseCount, parseDuration, parseEscapes, parseSize } from "./units.ts";

Deno.test("durations need a unit (except 0)", () => {
  assert.equal(parseDuration("200ms", "idle"), 200);
  assert.equal(parseDuration("5s", "idle"), 5000);
  assert.equal(parseDuration("1.5s", "idle"), 1500);
  assert.equal(parseDuration("2m", "idle"), 120_000);
  assert.equal(parseDuration("1h", "idle"), 3_600_000);
  assert.equal(parseDuration("0", "idle"), 0);
  assert.equal(parseDuration(`${MAX_DURATION_MS}ms`, "timeout"), 2 ** 31 - 1);
  // 2^31 ms and more would overflow the timer's signed 32-bit delay and fire at once.
  for (const bad of ["30", "5x", "-1s", "", "s", "2147483648ms", "1000h", `${"9".repeat(400)}s`]) {
    assert.throws(() => parseDuration(bad, "timeout"), { code: "E_USAGE" }, bad);
  }
});

Deno.test("sizes are bytes with binary suffixes", () => {
  assert.equal(parseSize("1000", "buffer"), 1000);
  assert.equal(parseSize("8M", "buffer"), 8 * 1024 * 1024);
  assert.equal(parseSize("512k", "buffer"), 512 * 1024);
  assert.equal(parseSize("1G", "buffer"), 1024 ** 3);
  assert.equal(parseSize("4MiB", "buffer"), 4 * 1024 * 1024);
  for (const bad of ["", "M", "-1", "1T", "9999999999G", `${"9".repeat(400)}`]) {
    assert.throws(() => parseSize(bad, "buffer"), { code: "E_USAGE" }, bad);
  }
});

Deno.test("counts are whole numbers in range", () => {
  assert.equal(parseCount("80", "cols"), 80);
  for (const bad of ["0", "1.5", "x", "10001"]) {
    assert.throws(() => parseCount(bad, "cols"), { code: "E_USAGE" }, bad);
  }
});

Deno.test("escapes in --input", () => {
  assert.equal(parseEscapes("ls\\r", "input"), "ls\r");
  assert.equal(parseEscapes("a\\tb\\nc\\e[A\\x41\\\\", "input"), "a\tb\nc\x1b[AA\\");
  assert.throws(() => parseEscapes("\\q", "input"), { code: "E_USAGE" });
});
