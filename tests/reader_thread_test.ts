/**
 * The reader thread against real programs: every byte to EOF, a full ring blocks the writer, release,
 * many terminals at once, and a thread that cannot start.
 */
import { concatBytes } from "../src/frames/mod.ts";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { libc } from "../src/pty/_libc.ts";
import { childWatcher, sendSignal } from "../src/pty/process.ts";
import { type ReaderChannel, ReaderThread, replaceReaderThread } from "../src/pty/reader_thread.ts";
import { spawnOnPty } from "../src/pty/spawn.ts";
import type { WaitStatus } from "../src/pty/platform.ts";
import { alive, sessionTest, start, withTempDir } from "./_helpers.ts";
import { reactor } from "../src/pty/reactor.ts";
import { OutputTail } from "../src/session/output_tail.ts";

interface Started {
  readonly pid: number;
  readonly master: number;
  readonly exited: Promise<WaitStatus>;
}

/** Starts `sh -c script` on a raw-output terminal (no \n → \r\n, no echo), so bytes compare exactly. */
function startShell(script: string): Started {
  const child = spawnOnPty({
    argv: ["/bin/sh", "-c", `stty -opost -echo; ${script}`],
    env: { PATH: "/usr/bin:/bin" },
    cols: 80,
    rows: 24,
  });
  const exited = new Promise<WaitStatus>((resolve) => {
    childWatcher().watch(child.pid, (status) => {
      if (status.kind === "exited" || status.kind === "signaled") resolve(status);
    });
  });
  return { pid: child.pid, master: child.master, exited };
}

