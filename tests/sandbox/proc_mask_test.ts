/**
 * Class 6 (/proc tells the host's secrets) and the scratch tmpfs sizes (class 7), against real bwrap
 * sandboxes: every masked path present on the host reads as nothing inside, while the sandbox's own
 * /proc keeps working; /tmp and /dev/shm are bounded (writing past the size fails with ENOSPC) and /dev
 * cannot be filled instead.
 */
import assert from "node:assert/strict";
import { MASKED_PATHS } from "../../src/sandbox/masks.ts";
import { DEFAULT_TMPFS_BYTES } from "../../src/sandbox/scratch.ts";
import { sessionTest } from "../_helpers.ts";
import { policyOf, PYTHON, results, runSandboxed } from "./_sandbox.ts";

function hostHas(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false; // Not on this host: nothing to leak.
  }
}

/** Python that prints `RESULT <path> <what it got>` for each path: bytes read, entries listed, or errno. */
function probeScript(paths: readonly string[]): string {
  return [
    "import os",
    "def probe(p):",
    "    try:",
    "        if os.path.isdir(p): return 'entries=%d' % len(os.listdir(p))",
    "        with open(p, 'rb') as f: return 'bytes=%d' % len(f.read(1 << 20))",
    "    except OSError as e: return 'errno=%d' % e.errno",
    ...paths.map((p) => `print('RESULT', ${JSON.stringify(p)}, probe(${JSON.stringify(p)}), flush=True)`),
  ].join("\n");
}

sessionTest("every masked /proc and /sys path present on the host reads as nothing inside", async () => {
  // Read-only trees are shown (read-only); every other entry is hidden.
  const present = MASKED_PATHS.filter((m) => m.kind !== "read_only" && hostHas(m.path)).map((m) => m.path);
  assert.ok(present.includes("/proc/cmdline"), "every Linux host has /proc/cmdline");
  const { text } = await runSandboxed([PYTHON, "-c", probeScript(present)], policyOf({}));
  const got = results(text);
  for (const path of present) {
    const value = got[path];
    assert.ok(value !== undefined, `${path} was probed: ${text}`);
    // Unreadable (the /dev/null bind is nodev: EACCES), absent (/sys) or empty: nothing of the host's.
    assert.match(value, /^(errno=(13|2)|bytes=0|entries=0)$/, `${path}: ${value}`);
  }
});

sessionTest(
  "read-only /proc trees: a writable file of each takes no write inside, even of its own value",
  async () => {
    const targets: Record<string, { path: string; value: string }> = {};
    for (const mask of MASKED_PATHS.filter((m) => m.kind === "read_only" && hostHas(m.path))) {
      // The first file beneath it that its owner may write (sysctls, IRQ affinity, statistics).
      const found = await new Deno.Command("find", {
        args: [mask.path, "-maxdepth", "3", "-type", "f", "-perm", "-u=w", "-readable", "-print", "-quit"],
        stdout: "piped",
        stderr: "null",
      }).output();
      const path = new TextDecoder().decode(found.stdout).trim();
      if (path === "") continue;
      let value = "";
      try {
        value = await Deno.readTextFile(path);
      } catch {
        continue; // Unreadable (a write-only control): nothing to put back.
      }
      targets[mask.path] = { path, value };
    }
    assert.ok(targets["/proc/sys"] !== undefined, "every Linux host has writable sysctls");
    const script = [
      "def attempt(name, path, data):",
      "    try:",
      "        with open(path, 'w') as f: f.write(data)",
      "        print('RESULT', name, 'written', flush=True)",
      "    except OSError as e: print('RESULT', name, e.errno, flush=True)",
      ...Object.entries(targets).map(([tree, { path, value }]) =>
        `attempt(${JSON.stringify(tree)}, ${JSON.stringify(path)}, ${JSON.stringify(value)})`
      ),
    ].join("\n");
    const { text } = await runSandboxed([PYTHON, "-c", script], policyOf({}));
    const got = results(text);
    for (const tree of Object.keys(targets)) {
      // EROFS as root (the tree is read-only); EACCES/EPERM for anyone else.
      assert.match(got[tree] ?? "", /^(30|13|1)$/, `${tree} (${targets[tree]!.path}): ${text}`);
    }
  },
);

