/**
 * The escape suite: each attempt runs under the real bwrap backend and must fail, with the host
 * unchanged. Then the positive cases: what the policy allows does work.
 */
import assert from "node:assert/strict";
import { jobControlRoundTrip, sessionTest } from "../_helpers.ts";
import {
  ERRNO,
  policyOf,
  preset,
  PYTHON,
  pythonAttempts,
  results,
  runSandboxed,
  withHostDir,
} from "./_sandbox.ts";

const SH = "/usr/bin/sh";
const ARCH_NR = `{"x86_64": {"keyctl": 250, "bpf": 321, "io_uring_setup": 425, "clone3": 435},
  "aarch64": {"keyctl": 219, "bpf": 280, "io_uring_setup": 425, "clone3": 435}}[os.uname().machine]`;

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false; // Not there, which is what these tests hope for.
  }
}

sessionTest("a host file outside the allowlist cannot be read (test file, /etc/shadow, ~/.ssh)", async () => {
  await withHostDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/secret`, "TOPSECRET");
    const home = Deno.env.get("HOME") ?? "/root";
    const script = `for f in "${dir}/secret" /etc/shadow "${home}/.ssh/id_rsa" "${home}/.bash_history"; do
      if read -r line < "$f"; then echo "READ $f"; else echo "DENIED $f"; fi; done 2>/dev/null`;
    const { text } = await runSandboxed([SH, "-c", script], preset("strict"));
    assert.ok(!text.includes("TOPSECRET") && !text.includes("READ "), text);
    assert.equal(text.match(/DENIED/g)?.length, 4, text);
  });
});

sessionTest("writes outside the write allowlist fail and leave the host unchanged", async () => {
  await withHostDir(async (dir) => {
    const { text } = await runSandboxed(
      [
        SH,
        "-c",
        `echo x > "${dir}/new" 2>/dev/null && echo WROTE || echo DENIED; echo y > /etc/evil 2>/dev/null || echo DENIED2`,
      ],
      preset("strict"),
    );
    assert.match(text, /DENIED[\s\S]*DENIED2/);
    assert.ok(!(await exists(`${dir}/new`)) && !(await exists("/etc/evil")));
  });
});

sessionTest("an allowed read-only path cannot be written", async () => {
  await withHostDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/file`, "original\n");
    const policy = policyOf({ fs: { read: [dir] } });
    const { text } = await runSandboxed(
      [
        SH,
        "-c",
        `read -r l < "${dir}/file" && echo "SAW $l"; echo changed > "${dir}/file" 2>/dev/null || echo RO; echo n > "${dir}/n" 2>/dev/null || echo RO2`,
      ],
      policy,
    );
    assert.match(text, /SAW original[\s\S]*RO[\s\S]*RO2/);
    assert.equal(await Deno.readTextFile(`${dir}/file`), "original\n");
    assert.ok(!(await exists(`${dir}/n`)));
  });
});

sessionTest("a program that is not allowlisted cannot be executed", async () => {
  const { text } = await runSandboxed(
    [SH, "-c", "/usr/bin/id; echo rc=$?; /bin/ls /; echo rc=$?; /usr/bin/python3 -c 1; echo rc=$?"],
    preset("strict"),
  );
  assert.equal(text.match(/rc=127/g)?.length, 3, text);
});

sessionTest("symlinks and hard links cannot reach outside the allowlist", async () => {
  await withHostDir(async (outside) => {
    await withHostDir(async (inside) => {
      await Deno.writeTextFile(`${outside}/secret`, "TOPSECRET");
      const code = pythonAttempts({
        symlink: `os.symlink("${outside}/secret", "${inside}/link")`,
        read_link: `len(open("${inside}/link").read())`,
        hardlink: `os.link("${outside}/secret", "${inside}/hard")`,
        rename_out: `os.rename("${inside}", "${outside}/moved")`,
      });
      const policy = policyOf({ exec: [PYTHON], fs: { write: [inside] } });
      const { text } = await runSandboxed([PYTHON, "-c", code], policy);
      const r = results(text);
      assert.equal(r.read_link, ERRNO.ENOENT, text); // The link may be made, but points at nothing inside.
      assert.notEqual(r.hardlink, "ok", text);
      assert.notEqual(r.rename_out, "ok", text);
      assert.ok(!text.includes("TOPSECRET"));
      assert.equal(await Deno.readTextFile(`${outside}/secret`), "TOPSECRET");
      assert.ok(!(await exists(`${outside}/moved`)));
    });
  });
});

