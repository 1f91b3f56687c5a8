/**
 * The command line for people (issue 25), against real processes: typos name the nearest flag, preset,
 * command and key; one limit for --cols; one exit status for a missing session in every command; the
 * policy hint of exec; new's line, ls's empty and timed-out rows; colour on a terminal only; and every
 * command that prints ends quietly with 141 when its reader is gone (`specter … | head -1`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DENO, ROOT, withTempDir, withTimeout } from "./_helpers.ts";
import { cleanUp, specter, startDaemon, whereArgs } from "./_daemon.ts";

const MAIN = join(ROOT, "main.ts");

/**
 * Runs `specter ARGS` with stdout a pipe whose reader closes its end before Specter has started (every
 * write meets a closed pipe, as `| head -1` does once it has its line); its status and stderr.
 */
async function closedPipe(args: readonly string[], dir: string): Promise<{ status: string; stderr: string }> {
  const quoted = args.map((a) => `'${a}'`).join(" ");
  const err = join(dir, `err-${crypto.randomUUID()}`);
  const script = `"${DENO}" run -A "${MAIN}" ${quoted} 2>"${err}" | { exec 0<&-; }; ` +
    `echo "status=\${PIPESTATUS[0]}"`;
  const out = await new Deno.Command("bash", { args: ["-c", script], stdin: "null" }).output();
  return {
    status: new TextDecoder().decode(out.stdout).trim(),
    stderr: await Deno.readTextFile(err),
  };
}

Deno.test("each kind of typo names the nearest known one, as E_USAGE (or the preset's code) with exit 2", async () => {
  const cases: [string[], RegExp][] = [
    [
      ["exec", "--timout", "5s", "--", "true"],
      /^specter: E_USAGE: Unknown flag "--timout"; did you mean "--timeout"\?$/m,
    ],
    [["exec", "--policy", "basc", "--", "true"], /E_POLICY_NOT_FOUND: .*; did you mean "basic"\?$/m],
    [["atach", "x"], /^specter: E_USAGE: Unknown command "atach"; did you mean "attach"\?/m],
    [
      ["send", "x", "--key", "ctrl-cc"],
      /^specter: E_USAGE: Flag "--key": Unknown key "ctrl-cc"; did you mean "ctrl-c"\?$/m,
    ],
  ];
  for (const [args, expected] of cases) {
    const result = await specter(args);
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, expected);
    assert.doesNotMatch(result.stderr, /Unknown option|To specify a positional/);
  }
});

Deno.test("send: a signal it cannot send, a size out of range, or a message with text is E_USAGE, exit 2, before any daemon", async () => {
  const cases: [string[], RegExp][] = [
    [
      ["send", "x", "--signal", "FOO"],
      /^specter: E_USAGE: Flag "--signal" needs a signal name, one of INT, TERM, /m,
    ],
    [["send", "x", "--signal", "2"], /one of INT, .*; got "2"$/m],
    [["send", "x", "--resize", "0x0"], /^specter: E_USAGE: Flag "--resize" is out of range: cols: /m],
    [["send", "x", "--resize", "5000x5000"], /^specter: E_USAGE: Flag "--resize" is out of range: cols: /m],
    [
      ["send", "x", "--resize", "100x30", "hello"],
      /^specter: E_USAGE: Flag "--resize" sends only that message: /m,
    ],
    [["send", "x", "--key", "ctrl-c", "--signal", "INT"], /^specter: E_USAGE: Flag "--signal" sends only /m],
    [
      ["send", "x", "--signal", "INT", "--resize", "80x24"],
      /Flags "--signal" and "--resize" each send a message/,
    ],
  ];
  for (const [args, expected] of cases) {
    // No daemon is asked: a socket that does not exist would make it E_DAEMON_UNAVAILABLE.
    const result = await specter([...args, "--socket", "/nonexistent/d.sock", "--no-autostart"]);
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, expected);
    assert.doesNotMatch(result.stderr, /Unexpected failure|"code": "invalid_value"/);
  }
});

