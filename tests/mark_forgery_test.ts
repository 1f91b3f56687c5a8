/**
 * Command marks cannot be forged by the programs they describe (issue 23, item 3). A sandboxed program
 * (`fixtures/attacks/forge_marks.py`) reads every file, variable, /proc entry and descriptor it can reach,
 * its parent shell's memory included, takes every nonce-like string it finds, and prints marks with each
 * (and without any) that would end its command with status 0 and add two more commands. Against bash and
 * zsh under bwrap: the nonce is never among what it found, the shell's memory, environment and descriptors
 * are out of its reach (the shell runs from an exec-only copy), no mark of its counts, its command ends with
 * its real status 7, and the command log (through a daemon, before and after the daemon is killed and
 * restarted) holds exactly the commands typed, reported by the shell. A program's own exit code always
 * comes from the kernel, never from marks.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawn } from "../src/session/spawn_session.ts";
import { Transcript } from "../src/mod.ts";
import type { Frame } from "../src/protocol/mod.ts";
import { AgentTools } from "../src/agent/mod.ts";
import { ROOT, sessionTest, withTempDir } from "./_helpers.ts";
import { cleanUp, create, FrameCollector, restart, specter, startDaemon } from "./_daemon.ts";
import { policyOf } from "./sandbox/_sandbox.ts";

const FIXTURES = join(ROOT, "fixtures");
const ATTACK = `/usr/bin/python3 ${FIXTURES}/attacks/forge_marks.py`;
// deno-lint-ignore no-control-regex -- marks are control sequences
const REAL_MARK = /\x1b\]133;A;specter=([0-9a-f]{32})\x07/;

type CommandFrame = Extract<Frame, { type: "command" }>;

function commands(frames: readonly Frame[]): CommandFrame[] {
  return frames.filter((f): f is CommandFrame => f.type === "command");
}

/** What the attack printed about itself: its REPORT lines and the candidates it found. */
function attackReport(
  text: string,
): { report: Record<string, string>; candidates: string[]; scanned: string } {
  const report: Record<string, string> = {};
  for (const m of text.matchAll(/^REPORT (\S+) (\S+)\r?$/gm)) report[m[1]!] = m[2]!;
  const candidates = [...text.matchAll(/^CANDIDATE ([0-9a-f]{32})\r?$/gm)].map((m) => m[1]!);
  return { report, candidates, scanned: /^SCANNED .*$/m.exec(text)?.[0] ?? "" };
}

/** Asserts the attack learned nothing of the shell: its memory, environment and descriptors were refused. */
function assertShellOutOfReach(text: string, nonce: string): void {
  const { report, candidates, scanned } = attackReport(text);
  assert.match(scanned, /files=[1-9]\d* proc=[1-9]\d* mem_bytes=[1-9]\d*/, `the attack ran: ${scanned}`);
  assert.ok(!candidates.includes(nonce), "the attack found the nonce");
  for (const what of ["environ", "mem", "maps", "stack", "auxv"]) {
    assert.match(
      report[`parent_${what}`] ?? "",
      /^errno=(13|1)$/,
      `the shell's ${what}: ${JSON.stringify(report)}`,
    );
  }
  // Its descriptors: none could be opened (listing their numbers may be allowed to a root caller's sandbox).
  assert.match(report.parent_fd_open ?? report.parent_fd ?? "", /^errno=(13|1)$/, JSON.stringify(report));
  assert.match(report.parent_getfd ?? "", /^errno=(13|1)$/, JSON.stringify(report));
}

// Each shell as integrated by its init file, under allexport (`-a`: every assignment exported), and bash in
// the environment fallback (`--norc`: marks from PROMPT_COMMAND, the nonce read at the first prompt).
const SHELLS = [
  ["/usr/bin/bash"],
  ["/usr/bin/zsh"],
  ["/usr/bin/bash", "-a"],
  ["/usr/bin/zsh", "-a"],
  ["/usr/bin/bash", "--norc"],
];

