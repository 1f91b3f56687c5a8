import assert from "node:assert/strict";
import { testPolicy } from "../policy/_testing.ts";
import { bwrapPlan, SANDBOX_ID, sandboxPath } from "./bwrap.ts";
import { compileLaunchPlan, type HostFacts, type LaunchPlan, type LaunchRequest } from "./plan.ts";
import { fingerprintPlan } from "./fingerprint.ts";

const host: HostFacts = {
  bwrap: "/usr/bin/bwrap",
  mergedUsr: true,
  seccompFilter: new Uint8Array([1, 2, 3]),
  rootLauncher: null,
};
const request: LaunchRequest = {
  program: "/usr/bin/bash",
  args: ["-i"],
  cwd: "/work/project",
  env: { TERM: "xterm-256color", PATH: "/usr/bin", HOME: "/home/me", LANG: "C.UTF-8" },
};

const policy = testPolicy;

/** Each descriptor bind as `ro|rw PATH DEST`, after checking the argv binds exactly that fd there. */
function fdBinds(plan: LaunchPlan): string[] {
  return plan.descriptors.map((d) => {
    const flag = d.writable ? "--bind-fd" : "--ro-bind-fd";
    const at = plan.argv.findIndex((a, i) => a === flag && plan.argv[i + 1] === String(d.target));
    assert.ok(at > 0 && plan.argv[at + 2] === d.dest, `${flag} ${d.target} ${d.dest}`);
    return `${d.writable ? "rw" : "ro"} ${d.path} ${d.dest}`;
  });
}

/** The `[flag, a, b]` triples of an argv, e.g. every `--ro-bind SRC DEST`. */
function pairs(argv: readonly string[], flag: string): string[] {
  return argv.flatMap((arg, i) => (arg === flag ? [argv[i + 1]!] : []));
}

Deno.test("strict: namespaces, no privileges, seccomp on fd 3, read-only root, no binary directories", () => {
  const plan = bwrapPlan(policy(), request, host);
  const argv = plan.argv;
  assert.equal(argv[0], "/usr/bin/bwrap");
  for (const flag of ["--unshare-all", "--die-with-parent", "--clearenv", "--unshare-user"]) {
    assert.ok(argv.includes(flag), flag);
  }
  assert.ok(!argv.includes("--share-net") && !argv.includes("--new-session"));
  assert.deepEqual(pairs(argv, "--cap-drop"), ["ALL"]);
  assert.deepEqual([pairs(argv, "--uid")[0], pairs(argv, "--gid")[0]], [
    String(SANDBOX_ID),
    String(SANDBOX_ID),
  ]);
  assert.deepEqual(pairs(argv, "--seccomp"), ["3"]);
  // The root last (/dev and the empty-directory masks before it: see masks_test.ts, scratch_test.ts).
  assert.equal(pairs(argv, "--remount-ro").at(-1), "/");
  assert.deepEqual(plan.files.map((f) => [f.target, [...f.content]]), [[3, [1, 2, 3]]]);
  const bound = [...pairs(argv, "--ro-bind"), ...pairs(argv, "--ro-bind-try"), ...pairs(argv, "--bind")];
  assert.deepEqual(fdBinds(plan), ["ro /usr/bin/bash /usr/bin/bash"], "the target itself is bound, by fd");
  for (const dir of ["/usr/bin", "/bin", "/usr/sbin", "/usr/local/bin", "/"]) {
    assert.ok(!bound.includes(dir), dir);
  }
  assert.deepEqual([...pairs(argv, "--bind"), ...pairs(argv, "--bind-fd")], [], "no host writes");
  // The program runs only once Specter has checked the mounts: bwrap blocks on fd 4, reports on fd 5.
  assert.deepEqual([pairs(argv, "--block-fd"), pairs(argv, "--info-fd")], [["4"], ["5"]]);
  assert.deepEqual(plan.gate, { block: 4, info: 5 });
  assert.deepEqual(argv.slice(argv.indexOf("--")), ["--", "/usr/bin/bash", "-i"]);
  assert.deepEqual(plan.env, {}, "bwrap itself gets no environment");
});

Deno.test("the program's environment is set explicitly; HOME and cwd fall back to /tmp when not visible", () => {
  const plan = bwrapPlan(policy(), request, host);
  const setenv = plan.argv.flatMap((
    arg,
    i,
  ) => (arg === "--setenv" ? [`${plan.argv[i + 1]}=${plan.argv[i + 2]}`] : []));
  assert.deepEqual(setenv, ["HOME=/tmp", "LANG=C.UTF-8", "PATH=/usr/bin", "TERM=xterm-256color"]);
  assert.equal(plan.programCwd, "/tmp");
  const visible = bwrapPlan(policy({ fs: { read: ["/work"], write: ["/home/me"] } }), request, host);
  assert.equal(visible.programCwd, "/work/project");
  assert.ok(visible.argv.join(" ").includes("--setenv HOME /home/me"));
});

