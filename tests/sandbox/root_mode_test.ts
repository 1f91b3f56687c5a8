/**
 * Root mode (issue 23, item 2), against real sandboxes started by root, as CI runs them. The sandbox gets a
 * host uid of its own (0.6 used 65534, which `nobody` services share; uid 0 would be the uid of every root
 * service, and carries uid 0's powers over device nodes, sysctls, leases and peers): no host process reads
 * its environment or its persistent home, no capability or group of root's reaches it, and what it writes
 * through a grant is root's (idmapped mounts), never with a setuid or setgid bit.
 */
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { runCli, sessionTest, withTempDir } from "../_helpers.ts";
import { ATTACH_ROOT, ROOT_SANDBOX_UIDS } from "../../src/sandbox/mod.ts";
import { closeQuietly, tryLockFile } from "../../src/pty/mod.ts";
import { cleanUp, create, specter, startDaemon, whereArgs } from "../_daemon.ts";
import { policyOf, PYTHON, results, runSandboxed, withHostDir } from "./_sandbox.ts";

const ROOT_ONLY = Deno.uid() === 0;
const AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"];

/** Runs `argv` as host uid 65534 (a `nobody` service); its exit code and output. */
async function asNobody(argv: string[]): Promise<{ code: number; out: string }> {
  const out = await new Deno.Command(AS_NOBODY[0]!, {
    args: [...AS_NOBODY.slice(1), ...argv],
    stderr: "piped",
  })
    .output();
  const decoder = new TextDecoder();
  return { code: out.code, out: decoder.decode(out.stdout) + decoder.decode(out.stderr) };
}

