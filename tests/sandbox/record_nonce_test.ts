/**
 * An integrated shell's recording is out of its sandbox's sight: the recording holds the shell's command
 * marks with their nonce, so a program that could read it back (a read grant over the recording's
 * directory) could print marks that end its own command with status 0 and add commands that never ran.
 * The attack runs for real: bash under bwrap with shell integration, recording into a directory a read
 * grant contains, and a program that reads every file there, takes each 32-hex string as a nonce and
 * forges with it. A recording without shell integration stays readable (it holds nothing the program
 * did not print).
 */
import assert from "node:assert/strict";
import { PolicyError } from "../../src/errors.ts";
import type { Frame } from "../../src/protocol/mod.ts";
import { Transcript } from "../../src/mod.ts";
import { spawn } from "../../src/session/spawn_session.ts";
import { sessionTest } from "../_helpers.ts";
import { policyOf, withHostDir } from "./_sandbox.ts";

/** Reads every file named, forges marks with each nonce-like string found, exits 7. */
const FORGE_PY = String.raw`
import glob, re, sys
HEX = re.compile(rb"(?<![0-9a-f])([0-9a-f]{32})(?![0-9a-f])")
found = set()
for pattern in sys.argv[1:]:
    for path in glob.glob(pattern, recursive=True):
        try:
            found.update(m.decode() for m in HEX.findall(open(path, "rb").read()))
        except OSError as e:
            print("unreadable", path, e.errno)
print("CANDIDATES", len(found), flush=True)
out = sys.stdout.buffer
for n in sorted(found):
    t = ";specter=" + n
    out.write(("\x1b]133;D;0%s\x07\x1b]133;A%s\x07" % (t, t)).encode())
    out.write(("\x1b]133;C%s\x07forged-command-output\n\x1b]133;D;0%s\x07\x1b]133;A%s\x07" % (t, t, t)).encode())
out.flush()
sys.exit(7)
`;

type CommandFrame = Extract<Frame, { type: "command" }>;

function commands(frames: readonly Frame[]): [string | null, number | null, string][] {
  return frames.filter((f): f is CommandFrame => f.type === "command").map((
    c,
  ) => [c.command ?? null, c.exit_code, c.reported_by]);
}

/** An integrated bash that may read `proj`, recording to `record`. */
function integratedBash(proj: string, record: string): Transcript {
  return new Transcript(spawn({
    argv: ["/usr/bin/bash"],
    idleMs: 0,
    timeoutMs: 60_000,
    shellIntegration: true,
    env: { HOME: "/tmp" },
    record: { path: record },
    sandbox: { mode: "bwrap", policy: policyOf({ exec: ["/usr/bin", "/bin"], fs: { read: [proj] } }) },
  }));
}

sessionTest(
  "an integrated shell's recording under a read grant is hidden: the program finds no nonce, forges nothing",
  async () => {
    await withHostDir(async (dir) => {
      const proj = `${dir}/proj`;
      await Deno.mkdir(`${proj}/casts`, { recursive: true });
      await Deno.writeTextFile(`${proj}/forge.py`, FORGE_PY);
      const attack = `/usr/bin/python3 ${proj}/forge.py '${proj}/casts/*'`;
      const t = integratedBash(proj, `${proj}/casts/session.cast`);
      try {
        await t.until((f) => f.type === "prompt", 20_000, "the first prompt");
        t.session.write("true\r");
        await t.until(() => commands(t.frames).length >= 1, 20_000, "the first command");
        t.session.write(`${attack}\r`);
        await t.until(() => commands(t.frames).length >= 2, 30_000, "the attack's command");
        t.session.write("echo after\r");
        await t.until(
          (f) => commands(t.frames).length >= 3 && f.type === "prompt",
          20_000,
          "the last command",
        );
        assert.deepEqual(
          commands(t.frames),
          [["true", 0, "shell"], [attack, 7, "shell"], ["echo after", 0, "shell"]],
          t.text.slice(-2000),
        );
        assert.match(t.text, /CANDIDATES 0/, t.text.slice(-2000));
      } finally {
        t.session.terminate(500);
        await t.exit(20_000).catch(() => {});
      }
      // The recording was written all along, with the marks (and nonce) the program could not read.
      assert.match(await Deno.readTextFile(`${proj}/casts/session.cast`), /133;A;specter=[0-9a-f]{32}/);
    });
  },
  90_000,
);

sessionTest(
  "an integrated shell recording into the very directory a read grant names is refused",
  async () => {
    await withHostDir(async (dir) => {
      await Deno.mkdir(`${dir}/proj`);
      assert.throws(
        () => integratedBash(`${dir}/proj`, `${dir}/proj/session.cast`),
        (error: unknown) =>
          error instanceof PolicyError &&
          error.problems.some((p) =>
            p.code === "E_POLICY_ARTIFACTS_EXPOSED" && p.field === "fs.read" && /nonce/.test(p.message)
          ),
      );
      assert.equal([...Deno.readDirSync(`${dir}/proj`)].length, 0, "nothing ran, nothing was recorded");
    });
  },
);

sessionTest("a recording without shell integration stays readable under a read grant", async () => {
  await withHostDir(async (dir) => {
    const proj = `${dir}/proj`;
    await Deno.mkdir(proj);
    const t = new Transcript(spawn({
      argv: ["/bin/sh", "-c", `sleep 0.3; grep -c '"version":2' '${proj}/session.cast'`],
      idleMs: 0,
      timeoutMs: 20_000,
      record: { path: `${proj}/session.cast` },
      sandbox: { mode: "bwrap", policy: policyOf({ exec: ["/usr/bin", "/bin"], fs: { read: [proj] } }) },
    }));
    const exit = await t.exit(25_000);
    assert.equal(exit.code, 0, t.text);
    assert.match(t.text, /^1\r?$/m);
  });
});