Deno.test("exec, read and write allowlists map to binds; network on shares the namespace", () => {
  const plan = bwrapPlan(
    policy({ exec: ["/usr/bin"], fs: { read: ["/data"], write: ["/work/project"] }, network: "on" }),
    request,
    host,
  );
  assert.deepEqual(fdBinds(plan), [
    "ro /data /data",
    "ro /usr/bin /usr/bin",
    "rw /work/project /work/project",
  ]);
  assert.deepEqual(plan.descriptors.map((d) => d.target), [6, 7, 8], "one fd per bind from fd 6");
  assert.ok(plan.argv.includes("--share-net"));
  assert.ok(pairs(plan.argv, "--ro-bind-try").includes("/etc/resolv.conf"), "DNS config only with network");
  assert.ok(!pairs(bwrapPlan(policy(), request, host).argv, "--ro-bind-try").includes("/etc/resolv.conf"));
});

Deno.test("protected paths and deeper read-only paths land on top of writable roots (depth order)", () => {
  const plan = bwrapPlan(
    policy({ fs: { read: ["/a/secret", "/c"], write: ["/a", "/c/out"] } }),
    request,
    host,
    { protect: ["/a/.git", "/a/.bashrc"] },
  );
  const order = fdBinds(plan);
  const at = (bind: string) => order.indexOf(bind);
  assert.ok(at("ro /a/secret /a/secret") > at("rw /a /a"), "read-only /a/secret is bound after (over) /a");
  assert.ok(at("ro /a/.git /a/.git") > at("rw /a /a") && at("ro /a/.bashrc /a/.bashrc") > at("rw /a /a"));
  assert.ok(at("rw /c/out /c/out") > at("ro /c /c"), "writable /c/out is bound after (over) read-only /c");
});

Deno.test("a host without merged /usr binds /lib* instead of symlinking", () => {
  const plan = bwrapPlan(policy(), request, { ...host, mergedUsr: false });
  assert.deepEqual(pairs(plan.argv, "--symlink"), []);
  assert.ok(pairs(plan.argv, "--ro-bind-try").includes("/lib"));
});

Deno.test("as root, bwrap starts through setpriv as the sandbox's own uid, with no groups", () => {
  const plan = bwrapPlan(policy(), request, {
    ...host,
    rootLauncher: { setpriv: "/usr/bin/setpriv", uid: 1_700_000_001 },
  });
  assert.deepEqual(plan.argv.slice(0, 7), [
    "/usr/bin/setpriv",
    "--reuid=1700000001",
    "--regid=1700000001",
    "--clear-groups",
    "--nnp",
    "--",
    "/usr/bin/bwrap",
  ]);
  assert.equal(plan.argv0, "setpriv");
  assert.equal(plan.sandboxUid, 1_700_000_001, "the launch attaches idmapped grants for it");
  // Inside, the program is uid/gid 65534; its user namespace maps that to the sandbox's uid.
  assert.deepEqual(pairs(plan.argv, "--uid"), [String(SANDBOX_ID)]);
  assert.equal(bwrapPlan(policy(), request, host).sandboxUid, undefined);
});

Deno.test("with a realization, only opened paths are bound and each carries its identity; the program must be opened", () => {
  const opened = new Map([
    ["/usr/bin/bash", { info: { identity: "8:1:10", kind: "file" } }],
    ["/data", { info: { identity: "8:1:11", kind: "dir" } }],
  ]);
  const plan = bwrapPlan(policy({ fs: { read: ["/data", "/gone"], write: [] } }), request, host, { opened });
  assert.deepEqual(fdBinds(plan), ["ro /data /data", "ro /usr/bin/bash /usr/bin/bash"]);
  assert.deepEqual(plan.descriptors.map((d) => d.identity), ["8:1:11", "8:1:10"]);
  assert.throws(() => bwrapPlan(policy(), request, host, { opened: new Map() }), { code: "E_SANDBOX_START" });
});

Deno.test("plans are deterministic values", () => {
  assert.deepEqual(bwrapPlan(policy(), request, host), bwrapPlan(policy(), request, host));
});