sessionTest("the attack: read the kernel command line and config every way an attacker would", async () => {
  const host = (await Deno.readTextFile("/proc/cmdline")).trim();
  const script = [
    "import os, gzip",
    "for p in ['/proc/cmdline', '/proc/1/../cmdline', '/proc/self/root/proc/cmdline', '//proc//cmdline']:",
    "    try: print('GOT', open(p).read().strip() or '<empty>', flush=True)",
    "    except OSError as e: print('DENIED', p, e.errno, flush=True)",
    "try: print('CONFIG', len(gzip.open('/proc/config.gz').read()), flush=True)",
    "except OSError as e: print('DENIED config', e.errno, flush=True)",
    // A mount of its own over the mask is refused (no capabilities, mount/umount2 in seccomp).
    "import ctypes; libc = ctypes.CDLL(None, use_errno=True)",
    "r = libc.umount2(b'/proc/cmdline', 2); print('UMOUNT', r, ctypes.get_errno(), flush=True)",
  ].join("\n");
  const { text } = await runSandboxed([PYTHON, "-c", script], policyOf({}));
  assert.ok(host.length > 0 && !text.includes(host), text);
  assert.doesNotMatch(text, /GOT (?!<empty>)/, text);
  assert.doesNotMatch(text, /CONFIG \d/, text);
  assert.match(text, /UMOUNT -1 1\b/, text);
});

sessionTest(
  "the attack: the sandbox's init (bwrap) and the host's boot id, every way an attacker would",
  async () => {
    const bootId = (await Deno.readTextFile("/proc/sys/kernel/random/boot_id")).trim();
    const script = [
      "import os, subprocess",
      "def attempt(name, fn):",
      "    try: print('RESULT', name, 'ok:' + repr(fn())[:60].replace(' ', '_'), flush=True)",
      "    except OSError as e: print('RESULT', name, 'errno=%d' % e.errno, flush=True)",
      "attempt('readlink', lambda: os.readlink('/proc/1/exe'))",
      "attempt('read', lambda: open('/proc/1/exe', 'rb').read(4))",
      "attempt('exec', lambda: subprocess.run(['/proc/1/exe', '--version'], capture_output=True).stdout)",
      "attempt('via_self', lambda: os.readlink('/proc/self/../1/exe'))",
      "attempt('cmdline', lambda: open('/proc/1/cmdline', 'rb').read())",
      "attempt('environ', lambda: open('/proc/1/environ', 'rb').read())",
      "attempt('maps', lambda: open('/proc/1/maps').read())",
      "attempt('entries', lambda: len(os.listdir('/proc/1')))",
      "attempt('parent', lambda: os.getppid())",
      "attempt('bwrap', lambda: os.path.exists('/usr/bin/bwrap'))",
      "attempt('boot_id', lambda: open('/proc/sys/kernel/random/boot_id').read())",
      "attempt('boot_id_fd', lambda: os.read(os.open('/proc/sys/kernel/random/boot_id', os.O_RDONLY), 64))",
      // Another boot id is random per read (and so not the host's): left as it is.
      "attempt('uuid', lambda: len(open('/proc/sys/kernel/random/uuid').read()))",
      "print(open('/proc/self/mountinfo').read(), flush=True)",
    ].join("\n");
    // The bare policy: only the program (python) is bound, no bwrap anywhere.
    const { text } = await runSandboxed([PYTHON, "-c", script], policyOf({}));
    const got = results(text);
    for (const name of ["readlink", "read", "exec", "via_self", "cmdline", "environ", "maps"]) {
      assert.equal(got[name], "errno=2", `${name}: ${text}`); // ENOENT: /proc/1 is an empty directory
    }
    assert.equal(got.entries, "ok:0", text);
    assert.equal(got.parent, "ok:1", text); // Its parent is still the init: only what it shows is gone.
    assert.equal(got.bwrap, "ok:False", text);
    assert.equal(got.boot_id, "errno=13", text); // EACCES: a nodev /dev/null bind
    assert.equal(got.boot_id_fd, "errno=13", text);
    assert.equal(got.uuid, "ok:37", text);
    assert.ok(bootId.length === 36 && !text.includes(bootId), text);
    assert.doesNotMatch(text, /bubblewrap|--unshare|ELF/, text);
    // Both covers are mounts of their own, read-only: the program cannot write through them.
    assert.match(text, / \/proc\/1 ro,.* - tmpfs /, text);
    assert.match(text, / \/proc\/sys\/kernel\/random\/boot_id ro,/, text);
  },
);

