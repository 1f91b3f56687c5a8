import assert from "node:assert/strict";
import { SIGNAL_NAMES } from "../protocol/mod.ts";
import { decodeWaitStatus, PLATFORMS, platformTable, signalName } from "./platform.ts";

const linux = PLATFORMS["linux-x86_64"];

Deno.test("the Linux row matches this machine's kernel and libc constants", async () => {
  // Python exposes the C headers' values: an independent source for every number we hard-code.
  const script = `
import errno, json, os, signal, termios
print(json.dumps({
  "o": {"RDWR": os.O_RDWR, "NOCTTY": os.O_NOCTTY, "NONBLOCK": os.O_NONBLOCK, "CLOEXEC": os.O_CLOEXEC},
  "errno": {k: getattr(errno, k) for k in ["ENOENT","ESRCH","EINTR","EIO","ENOEXEC","ECHILD","EAGAIN","EACCES","ENOTDIR"]},
  "ioctl": {"TIOCSWINSZ": termios.TIOCSWINSZ, "TIOCGWINSZ": termios.TIOCGWINSZ},
  "wait": {"WNOHANG": os.WNOHANG, "WUNTRACED": os.WUNTRACED, "WCONTINUED": os.WCONTINUED},
  "signals": {n: int(getattr(signal, "SIG" + n)) for n in ${JSON.stringify(SIGNAL_NAMES)}},
  "fcntl": {"F_GETFD": 1, "F_SETFD": 2, "F_GETFL": 3, "F_SETFL": 4, "FD_CLOEXEC": 1},
  "socket": {n: getattr(__import__("socket"), n) for n in ["AF_UNIX", "SOCK_STREAM", "SOCK_SEQPACKET"]},
  "termios": {"get": termios.TCGETS, "ISIG": termios.ISIG, "VINTR": termios.VINTR, "VQUIT": termios.VQUIT},
}))`;
  const { stdout, success } = await new Deno.Command("python3", { args: ["-c", script], stdout: "piped" })
    .output();
  assert.ok(success);
  const real = JSON.parse(new TextDecoder().decode(stdout));
  const table = platformTable("linux", Deno.build.arch);
  for (const group of ["o", "errno", "ioctl", "wait", "signals", "fcntl", "socket", "termios"] as const) {
    for (const [name, value] of Object.entries(real[group])) {
      assert.equal((table[group] as Record<string, number>)[name], value, `${group}.${name}`);
    }
  }
});

Deno.test("every platform row names every signal with a distinct number", () => {
  for (const [id, table] of Object.entries(PLATFORMS)) {
    const numbers = SIGNAL_NAMES.map((name) => table.signals[name]);
    assert.equal(new Set(numbers).size, numbers.length, id);
    for (const name of SIGNAL_NAMES) {
      assert.equal(signalName(table.signals[name], table), name, `${id} ${name}`);
    }
  }
});

Deno.test("macOS rows carry the XNU values (data only: never executed here)", () => {
  for (const id of ["darwin-aarch64", "darwin-x86_64"] as const) {
    const table = PLATFORMS[id];
    assert.equal(table.errno.EAGAIN, 35);
    assert.equal(table.o.NONBLOCK, 0x4);
    assert.equal(table.spawn.SETSID, 0x400);
    assert.equal(table.ioctl.TIOCSWINSZ, 0x80087467);
    // TIOCGETA = _IOR('t', 19, struct termios) of 72 bytes; ISIG and VINTR/VQUIT from <sys/termios.h>.
    assert.deepEqual(
      [table.termios.get, table.termios.ISIG, table.termios.VINTR, table.termios.VQUIT],
      [0x40487413, 0x80, 8, 9],
    );
    assert.equal(table.signals.TSTP, 18);
    assert.equal(table.signals.CHLD, 20);
    assert.equal(table.errnoFunction, "__error");
    assert.equal(table.continued, "bsd-0x13-stopsig");
    assert.deepEqual(table.socket, { AF_UNIX: 1, SOCK_STREAM: 1, SOCK_SEQPACKET: 5 }); // <sys/socket.h>
  }
  assert.equal(PLATFORMS["darwin-aarch64"].variadic, "stack");
  assert.equal(PLATFORMS["darwin-x86_64"].variadic, "registers");
});

Deno.test("an unknown platform throws E_PLATFORM_UNSUPPORTED", () => {
  assert.throws(() => platformTable("windows", "x86_64"), { code: "E_PLATFORM_UNSUPPORTED" });
  assert.throws(() => platformTable("linux", "riscv64"), { code: "E_PLATFORM_UNSUPPORTED" });
});

Deno.test("wait statuses decode with the W* macro semantics", () => {
  assert.deepEqual(decodeWaitStatus(0x0300, linux), { kind: "exited", code: 3 });
  assert.deepEqual(decodeWaitStatus(0x0009, linux), { kind: "signaled", signal: 9 });
  assert.deepEqual(decodeWaitStatus(0x0089, linux), { kind: "signaled", signal: 9 }); // With core dump bit.
  assert.deepEqual(decodeWaitStatus(0x147f, linux), { kind: "stopped", signal: 20 });
  assert.deepEqual(decodeWaitStatus(0xffff, linux), { kind: "continued" });
  const mac = PLATFORMS["darwin-aarch64"];
  assert.deepEqual(decodeWaitStatus(0x137f, mac), { kind: "continued" });
  assert.deepEqual(decodeWaitStatus(0x127f, mac), { kind: "stopped", signal: 18 });
  assert.deepEqual(decodeWaitStatus(0x0100, mac), { kind: "exited", code: 1 });
});