/** Takes everything a channel delivers until it is done. */
function collect(thread: ReaderThread, fd: number): { channel: ReaderChannel; bytes: Promise<Uint8Array> } {
  const parts: Uint8Array[] = [];
  const buffer = new Uint8Array(65536);
  let finish!: (bytes: Uint8Array) => void;
  const bytes = new Promise<Uint8Array>((resolve) => finish = resolve);
  const channel: ReaderChannel = thread.open(fd, () => {
    for (let n = channel.take(buffer); n > 0; n = channel.take(buffer)) parts.push(buffer.slice(0, n));
    if (channel.done) finish(concatBytes(parts));
  });
  return { channel, bytes };
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

async function eventually(what: string, test: () => boolean, ms = 5000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!test()) {
    if (performance.now() > deadline) throw new Error(`Timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Reads `fd` on this thread until `want` bytes arrived (the thread must have let go of it). */
async function readDirectly(fd: number, want: number): Promise<string> {
  const lib = libc();
  const buffer = new Uint8Array(4096);
  let text = "";
  await eventually(`${want} bytes were read directly`, () => {
    const n = Number(lib.sym.read(fd, buffer, BigInt(buffer.length)));
    if (n > 0) text += new TextDecoder().decode(buffer.subarray(0, n));
    return text.length >= want;
  });
  return text;
}

sessionTest("the reader thread delivers every byte of 5 MB to EOF, then stops", async () => {
  await withTempDir(async (dir) => {
    const content = new Uint8Array(5 * 1024 * 1024);
    for (let at = 0; at < content.length; at += 65536) {
      crypto.getRandomValues(content.subarray(at, at + 65536));
    }
    await Deno.writeFile(`${dir}/data`, content);
    const thread = new ReaderThread();
    const child = startShell(`exec cat ${dir}/data`);
    const { channel, bytes } = collect(thread, child.master);
    const got = await bytes;
    assert.deepEqual((await child.exited).kind, "exited");
    assert.deepEqual(got.length, content.length);
    assert.deepEqual(sha256(got), sha256(content));
    assert.ok(channel.ended && channel.done && !channel.failed);
    assert.deepEqual(channel.errno, 0, "EIO at the end counts as a normal end");
    await eventually("the thread stopped", () => !thread.running);
    libc().sym.close(child.master);
  });
});

sessionTest("a full ring stops the thread reading: the writer blocks until bytes are taken", async () => {
  const thread = new ReaderThread();
  const size = 3 * 1024 * 1024; // Three times the ring: cannot fit in the ring plus the kernel's buffers.
  const child = startShell(`head -c ${size} /dev/zero; exit 0`);
  let notified = 0;
  const channel = thread.open(child.master, () => notified++);
  await eventually("the thread read something", () => notified > 0);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.ok(alive(child.pid), "the writer is blocked, not finished");
  assert.ok(!channel.ended);
  const buffer = new Uint8Array(64 * 1024);
  let total = 0;
  await eventually("all bytes were taken", () => {
    for (let n = channel.take(buffer); n > 0; n = channel.take(buffer)) total += n;
    return channel.done;
  }, 20_000);
  assert.deepEqual(total, size);
  assert.deepEqual((await child.exited).kind, "exited");
  libc().sym.close(child.master);
});

sessionTest("release: the thread lets go of the terminal and reads nothing more from it", async () => {
  const thread = new ReaderThread();
  const child = startShell("printf first; read -r _; printf second; sleep 30");
  const buffer = new Uint8Array(4096);
  let text = "";
  const channel = thread.open(child.master, () => {
    text += new TextDecoder().decode(buffer.subarray(0, channel.take(buffer)));
  });
  await eventually('"first" arrived', () => text === "first");
  channel.release();
  await eventually("the channel ended", () => channel.ended);
  assert.ok(channel.done && !channel.failed);
  await eventually("the thread stopped", () => !thread.running);
  libc().sym.write(child.master, new TextEncoder().encode("go\n"), 3n);
  assert.deepEqual(await readDirectly(child.master, 6), "second", "the output after the release stayed put");
  sendSignal(child.pid, "KILL");
  await child.exited;
  libc().sym.close(child.master);
});

sessionTest("one thread serves many terminals at once, each with its own output", async () => {
  const thread = new ReaderThread();
  const children = Array.from({ length: 50 }, (_, i) => startShell(`printf 'id-${i}:%s' "$(seq 1 2000)"`));
  const results = children.map((child) => collect(thread, child.master));
  const texts = await Promise.all(results.map((r) => r.bytes.then((b) => new TextDecoder().decode(b))));
  const seq = Array.from({ length: 2000 }, (_, i) => i + 1).join("\n");
  texts.forEach((text, i) => assert.deepEqual(text, `id-${i}:${seq}`));
  await Promise.all(children.map((c) => c.exited));
  for (const child of children) libc().sym.close(child.master);
  await eventually("the thread stopped", () => !thread.running);
});

sessionTest("a thread that cannot start fails its channels; the terminal is left to the caller", async () => {
  const thread = new ReaderThread("data:application/javascript,throw new Error('no reader here')");
  const child = startShell("read -r _; printf late");
  let notified = 0;
  const channel = thread.open(child.master, () => notified++);
  await eventually("the channel failed", () => channel.failed);
  await eventually("the owner was told", () => notified > 0);
  assert.ok(channel.ended && channel.done);
  assert.ok(!thread.running);
  libc().sym.write(child.master, new TextEncoder().encode("go\n"), 3n);
  assert.deepEqual(await readDirectly(child.master, 4), "late");
  await child.exited;
  libc().sym.close(child.master);
});

sessionTest(
  "a session whose reader thread cannot start reads on the JS thread and loses nothing",
  async () => {
    const previous = replaceReaderThread(
      new ReaderThread("data:application/javascript,throw new Error('no')"),
    );
    try {
      const r = start({ argv: ["sh", "-c", "printf abc; sleep 0.2; printf def"], readerThread: true });
      const exit = await r.exit();
      assert.deepEqual(exit.code, 0);
      assert.deepEqual(r.text, "abcdef");
      assert.deepEqual(exit.output_bytes, 6);
    } finally {
      replaceReaderThread(previous);
    }
  },
);

sessionTest("a session on the reader thread: output, input and exit as on the JS thread", async () => {
  const r = start({ argv: ["sh", "-c", 'read -r line; echo "got:$line"; exit 4'], readerThread: true });
  r.session.write("hello\r");
  const exit = await r.exit();
  assert.deepEqual(exit.code, 4);
  assert.match(r.text, /got:hello\r\n/);
});

sessionTest(
  "output read on the JS thread before the reader thread starts, and on it after, stays in order",
  async () => {
    const r = start({ argv: ["sh", "-c", "printf early; sleep 0.2; seq 1 200000"], readerThread: true });
    const exit = await r.exit();
    assert.deepEqual(exit.code, 0);
    const seq = Array.from({ length: 200000 }, (_, i) => i + 1).join("\r\n");
    assert.deepEqual(r.text, `early${seq}\r\n`);
  },
);

sessionTest("a release reads what the kernel still holds before the thread lets go", async () => {
  const thread = new ReaderThread();
  const expected = Array.from({ length: 300_000 }, (_, i) => `${i + 1}\n`).join(""); // ~2 MB: twice the ring.
  const child = startShell("seq 1 300000; sleep 30");
  const channel = thread.open(child.master, () => {});
  const buffer = new Uint8Array(2 * 1024 * 1024);
  // Wait until the ring is full and the writer blocked: the thread then skips the terminal. (A fixed
  // wait was not enough on a loaded machine.)
  let taken = 0;
  await eventually("the ring is full", () => channel.unread === 1024 * 1024, 20_000);
  await new Promise((resolve) => setTimeout(resolve, 100));
  // Taking makes room, and the release comes in the same task: the thread sees both at once.
  taken = channel.take(buffer);
  channel.release();
  assert.deepEqual(taken, 1024 * 1024, "the ring was full");
  await eventually("the channel ended", () => channel.ended);
  let n = 0;
  while ((n = channel.take(buffer.subarray(taken))) > 0) taken += n;
  assert.ok(channel.done);
  assert.ok(taken > 1024 * 1024, `nothing was read at the release (${taken} bytes taken)`);
  const rest = await readDirectly(child.master, expected.length - taken);
  assert.deepEqual(
    new TextDecoder().decode(buffer.subarray(0, taken)) + rest,
    expected,
    "no byte lost or moved",
  );
  sendSignal(child.pid, "KILL");
  await child.exited;
  libc().sym.close(child.master);
});

sessionTest(
  "a session whose output handling throws on the reader thread ends and leaves the reactor",
  async () => {
    const push = OutputTail.prototype.push;
    OutputTail.prototype.push = function (this: OutputTail, text: string) {
      if (text.includes("BOOM")) throw new Error("tail broke");
      return push.call(this, text);
    };
    try {
      const before = reactor().size;
      // After a pause: the first output of a session may be read before the thread is up.
      const r = start({ argv: ["sh", "-c", "sleep 0.3; printf BOOM; sleep 30"], readerThread: true });
      const exit = await r.exit();
      const error = r.frames.find((f) => f.type === "error");
      assert.deepEqual(error?.type === "error" && error.code, "E_IO");
      assert.deepEqual(exit.signal, "KILL");
      assert.deepEqual(reactor().size, before, "the session is no longer polled");
    } finally {
      OutputTail.prototype.push = push;
    }
  },
);
