/**
 * `specter daemon status|stop|listen|revoke` as a person uses them, against real processes: a daemon that
 * `specter ls` started, a session that outlives `daemon stop` in the keeper and is listed by the next
 * daemon, `stop --kill-sessions`, a listener given to a running daemon (`specter url`, a request with its
 * token), kept with its token across a restart (files 0600), a revoked token refused. Also daemon
 * sessions recorded to asciicast (`new --record`) and `logs --cast`, both read back by `specter view`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { alive, DENO, ROOT, withTempDir, withTimeout } from "./_helpers.ts";
import { DaemonStatusSchema } from "../src/protocol/mod.ts";

interface Place {
  readonly dir: string;
  readonly where: string[];
  readonly stateDir: string;
}

function placeIn(dir: string): Place {
  Deno.chmodSync(dir, 0o700);
  const stateDir = join(dir, "state");
  return { dir, stateDir, where: ["--socket", join(dir, "run", "d.sock"), "--state-dir", stateDir] };
}

/** `specter ARGS` as a person runs it (in `cwd`), its audit logs and command log beside the test's state. */
async function run(
  place: Place,
  args: string[],
  cwd = place.dir,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", join(ROOT, "main.ts"), ...args],
    cwd,
    stdin: "null",
    env: { XDG_STATE_HOME: join(place.dir, "xdg"), XDG_DATA_HOME: join(place.dir, "xdg") },
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

async function ok(place: Place, args: string[], cwd?: string): Promise<string> {
  const result = await run(place, args, cwd);
  assert.equal(result.code, 0, `specter ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

async function status(place: Place) {
  return DaemonStatusSchema.parse(
    JSON.parse(await ok(place, ["daemon", "status", "--json", ...place.where])),
  );
}

async function until(test: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!await test()) {
    if (Date.now() > deadline) throw new Error(`Never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Ends whatever daemon and keeper the test left (their pids from status, the keeper by its command line). */
async function tidy(place: Place): Promise<void> {
  await run(place, ["daemon", "stop", "--kill-sessions", ...place.where]);
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      if (cmdline.includes("keeper") && cmdline.includes(place.stateDir)) {
        Deno.kill(Number(entry.name), "SIGKILL");
      }
    } catch {
      // Gone meanwhile.
    }
  }
}

function controlTest(name: string, fn: (place: Place) => Promise<void>): void {
  Deno.test({ name, sanitizeOps: false, sanitizeResources: false }, async () => {
    await withTempDir(async (dir) => {
      const place = placeIn(dir);
      try {
        await withTimeout(fn(place), 120_000, name);
      } catch (error) {
        try {
          console.error(Deno.readTextFileSync(join(place.stateDir, "daemon.log")));
        } catch {
          // No daemon ever wrote its log.
        }
        throw error;
      } finally {
        await tidy(place);
      }
    });
  });
}

function mode(path: string): number {
  return (Deno.statSync(path).mode ?? 0) & 0o777;
}

controlTest(
  "daemon status with and without a daemon; stop leaves sessions in the keeper and the next daemon lists them; stop --kill-sessions ends them",
  async (place) => {
    const none = await run(place, ["daemon", "status", ...place.where]);
    assert.equal(none.code, 3, none.stderr); // Not running (as systemctl status), not a failure (125).
    assert.match(none.stdout, /No daemon runs on ".*d\.sock"/);
    const noneJson = await run(place, ["daemon", "status", "--json", ...place.where]);
    assert.equal(DaemonStatusSchema.parse(JSON.parse(noneJson.stdout)).running, false);
    const stopNone = await run(place, ["daemon", "stop", ...place.where]);
    // Stop never starts a daemon to stop it; nothing to stop is said, with status's 3.
    assert.equal(stopNone.code, 3, stopNone.stderr);
    assert.match(stopNone.stdout, /No daemon runs on ".*d\.sock": nothing to stop/);
    assert.equal((await run(place, ["daemon", "status", ...place.where])).code, 3, "and none was started");

    await ok(place, ["ls", ...place.where]); // Starts the daemon, as a person's first command does.
    const first = await status(place);
    assert.equal(first.running, true);
    assert.ok(first.pid !== null && alive(first.pid));
    assert.ok(first.keeper_pid !== null && alive(first.keeper_pid));
    assert.equal(first.state_dir, place.stateDir);
    assert.equal(first.listener, null);
    assert.equal(first.sessions, 0);
    const human = await ok(place, ["daemon", "status", ...place.where]);
    assert.match(human, new RegExp(`daemon +running \\(pid ${first.pid},`));
    assert.match(human, /listener +none \(specter daemon listen/);
    // No listener was configured: nothing about one is written.
    for (const file of ["listen.json", "remote.json"]) {
      assert.throws(() => Deno.statSync(join(place.stateDir, file)), Deno.errors.NotFound, file);
    }

    const entry = JSON.parse(
      await ok(place, [
        "new",
        "waits",
        "--json",
        ...place.where,
        "--",
        "/bin/sh",
        "-c",
        "read line; echo got:$line",
      ]),
    );
    const stopped = await ok(place, ["daemon", "stop", ...place.where]);
    assert.match(stopped, /stopped; its 1 running session goes on in the keeper/);
    assert.ok(!alive(first.pid!), "the daemon's process is gone when stop returns");
    assert.ok(alive(entry.pid), "its session runs on in the keeper");
    assert.ok(alive(first.keeper_pid!));

    const listed = await ok(place, ["ls", ...place.where]); // A new daemon, started by ls, takes it back.
    assert.match(listed, /^waits\trunning\t/m);
    const second = await status(place);
    assert.notEqual(second.pid, first.pid);
    assert.equal(second.keeper_pid, first.keeper_pid);
    assert.equal(second.running_sessions, 1);
    await ok(place, ["send", "waits", "hi", "--enter", ...place.where]);
    await until(() => !alive(entry.pid), "waits ends");
    await until(
      async () => /^waits\texited 0\t/m.test(await ok(place, ["ls", ...place.where])),
      "the taken-back session's end is recorded",
    );

    const doomed = JSON.parse(
      await ok(place, ["new", "doomed", "--json", ...place.where, "--", "/bin/sh", "-c", "read x"]),
    );
    const killed = await ok(place, ["daemon", "stop", "--kill-sessions", ...place.where]);
    assert.match(killed, /its 1 running session was ended/);
    await until(() => !alive(doomed.pid), "the session ends with --kill-sessions");
    // Its end was released to the keeper before the daemon left (the keeper holds nothing for a next daemon).
    assert.match(
      Deno.readTextFileSync(join(place.stateDir, "keeper.log")),
      /session "doomed" released/,
      "the killed session is released before the daemon stops",
    );
    const after = await ok(place, ["ls", ...place.where]);
    assert.match(after, /^doomed\tkilled \(/m);
  },
);

controlTest(
  "daemon listen on a running daemon: specter url works, its token is accepted; a restart keeps listener and token (0600); revoke and listen off",
  async (place) => {
    await ok(place, ["ls", ...place.where]);
    const refused = await run(place, ["url", ...place.where]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /E_REMOTE_NONE: .*specter daemon listen 127\.0\.0\.1:PORT/);
    const locked = await run(place, ["daemon", "--bind", "127.0.0.1:0", ...place.where]);
    assert.match(locked.stderr, /E_DAEMON_LOCKED: .*specter daemon listen 127\.0\.0\.1:0/);

    assert.match(
      await ok(place, ["daemon", "listen", "127.0.0.1:0", ...place.where]),
      /web viewer is at http:/,
    );
    const url = (await ok(place, ["url", ...place.where])).trim();
    const token = url.slice(url.indexOf("#token=") + 7);
    const origin = new URL(url).origin;
    const check = async (presented: string) => {
      const answer = await fetch(`${origin}/v1/token`, { headers: { authorization: `Bearer ${presented}` } });
      await answer.body?.cancel();
      return answer.status;
    };
    assert.equal(await check(token), 204, "the token specter url prints is accepted");
    const page = await fetch(url.slice(0, url.indexOf("#")));
    assert.equal(page.status, 200);
    await page.body?.cancel();
    assert.equal((await status(place)).listener, `${origin}/`);
    for (const file of ["listen.json", "remote.json"]) {
      assert.equal(mode(join(place.stateDir, file)), 0o600, file);
    }

    await ok(place, ["daemon", "stop", ...place.where]);
    // With no daemon running, url starts one (a listener is remembered); it listens there again, same token.
    assert.equal((await ok(place, ["url", ...place.where])).trim(), url, "the old address still works");
    assert.equal(await check(token), 204);
    assert.equal(mode(join(place.stateDir, "listen.json")), 0o600);

    assert.match(await ok(place, ["daemon", "revoke", ...place.where]), /old ones are refused/);
    assert.equal(await check(token), 401, "a revoked token is refused");
    const renewed = (await ok(place, ["url", ...place.where])).trim();
    assert.notEqual(renewed, url);
    assert.equal(await check(renewed.slice(renewed.indexOf("#token=") + 7)), 204);
    const saved = Deno.readTextFileSync(join(place.stateDir, "listen.json"));
    assert.ok(!saved.includes(token), "the revoked token is forgotten");

    await ok(place, ["daemon", "listen", "off", ...place.where]);
    assert.throws(() => Deno.statSync(join(place.stateDir, "listen.json")), Deno.errors.NotFound);
    await ok(place, ["daemon", "stop", ...place.where]);
    const none = await run(place, ["url", ...place.where]);
    assert.equal(none.code, 2, "no listener remembered: url starts no daemon");
    assert.match(none.stderr, /E_REMOTE_NONE: /);
    assert.equal((await run(place, ["daemon", "status", ...place.where])).code, 3, "none was started");
    await ok(place, ["ls", ...place.where]);
    assert.equal((await status(place)).listener, null, "listen off is remembered too");
  },
);

controlTest(
  "new --record writes asciicast v2 (0600, a new file) that specter view reads; logs --cast of an ended session too",
  async (place) => {
    const out = join(place.dir, "out");
    Deno.mkdirSync(out);
    await ok(place, ["ls", ...place.where]);
    await ok(place, [
      "new",
      "rec",
      ...place.where,
      "--record",
      "rec.cast",
      "--record-input",
      "--",
      "/bin/sh",
      "-c",
      "echo hello-rec; read line; echo got-$line",
    ], out);
    await until(() => {
      try {
        return Deno.readTextFileSync(join(out, "rec.cast")).includes("hello-rec");
      } catch {
        return false;
      }
    }, "the recording is written as the session runs");
    await ok(place, ["send", "rec", "abc", "--enter", ...place.where]);
    await until(() => Deno.readTextFileSync(join(out, "rec.cast")).includes("got-abc"), "rec's last line");
    await until(async () => /^rec\texited 0\t/m.test(await ok(place, ["ls", ...place.where])), "rec ends");
    const cast = join(out, "rec.cast");
    assert.equal(mode(cast), 0o600);
    const lines = Deno.readTextFileSync(cast).trim().split("\n").map((line) => JSON.parse(line));
    assert.equal(lines[0].version, 2);
    assert.ok(lines.some((event) => event[1] === "i" && event[2] === "abc"), "--record-input records input");
    const viewed = await ok(place, ["view", cast, "--text"]);
    assert.match(viewed, /got-abc/);

    // The file must be new: an existing one (or a link planted there) is refused, never truncated.
    Deno.symlinkSync(join(place.dir, "victim"), join(out, "link.cast"));
    const again = await run(place, [
      "new",
      "rec2",
      ...place.where,
      "--record",
      "link.cast",
      "--",
      "/bin/true",
    ], out);
    assert.match(again.stderr, /E_RECORD: .*exists already/);
    assert.throws(() => Deno.statSync(join(place.dir, "victim")), Deno.errors.NotFound);
    // A recording inside the session's own write grant is refused, as for run.
    const exposed = await run(place, [
      "new",
      "rec3",
      ...place.where,
      "--policy",
      "workspace",
      "--ack-unsafe-write",
      "--record",
      "w.cast",
      "--",
      "/bin/true",
    ], out);
    assert.match(exposed.stderr, /E_POLICY_ARTIFACTS_EXPOSED/);

    const exported = join(place.dir, "exported.cast");
    await ok(place, ["logs", "rec", "--cast", exported, "--state-dir", place.stateDir]);
    const events = Deno.readTextFileSync(exported).trim().split("\n").map((line) => JSON.parse(line));
    assert.equal(events[0].version, 2);
    assert.equal(events[0].title, "rec");
    assert.ok(events.slice(1).every((event) => event[1] === "o" || event[1] === "r"));
    assert.match(await ok(place, ["view", exported, "--text"]), /hello-rec[\s\S]*got-abc/);
  },
);
