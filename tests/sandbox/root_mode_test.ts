/**
 * Root mode (issue 23, item 2), against real sandboxes started by root, as CI runs them. The sandbox's
 * uid maps to its caller, root included: no host service shares its host uid (0.6 used uid 65534, which
 * `nobody` services share), what it writes through a grant is root's, and root's power is gone: no
 * capability, no supplementary group, global sysctls read-only, root-only `/proc` files masked, no TLS keys,
 * and no unix socket (whose peers would see uid 0) unless one is granted.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, sessionTest, withTempDir } from "../_helpers.ts";
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
  "root mode: the sandbox is host uid 0 (the caller), and a nobody service cannot read its environ",
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
      assert.match(status, /^Uid:\t0\t0\t0\t0$/m, status);
      assert.match(status, /^Gid:\t0\t0\t0\t0$/m, status);
      // The caller (root) can read it; a host process running as the old sandbox uid cannot.
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

rootTest("root mode: a workspace write lands owned by root; a nobody service cannot reach it", async () => {
  await withHostDir(async (dir) => {
    // withHostDir's directory is root's and 0700, as `mktemp -d` makes it.
    assert.equal(Deno.statSync(dir).mode! & 0o777, 0o700);
    const { code, stderr } = await runCli(
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
        "echo made > out.txt && mkdir sub",
      ],
    );
    assert.equal(code, 0, stderr);
    const file = Deno.statSync(join(dir, "out.txt"));
    assert.equal(file.uid, 0);
    assert.equal(file.gid, 0);
    assert.equal(Deno.statSync(join(dir, "sub")).uid, 0);
    assert.equal(Deno.readTextFileSync(join(dir, "out.txt")), "made\n");
    const peek = await asNobody(["cat", join(dir, "out.txt")]);
    assert.notEqual(peek.code, 0, peek.out);
  });
});

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
      assert.throws(() => Deno.statSync(join(layer, ".bashrc")));
    } finally {
      await cleanUp(daemon);
    }
  });
});

rootTest("root mode: global sysctls and IRQs read-only, root-only /proc files masked", async () => {
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
  assert.equal(got.core_pattern, "30", text); // EROFS
  assert.equal(got.irq, "30", text);
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

rootTest("root mode with network on: no TLS private keys, no unix socket unless one is granted", async () => {
  const script = [
    "import os, socket",
    "print('RESULT ssl_private', os.path.exists('/etc/ssl/private'), flush=True)",
    "print('RESULT certs', os.path.isdir('/etc/ssl/certs'), flush=True)",
    "try: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); print('RESULT unix ok', flush=True)",
    "except OSError as e: print('RESULT unix', e.errno, flush=True)",
    "try: socket.socket(socket.AF_INET, socket.SOCK_STREAM); print('RESULT inet ok', flush=True)",
    "except OSError as e: print('RESULT inet', e.errno, flush=True)",
  ].join("\n");
  const { text } = await runSandboxed(
    [PYTHON, "-c", script],
    policyOf({ network: "on" }, { unsafeWrite: false, network: true }),
  );
  const got = results(text);
  assert.equal(got.ssl_private, "False", text);
  assert.equal(got.certs, "True", text);
  assert.equal(got.unix, "1", text); // EPERM from seccomp: every unix peer would see uid 0
  assert.equal(got.inet, "ok", text);
});