Deno.test("none and external run the program directly; seatbelt plans are text; bwrap needs a policy", () => {
  for (const backend of ["none", "external"] as const) {
    const plan = compileLaunchPlan(null, request, backend, host);
    assert.deepEqual([plan.argv, plan.cwd, plan.env, plan.files], [
      ["/usr/bin/bash", "-i"],
      "/work/project",
      request.env,
      [],
    ]);
  }
  const seatbelt = compileLaunchPlan(policy(), request, "seatbelt", host);
  assert.deepEqual(seatbelt.argv.slice(0, 2), ["/usr/bin/sandbox-exec", "-p"]);
  assert.match(seatbelt.argv[2]!, /^\(version 1\)$/m);
  assert.throws(() => compileLaunchPlan(null, request, "bwrap", host), { code: "E_SANDBOX_START" });
});

Deno.test("merged-usr: a program under /bin is bound at its /usr path, reached through the /bin link", () => {
  const plan = bwrapPlan(policy(), { ...request, program: "/bin/sh" }, host);
  assert.deepEqual(fdBinds(plan), ["ro /bin/sh /usr/bin/sh"]);
  assert.ok(plan.argv.join(" ").includes("--symlink usr/bin /bin"));
  const split = bwrapPlan(policy(), { ...request, program: "/bin/sh" }, { ...host, mergedUsr: false });
  assert.deepEqual(fdBinds(split), ["ro /bin/sh /bin/sh"]);
});

Deno.test("sandboxPath maps each merged-usr link and nothing else", () => {
  assert.equal(sandboxPath("/bin", true), "/usr/bin");
  assert.equal(sandboxPath("/sbin/ip", true), "/usr/sbin/ip");
  assert.equal(sandboxPath("/lib/x86_64-linux-gnu/libc.so.6", true), "/usr/lib/x86_64-linux-gnu/libc.so.6");
  assert.equal(sandboxPath("/lib64/ld-linux-x86-64.so.2", true), "/usr/lib64/ld-linux-x86-64.so.2");
  assert.equal(sandboxPath("/binary/tool", true), "/binary/tool");
  assert.equal(sandboxPath("/usr/bin/sh", true), "/usr/bin/sh");
  assert.equal(sandboxPath("/bin/sh", false), "/bin/sh");
});

Deno.test("a program inside an allowed read-only directory is not bound again; under a writable root it is", () => {
  const vim = { ...request, program: "/usr/bin/vim" };
  const inside = bwrapPlan(policy({ exec: ["/usr/bin"] }), vim, host);
  assert.deepEqual(fdBinds(inside), ["ro /usr/bin /usr/bin"]);
  const alone = bwrapPlan(policy(), vim, host);
  assert.deepEqual(fdBinds(alone), ["ro /usr/bin/vim /usr/bin/vim"]);
  const script = { ...request, program: "/work/project/run.sh" };
  const writable = bwrapPlan(policy({ fs: { read: [], write: ["/work/project"] } }), script, host);
  assert.deepEqual(fdBinds(writable), [
    "rw /work/project /work/project",
    "ro /work/project/run.sh /work/project/run.sh",
  ], "still protected read-only");
});

Deno.test("data files are bound read-only beneath /run/specter from their own fds, before every grant", () => {
  const content = new TextEncoder().encode("echo hi\n");
  const plan = bwrapPlan(
    policy({ fs: { read: ["/work"], write: [] } }),
    { ...request, dataFiles: [{ dest: "/run/specter/shell/bash_init", content }] },
    host,
  );
  const at = plan.argv.indexOf("--ro-bind-data");
  assert.deepEqual(plan.argv.slice(at - 2, at + 3), [
    "--perms",
    "0444",
    "--ro-bind-data",
    "6",
    "/run/specter/shell/bash_init",
  ]);
  assert.deepEqual(plan.files.map((f) => [f.target, f.content]), [[3, host.seccompFilter], [6, content]]);
  // The descriptors of the grants come after it, and are bound after it.
  assert.ok(plan.descriptors.length > 0 && plan.descriptors.every((d) => d.target > 6));
  const firstGrant = plan.argv.findIndex((a) => a === "--ro-bind-fd" || a === "--bind-fd");
  assert.ok(at < firstGrant, "made on the sandbox's root before any grant could cover the path");
});

Deno.test("a data file anywhere but beneath /run/specter is refused", () => {
  const content = new Uint8Array();
  for (
    const dest of [
      "/tmp/x",
      "/run/specterx/y",
      "/run/specter/../etc/passwd",
      "/run/specter//x",
      "/run/specter/",
      "/run/specter",
      "/run/specter/a\0b",
    ]
  ) {
    assert.throws(
      () => bwrapPlan(policy(), { ...request, dataFiles: [{ dest, content }] }, host),
      (e: unknown) => e instanceof Error && "code" in e && e.code === "E_SANDBOX_START",
      dest,
    );
  }
});