sessionTest("device nodes cannot be created (mknod)", async () => {
  await withHostDir(async (dir) => {
    const code = pythonAttempts({ mknod: `os.mknod("${dir}/mem", 0o20600, os.makedev(1, 1))` });
    const { text } = await runSandboxed(
      [PYTHON, "-c", code],
      policyOf({ exec: [PYTHON], fs: { write: [dir] } }),
    );
    assert.equal(results(text).mknod, ERRNO.EPERM, text);
    assert.ok(!(await exists(`${dir}/mem`)));
  });
});

sessionTest("no network: a TCP listener on the host's 127.0.0.1 is unreachable, DNS fails", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  let accepted = false;
  const accepting = listener.accept().then((conn) => {
    accepted = true;
    conn.close();
  }).catch(() => {/* closed at the end of the test */});
  try {
    const code = [
      "import socket",
      "try:",
      `    socket.create_connection(("127.0.0.1", ${port}), timeout=3); print("CONNECTED")`,
      "except OSError as e: print('TCP', e.errno)",
      "try:",
      "    socket.getaddrinfo('example.com', 80); print('RESOLVED')",
      "except OSError as e: print('DNS failed')",
    ].join("\n");
    const { text } = await runSandboxed([PYTHON, "-c", code], preset("strict"));
    assert.match(text, /TCP \d+/);
    assert.match(text, /DNS failed/);
    assert.ok(!text.includes("CONNECTED") && !text.includes("RESOLVED"), text);
    assert.equal(accepted, false);
  } finally {
    listener.close();
    await accepting;
  }
});

sessionTest(
  "seccomp: ptrace, mount, unshare, clone3, keyctl, bpf, io_uring and AF_PACKET are denied",
  async () => {
    const code = pythonAttempts({
      ptrace: "libc.ptrace(16, 1, None, None)",
      mount: 'libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)',
      unshare_user: "libc.unshare(0x10000000)",
      clone3: 'libc.syscall(NR["clone3"], None, 0)',
      keyctl: 'libc.syscall(NR["keyctl"], 0, -1, 0)',
      bpf: 'libc.syscall(NR["bpf"], 0, None, 0)',
      io_uring: 'libc.syscall(NR["io_uring_setup"], 1, ctypes.create_string_buffer(120))',
      af_packet: "__import__('socket').socket(17, 3)",
    }, `NR = ${ARCH_NR}`);
    const { text } = await runSandboxed([PYTHON, "-c", code], preset("strict"));
    const r = results(text);
    assert.deepEqual(r, {
      ptrace: ERRNO.EPERM,
      mount: ERRNO.EPERM,
      unshare_user: ERRNO.EPERM,
      clone3: ERRNO.ENOSYS,
      keyctl: ERRNO.EPERM,
      bpf: ERRNO.EPERM,
      io_uring: ERRNO.EPERM,
      af_packet: ERRNO.EPERM,
    }, text);
  },
);

sessionTest("TIOCSTI and its high-bit variant are denied; nothing reaches a terminal", async () => {
  const code = pythonAttempts({
    tiocsti: 'libc.ioctl(0, ctypes.c_ulong(0x5412), ctypes.c_char_p(b"X"))',
    tiocsti_high: 'libc.ioctl(0, ctypes.c_ulong(0x100005412), ctypes.c_char_p(b"Y"))',
    tioclinux: 'libc.ioctl(0, ctypes.c_ulong(0x541C), ctypes.c_char_p(b"Z"))',
  }) + "\nimport select\nprint('PENDING', bool(select.select([0], [], [], 0.2)[0]), flush=True)";
  const { text } = await runSandboxed([PYTHON, "-c", code], preset("strict"));
  const r = results(text);
  assert.deepEqual([r.tiocsti, r.tiocsti_high, r.tioclinux], [ERRNO.EPERM, ERRNO.EPERM, ERRNO.EPERM], text);
  assert.match(text, /PENDING False/); // No injected input is waiting on the program's own terminal.
});