Deno.test("new: a missing command names the name it took, a bad name says the rule, both E_USAGE", async () => {
  const where = ["--socket", "/nonexistent/d.sock", "--no-autostart"];
  const missing = await specter(["new", ...where, "--", "bash"]);
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(
    missing.stderr,
    /^specter: E_USAGE: No command given after the name "bash": specter new NAME/m,
  );
  const hidden = await specter(["new", ".hidden", ...where, "--", "bash"]);
  assert.equal(hidden.code, 2, hidden.stderr);
  assert.match(hidden.stderr, /must start with a letter or a digit, then letters, digits/);
});

Deno.test("--cols 0 and --cols 99999 name the same range, the one help quotes", async () => {
  const low = await specter(["exec", "--cols", "0", "--", "true"]);
  const high = await specter(["exec", "--cols", "99999", "--", "true"]);
  const range = (text: string) => /from 1 to (\d+)/.exec(text)?.[1];
  assert.equal(low.code, 2);
  assert.equal(high.code, 2);
  assert.equal(range(low.stderr), "1000", low.stderr);
  assert.equal(range(high.stderr), "1000", high.stderr);
  const help = await specter(["help", "exec"]);
  assert.match(help.stdout, /--cols N +Terminal width in columns \(default 80, from 1 to 1000\)/);
});

Deno.test("exec under strict says once, on stderr, that the policy hid a program and which flag shows it", async () => {
  const result = await specter(["exec", "--", "bash", "-c", "ls /; echo after"]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(JSON.parse(result.stdout).output, "/usr/bin/bash: line 1: ls: command not found\nafter\n");
  const hints = result.stderr.split("\n").filter((line) => line.includes("not visible under policy"));
  assert.equal(hints.length, 1, result.stderr);
  assert.match(hints[0]!, /"ls" .* policy "strict"; --policy agent/);
});

Deno.test({
  name: "daemon sessions: new's line and --json, ls empty and timed out, one status for a missing session",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await withTempDir(async (dir) => {
      const daemon = await startDaemon(dir);
      try {
        await withTimeout(
          (async () => {
            const where = [...whereArgs(daemon), "--no-autostart"];
            const empty = await specter(["ls", ...where]);
            assert.equal(empty.code, 0, empty.stderr);
            assert.equal(empty.stdout, "no sessions\n");
            assert.equal((await specter(["ls", ...where, "--json"])).stdout, "");

            const created = await specter(["new", "slow", ...where, "--timeout", "1s", "--", "sleep", "30"]);
            assert.equal(created.code, 0, created.stderr);
            assert.match(created.stdout, /^started slow \(pid \d+\); attach with: specter attach slow\n$/);
            const json = await specter(["new", "quick", ...where, "--json", "--", "true"]);
            assert.equal(JSON.parse(json.stdout).name, "quick");

            let ls = "";
            for (let i = 0; i < 100 && !/timed out/.test(ls); i++) {
              await new Promise((resolve) => setTimeout(resolve, 100));
              ls = (await specter(["ls", ...where])).stdout;
            }
            assert.match(ls, /^slow\ttimed out after 1s\t\d+\t0\t\/usr\/bin\/sleep 30$/m);
            // Created first, listed first.
            assert.deepEqual(ls.trim().split("\n").slice(1).map((row) => row.split("\t")[0]), [
              "slow",
              "quick",
            ]);

            // (attach without a terminal refuses first, E_USAGE, exit 2 too: tests/attach_terminal_test.ts.)
            const missing = [
              ["send", "nope", ...where, "x"],
              ["kill", "nope", ...where],
              ["logs", "nope", "--state-dir", daemon.stateDir],
            ];
            // ls and logs print too: a reader gone before them ends them quietly with 141.
            for (const args of [["ls", ...where], ["logs", "slow", "--state-dir", daemon.stateDir]]) {
              const { status, stderr } = await closedPipe(args, dir);
              assert.equal(status, "status=141", `${args.join(" ")}: ${stderr}`);
              assert.equal(stderr, "", `${args[0]} is quiet`);
            }
            for (const args of missing) {
              const result = await specter(args);
              assert.equal(result.code, 2, `${args[0]}: ${result.stderr}`);
              assert.match(result.stderr, /^specter: E_SESSION_UNKNOWN: No session is named "nope"/, args[0]);
            }
            // attach, on a terminal (script's pty): the same error and status.
            const attach = `"${DENO}" run -A "${MAIN}" attach nope ${where.join(" ")}; echo "RC=$?"`;
            const onTty = await new Deno.Command("script", {
              args: ["-qec", attach, "/dev/null"],
              stdin: "null",
            })
              .output();
            const said = new TextDecoder().decode(onTty.stdout);
            assert.match(said, /specter: E_SESSION_UNKNOWN: No session is named "nope"[\s\S]*RC=2/, said);
          })(),
          60_000,
          "daemon sessions",
        );
      } catch (error) {
        console.error(daemon.log.join("\n"));
        throw error;
      } finally {
        await cleanUp(daemon);
      }
    });
  },
});

