/**
 * A client trusts only its own daemon (issue 23, item 1). Another local user (uid 65534, a real process
 * made with setpriv) listens where a client would connect: a directory it owns, a directory of ours that
 * others may enter, a symlink to its directory, its socket file in our private directory, and a socket
 * file of ours on which it called listen(). Every client (`new` with a secret in --env, `send`, `attach`,
 * `ls`, `kill`, `agent --daemon`) must exit with `E_DAEMON_UNTRUSTED` while the attacker receives not one
 * byte (and, but for the last case, not even a connection); `url` must refuse a state directory or a
 * `remote.json` that is not ours, or one naming another user's process, printing no token. The daemon
 * must refuse a keeper of another uid, and the default socket (`/tmp/specter-UID`, XDG_RUNTIME_DIR unset)
 * made first by another user is refused too (in a mount namespace of its own: a real /tmp is untouched).
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AS_ATTACKER, Attacker, ATTACKER_PY, ATTACKER_UID, type Seen } from "./_attacker.ts";
import { cleanUp, startDaemon, whereArgs } from "./_daemon.ts";
import { DENO, ROOT } from "./_helpers.ts";

const ROOT_ONLY = Deno.uid() !== 0; // setpriv, chown and mount need root.
const options = { sanitizeOps: false, sanitizeResources: false, ignore: ROOT_ONLY };

/** The environment of the test without XDG_RUNTIME_DIR (sudo, su, cron, ssh without pam_systemd). */
function clientEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.XDG_RUNTIME_DIR;
  return env;
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Far longer than a refusal takes (one process start). */
const CLIENT_TIMEOUT_MS = 20_000;

async function specter(args: string[], stdin = ""): Promise<Run> {
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", join(ROOT, "main.ts"), ...args],
    clearEnv: true,
    env: clientEnv(),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin)).catch(() => {});
  await writer.close().catch(() => {});
  // A client that trusted the attacker would wait for it for good (attach, agent): ended, and failed below.
  const timer = setTimeout(() => child.kill("SIGKILL"), CLIENT_TIMEOUT_MS);
  const out = await child.output().finally(() => clearTimeout(timer));
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Every client of the daemon socket, as a person would run it; the secret is what must not leak. */
const SECRET = "s3cr3t-token-value";
function clients(where: string[]): { name: string; args: string[]; stdin?: string }[] {
  return [
    { name: "new", args: ["new", "job", ...where, "--env", `TOKEN=${SECRET}`, "--", "bash"] },
    { name: "send", args: ["send", "job", ...where, `echo ${SECRET}`, "--enter"] },
    { name: "attach", args: ["attach", "job", ...where] },
    { name: "ls", args: ["ls", ...where] },
    { name: "kill", args: ["kill", "job", ...where] },
    {
      name: "agent --daemon",
      args: ["agent", "--daemon", ...where],
      stdin: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exec_command",` +
        `"arguments":{"cmd":"echo ${SECRET}"}}}\n`,
    },
  ];
}