for (const argv of SHELLS) {
  sessionTest(
    `${argv.join(" ")} in the sandbox: a program that reads all it can forges no mark, no command, no status`,
    async () => {
      const t = new Transcript(spawn({
        argv,
        idleMs: 0,
        timeoutMs: 60_000,
        shellIntegration: true,
        env: { HOME: "/tmp" },
        sandbox: {
          mode: "bwrap",
          policy: policyOf({ exec: ["/usr/bin", "/bin"], fs: { read: [FIXTURES] } }),
        },
      }));
      try {
        await t.until((f) => f.type === "prompt", 20_000, "the first prompt");
        const nonce = REAL_MARK.exec(t.text)?.[1];
        assert.ok(nonce !== undefined, `the shell marked its prompt: ${JSON.stringify(t.text)}`);
        t.session.write("true\r");
        await t.until((f) => f.type === "command", 20_000, "the first command");
        t.session.write(`${ATTACK}\r`);
        await t.until(() => commands(t.frames).length >= 2, 50_000, "the attack's command");
        // What follows the attack: a real command, so that any late forgery would have had its chance.
        t.session.write("echo after\r");
        await t.until(
          (f) => commands(t.frames).length >= 3 && f.type === "prompt",
          20_000,
          "the last command",
        );
        const marked = commands(t.frames);
        assert.deepEqual(
          marked.map((c) => [c.command, c.exit_code, c.reported_by]),
          [["true", 0, "shell"], [ATTACK, 7, "shell"], ["echo after", 0, "shell"]],
          t.text.slice(-2000),
        );
        assertShellOutOfReach(t.text, nonce);
        assert.match(t.text, /forged/, "the forgeries were printed (and counted for nothing)");
      } finally {
        t.session.terminate(500);
        await t.exit(20_000).catch(() => {});
      }
    },
    90_000,
  );
}

sessionTest(
  "an agent's result: the program's exit code is the kernel's; marks are the shell's claim, labelled",
  async () => {
    const tools = new AgentTools({ base: { cwd: ROOT } });
    try {
      // Not a shell with Specter's integration: its marks carry no nonce, so they are what output claims.
      // It then waits for a line (`read`, a builtin: the default sandbox runs no `sleep`, and with one that
      // failed the program could exit before the call returned), so the call returns on the marks alone.
      const result = await tools.execCommand({
        cmd: ["/bin/sh", "-c", "printf '\\033]133;C\\007'; printf '\\033]133;D;0\\007'; read line; exit 7"],
        yield_time_ms: 20_000,
      });
      let last = await tools.writeStdin({
        session_id: result.session_id!,
        chars: "\r",
        yield_time_ms: 20_000,
      });
      while (last.running) {
        last = await tools.writeStdin({ session_id: result.session_id!, chars: "", yield_time_ms: 20_000 });
      }
      assert.equal(last.exit_code, 7, JSON.stringify(last));
      // The call returned on the printed marks, as marks any program could print: status 0, claimed.
      assert.equal(result.returned_on, "command", JSON.stringify(result));
      assert.deepEqual([result.command?.exit_code, result.command?.reported_by], [0, "output"]);
      assert.equal(result.exit_code, undefined, "no exit code before the program exits");
    } finally {
      await tools.close();
    }
  },
);

