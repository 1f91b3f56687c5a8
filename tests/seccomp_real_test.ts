/**
 * The compiled seccomp filter under the real kernel: each attempt runs in python3 under
 * `bwrap --seccomp 3` with the filter on fd 3, exactly as the bwrap backend passes it.
 *
 * Where it is meaningful, the same attempt also runs without the filter (the "control") to show the
 * filter is what stopped it, not the environment. Controls need a host without a seccomp filter of its
 * own and root (as CI runs); elsewhere they are skipped and only the filtered outcome is asserted.
 *
 * @module
 */
import assert from "node:assert/strict";
import { SECCOMP_RULES } from "../profiles/seccomp_rules.ts";
import {
  BPF,
  compileSeccomp,
  decodeProgram,
  encodeProgram,
  ERRNO,
  rulesFor,
  SECCOMP_RET,
  seccompArchFor,
  type SeccompRule,
  type SyscallName,
  syscallNumber,
} from "../src/sandbox/seccomp/mod.ts";
import { probeRoot } from "../src/sandbox/mod.ts";
import { withTempDir } from "./_helpers.ts";

const ARCH = seccompArchFor(Deno.build.arch);
const FILTER = compileSeccomp(ARCH, { network: false });
/** The filter of a policy with network on (or a host socket granted): AF_UNIX sockets allowed. */
const OPEN_FILTER = compileSeccomp(ARCH, { network: true });
// `/usr` and the links into it, not `/`: a recursive bind of `/` copies root mode's attachments under
// `/run/specter`, and a launch of a test file running beside this one removing its own failed the bind
// (CI: `remount "/newroot/run/specter/mounts-…/0": Invalid argument`). See `probeRoot`.
const BWRAP_ARGS = [
  ...probeRoot(),
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--unshare-pid",
  "--die-with-parent",
];
const EPERM = ERRNO.EPERM;
const ENOSYS = ERRNO.ENOSYS;

/** Controls are meaningful only when nothing but our filter could refuse a call. */
const CONTROLS = (() => {
  const status = Deno.readTextFileSync("/proc/self/status");
  return /^Seccomp:\s+0$/m.test(status) && Deno.uid() === 0;
})();

function nr(name: SyscallName): number {
  const n = syscallNumber(name, ARCH);
  if (n === null) throw new Error(`${name} does not exist on ${ARCH}`);
  return n;
}

/** Python helpers every probe starts with: `sc(nr, *args)` → `[result, errno]`, `emit(value)`. */
const PRELUDE = `
import ctypes, errno, json, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_ulong(a & 0xFFFFFFFFFFFFFFFF) for a in args])
    return [r, ctypes.get_errno() if r == -1 else 0]
def emit(value):
    print(json.dumps(value), flush=True)
`;

/**
 * Runs `script` (after the prelude) in python3 under bwrap, with `filter` on fd 3 when given, and returns
 * the JSON value of its last stdout line.
 */
async function probe(script: string, filter: Uint8Array | null = FILTER): Promise<unknown> {
  return await withTempDir(async (dir) => {
    const python = ["python3", "-c", PRELUDE + script];
    let command: Deno.Command;
    if (filter === null) {
      command = new Deno.Command("bwrap", {
        args: [...BWRAP_ARGS, "--", ...python],
        stdout: "piped",
        stderr: "piped",
      });
    } else {
      const path = `${dir}/filter.bpf`;
      await Deno.writeFile(path, filter);
      command = new Deno.Command("bash", {
        args: ["-c", 'exec 3<"$FILTER"; exec bwrap --seccomp 3 "$@"', "bash", ...BWRAP_ARGS, "--", ...python],
        env: { FILTER: path },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      });
    }
    const { code, stdout, stderr } = await command.output();
    const out = new TextDecoder().decode(stdout).trim();
    const err = new TextDecoder().decode(stderr);
    assert.equal(code, 0, `probe failed (exit ${code}): ${err}${out}`);
    return JSON.parse(out.split("\n").pop() ?? "null");
  });
}

/** Runs a probe with the filter and, when controls are meaningful, without it. */
async function both(script: string): Promise<{ filtered: unknown; control: unknown | undefined }> {
  const filtered = await probe(script);
  const control = CONTROLS ? await probe(script, null) : undefined;
  return { filtered, control };
}