sessionTest("the supervisor cannot be signalled and host pids are invisible", async () => {
  const code = `import os, signal\n` + pythonAttempts({ kill_supervisor: `os.kill(${Deno.pid}, 0)` }) +
    `\nprint("PIDS", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()), flush=True)`;
  const { text } = await runSandboxed([PYTHON, "-c", code], preset("strict"));
  assert.equal(results(text).kill_supervisor, ERRNO.ESRCH, text);
  const pids = JSON.parse(/PIDS (\[[^\]]*\])/.exec(text)?.[1] ?? "[]") as number[];
  assert.ok(pids.length > 0 && pids.length <= 3 && !pids.includes(Deno.pid), text);
});

sessionTest("no privileges: unprivileged uid, CapEff 0, NoNewPrivs 1, seccomp filter active", async () => {
  const { text } = await runSandboxed(
    [
      SH,
      "-c",
      'while read -r k v; do case "$k" in Uid:|CapEff:|NoNewPrivs:|Seccomp:) echo "$k $v";; esac; done < /proc/self/status',
    ],
    preset("strict"),
  );
  assert.match(text, /Uid: 65534\s/);
  assert.match(text, /CapEff: 0000000000000000/);
  assert.match(text, /NoNewPrivs: 1/);
  assert.match(text, /Seccomp: 2/);
});

sessionTest("an env secret that was not passed is not visible", async () => {
  Deno.env.set("SPECTER_ESCAPE_SECRET", "hunter2");
  try {
    const { text } = await runSandboxed(
      [SH, "-c", 'echo "secret=${SPECTER_ESCAPE_SECRET:-absent}"'],
      preset("strict"),
    );
    assert.match(text, /secret=absent/);
    const passed = await runSandboxed(
      [SH, "-c", 'echo "secret=${SPECTER_ESCAPE_SECRET:-absent}"'],
      policyOf({ env: ["SPECTER_ESCAPE_SECRET"] }),
    );
    assert.match(passed.text, /secret=hunter2/, "a name the policy lists is passed through");
  } finally {
    Deno.env.delete("SPECTER_ESCAPE_SECRET");
  }
});

sessionTest("an output flood ends in overflow", async () => {
  const { t } = await runSandboxed(["/usr/bin/yes"], preset("strict"), { maxOutputBytes: 100_000 });
  assert.ok(t.frames.some((f) => f.type === "overflow" && f.reason === "max_output"));
});