Deno.test("a persistent layer is bound writable from its descriptor at /home/specter, which becomes HOME", () => {
  const layer = "/var/lib/specter/persist/ab/keep";
  const opened = new Map([
    ["/usr/bin/bash", { info: { identity: "1:1:1", kind: "file" } }],
    [layer, { info: { identity: "1:1:9", kind: "dir" } }],
  ]);
  const plan = bwrapPlan(policy(), request, host, { opened, persist: layer });
  assert.ok(fdBinds(plan).includes(`rw ${layer} /home/specter`));
  const persist = plan.descriptors.find((d) => d.purpose === "persist")!;
  assert.equal(persist.identity, "1:1:9");
  const homeOf = (argv: readonly string[]) =>
    argv[argv.findIndex((a, i) => a === "--setenv" && argv[i + 1] === "HOME") + 2];
  assert.equal(homeOf(plan.argv), "/home/specter");
  // After every grant, before the read-only remount of the root.
  const rootReadOnly = plan.argv.findIndex((a, i) => a === "--remount-ro" && plan.argv[i + 1] === "/");
  assert.ok(plan.argv.lastIndexOf("--bind-fd") < rootReadOnly);
  // A layer that was not opened is never bound by name.
  assert.throws(
    () =>
      bwrapPlan(policy(), request, host, {
        opened: new Map([["/usr/bin/bash", opened.get("/usr/bin/bash")!]]),
        persist: layer,
      }),
    (e: { code?: string }) => e.code === "E_SANDBOX_START",
  );
  assert.equal(homeOf(bwrapPlan(policy(), request, host).argv), "/tmp");
});

Deno.test("an exec-only copy: the opened program copied 0111 beneath /run/specter, run in its stead", () => {
  const data = [{ dest: "/run/specter/shell/bash_init", content: new Uint8Array([1]) }];
  const plan = bwrapPlan(policy({ fs: { read: ["/data"], write: [] } }), {
    ...request,
    dataFiles: data,
    execOnlyCopy: "/run/specter/shell/bash",
  }, host);
  // The copy's fd follows the data files' and comes before every bind's.
  assert.deepEqual(plan.copies, [{ target: 7, path: "/usr/bin/bash", dest: "/run/specter/shell/bash" }]);
  const at = plan.argv.findIndex((a, i) => a === "--ro-bind-data" && plan.argv[i + 1] === "7");
  assert.deepEqual(plan.argv.slice(at - 2, at + 3), [
    "--perms",
    "0111",
    "--ro-bind-data",
    "7",
    "/run/specter/shell/bash",
  ]);
  assert.ok(plan.descriptors.every((d) => d.target > 7), JSON.stringify(plan.descriptors));
  assert.ok(at < plan.argv.findIndex((a) => a === "--ro-bind-fd"), "placed before any grant is bound");
  // The copy runs; the program itself is still bound (as any exec entry).
  const end = plan.argv.indexOf("--", plan.argv.indexOf("--info-fd"));
  assert.deepEqual(plan.argv.slice(end + 1), ["/run/specter/shell/bash", "-i"]);
  assert.ok(plan.descriptors.some((d) => d.path === "/usr/bin/bash" && d.purpose === "exec"));
  // Beneath /run/specter only.
  for (const dest of ["/usr/bin/bash", "/run/specter", "/run/specter/../x", "/tmp/bash"]) {
    assert.throws(() => bwrapPlan(policy(), { ...request, execOnlyCopy: dest }, host), {
      code: "E_SANDBOX_START",
    });
  }
});

Deno.test("descriptors passed to the program keep clear of bwrap's and are never fingerprinted when secret", () => {
  const nonce = {
    target: 200,
    purpose: "shell integration nonce",
    content: new Uint8Array([9]),
    secret: true,
  };
  const plan = bwrapPlan(policy(), { ...request, passFiles: [nonce] }, host);
  assert.ok(plan.files.includes(nonce));
  assert.throws(
    () => bwrapPlan(policy(), { ...request, passFiles: [{ ...nonce, target: 6 }] }, host),
    { code: "E_SANDBOX_START" },
  );
  assert.ok(!Object.keys(fingerprintPlan(plan).files_sha256).includes("shell integration nonce"));
  // Every backend hands them on.
  for (const backend of ["none", "external"] as const) {
    assert.ok(
      compileLaunchPlan(null, { ...request, passFiles: [nonce] }, backend, host).files.includes(nonce),
    );
  }
});