/** `filter` with every `ret ERRNO(e)` turned into `ret ERRNO(1000 + e)`: an errno only the filter returns. */
function markedFilter(filter: Uint8Array): Uint8Array {
  return encodeProgram(
    decodeProgram(filter).map((insn) => {
      const isErrno = insn.code === (BPF.RET | BPF.K) &&
        (insn.k & SECCOMP_RET.ACTION_FULL) >>> 0 === SECCOMP_RET.ERRNO;
      return isErrno ? { ...insn, k: SECCOMP_RET.ERRNO | (1000 + (insn.k & SECCOMP_RET.DATA)) } : insn;
    }),
  );
}

Deno.test("bwrap is installed (the real seccomp tests need it)", async () => {
  const { success } = await new Deno.Command("bwrap", { args: ["--version"], stdout: "null" }).output();
  assert.ok(success, "install bubblewrap: apt-get install bubblewrap");
});

Deno.test("under the filter: seccomp is on, and ordinary programs work", async () => {
  const PERSONALITY = nr("personality");
  const result = await probe(`
import subprocess, threading, socket
status = open("/proc/self/status").read()
ls = subprocess.run(["ls", "/"], capture_output=True, text=True)
box = []
t = threading.Thread(target=lambda: box.append(6 * 7)); t.start(); t.join()
pair = socket.socketpair(); pair[0].send(b"p"); paired = pair[1].recv(1).decode()
sockets = {}
for name in ["AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"]:
    try:
        socket.socket(getattr(socket, name), socket.SOCK_DGRAM).close(); sockets[name] = "ok"
    except OSError as e:
        sockets[name] = e.errno
emit({
  "seccomp": [l for l in status.splitlines() if l.startswith("Seccomp:")][0].split()[1],
  "ls": ls.returncode, "has_usr": "usr" in ls.stdout.split(), "thread": box, "personality": sc(${PERSONALITY}, 0xffffffff)[1],
  "sockets": sockets, "fork": subprocess.run(["sh", "-c", "exit 3"]).returncode, "pair": paired,
})`);
  const { sockets, ...rest } = result as { sockets: Record<string, unknown> };
  assert.deepEqual(rest, {
    seccomp: "2",
    ls: 0,
    has_usr: true,
    thread: [42], // Thread creation survives clone3 → ENOSYS by falling back to clone.
    personality: 0,
    fork: 3,
    pair: "p", // socketpair (nameless) works with network off.
  });
  // AF_INET6 may be off in the kernel (EAFNOSUPPORT); it must not be the filter refusing it.
  // AF_UNIX is refused with network off (host IPC closed): see tests/sandbox/host_ipc_test.ts.
  assert.deepEqual({ ...sockets, AF_INET6: sockets.AF_INET6 === EPERM ? EPERM : "not EPERM" }, {
    AF_UNIX: EPERM,
    AF_INET: "ok",
    AF_INET6: "not EPERM",
    AF_NETLINK: "ok",
  });
});

Deno.test("every rule in the table is enforced by the real kernel", async () => {
  // All-ones arguments are invalid for every one of these calls (bad fd, bad pointer, bad flags), so
  // even a call the filter failed to stop would do nothing. The marked filter returns 1000 + errno,
  // which no kernel code path returns: a match can only come from the filter.
  const rules = rulesFor(SECCOMP_RULES, { network: false }).filter((r) =>
    syscallNumber(r.syscall, ARCH) !== null
  );
  const calls = rules.map((r) => `"${r.syscall}": sc(${nr(r.syscall)}, ${deniedArgs(r).join(", ")})`);
  const result = await probe(`emit({${calls.join(", ")}})`, markedFilter(FILTER)) as Record<string, unknown>;
  for (const rule of rules) {
    assert.deepEqual(result[rule.syscall], [-1, 1000 + ERRNO[rule.action]], rule.syscall);
  }
  // The rules only the open filter (network on, or a host socket granted) has.
  const open = rulesFor(SECCOMP_RULES, { network: true }).filter((r) => r.when === "unix_open");
  assert.ok(open.length > 0);
  const openCalls = open.map((r) => `"${r.syscall}": sc(${nr(r.syscall)}, ${deniedArgs(r).join(", ")})`);
  const opened = await probe(`emit({${openCalls.join(", ")}})`, markedFilter(OPEN_FILTER)) as Record<
    string,
    unknown
  >;
  for (const rule of open) {
    assert.deepEqual(opened[rule.syscall], [-1, 1000 + ERRNO[rule.action]], rule.syscall);
  }
});