const SCENARIO = `version: 1
name: colours
run: { argv: [/bin/sh, -c, "echo ready; sleep 0.1"] }
steps:
  - wait_for: { text: "ready" }
  - wait_for: { exit: true }
`;

Deno.test("test: green and red on a terminal (script), plain with NO_COLOR or through a pipe", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "s.yaml"), SCENARIO);
    const command = `"${DENO}" run -A "${MAIN}" test "${dir}/s.yaml" --artifacts "${dir}/a"`;
    const onTerminal = async (env: Record<string, string>) => {
      const result = await new Deno.Command("script", {
        args: ["-qec", command, "/dev/null"],
        env,
        stdin: "null",
      }).output();
      return new TextDecoder().decode(result.stdout);
    };
    // NO_COLOR empty counts as unset (no-color.org): the caller's own NO_COLOR must not leak in.
    const coloured = await onTerminal({ NO_COLOR: "" });
    assert.ok(coloured.includes("\x1b[32m✓\x1b[39m"), coloured);
    assert.ok(coloured.includes("\x1b[32mPASSED\x1b[39m"), coloured);
    const noColor = await onTerminal({ NO_COLOR: "1" });
    assert.match(noColor, /PASSED/);
    assert.ok(!noColor.includes("\x1b[32m") && !noColor.includes("\x1b[31m"), noColor);
    const piped = await specter(["test", `${dir}/s.yaml`, "--artifacts", `${dir}/b`]);
    assert.equal(piped.code, 0, piped.stderr);
    assert.match(piped.stdout, /✓ +1 wait_for/);
    assert.ok(!piped.stdout.includes("\x1b"), piped.stdout);
  });
});

Deno.test("every command that prints ends quietly with 141 when its reader is gone", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "s.yaml"), SCENARIO);
    const lines = Array.from({ length: 2000 }, (_, i) => JSON.stringify([i / 100, "o", `line ${i}\r\n`]));
    await Deno.writeTextFile(
      join(dir, "r.cast"),
      ['{"version":2,"width":80,"height":24}', ...lines].join("\n"),
    );
    await Deno.writeTextFile(join(dir, "golden.txt"), "something else\n");
    const commands: string[][] = [
      ["--help"],
      ["--version"],
      ["help", "exec"],
      ["exec", "--", "echo", "hi"],
      ["policy", "explain", "strict"],
      ["policy", "check", "strict"],
      ["policy", "render", "strict"],
      ["sandbox", "probe"],
      ["test", join(dir, "s.yaml"), "--artifacts", join(dir, "a")],
      ["verify", join(dir, "golden.txt"), "--", "echo", "hi"],
      ["audit", "verify", join(dir, "run")],
      ["view", join(dir, "r.cast")],
    ];
    const audited = await specter(["exec", "--artifacts", join(dir, "run"), "--", "true"]);
    assert.equal(audited.code, 0, audited.stderr);
    // Side by side: each is mostly Deno starting.
    const results = await Promise.all(commands.map((args) => closedPipe(args, dir)));
    results.forEach(({ status, stderr }, i) => {
      const what = commands[i]!.join(" ");
      assert.equal(status, "status=141", `${what}: ${stderr}`);
      assert.equal(stderr, "", `${what} is quiet`);
    });
  });
});