sessionTest(
  "daemon: the command log holds only the commands typed, reported by the shell, across a daemon restart",
  async () => {
    await withTempDir(async (dir) => {
      const daemon = await startDaemon(dir, ["--history", `${dir}/data/log.sqlite`]);
      try {
        const policy = join(dir, "policy.json");
        Deno.writeTextFileSync(
          policy,
          JSON.stringify({ version: 1, exec: ["/usr/bin", "/bin"], fs: { read: [FIXTURES], write: [] } }),
        );
        await create(daemon, "sh", ["bash"], ["--policy", policy]);
        const typed: string[] = [];
        const run = async (line: string) => {
          const client = await FrameCollector.connect(daemon);
          await client.client.call("session.attach", { name: "sh", from: 0 });
          const count = (frames: readonly Frame[]) => frames.filter((f) => f.type === "command").length;
          // Every command so far ended, and the shell at its prompt again.
          const ready = (frames: readonly Frame[]) =>
            count(frames) >= typed.length &&
            frames.findLastIndex((f) => f.type === "prompt") >
              frames.findLastIndex((f) => f.type === "command");
          await client.until(ready);
          typed.push(line);
          await client.client.call("session.send", {
            name: "sh",
            message: { v: 1, type: "input", data: `${line}\r` },
          });
          await client.until(ready, 50_000);
          client.client.close();
        };
        await run("true");
        await run(ATTACK);
        daemon.process.kill("SIGKILL");
        await daemon.process.status;
        await restart(daemon, ["--history", `${dir}/data/log.sqlite`]);
        await run(ATTACK);
        await run("echo done");
        const history = await specter([
          "history",
          "--history",
          `${dir}/data/log.sqlite`,
          "--session",
          "sh",
          "--json",
        ]);
        assert.equal(history.code, 0, history.stderr);
        const rows = history.stdout.trim().split("\n").map((line) => JSON.parse(line));
        assert.deepEqual(
          rows.map((r) => [r.command, r.exit_code, r.reported_by, r.author_kind]),
          [
            ["true", 0, "shell", "human"],
            [ATTACK, 7, "shell", "human"],
            [ATTACK, 7, "shell", "human"],
            ["echo done", 0, "shell", "human"],
          ],
          `${history.stdout}\n${daemon.log.join("\n")}`,
        );
        const failed = await specter([
          "history",
          "--history",
          `${dir}/data/log.sqlite`,
          "--failed",
          "--json",
        ]);
        assert.equal(failed.stdout.trim().split("\n").length, 2, "history --failed still shows the attacks");
        // The session's own log shows the attack's report: nothing of the shell was reachable.
        const logs = await specter(["logs", "sh", "--state-dir", daemon.stateDir, "--view", "raw"]);
        assert.equal(logs.code, 0, logs.stderr);
        const nonce = REAL_MARK.exec(logs.stdout)?.[1];
        assert.ok(nonce !== undefined, "the session's log holds its marks");
        assertShellOutOfReach(logs.stdout, nonce);
      } finally {
        await cleanUp(daemon);
      }
    });
  },
  180_000,
);

sessionTest(
  "a persistent home's start-up files are read-only inside: no program plants what its next shell runs",
  async () => {
    await withTempDir(async (dir) => {
      const layer = join(dir, "home");
      Deno.mkdirSync(layer, { mode: 0o700 });
      // The user's own start-up file, written from the host, still runs.
      Deno.writeTextFileSync(join(layer, ".bashrc"), "alias hello='echo hello-from-host-rc'\n");
      const shell = () =>
        new Transcript(spawn({
          argv: ["/usr/bin/bash"],
          idleMs: 0,
          timeoutMs: 60_000,
          shellIntegration: true,
          persistDir: layer,
          sandbox: { mode: "bwrap", policy: policyOf({ exec: ["/usr/bin", "/bin"] }) },
        }));
      const first = shell();
      try {
        await first.until((f) => f.type === "prompt", 20_000, "the first prompt");
        first.session.write(
          "hello; for f in .bashrc .zshrc .profile .bash_aliases; do " +
            "{ echo 'echo PLANTED' >> ~/$f; } 2>/dev/null || echo REFUSED-$f; " +
            "{ rm -f ~/$f && echo 'echo PLANTED' > ~/$f; } 2>/dev/null || echo REPLACE-REFUSED-$f; done\r",
        );
        await first.until((f) => f.type === "command", 20_000, "the planting");
      } finally {
        first.session.terminate(500);
        await first.exit(20_000).catch(() => {});
      }
      assert.match(first.text, /hello-from-host-rc/);
      for (const name of [".bashrc", ".zshrc", ".profile", ".bash_aliases"]) {
        assert.match(first.text, new RegExp(`REFUSED-\\${name}`), first.text);
        assert.match(first.text, new RegExp(`REPLACE-REFUSED-\\${name}`), first.text);
        assert.doesNotMatch(Deno.readTextFileSync(join(layer, name)), /PLANTED/);
      }
      // The next shell of that home runs only what the user put there.
      const second = shell();
      try {
        await second.until((f) => f.type === "prompt", 20_000, "the next shell's prompt");
        assert.doesNotMatch(second.text, /PLANTED/);
      } finally {
        second.session.terminate(500);
        await second.exit(20_000).catch(() => {});
      }
    });
  },
  90_000,
);