/** Six arguments meeting the rule's condition: all ones, except the filtered one where that does not. */
function deniedArgs(rule: SeccompRule): string[] {
  const args = ["-1", "-1", "-1", "-1", "-1", "-1"];
  const condition = rule.condition;
  if (condition === undefined) return args;
  switch (condition.kind) {
    case "any_bit_set":
      break; // All ones has every bit set.
    case "equals_any":
      args[condition.arg] = String(condition.values[0]?.value);
      break;
    case "equals_none": {
      const listed = new Set(condition.values.map((v) => v.value));
      const outside = [0xffffffff, 0x7ffffffe, 8].find((v) => !listed.has(v));
      args[condition.arg] = String(outside);
      break;
    }
    default: {
      const unknown: never = condition;
      throw new Error(`Unknown condition ${JSON.stringify(unknown)}`);
    }
  }
  return args;
}

Deno.test("unshare(CLONE_NEWUSER) fails with EPERM", async () => {
  const { filtered, control } = await both(`emit(sc(${nr("unshare")}, 0x10000000))`);
  assert.deepEqual(filtered, [-1, EPERM]);
  if (control !== undefined) assert.deepEqual(control, [0, 0]);
});

Deno.test("clone(CLONE_NEWUSER) fails with EPERM; a plain fork works", async () => {
  // No control: without the filter the raw clone would fork the interpreter.
  const result = await probe(`
r = sc(${nr("clone")}, 0x10000000 | 17, 0, 0, 0, 0)
pid = os.fork()
if pid == 0:
    os._exit(7)
emit({"clone_newuser": r, "fork": os.waitpid(pid, 0)[1] >> 8})`);
  assert.deepEqual(result, { clone_newuser: [-1, EPERM], fork: 7 });
});

Deno.test("ptrace(PTRACE_TRACEME) fails with EPERM", async () => {
  // From a forked child, so the would-be tracer is python itself (same credentials), not bwrap's pid 1.
  const { filtered, control } = await both(`
rfd, wfd = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(wfd, json.dumps(sc(${nr("ptrace")}, 0, 0, 0, 0)).encode())
    os._exit(0)
os.close(wfd)
os.waitpid(pid, 0)
emit(json.loads(os.read(rfd, 100)))`);
  assert.deepEqual(filtered, [-1, EPERM]);
  if (control !== undefined) assert.deepEqual(control, [0, 0]);
});

Deno.test("ioctl(0, TIOCSTI) fails with EPERM, not ENOTTY: seccomp runs before the ioctl's own checks", async () => {
  // fd 0 is /dev/null here, so the kernel's TIOCSTI handler would say ENOTTY; the filter answers first.
  const { filtered, control } = await both(`
c = ctypes.create_string_buffer(b"x")
emit([sc(${
    nr("ioctl")
  }, 0, cmd, ctypes.addressof(c)) for cmd in [0x5412, 0x100005412, 0xFFFFFFFF00005412, 0x541C]])`);
  assert.deepEqual(filtered, [[-1, EPERM], [-1, EPERM], [-1, EPERM], [-1, EPERM]]);
  if (control !== undefined) {
    const ENOTTY = 25;
    assert.deepEqual(control, [[-1, ENOTTY], [-1, ENOTTY], [-1, ENOTTY], [-1, ENOTTY]]);
  }
});

Deno.test("TIOCSTI on a real terminal injects nothing, also with high bits set; other ioctls work", async () => {
  const { filtered, control } = await both(`
import fcntl, struct, termios, tty
m, s = os.openpty()
tty.setraw(s)
c = ctypes.create_string_buffer(b"x")
sti = [sc(${
    nr("ioctl")
  }, s, cmd, ctypes.addressof(c))[1] for cmd in [0x5412, 0x100005412, 0xFFFFFFFF00005412]]
queued = struct.unpack("i", fcntl.ioctl(s, termios.FIONREAD, b"\\0" * 4))[0]
fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
rows, cols = struct.unpack("HHHH", fcntl.ioctl(s, termios.TIOCGWINSZ, b"\\0" * 8))[:2]
emit({"tiocsti": sti, "queued": queued, "tcgets": len(termios.tcgetattr(s)), "winsize": [rows, cols]})`);
  assert.deepEqual(filtered, { tiocsti: [EPERM, EPERM, EPERM], queued: 0, tcgets: 7, winsize: [30, 100] });
  // Without the filter root injects three bytes, the high-bit variants included (the kernel truncates
  // the command to 32 bits): exactly what CVE-2019-10063 was about.
  if (control !== undefined) {
    assert.deepEqual(control, { tiocsti: [0, 0, 0], queued: 3, tcgets: 7, winsize: [30, 100] });
  }
});