/** The host pid of the process whose command line contains `marker` (waits up to 10 s). */
async function pidOf(marker: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    for (const entry of Deno.readDirSync("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      try {
        const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
        if (cmdline[0]?.endsWith("/sleep") && cmdline[1] === marker) return Number(entry.name);
      } catch {
        // Gone meanwhile.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`No process "sleep ${marker}"`);
}

function rootTest(name: string, fn: () => Promise<void>): void {
  if (!ROOT_ONLY) {
    Deno.test({ name, ignore: true, fn: () => {} });
    return;
  }
  sessionTest(name, fn, 60_000);
}

rootTest(
  "root mode: the sandbox has a host uid of its own, and a nobody service cannot read its environ",
  async () => {
    const marker = `${5000 + Math.floor(Math.random() * 1000)}.25`;
    const cli = runCli([
      "exec",
      "--policy",
      "basic",
      "--timeout",
      "20s",
      "--env",
      "API_TOKEN=s3cret-root-mode",
      "--",
      "/usr/bin/sleep",
      marker,
    ]);
    const pid = await pidOf(marker);
    try {
      const status = Deno.readTextFileSync(`/proc/${pid}/status`);
      const uid = Number(/^Uid:\t(\d+)\t\1\t\1\t\1$/m.exec(status)?.[1]);
      assert.ok(
        uid >= ROOT_SANDBOX_UIDS.first && uid < ROOT_SANDBOX_UIDS.first + ROOT_SANDBOX_UIDS.count,
        status,
      );
      assert.match(status, new RegExp(`^Gid:\\t${uid}\\t${uid}\\t${uid}\\t${uid}$`, "m"), status);
      // No account has it.
      const accounts = Deno.readTextFileSync("/etc/passwd").split("\n").map((line) =>
        Number(line.split(":")[2])
      );
      assert.ok(!accounts.includes(uid), `${uid} is an account's`);
      // The caller (root) can read it; a host process running as 0.6's sandbox uid cannot.
      assert.match(Deno.readTextFileSync(`/proc/${pid}/environ`), /API_TOKEN=s3cret-root-mode/);
      const environ = await asNobody(["cat", `/proc/${pid}/environ`]);
      assert.notEqual(environ.code, 0, environ.out);
      assert.doesNotMatch(environ.out, /s3cret/);
      assert.match(environ.out, /Permission denied/);
      // Nor its memory, its descriptors or its working directory.
      for (const what of ["mem", "fd", "cwd", "root"]) {
        const probe = await asNobody(["ls", "-l", `/proc/${pid}/${what}/`]);
        assert.notEqual(probe.code, 0, `${what}: ${probe.out}`);
      }
    } finally {
      Deno.kill(pid, "SIGKILL");
      await cli;
    }
  },
);

rootTest("root mode: every capability dropped, no new privileges, none of root's groups", async () => {
  // Root with supplementary groups (disk, adm): bwrap would hand them on; setpriv --clear-groups does not.
  const script =
    'while read -r k v; do case "$k" in Cap*|NoNewPrivs:|Groups:|Uid:|Gid:) echo "$k [$v]";; esac; ' +
    "done < /proc/self/status";
  const out = await new Deno.Command("setpriv", {
    args: [
      "--groups",
      "4,6",
      "--",
      Deno.execPath(),
      "run",
      "-A",
      join(new URL("../..", import.meta.url).pathname, "main.ts"),
      "exec",
      "--policy",
      "basic",
      "--timeout",
      "10s",
      "--",
      "/bin/sh",
      "-c",
      script,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const result = JSON.parse(new TextDecoder().decode(out.stdout)) as { output: string; exit_code: number };
  assert.equal(result.exit_code, 0, result.output);
  for (const cap of ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"]) {
    assert.match(result.output, new RegExp(`^${cap}: \\[0000000000000000\\]$`, "m"), result.output);
  }
  assert.match(result.output, /^NoNewPrivs: \[1\]$/m);
  assert.match(result.output, /^Groups: \[\]$/m, "no supplementary group reaches the sandbox");
  assert.match(result.output, /^Uid: \[65534\t65534\t65534\t65534\]$/m, "inside, the program is 65534");
});

rootTest(
  "root mode: a workspace write lands owned by root, never setuid; no nobody process reaches it",
  async () => {
    await withHostDir(async (dir) => {
      // withHostDir's directory is root's and 0700, as `mktemp -d` makes it.
      assert.equal(Deno.statSync(dir).mode! & 0o777, 0o700);
      Deno.writeTextFileSync(join(dir, "own"), "root-only\n", { mode: 0o600 });
      const { code, stdout, stderr } = await runCli(
        [
          "exec",
          "--policy",
          "workspace",
          "--ack-unsafe-write",
          "--cwd",
          dir,
          "--timeout",
          "10s",
          "--",
          "/bin/sh",
          "-c",
          // Root's own 0600 file in the grant is readable (the grant is the caller's); no setuid bit is set.
          "echo made > out.txt && mkdir sub && cat own && cp /usr/bin/id suid && " +
          "{ chmod 4755 suid 2>/dev/null && echo SETUID_SET || echo SETUID_REFUSED; } && " +
          "{ chmod 0600 /dev/null 2>/dev/null && echo DEVICE_CHMOD || echo DEVICE_REFUSED; }",
        ],
      );
      assert.equal(code, 0, stderr);
      const { output } = JSON.parse(stdout) as { output: string };
      assert.match(output, /^root-only$/m, output);
      assert.match(output, /SETUID_REFUSED/, output);
      assert.match(output, /DEVICE_REFUSED/, output);
      assert.equal(Deno.statSync(join(dir, "suid")).mode! & 0o7777, 0o755);
      assert.equal(Deno.statSync("/dev/null").mode! & 0o777, 0o666);
      // The idmapped clones bwrap bound were detached from the host once it had them. (Only this run's: other
      // root launches of the test suite may be attaching theirs right now.)
      const ours = Deno.readTextFileSync("/proc/self/mountinfo").split("\n").filter((line) =>
        line.includes(`${ATTACH_ROOT}/mounts-`) && (line.split(" ")[3] ?? "").endsWith(`/${basename(dir)}`)
      );
      assert.deepEqual(ours, []);
      // Their directory is root's, passable by the sandbox's gid alone.
      const root = Deno.statSync(ATTACH_ROOT);
      assert.equal(root.uid, 0);
      assert.equal(root.mode! & 0o777, 0o710);
      assert.ok(root.gid! >= ROOT_SANDBOX_UIDS.first, `group ${root.gid}`);
      const file = Deno.statSync(join(dir, "out.txt"));
      assert.equal(file.uid, 0);
      assert.equal(file.gid, 0);
      assert.equal(Deno.statSync(join(dir, "sub")).uid, 0);
      assert.equal(Deno.readTextFileSync(join(dir, "out.txt")), "made\n");
      const peek = await asNobody(["cat", join(dir, "out.txt")]);
      assert.notEqual(peek.code, 0, peek.out);
    });
  },
);

rootTest("root mode: persistent homes are root's alone (0700), out of a nobody service's reach", async () => {
  await withTempDir(async (dir) => {
    const daemon = await startDaemon(dir);
    try {
      await create(daemon, "home", ["/bin/sh", "-c", 'echo persisted-secret > "$HOME/secret"; sleep 30'], [
        "--persist",
      ]);
      const ls = await specter(["ls", ...whereArgs(daemon), "--json"]);
      const layer = JSON.parse(ls.stdout.trim()).persist as string;
      let found = false;
      for (let i = 0; i < 200 && !found; i++) {
        try {
          found = Deno.statSync(join(layer, "secret")).isFile;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      assert.ok(found, "the program wrote its home");
      assert.ok(!layer.startsWith("/var/lib/specter"), layer);
      for (const path of [layer, join(layer, "..")]) {
        const info = Deno.statSync(path);
        assert.equal(info.uid, 0, path);
        assert.equal(info.mode! & 0o777, 0o700, path);
      }
      assert.equal(Deno.statSync(join(layer, "secret")).uid, 0);
      const read = await asNobody(["cat", join(layer, "secret")]);
      assert.notEqual(read.code, 0, read.out);
      assert.doesNotMatch(read.out, /persisted-secret/);
      const write = await asNobody(["sh", "-c", `echo planted > ${join(layer, ".bashrc")}`]);
      assert.notEqual(write.code, 0, write.out);
      // (Specter made it empty: a persistent home's start-up files are the user's, read-only inside.)
      assert.equal(Deno.readTextFileSync(join(layer, ".bashrc")), "");
    } finally {
      await cleanUp(daemon);
    }
  });
});

rootTest("root mode: global sysctls and IRQs unwritable, root-only /proc files unreadable", async () => {
  const core = Deno.readTextFileSync("/proc/sys/kernel/core_pattern");
  const affinity = Deno.readTextFileSync("/proc/irq/default_smp_affinity");
  // Each write puts back the value the file already holds: were it to go through, nothing would change.
  const script = [
    "import os",
    "def attempt(name, path, data):",
    "    try:",
    "        with open(path, 'w') as f: f.write(data)",
    "        print('RESULT', name, 'written', flush=True)",
    "    except OSError as e: print('RESULT', name, e.errno, flush=True)",
    `attempt('core_pattern', '/proc/sys/kernel/core_pattern', ${JSON.stringify(core)})`,
    `attempt('irq', '/proc/irq/default_smp_affinity', ${JSON.stringify(affinity)})`,
    "for p in ['/proc/kpageflags', '/proc/slabinfo', '/proc/vmallocinfo', '/proc/pagetypeinfo', '/proc/kmsg']:",
    "    try:",
    "        with open(p, 'rb') as f: print('RESULT', p, 'bytes=%d' % len(f.read(4096)), flush=True)",
    "    except OSError as e: print('RESULT', p, e.errno, flush=True)",
  ].join("\n");
  const { text } = await runSandboxed([PYTHON, "-c", script], policyOf({}));
  const got = results(text);
  // Read-only (EROFS) besides: the sandbox's uid is not root's (EACCES).
  assert.match(got.core_pattern ?? "", /^(30|13)$/, text);
  assert.match(got.irq ?? "", /^(30|13)$/, text);
  for (
    const path of [
      "/proc/kpageflags",
      "/proc/slabinfo",
      "/proc/vmallocinfo",
      "/proc/pagetypeinfo",
      "/proc/kmsg",
    ]
  ) {
    assert.match(got[path] ?? "", /^(13|2|bytes=0)$/, `${path}: ${text}`);
  }
  assert.equal(Deno.readTextFileSync("/proc/sys/kernel/core_pattern"), core);
});

rootTest(
  "root mode with network on: no TLS private keys; a unix peer sees the sandbox's uid, not root",
  async () => {
    const script = [
      "import os, socket",
      "print('RESULT ssl_private', os.path.exists('/etc/ssl/private'), flush=True)",
      "print('RESULT certs', os.path.isdir('/etc/ssl/certs'), flush=True)",
      "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
      "try: s.connect('\\0specter-root-mode-peer'); print('RESULT unix ok', flush=True)",
      "except OSError as e: print('RESULT unix', e.errno, flush=True)",
      "try: socket.socket(socket.AF_INET, socket.SOCK_STREAM); print('RESULT inet ok', flush=True)",
      "except OSError as e: print('RESULT inet', e.errno, flush=True)",
    ].join("\n");
    // A host service on an abstract socket in the host's network namespace, which trusts uid 0.
    const peer = new Deno.Command(PYTHON, {
      args: [
        "-c",
        "import socket, struct\n" +
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind('\\0specter-root-mode-peer'); s.listen(1)\n" +
        "print('ready', flush=True)\n" +
        "c, _ = s.accept(); pid, uid, gid = struct.unpack('3i', c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))\n" +
        "print('peer uid', uid, flush=True)",
      ],
      stdout: "piped",
    }).spawn();
    const reader = peer.stdout.pipeThrough(new TextDecoderStream()).getReader();
    assert.match((await reader.read()).value ?? "", /ready/);
    const { text } = await runSandboxed(
      [PYTHON, "-c", script],
      policyOf({ network: "on" }, { unsafeWrite: false, network: true }),
    );
    const got = results(text);
    assert.equal(got.ssl_private, "False", text);
    assert.equal(got.certs, "True", text);
    assert.equal(got.unix, "ok", text);
    assert.equal(got.inet, "ok", text);
    let seen = "";
    while (!/peer uid \d+/.test(seen)) seen += (await reader.read()).value ?? "";
    const uid = Number(/peer uid (\d+)/.exec(seen)![1]);
    assert.ok(uid >= ROOT_SANDBOX_UIDS.first, `the peer saw uid ${uid}`);
    reader.releaseLock();
    await peer.status;
  },
);

rootTest(
  "root mode: a mount nested in a grant is there inside; a dead launch's attachments are swept, never deleted through",
  async () => {
    await withHostDir(async (dir) => {
      // A tmpfs mounted inside a read grant, holding a file the program must see (the clone is recursive).
      Deno.mkdirSync(join(dir, "nested"));
      Deno.writeTextFileSync(join(dir, "nested", "underneath.txt"), "shadowed\n");
      const mounted = await new Deno.Command("mount", { args: ["-t", "tmpfs", "tmpfs", join(dir, "nested")] })
        .output();
      assert.ok(mounted.success);
      const stale = `${ATTACH_ROOT}/mounts-deadbeef`;
      try {
        Deno.writeTextFileSync(join(dir, "nested", "mounted.txt"), "on-the-tmpfs\n");
        // A dead launch's directory: its lock unheld, a point still a bind of a directory with a file in it.
        // Made as a launch makes its own (locked under another name, then renamed) and let go only once the
        // bind is there: the launches of test files running beside this one sweep dead launches too, and
        // took it half made (CI: the bind found no mount point).
        const keep = join(dir, "keep");
        Deno.mkdirSync(keep);
        Deno.writeTextFileSync(join(keep, "precious.txt"), "keep me\n");
        Deno.mkdirSync(stale, { recursive: true });
        const lock = tryLockFile(`${stale}/lock.new`);
        assert.notEqual(lock, null);
        try {
          Deno.renameSync(`${stale}/lock.new`, `${stale}/lock`);
          Deno.mkdirSync(`${stale}/0`);
          const bound = await new Deno.Command("mount", { args: ["--bind", keep, `${stale}/0`] }).output();
          assert.ok(bound.success, new TextDecoder().decode(bound.stderr));
        } finally {
          closeQuietly(lock!);
        }
        const { text } = await runSandboxed(
          ["/bin/sh", "-c", `ls ${dir}/nested; cat ${dir}/nested/mounted.txt`],
          policyOf({ exec: ["/bin", "/usr/bin"], fs: { read: [dir] } }),
        );
        assert.match(text, /on-the-tmpfs/, text);
        assert.doesNotMatch(text, /underneath/, text);
        // Swept: detached and removed, and the directory it showed is whole.
        assert.throws(() => Deno.statSync(stale));
        assert.equal(Deno.readTextFileSync(join(keep, "precious.txt")), "keep me\n");
      } finally {
        await new Deno.Command("umount", { args: ["-l", `${stale}/0`] }).output().catch(() => null);
        await new Deno.Command("umount", { args: [join(dir, "nested")] }).output();
      }
    });
  },
);