/** A place with a "/tmp" of its own (mode 1777, as the real one) that the attacker can reach. */
async function withPlace(fn: (base: string, tmp: string) => Promise<void>): Promise<void> {
  const base = await Deno.makeTempDir({ prefix: "specter-trust-" });
  Deno.chmodSync(base, 0o711);
  const tmp = join(base, "tmp");
  Deno.mkdirSync(tmp);
  Deno.chmodSync(tmp, 0o1777);
  try {
    await fn(base, tmp);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

interface Case {
  readonly name: string;
  /** What the message must say. */
  readonly says: RegExp;
  /** True when the client connects (and then refuses by the peer's credentials). */
  readonly connects?: boolean;
  /** Sets the place up; returns the attacker and the socket path the clients are given. */
  readonly setUp: (base: string, tmp: string) => Promise<{ attacker: Attacker; socket: string }>;
}

const CASES: Case[] = [
  {
    name: "(a) the directory is the attacker's (made first in a shared /tmp)",
    says:
      /directory of the daemon's socket ".*" belongs to uid 65534, not to this user \(uid 0\).*XDG_RUNTIME_DIR/,
    setUp: async (_base, tmp) => {
      const dir = join(tmp, "specter-0");
      const attacker = await Attacker.start(["stream", `mkdir:${dir}`, `bind:${dir}/daemon.sock`]);
      return { attacker, socket: join(dir, "daemon.sock") };
    },
  },
  {
    name: "(b) the directory is ours but mode 0777",
    says: /has mode 0777.*chmod 700/,
    setUp: async (_base, tmp) => {
      const dir = join(tmp, "open");
      Deno.mkdirSync(dir);
      Deno.chmodSync(dir, 0o777);
      const attacker = await Attacker.start(["stream", `bind:${dir}/daemon.sock`]);
      return { attacker, socket: join(dir, "daemon.sock") };
    },
  },
  {
    name: "(b') the directory is ours, mode 0755 now (the attacker got in while it was open)",
    says: /has mode 0755/,
    setUp: async (_base, tmp) => {
      const dir = join(tmp, "was-open");
      Deno.mkdirSync(dir);
      Deno.chmodSync(dir, 0o777);
      const attacker = await Attacker.start(["stream", `bind:${dir}/daemon.sock`]);
      Deno.chmodSync(dir, 0o755);
      return { attacker, socket: join(dir, "daemon.sock") };
    },
  },
  {
    name: "(c) the directory is a symlink (the attacker's) to the attacker's directory",
    says: /directory of the daemon's socket ".*" is a symlink/,
    setUp: async (_base, tmp) => {
      const real = join(tmp, "attackers");
      const link = join(tmp, "specter-link");
      const attacker = await Attacker.start([
        "stream",
        `mkdir:${real}`,
        `bind:${real}/daemon.sock`,
        `link:${link}:${real}`,
      ]);
      return { attacker, socket: join(link, "daemon.sock") };
    },
  },
  {
    name: "(d) the socket file is the attacker's, in our 0700 directory",
    says: /daemon's socket ".*" belongs to uid 65534/,
    setUp: async (base) => {
      const dir = join(base, "ours");
      Deno.mkdirSync(dir);
      Deno.chmodSync(dir, 0o777); // Open for a while: the attacker's socket got in.
      const attacker = await Attacker.start(["stream", `bind:${dir}/daemon.sock`]);
      Deno.chmodSync(dir, 0o700);
      assert.equal(Deno.lstatSync(join(dir, "daemon.sock")).uid, ATTACKER_UID);
      return { attacker, socket: join(dir, "daemon.sock") };
    },
  },
  {
    name: "(e) our directory and our socket file, but the process that listens runs as the attacker",
    says: /process listening on the daemon's socket ".*" \(pid \d+\) runs as uid 65534/,
    connects: true,
    setUp: async (base) => {
      const dir = join(base, "ours-e");
      Deno.mkdirSync(dir, { mode: 0o700 });
      const socket = join(dir, "daemon.sock");
      const attacker = await Attacker.start(["stream", socket], true);
      const info = Deno.lstatSync(socket);
      assert.equal(info.uid, 0, "the file is root's");
      assert.equal(info.mode! & 0o777, 0o600);
      return { attacker, socket };
    },
  },
];

for (const c of CASES) {
  Deno.test({
    name: `trust: ${c.name}: every client refuses with E_DAEMON_UNTRUSTED before sending a byte`,
    ...options,
    fn: () =>
      withPlace(async (base, tmp) => {
        const { attacker, socket } = await c.setUp(base, tmp);
        const state = join(base, "state");
        const runs: { name: string; run: Run }[] = [];
        let seen: Seen;
        try {
          // Autostart stays on: a refusal must not start a daemon over the attacker's socket either.
          for (const client of clients(["--socket", socket, "--state-dir", state])) {
            runs.push({ name: client.name, run: await specter(client.args, client.stdin) });
          }
        } finally {
          seen = await attacker.finish();
        }
        for (const { name, run } of runs) {
          assert.equal(run.code, 125, `${name}: ${run.stderr}`);
          assert.match(run.stderr, /^specter: E_DAEMON_UNTRUSTED: /m, name);
          assert.match(run.stderr, c.says, name);
          assert.ok(!run.stdout.includes(SECRET), name);
        }
        assert.equal(seen.bytes, 0, "the attacker received nothing");
        assert.equal(seen.conns, c.connects === true ? runs.length : 0, "connections the attacker saw");
        let started = true;
        try {
          Deno.statSync(state);
        } catch {
          started = false;
        }
        assert.equal(started, false, "no daemon was started");
      }),
  });
}

Deno.test({
  name:
    "trust: the default socket (/tmp/specter-UID, XDG_RUNTIME_DIR unset) made first by another user is refused",
  ...options,
  fn: async () => {
    // A mount namespace with its own tmpfs on /tmp: the machine's /tmp/specter-0 (a real daemon) is not
    // touched, and this one is exactly where the client looks.
    // A checkout under /tmp (a CI clone) stays reachable through /mnt, where the real /tmp is bound first.
    const outside = (path: string) => path.startsWith("/tmp/") ? `/mnt/${path.slice(5)}` : path;
    const script = `set -u
mkdir -p /mnt && mount --bind /tmp /mnt || exit 91
mount -t tmpfs -o mode=1777 tmpfs /tmp || exit 90
${
      AS_ATTACKER.join(" ")
    } /usr/bin/python3 -c "$ATTACKER_PY" stream mkdir:/tmp/specter-0 bind:/tmp/specter-0/daemon.sock > /tmp/attacker.out &
attacker=$!
for i in $(seq 200); do grep -q '^ready$' /tmp/attacker.out && break; sleep 0.05; done
# The state directory is given (in this namespace's /tmp): a daemon started by mistake stays in it.
for cmd in "ls --state-dir /tmp/state" "new job --state-dir /tmp/state --env TOKEN=${SECRET} -- bash" \
  "send job --state-dir /tmp/state hello --enter" "kill job --state-dir /tmp/state"; do
  $DENO run -A $MAIN $cmd < /dev/null > /tmp/out 2> /tmp/err
  echo "=== $cmd: exit $?"
  cat /tmp/err /tmp/out
done
echo "=== state: $(ls -d /tmp/state 2>/dev/null || echo none)"
kill -TERM $attacker
wait $attacker
cat /tmp/attacker.out
`;
    const env = clientEnv();
    const out = await new Deno.Command("unshare", {
      args: ["--mount", "--propagation", "private", "bash", "-c", script],
      clearEnv: true,
      env: { ...env, ATTACKER_PY, DENO: outside(DENO), MAIN: outside(join(ROOT, "main.ts")) },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    const why = `${text}\n${new TextDecoder().decode(out.stderr)}`;
    assert.equal(out.code, 0, why);
    const runs = text.split(/^=== /m).filter((part) => /: exit \d+/.test(part));
    assert.equal(runs.length, 4, why);
    for (const run of runs) {
      assert.match(run, /: exit 125\n/, why);
      assert.match(
        run,
        /E_DAEMON_UNTRUSTED: The directory of the daemon's socket "\/tmp\/specter-0" belongs to uid 65534/,
        why,
      );
    }
    assert.match(text, /^=== state: none$/m, "no daemon was started");
    assert.match(text, /^summary conns=0 bytes=0$/m, why);
  },
});

Deno.test({
  name: "trust: the daemon refuses a keeper whose listener runs as another uid (it would get every secret)",
  ...options,
  fn: () =>
    withPlace(async (base) => {
      const state = join(base, "state");
      Deno.mkdirSync(state, { mode: 0o700 });
      // A keeper's socket of root's in root's state directory, listened on by the attacker, who says hello
      // as a keeper would: a daemon that trusted it would send it every session's argv and environment.
      const attacker = await Attacker.start(["seqpacket", join(state, "keeper.sock"), "hello"], true);
      let run: Run | undefined;
      let seen: Seen;
      try {
        run = await specter(["daemon", "--socket", join(base, "run", "d.sock"), "--state-dir", state]);
      } finally {
        seen = await attacker.finish();
      }
      assert.equal(run.code, 125, run.stderr);
      assert.match(
        run.stderr,
        /E_DAEMON_UNTRUSTED: The process listening on the keeper's socket ".*keeper.sock" \(pid \d+\) runs as uid 65534/,
      );
      assert.deepEqual(seen, { conns: 1, bytes: 0 });
    }),
});

Deno.test({
  name:
    "trust: specter url reads only this user's remote.json, in a private state directory, of a daemon of this user's",
  ...options,
  fn: () =>
    withPlace(async (base, tmp) => {
      const sleeper = new Deno.Command(AS_ATTACKER[0]!, {
        args: [...AS_ATTACKER.slice(1), "sleep", "60"],
        stdout: "null",
        stderr: "null",
      }).spawn();
      const info = (pid: number) =>
        JSON.stringify({
          url: "http://attacker.example:8080/",
          pid,
          tls: false,
          compress: "none",
          token_file: null,
          viewer_token: "v".repeat(43),
          control_token: "c".repeat(43),
        });
      const asAttacker = async (steps: string[]) => {
        const attacker = await Attacker.start(["stream", ...steps]);
        await attacker.finish();
      };
      try {
        const cases: { name: string; state: string; says: RegExp }[] = [];
        // (a) The attacker's own directory.
        const theirs = join(tmp, "theirs");
        await asAttacker([`mkdir:${theirs}`, `write:${theirs}/remote.json:${info(sleeper.pid)}`]);
        cases.push({ name: "(a)", state: theirs, says: /state directory ".*" belongs to uid 65534/ });
        // (b) Ours, but others may write in it (the attacker did).
        const open = join(tmp, "open");
        Deno.mkdirSync(open);
        Deno.chmodSync(open, 0o777);
        await asAttacker([`write:${open}/remote.json:${info(sleeper.pid)}`]);
        cases.push({ name: "(b)", state: open, says: /state directory ".*" has mode 0777/ });
        // (c) A symlink (the attacker's) to the attacker's directory.
        const link = join(tmp, "link");
        await asAttacker([`link:${link}:${theirs}`]);
        cases.push({ name: "(c)", state: link, says: /state directory ".*" is a symlink/ });
        // (d) The attacker's remote.json in our 0700 directory.
        const ours = join(base, "ours");
        Deno.mkdirSync(ours);
        Deno.chmodSync(ours, 0o777);
        await asAttacker([`write:${ours}/remote.json:${info(sleeper.pid)}`]);
        Deno.chmodSync(ours, 0o700);
        cases.push({ name: "(d)", state: ours, says: /remote access file ".*" belongs to uid 65534/ });
        // (e) Our directory and our file, naming a process of the attacker's.
        const named = join(base, "named");
        Deno.mkdirSync(named, { mode: 0o700 });
        Deno.writeTextFileSync(join(named, "remote.json"), info(sleeper.pid), { mode: 0o600 });
        cases.push({ name: "(e)", state: named, says: /daemon named in ".*" \(pid \d+\) runs as uid 65534/ });
        for (const c of cases) {
          const run = await specter(["url", "--state-dir", c.state]);
          assert.equal(run.code, 125, `${c.name}: ${run.stderr}`);
          assert.match(run.stderr, /^specter: E_DAEMON_UNTRUSTED: /m, c.name);
          assert.match(run.stderr, c.says, c.name);
          assert.equal(run.stdout, "", `${c.name}: no address, no token`);
        }
        // The same file naming a process of ours is read.
        Deno.writeTextFileSync(join(named, "remote.json"), info(Deno.pid), { mode: 0o600 });
        const good = await specter(["url", "--state-dir", named]);
        assert.equal(good.code, 0, good.stderr);
        assert.equal(good.stdout.trim(), `http://attacker.example:8080/#token=${"v".repeat(43)}`);
      } finally {
        sleeper.kill("SIGKILL");
        await sleeper.status;
      }
    }),
});

Deno.test({
  name: "trust: a daemon of this user's is still reached (XDG_RUNTIME_DIR unset): ls, new, send, kill",
  ...options,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "specter-trust-ok-" });
    const daemon = await startDaemon(dir);
    try {
      const where = [...whereArgs(daemon), "--no-autostart"];
      const created = await specter([
        "new",
        "job",
        ...where,
        "--json",
        "--policy",
        "basic",
        "--",
        "sleep",
        "30",
      ]);
      assert.equal(created.code, 0, created.stderr);
      assert.equal(JSON.parse(created.stdout).name, "job");
      const sent = await specter(["send", "job", ...where, "x"]);
      assert.equal(sent.code, 0, sent.stderr);
      const listed = await specter(["ls", ...where, "--json"]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal(JSON.parse(listed.stdout.trim()).running, true);
      const killed = await specter(["kill", "job", ...where]);
      assert.equal(killed.code, 0, killed.stderr);
    } finally {
      await cleanUp(daemon);
      await Deno.remove(dir, { recursive: true });
    }
  },
});