sessionTest("positive: allowed reads, writes and execs work; /dev/null is writable", async () => {
  await withHostDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/in`, "hello");
    const policy = policyOf({ exec: ["/usr/bin"], fs: { read: [dir], write: [dir] } });
    const { text, code } = await runSandboxed(
      [
        SH,
        "-c",
        `cat "${dir}/in"; echo; echo written > "${dir}/out"; echo devnull > /dev/null && echo DEVNULL; ls "${dir}"`,
      ],
      policy,
      { cwd: dir },
    );
    assert.equal(code, 0, text);
    assert.match(text, /hello[\s\S]*DEVNULL[\s\S]*in\s+out/);
    assert.equal(await Deno.readTextFile(`${dir}/out`), "written\n");
  });
});

sessionTest("positive: job control works inside the sandbox", async () => {
  const policy = preset("basic");
  const t = (await import("../../src/mod.ts")).Transcript;
  const { spawn } = await import("../../src/session/spawn_session.ts");
  const r = new t(spawn({
    argv: ["/usr/bin/bash", "--norc", "--noprofile", "-i"],
    env: { PS1: "BOX$ " },
    promptRegex: ["BOX\\$ $"],
    idleMs: 0,
    sandbox: { mode: "bwrap", policy },
  }));
  await jobControlRoundTrip(r, /BOX\$ $/);
  r.session.write("exit 3\r");
  assert.equal((await r.exit()).code, 3);
});

sessionTest("a setuid binary gains nothing inside the sandbox", async () => {
  await withHostDir(async (dir) => {
    // A real setuid program: a copy of id(1) with the setuid bit, owned by root (the tests run as root,
    // like CI), and a copy of cat(1) owned by another uid, which would change the sandbox's uid.
    await Deno.copyFile("/usr/bin/id", `${dir}/suid-id`);
    await Deno.chmod(`${dir}/suid-id`, 0o4755);
    await Deno.copyFile("/usr/bin/cat", `${dir}/suid-cat`);
    if (Deno.uid() === 0) await Deno.chown(`${dir}/suid-cat`, 4242, 4242);
    await Deno.chmod(`${dir}/suid-cat`, 0o4755);
    const status = await runSandboxed(
      [`${dir}/suid-cat`, "/proc/self/status"],
      policyOf({ fs: { read: [dir] } }),
    );
    assert.match(status.text, /^CapEff:\s+0000000000000000$/m, status.text);
    assert.match(status.text, /^Uid:\s+65534\s+65534\s+65534\s+65534$/m, status.text);
    const outside = await new Deno.Command("su", {
      args: ["-s", "/bin/sh", "nobody", "-c", `${dir}/suid-id -u`],
      stdout: "piped",
      stderr: "null",
    }).output().catch(() => null);
    if (outside?.success) {
      assert.equal(new TextDecoder().decode(outside.stdout).trim(), "0", "outside, the setuid bit does work");
    }
    const { text } = await runSandboxed([`${dir}/suid-id`, "-u"], policyOf({ fs: { read: [dir] } }));
    assert.match(text, /^65534\r?\n/, text);
  });
});

sessionTest("a daemon started inside the sandbox does not outlive the session", async () => {
  const marker = `${4000 + Math.floor(Math.random() * 1000)}.5`;
  const { code } = await runSandboxed(
    ["/usr/bin/sh", "-c", `setsid sleep ${marker} </dev/null >/dev/null 2>&1 & echo started`],
    preset("basic"),
  );
  assert.equal(code, 0);
  const left = await new Deno.Command("pgrep", { args: ["-f", `sleep ${marker}`], stdout: "piped" }).output();
  assert.equal(new TextDecoder().decode(left.stdout).trim(), "", `a "sleep ${marker}" survived`);
});

sessionTest(
  "started by root, the sandbox has no root power: sysctls unwritable, nothing outside the grants",
  async () => {
    const sysctl = "/proc/sys/kernel/printk_ratelimit_burst";
    const before = await Deno.readTextFile(sysctl);
    await withHostDir(async (dir) => {
      await Deno.mkdir(`${dir}/granted`);
      await Deno.writeTextFile(`${dir}/granted/root-only`, "GRANTED\n", { mode: 0o600 });
      await Deno.writeTextFile(`${dir}/outside`, "ROOTSECRET\n", { mode: 0o600 });
      const script = `echo 99 > ${sysctl} 2>/dev/null && echo SYSCTL_WRITTEN || echo SYSCTL_DENIED; ` +
        `read -r s < "${dir}/granted/root-only" 2>/dev/null && echo "READ $s" || echo GRANT_DENIED; ` +
        `read -r s < "${dir}/outside" 2>/dev/null && echo "LEAK $s" || echo OUTSIDE_ABSENT`;
      const { text } = await runSandboxed(
        ["/usr/bin/sh", "-c", script],
        policyOf({ fs: { read: [`${dir}/granted`] } }),
      );
      assert.match(text, /SYSCTL_DENIED/);
      // What a read grant shows, the sandbox reads as its caller would (root's through an idmapped clone, as
      // any user's sandbox reads the user's files); nothing else of the host is there.
      assert.match(text, /READ GRANTED/);
      assert.match(text, /OUTSIDE_ABSENT/);
      assert.ok(!text.includes("ROOTSECRET"));
    });
    assert.equal(await Deno.readTextFile(sysctl), before, "the host sysctl is unchanged");
  },
);

sessionTest("a write root that is a symlink to / is refused before anything runs", async () => {
  await withHostDir(async (dir) => {
    // Outside the system trees a link could be a planted one (a sandbox writes as its caller), so it is
    // never followed.
    await Deno.symlink("/", `${dir}/rootlink`);
    await assert.rejects(
      runSandboxed([SH, "-c", "echo pwned > /tmp/x"], policyOf({ fs: { write: [`${dir}/rootlink`] } })),
      (e: unknown) => (e as { problems: { code: string }[] }).problems[0]!.code === "E_POLICY_SYMLINK",
    );
  });
});

sessionTest("a .git symlink planted in the workspace cannot make strict-write bind host /etc", async () => {
  await withHostDir(async (dir) => {
    await Deno.symlink("../../../../../../../etc", `${dir}/.git`);
    const policy = policyOf({ exec: ["/usr/bin"], fs: { write: [dir] } });
    const { spawn } = await import("../../src/session/spawn_session.ts");
    const { Transcript } = await import("../../src/mod.ts");
    const t = new Transcript(spawn({
      argv: [SH, "-c", "test -e /etc/shadow && echo HOST_ETC || echo SANDBOX_ETC; ls /etc | wc -l"],
      idleMs: 0,
      sandbox: { mode: "bwrap", policy, strictWrite: true },
    }));
    await t.exit();
    assert.match(t.text, /SANDBOX_ETC/, t.text);
  });
});

sessionTest("a read-only path inside a writable root stays read-only", async () => {
  await withHostDir(async (dir) => {
    await Deno.mkdir(`${dir}/secret`);
    const policy = policyOf({ fs: { read: [`${dir}/secret`], write: [dir] } });
    const { text } = await runSandboxed(
      [
        SH,
        "-c",
        `echo a > "${dir}/ok" && echo WRITE_OK; echo b > "${dir}/secret/f" 2>/dev/null || echo SECRET_RO`,
      ],
      policy,
    );
    assert.match(text, /WRITE_OK[\s\S]*SECRET_RO/);
    await assert.rejects(Deno.stat(`${dir}/secret/f`));
  });
});

sessionTest("the policy's wall_ms budget is enforced", async () => {
  const { t } = await runSandboxed(
    ["/usr/bin/sleep", "30"],
    policyOf({ exec: ["/usr/bin"], budgets: { wall_ms: 300 } }),
  );
  const exit = await t.exit();
  assert.equal(exit.timed_out, true);
});

sessionTest("a hand-built (unvalidated) policy is refused by spawn", async () => {
  const forged = { ...preset("strict"), fs: { read: [], write: ["/"] } };
  const { spawn } = await import("../../src/session/spawn_session.ts");
  assert.throws(
    () => spawn({ argv: [SH, "-c", "true"], sandbox: { mode: "bwrap", policy: forged } }),
    { code: "E_POLICY_SCHEMA" },
  );
});

sessionTest("inside the sandbox PATH is the standard one, not the caller's", async () => {
  const { text } = await runSandboxed([SH, "-c", 'echo "PATH=$PATH"'], preset("strict"));
  assert.match(text, /PATH=\/usr\/local\/sbin:\/usr\/local\/bin:\/usr\/sbin:\/usr\/bin:\/sbin:\/bin\r?\n/);
});

sessionTest(
  "no setuid or setgid bit can be set on a file the program made, by any call that takes a mode",
  async () => {
    // On the host such a file runs as its owner, the caller (or root, through root mode's idmapped grants).
    const script = pythonAttempts({
      chmod_suid: "os.chmod('/tmp/f', 0o4755)",
      chmod_sgid: "os.chmod('/tmp/f', 0o2755)",
      fchmod: "os.fchmod(fd, 0o4755)",
      mknod: "os.mknod('/tmp/n', stat.S_IFREG | 0o4755)",
      open_mode: "os.open('/tmp/o', os.O_CREAT | os.O_WRONLY, 0o6755)",
      chmod_plain: "os.chmod('/tmp/f', 0o755)",
    }, "import stat\nfd = os.open('/tmp/f', os.O_CREAT | os.O_WRONLY, 0o644)");
    const { text } = await runSandboxed([
      PYTHON,
      "-c",
      script + "\nprint('MODE', oct(os.stat('/tmp/f').st_mode & 0o7777))",
    ], policyOf({}));
    const got = results(text);
    for (const call of ["chmod_suid", "chmod_sgid", "fchmod", "mknod", "open_mode"]) {
      assert.equal(got[call], ERRNO.EPERM, `${call}: ${text}`);
    }
    assert.match(got.chmod_plain ?? "", /^(ok|0)$/, text); // os.chmod returns None: errno 0 is success
    assert.match(text, /MODE 0o755/, text);
  },
);