sessionTest("the sandbox's own /proc still works: self status, fds, meminfo, cpuinfo, sysctls", async () => {
  const paths = ["/proc/self/status", "/proc/self/maps", "/proc/meminfo", "/proc/cpuinfo", "/proc/uptime"];
  const script = probeScript([...paths, "/proc/self/fd", "/proc/sys/kernel/hostname"]) + "\n" +
    "try: open('/proc/sys/kernel/hostname', 'w').write('x'); print('RESULT write ok')\n" +
    "except OSError as e: print('RESULT write', e.errno)";
  const { text } = await runSandboxed([PYTHON, "-c", script], policyOf({}));
  const got = results(text);
  for (const path of paths) assert.match(got[path] ?? "", /^bytes=[1-9]/, `${path}: ${text}`);
  assert.match(got["/proc/self/fd"] ?? "", /^entries=[1-9]/, text);
  assert.equal(got["/proc/sys/kernel/hostname"], "bytes=8", text); // "specter\n", the sandbox's own
  assert.match(got.write ?? "", /^(13|30|1)$/, text); // EACCES/EROFS/EPERM: sysctls stay read-only
});

/** Python that fills `dir` with 1 MiB writes and reports how far it got and the errno that stopped it. */
function fillScript(dir: string, limit: number): string {
  return [
    "import os",
    "s = os.statvfs(" + JSON.stringify(dir) + "); print('RESULT size', s.f_blocks * s.f_frsize, flush=True)",
    `path, limit, total = ${JSON.stringify(`${dir}/fill`)}, ${limit}, 0`,
    "chunk = b'x' * (1 << 20)",
    "try:",
    "    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)",
    "    while total < limit: total += os.write(fd, chunk)",
    "    print('RESULT fill ok', total, flush=True)",
    "except OSError as e: print('RESULT fill', e.errno, total, flush=True)",
  ].join("\n");
}

for (const dir of ["/tmp", "/dev/shm"]) {
  sessionTest(
    `${dir} is a tmpfs of the memory budget: filling it ends in ENOSPC or the memory ceiling`,
    async () => {
      const budget = 96 * 1024 * 1024;
      const { text, t } = await runSandboxed(
        [PYTHON, "-c", fillScript(dir, 2 * budget)],
        policyOf({ budgets: { memory_bytes: budget } }),
      );
      const got = results(text);
      assert.equal(got.size, String(budget), text);
      // Without a memory cgroup the tmpfs size stops it (ENOSPC, before twice the budget was written); with
      // one, its pages count against the budget, so the memory ceiling may fire first: the sampler's
      // capsule_kill, or the kernel's charge failing the write (ENOMEM) before the sampler looked.
      const kill = t.frames.find((f) => f.type === "capsule_kill");
      if (kill === undefined) assert.match(got.fill ?? "", /^(28|12)$/, text);
      else assert.equal(kill.type === "capsule_kill" && kill.reason, "memory", text);
      assert.notEqual(got.fill, "ok", text);
    },
  );
}

sessionTest(
  "without a memory budget /tmp and /dev/shm have the default size; /dev cannot be filled",
  async () => {
    const script = [
      "import os",
      "for d in ['/tmp', '/dev/shm']:",
      "    s = os.statvfs(d); print('RESULT', d, s.f_blocks * s.f_frsize, flush=True)",
      "for p in ['/dev/fill', '/dev/pts/fill', '/proc/fill']:",
      "    try: open(p, 'w').write('x'); print('RESULT', p, 'ok', flush=True)",
      "    except OSError as e: print('RESULT', p, e.errno, flush=True)",
      "open('/dev/null', 'w').write('x'); print('RESULT null ok', flush=True)",
    ].join("\n");
    const { text } = await runSandboxed([PYTHON, "-c", script], policyOf({}));
    const got = results(text);
    assert.equal(got["/tmp"], String(DEFAULT_TMPFS_BYTES), text);
    assert.equal(got["/dev/shm"], String(DEFAULT_TMPFS_BYTES), text);
    assert.equal(got["/dev/fill"], "30", text); // EROFS
    assert.notEqual(got["/dev/pts/fill"], "ok", text);
    assert.notEqual(got["/proc/fill"], "ok", text);
    assert.equal(got.null, "ok", text);
  },
);