Deno.test("io_uring_setup fails with EPERM", async () => {
  const { filtered, control } = await both(`
params = ctypes.create_string_buffer(120)
r = sc(${nr("io_uring_setup")}, 1, ctypes.addressof(params))
if r[0] >= 0: os.close(r[0])
emit(r[1])`);
  assert.equal(filtered, EPERM);
  const disabled = (() => {
    try {
      return Deno.readTextFileSync("/proc/sys/kernel/io_uring_disabled").trim() !== "0";
    } catch {
      return false; // No sysctl: io_uring is enabled (or absent, which the control would show as ENOSYS).
    }
  })();
  if (control !== undefined && !disabled) assert.equal(control, 0);
});

const SOCKET_FAMILIES = `
def family(f, t):
    r = sc(${nr("socket")}, f, t, 0)
    if r[0] >= 0: os.close(r[0])
    return "ok" if r[0] >= 0 else r[1]
emit({"packet": family(17, 3), "packet_high": family(0x100000011, 3), "inet": family(2, 1), "unix": family(1, 1),
      "unix_high": family(0x100000001, 1), "unix_dgram": family(1, 2), "unix_seq": family(1, 0x80805)})`;

Deno.test("network on: socket(AF_PACKET) fails with EPERM; AF_INET and AF_UNIX work", async () => {
  const filtered = await probe(SOCKET_FAMILIES, OPEN_FILTER);
  assert.deepEqual(filtered, {
    packet: EPERM,
    packet_high: EPERM,
    inet: "ok",
    unix: "ok",
    unix_high: "ok",
    unix_dgram: "ok",
    unix_seq: "ok",
  });
});

Deno.test("network off: socket(AF_PACKET) and socket(AF_UNIX) fail with EPERM (every type); AF_INET works", async () => {
  const { filtered, control } = await both(SOCKET_FAMILIES);
  assert.deepEqual(filtered, {
    packet: EPERM,
    packet_high: EPERM,
    inet: "ok",
    unix: EPERM,
    unix_high: EPERM,
    unix_dgram: EPERM,
    unix_seq: EPERM,
  });
  if (control !== undefined) {
    assert.deepEqual(control, {
      packet: "ok",
      packet_high: "ok",
      inet: "ok",
      unix: "ok",
      unix_high: "ok",
      unix_dgram: "ok",
      unix_seq: "ok",
    });
  }
});

Deno.test("clone3 fails with ENOSYS, and so does the new mount API", async () => {
  const { filtered, control } = await both(`
emit({"clone3": sc(${nr("clone3")}, 0, 0)[1], "fsopen": sc(${nr("fsopen")}, -1, 0)[1],
      "open_tree": sc(${nr("open_tree")}, -1, -1, 0)[1], "mount_setattr": sc(${
    nr("mount_setattr")
  }, -1, 0, 0, 0, 0)[1]})`);
  assert.deepEqual(filtered, { clone3: ENOSYS, fsopen: ENOSYS, open_tree: ENOSYS, mount_setattr: ENOSYS });
  // Without the filter the kernel has these calls and rejects the bad arguments instead.
  if (control !== undefined) {
    for (const [name, errno] of Object.entries(control as Record<string, number>)) {
      assert.ok(errno !== ENOSYS && errno !== 0, `${name}: ${errno}`);
    }
  }
});

Deno.test("personality: PER_LINUX and the query work, other personas fail with EPERM", async () => {
  const { filtered, control } = await both(`
p = ${nr("personality")}
emit({"query": sc(p, 0xffffffff)[1], "linux": sc(p, 0)[1], "no_aslr": sc(p, 0x0040000)[1]})`);
  assert.deepEqual(filtered, { query: 0, linux: 0, no_aslr: EPERM });
  if (control !== undefined) assert.deepEqual(control, { query: 0, linux: 0, no_aslr: 0 });
});
