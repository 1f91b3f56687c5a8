import assert from "node:assert/strict";
import { type HintContext, policyHint, visibility } from "./policy_hint.ts";
import type { Policy } from "../policy/mod.ts";

const AGENT = {
  source: "preset:agent",
  network: "off",
  exec: ["/usr/local/bin", "/usr/bin", "/bin"],
  fs: { read: ["/work/proj", "/usr/include"], write: [] },
} as unknown as Policy;
const STRICT = {
  source: "preset:strict",
  network: "off",
  exec: [],
  fs: { read: [], write: [] },
} as unknown as Policy;

function ctx(policy: Policy, existing: string[], firstLine: string | null = null): HintContext {
  return {
    policy,
    cwd: "/work/proj",
    home: "/home/me",
    sandboxPath: "/usr/local/bin:/usr/bin:/bin",
    exists: (path) => existing.includes(path),
    firstLine: () => firstLine,
  };
}

Deno.test("visibility: write and read grants, the scratch /tmp, system binds, secrets, the rest hidden", () => {
  const c = ctx({ ...AGENT, fs: { read: ["/work/proj"], write: ["/work/proj/out"] } } as Policy, []);
  assert.equal(visibility("/work/proj/out/a", c), "writable");
  assert.equal(visibility("/work/proj/src", c), "read_only");
  assert.equal(visibility("/tmp/x", c), "scratch");
  assert.equal(visibility("/usr/share/zoneinfo", c), "read_only");
  assert.equal(visibility("/home/me/.ssh/id_ed25519", c), "secret");
  assert.equal(visibility("/etc/shadow", c), "secret");
  assert.equal(visibility("/srv/data", c), "hidden");
  // A workspace in /tmp is a read-only bind on top of the scratch tmpfs.
  const tmp = ctx({ ...AGENT, fs: { read: ["/tmp/proj"], write: [] } } as Policy, []);
  assert.equal(visibility("/tmp/proj/a", tmp), "read_only");
});

Deno.test("policy hint: a program the policy hides, named by bash, dash and zsh", () => {
  for (
    const line of [
      "/bin/bash: line 1: ls: command not found",
      "sh: 1: ls: not found",
      "zsh:1: command not found: ls",
    ]
  ) {
    assert.equal(
      policyHint(`${line}\n`, ctx(STRICT, ["/usr/bin/ls"])),
      '[specter: "ls" (/usr/bin/ls) is not visible under policy "strict"; --policy agent (or a --policy FILE ' +
        'with exec ["/usr/bin"]) lets it run]',
      line,
    );
  }
  // Not installed anywhere: not the policy's doing.
  assert.equal(policyHint("bash: line 1: nosuch: command not found\n", ctx(STRICT, [])), undefined);
  // Visible and on PATH (a genuine failure elsewhere): none.
  assert.equal(policyHint("bash: line 1: ls: command not found\n", ctx(AGENT, ["/usr/bin/ls"])), undefined);
});

Deno.test("policy hint: a read-only file system names the flag that makes the workspace writable", () => {
  assert.equal(
    policyHint("touch: cannot touch 'a.txt': Read-only file system\n", ctx(AGENT, [])),
    '[specter: "/work/proj/a.txt" is read-only under policy "agent"; writes go to /tmp (private to the ' +
      "session); --policy workspace --ack-unsafe-write makes the working directory writable]",
  );
  assert.match(
    policyHint("mkdir: cannot create directory '/srv/x': Read-only file system\n", ctx(AGENT, []))!,
    /"\/srv\/x" is read-only under policy "agent".*--policy FILE with fs\.write/,
  );
  assert.equal(
    policyHint("touch: cannot touch '/tmp/a': Read-only file system\n", ctx(AGENT, [])),
    undefined,
  );
});

Deno.test("policy hint: a hidden path or a secret that exists on the host; nothing for one that does not", () => {
  assert.equal(
    policyHint("cat: /srv/data/x: No such file or directory\n", ctx(AGENT, ["/srv/data/x"])),
    '[specter: "/srv/data/x" is hidden by policy "agent"; --policy FILE with fs.read ["/srv/data/x"] would show it]',
  );
  assert.equal(
    policyHint("cat: /home/me/.ssh/id_rsa: Permission denied\n", ctx(AGENT, ["/home/me/.ssh/id_rsa"])),
    '[specter: "/home/me/.ssh/id_rsa" holds secrets and is hidden by policy "agent"; only a --policy FILE ' +
      "whose fs.read names it shows it]",
  );
  assert.match(
    policyHint(
      "PermissionError: [Errno 13] Permission denied: '/etc/shadow'\n",
      ctx(AGENT, ["/etc/shadow"]),
    )!,
    /"\/etc\/shadow" holds secrets/,
  );
  // A host path in /tmp: the sandbox's /tmp is its own.
  assert.match(
    policyHint("cat: /tmp/host.txt: No such file or directory\n", ctx(AGENT, ["/tmp/host.txt"]))!,
    /"\/tmp\/host\.txt" is hidden by policy "agent" \(the sandbox's \/tmp is its own\)/,
  );
  assert.equal(policyHint("cat: /srv/none: No such file or directory\n", ctx(AGENT, [])), undefined);
  assert.equal(policyHint("cat: src/none.c: No such file or directory\n", ctx(AGENT, [])), undefined);
  // Only the last lines count, and the nearest one wins.
  const old = "cat: /srv/data/x: No such file or directory\n" + "ok\n".repeat(30);
  assert.equal(policyHint(old, ctx(AGENT, ["/srv/data/x"])), undefined);
});

Deno.test("policy hint: a script whose interpreter is hidden (execvp, bad interpreter)", () => {
  assert.equal(
    policyHint("bwrap: execvp /work/proj/s.sh: No such file or directory\n", ctx(STRICT, [], "#!/bin/sh")),
    '[specter: "/work/proj/s.sh" is a script for "/bin/sh", which is not visible under policy "strict"; ' +
      '--policy agent (or a --policy FILE with exec ["/bin"]) lets it run]',
  );
  assert.match(
    policyHint(
      "./run.sh: /opt/py/bin/python: bad interpreter: No such file or directory\n",
      ctx(AGENT, ["/opt/py/bin/python"]),
    )!,
    /"\/opt\/py\/bin\/python" is hidden by policy "agent"/,
  );
});

Deno.test("policy hint: a network error under a policy without network; none when the policy has one", () => {
  for (
    const line of [
      "bash: connect: Network is unreachable",
      "curl: (6) Could not resolve host: example.com",
      "ssh: Could not resolve hostname github.com: Temporary failure in name resolution",
      "npm error code EAI_AGAIN getaddrinfo EAI_AGAIN registry.npmjs.org",
    ]
  ) {
    assert.equal(
      policyHint(`${line}\n`, ctx(AGENT, [])),
      '[specter: there is no network under policy "agent"; a --policy FILE with network "on" (and --ack-network) ' +
        "allows it]",
      line,
    );
  }
  const online = { ...AGENT, network: "on" } as Policy;
  assert.equal(policyHint("curl: (6) Could not resolve host: example.com\n", ctx(online, [])), undefined);
  // An allow list: the program went around the proxy (a client through it never resolves a name).
  const listed = { ...AGENT, network: { allow: [] } } as unknown as Policy;
  assert.equal(
    policyHint("curl: (6) Could not resolve host: example.com\n", ctx(listed, [])),
    '[specter: under policy "agent" only the allow list\'s hosts are reachable, and only through the proxy ' +
      "that HTTPS_PROXY and HTTP_PROXY name (no DNS, no direct connection): this program did not use it]",
  );
});
