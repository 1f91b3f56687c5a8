/**
 * `specter replay`: re-running a bundle's scenario against real programs, normalization (default,
 * --strict, --normalize, --explain), tamper detection (checksums and events, required by default;
 * --allow-unverified) and `replay report`. Attacks on replay's trust are in replay_trust_test.ts.
 */
import assert from "node:assert/strict";
import { checksums } from "../src/artifacts/mod.ts";
import { ROOT, runCli, sessionTest, withTempDir } from "./_helpers.ts";

const specter = (args: string[]) => runCli(args);

/** A scenario whose output changes every run (a clock with nanoseconds), run via /bin/sh. */
const CLOCK = `version: 1
name: prints the time
run:
  policy: basic
  argv: [/bin/sh, -c, "date -u +%H:%M:%S.%N; echo /tmp/x$(date +%N); echo done"]
steps:
  - wait_for: { exit: true }
  - snapshot: end
  - expect: { exit_code: 0 }
`;

/** Records CLOCK (scenario in `dir/s/`, with `extra` run keys) into `dir/bundle`. */
async function recordClock(dir: string, extra = ""): Promise<string> {
  await Deno.mkdir(`${dir}/s`);
  await Deno.writeTextFile(
    `${dir}/s/clock.yaml`,
    CLOCK.replace("  policy: basic\n", `  policy: basic\n${extra}`),
  );
  const bundle = `${dir}/bundle`;
  const run = await specter(["test", "--artifacts", bundle, `${dir}/s/clock.yaml`]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(
    await Deno.readTextFile(`${bundle}/snapshots/001-end.txt`),
    /^\d{2}:\d{2}:\d{2}\.\d{9}\n\/tmp\/x\d{9}\n(done|<end>)$/m,
  );
  return bundle;
}

sessionTest(
  "replay: a fixture scenario replays as a match and leaves the bundle's checksums intact",
  async () => {
    await withTempDir(async (dir) => {
      const bundle = `${dir}/menu`;
      const run = await specter(["test", "--artifacts", bundle, `${ROOT}/fixtures/scenarios/menu.yaml`]);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      // The old flags are accepted (checks are the default now).
      const replay = await specter(["replay", bundle, "--require-checksums", "--require-events"]);
      assert.equal(replay.code, 0, replay.stdout + replay.stderr);
      assert.match(replay.stdout, /^replay: MATCH .*compared \d+ snapshot\(s\), transcript, result/m);
      for (const file of ["normalization.json", "replay.json", "run/run.json", "run/checksums.json"]) {
        await Deno.stat(`${bundle}/replay/${file}`);
      }
      await assert.rejects(Deno.stat(`${bundle}/replay/diff.json`), Deno.errors.NotFound);
      // The replay's own outputs do not count as tampering.
      assert.equal((await specter(["replay", bundle, "--require-checksums", "--explain"])).code, 0);
    });
  },
  60_000,
);

sessionTest(
  "replay: default normalization hides clock and temp-path noise; --strict and a narrow --normalize do not",
  async () => {
    await withTempDir(async (dir) => {
      const bundle = await recordClock(dir);
      const match = await specter(["replay", bundle]);
      assert.equal(match.code, 0, match.stdout + match.stderr);
      assert.match(match.stdout, /replay: MATCH/);

      const strict = await specter(["replay", bundle, "--strict"]);
      assert.equal(strict.code, 1, strict.stdout + strict.stderr);
      assert.match(strict.stdout, /● snapshot 001-end\n--- recorded 001-end\n\+\+\+ replayed 001-end\n/);
      assert.match(
        strict.stdout,
        /\n-\d{2}:\d{2}:\d{2}\.\d{9}\n-\/tmp\/x\d+\n\+\d{2}:\d{2}:\d{2}\.\d{9}\n\+\/tmp\/x\d+\n/,
      );
      assert.match(strict.stdout, /● transcript session\.cast/);
      assert.match(strict.stdout, /replay: DRIFT .*\n {2}2 difference\(s\); details in .*replay\/diff\.json/);
      const diff = JSON.parse(await Deno.readTextFile(`${bundle}/replay/diff.json`));
      assert.deepEqual(diff.map((d: { kind: string }) => d.kind), ["snapshot", "transcript"]);

      // Only the clock filter: the temp path still differs.
      const clockOnly = await specter(["replay", bundle, "--normalize", "clock_times"]);
      assert.equal(clockOnly.code, 1);
      assert.match(clockOnly.stdout, /\n-\/tmp\/x\d+\n\+\/tmp\/x\d+\n/);
      assert.doesNotMatch(clockOnly.stdout, /\n-\d{2}:\d{2}:\d{2}/);
      assert.equal((await specter(["replay", bundle, "--normalize", "clock_times,temp_paths"])).code, 0);

      // report prints the latest replay: the match just written.
      const report = await specter(["replay", "report", bundle, "--json"]);
      assert.equal(report.code, 0);
      const parsed = JSON.parse(report.stdout);
      assert.equal(parsed.status, "Match");
      assert.deepEqual(parsed.normalization.filters, {
        value: ["clock_times", "temp_paths"],
        source: "flag --normalize",
      });

      const bad = await specter(["replay", bundle, "--normalize", "clock"]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /E_USAGE: Unknown normalization filter "clock"/);
    });
  },
  60_000,
);

sessionTest(
  "replay --explain shows each setting's source; scenario redactions apply unless --strict",
  async () => {
    await withTempDir(async (dir) => {
      const bundle = await recordClock(
        dir,
        `  normalize:\n    - { pattern: "done", replacement: "<end>" }\n`,
      );
      const plain = await specter(["replay", bundle, "--explain"]);
      assert.equal(plain.code, 0, plain.stderr);
      assert.match(
        plain.stdout,
        /^filters: +timestamps, clock_times, session_ids, temp_paths, durations, pids +\[default\]$/m,
      );
      assert.match(plain.stdout, /^redactions: \/done\/ → "<end>" +\[scenario run\.normalize\]$/m);
      const strict = await specter(["replay", bundle, "--explain", "--strict"]);
      assert.match(strict.stdout, /^filters: +\(none\) +\[flag --strict\]$/m);
      assert.match(strict.stdout, /^redactions: \(none\) +\[flag --strict\]$/m);
      const narrow = await specter(["replay", bundle, "--explain", "--normalize", "none"]);
      assert.match(narrow.stdout, /^filters: +\(none\) +\[flag --normalize\]$/m);
      assert.equal((await specter(["replay", bundle, "--strict", "--normalize", "all"])).code, 2);
      // --explain does not replay.
      await assert.rejects(Deno.stat(`${bundle}/replay`), Deno.errors.NotFound);
    });
  },
  60_000,
);

sessionTest(
  "replay fails with E_REPLAY_TAMPERED (by default) when any bundle file is altered, removed or added",
  async () => {
    await withTempDir(async (dir) => {
      const bundle = await recordClock(dir);
      const files = Object.keys(JSON.parse(await Deno.readTextFile(`${bundle}/checksums.json`)));
      for (
        const f of [
          "run.json",
          "scenario.resolved.json",
          "policy.effective.json",
          "events.ndjson",
          "session.cast",
          "audit.ndjson",
          "snapshots/001-end.txt",
          "snapshots/001-end.json",
        ]
      ) {
        assert.ok(files.includes(f), `checksums.json lists "${f}"`);
      }
      const tamper = async (what: string, change: (copy: string) => Promise<void>, expected: RegExp) => {
        const copy = `${dir}/copy`;
        await Deno.remove(copy, { recursive: true }).catch(() => {}); // First round: nothing to remove.
        await new Deno.Command("cp", { args: ["-r", bundle, copy] }).output();
        await change(copy);
        const r = await specter(["replay", copy]);
        assert.equal(r.code, 2, `${what}: ${r.stdout}${r.stderr}`);
        assert.match(r.stderr, expected, what);
        await assert.rejects(
          Deno.stat(`${copy}/replay`),
          Deno.errors.NotFound,
          `${what}: nothing was re-run`,
        );
      };
      for (const f of files) {
        await tamper(
          f,
          async (copy) => {
            const bytes = await Deno.readFile(`${copy}/${f}`);
            bytes[bytes.length - 1]! ^= 1; // One bit.
            await Deno.writeFile(`${copy}/${f}`, bytes);
          },
          new RegExp(
            f === "policy.effective.json"
              ? `E_REPLAY_TAMPERED: .*"${f}" does not match`
              : `E_REPLAY_TAMPERED: .*"${f}" altered`,
          ),
        );
      }
      await tamper(
        "removed",
        (copy) => Deno.remove(`${copy}/session.cast`),
        /E_REPLAY_TAMPERED: .*"session\.cast" missing/,
      );
      await tamper(
        "added",
        (copy) => Deno.writeTextFile(`${copy}/snapshots/extra.txt`, "x"),
        /"snapshots\/extra\.txt" added/,
      );
      await tamper(
        "no checksums",
        (copy) => Deno.remove(`${copy}/checksums.json`),
        /E_REPLAY_INCOMPLETE: .*"checksums\.json" is missing/,
      );
      // With --allow-unverified a tampered recording is replayed, drifts where it was changed, and says so.
      await tamper("edited screen", async (copy) => {
        const path = `${copy}/snapshots/001-end.json`;
        await Deno.writeTextFile(path, (await Deno.readTextFile(path)).replace('"done"', '"DONE"'));
      }, /E_REPLAY_TAMPERED: .*"snapshots\/001-end\.json" altered/);
      const drift = await specter(["replay", `${dir}/copy`, "--allow-unverified"]);
      assert.equal(drift.code, 1, drift.stdout + drift.stderr);
      assert.match(drift.stdout, /\n-DONE\n\+done\n/);
      assert.match(drift.stderr, /NOT VERIFIED \(--allow-unverified\): E_REPLAY_TAMPERED: /);
      const report = JSON.parse(await Deno.readTextFile(`${dir}/copy/replay/replay.json`));
      assert.equal(report.verified, false);
    });
  },
  120_000,
);

sessionTest("replay checks events by default; bundle errors have their own codes", async () => {
  await withTempDir(async (dir) => {
    const bundle = await recordClock(dir);
    const events = await Deno.readTextFile(`${bundle}/events.ndjson`);
    await Deno.writeTextFile(`${bundle}/events.ndjson`, events + '{"type":"stdout"}\n');
    // Checksums recomputed by hand: the events check does not lean on them.
    await Deno.writeTextFile(`${bundle}/checksums.json`, JSON.stringify(checksums(bundle)));
    const invalid = await specter(["replay", bundle]);
    assert.equal(invalid.code, 2);
    assert.match(invalid.stderr, /E_REPLAY_EVENTS: .*events\.ndjson line \d+ is not a valid frame/);
    await Deno.remove(`${bundle}/events.ndjson`);
    await Deno.writeTextFile(`${bundle}/checksums.json`, JSON.stringify(checksums(bundle)));
    const missing = await specter(["replay", bundle]);
    assert.match(missing.stderr, /E_REPLAY_INCOMPLETE: .*"events\.ndjson" is missing/);
    const none = await specter(["replay", `${dir}/s`]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /E_REPLAY_BUNDLE: .*"scenario\.resolved\.json" is missing/);
    const explain = await specter(["replay", `${dir}/s`, "--explain"]);
    assert.equal(explain.code, 2);
    assert.match(explain.stderr, /E_REPLAY_BUNDLE: /);
    const report = await specter(["replay", "report", `${dir}/s`]);
    assert.match(report.stderr, /E_REPLAY_BUNDLE: .*has not been replayed/);
  });
}, 60_000);

sessionTest(
  "replay validates every recorded file before running: a corrupt one is E_REPLAY_BUNDLE naming it",
  async () => {
    await withTempDir(async (dir) => {
      const bundle = await recordClock(dir);
      const cases: [string, (copy: string) => Promise<void>, RegExp, RegExp?][] = [
        [
          "session.cast",
          (c) => Deno.writeTextFile(`${c}/session.cast`, "garbage\n"),
          /"session\.cast" does not start with an asciicast v2 header/,
        ],
        [
          "session.cast event",
          (c) => Deno.writeTextFile(`${c}/session.cast`, '{"version":2}\n[1,"o"]\n'),
          /"session\.cast" line 2 is not an asciicast event/,
        ],
        [
          "run.json",
          (c) => Deno.writeTextFile(`${c}/run.json`, "{}"),
          /"run\.json" is not a valid run result/,
        ],
        [
          "scenario",
          (c) => Deno.writeTextFile(`${c}/scenario.resolved.json`, "null"),
          /"scenario\.resolved\.json" is not a scenario/,
        ],
        [
          "snapshot",
          (c) => Deno.writeTextFile(`${c}/snapshots/001-end.json`, '{"cols":1}'),
          /"snapshots\/001-end\.json" is not a valid snapshot/,
        ],
        [
          "policy",
          async (c) => {
            const policy = JSON.parse(await Deno.readTextFile(`${c}/policy.effective.json`));
            policy.fs.read = ["/"];
            await Deno.writeTextFile(`${c}/policy.effective.json`, JSON.stringify(policy));
          },
          /"policy\.effective\.json" is not a valid policy: E_POLICY_BROAD_ROOT/,
        ],
        [
          "symlink",
          (c) => Deno.symlink(`${c}/snapshots/001-end.json`, `${c}/snapshots/000-x.json`),
          /"snapshots\/000-x\.json" altered/,
          /E_REPLAY_TAMPERED: /,
        ],
      ];
      for (const [what, change, expected, code = /E_REPLAY_BUNDLE: /] of cases) {
        const copy = `${dir}/copy-${what.replace(/\W/g, "-")}`;
        await new Deno.Command("cp", { args: ["-r", bundle, copy] }).output();
        await change(copy);
        // Checksums recomputed, as an attacker would: validation does not lean on them.
        await Deno.writeTextFile(`${copy}/checksums.json`, JSON.stringify(checksums(copy)));
        const r = await specter(["replay", copy]);
        assert.equal(r.code, 2, `${what}: ${r.stdout}${r.stderr}`);
        assert.match(r.stderr, code, what);
        assert.match(r.stderr, expected, what);
        await assert.rejects(Deno.stat(`${copy}/replay`), Deno.errors.NotFound, `${what}: nothing ran`);
      }
    });
  },
  120_000,
);

sessionTest(
  "replay enforces the recorded policy, not what the scenario file says now",
  async () => {
    await withTempDir(async (dir) => {
      const bundle = await recordClock(dir);
      // The scenario's policy source changes after the run: the replay still enforces what was recorded.
      await Deno.writeTextFile(
        `${dir}/s/clock.yaml`,
        CLOCK.replace("policy: basic", "policy: ./missing.toml"),
      );
      const same = await specter(["replay", bundle]);
      assert.equal(same.code, 0, same.stdout + same.stderr);
      const recorded = JSON.parse(await Deno.readTextFile(`${bundle}/replay/run/policy.effective.json`));
      assert.equal(recorded.source, `file:${bundle}/policy.effective.json`);
    });
  },
  60_000,
);

sessionTest(
  "replay: a run that can no longer start (its program is gone) is E_REPLAY_RUN, not drift",
  async () => {
    await withTempDir(async (dir) => {
      // The sandbox uid must reach the program (a root-only temp dir would stop bwrap, whose error
      // message names the path: the expected text is not in the path).
      await Deno.chmod(dir, 0o755);
      await Deno.mkdir(`${dir}/s`);
      await Deno.writeTextFile(`${dir}/s/hello`, "#!/bin/sh\necho HELLO-OUT\n", { mode: 0o755 });
      const scenario = `version: 1\nname: hello\nrun:\n  policy: basic\n  argv: [${dir}/s/hello]\nsteps:\n` +
        `  - wait_for: { exit: true }\n  - expect: { screen_contains: HELLO-OUT }\n`;
      await Deno.writeTextFile(`${dir}/s/hello.yaml`, scenario);
      const bundle = `${dir}/bundle`;
      assert.equal((await specter(["test", "--artifacts", bundle, `${dir}/s/hello.yaml`])).code, 0);
      await Deno.remove(`${dir}/s`, { recursive: true });
      const gone = await specter(["replay", bundle]);
      assert.equal(gone.code, 2, gone.stdout + gone.stderr);
      assert.match(gone.stderr, /E_REPLAY_RUN: .*could not be carried out: E_SPAWN_NOT_FOUND/);
      assert.match(gone.stdout, /^replay: ERROR /m);
      const report = await specter(["replay", "report", bundle, "--json"]);
      assert.equal(report.code, 2);
      assert.equal(JSON.parse(report.stdout).status, "Error");
      assert.match(
        (await specter(["replay", "report", bundle, "--strict"])).stderr,
        /E_USAGE: Flag "--strict"/,
      );
    });
  },
  60_000,
);

sessionTest(
  "replay of a scratch-workspace scenario (vim) gets a fresh workspace the recorded policy moves to",
  async () => {
    await withTempDir(async (dir) => {
      const bundle = `${dir}/vim`;
      const run = await specter(["test", "--artifacts", bundle, `${ROOT}/fixtures/scenarios/vim.yaml`]);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      // The scenario's ack_unsafe_write is the bundle's word: the replay must acknowledge again.
      const refused = await specter(["replay", bundle]);
      assert.equal(refused.code, 2, refused.stdout + refused.stderr);
      assert.match(refused.stderr, /E_UNSAFE_ACK_REQUIRED: .*grants fs\.write .*pass --ack-unsafe-write/);
      await assert.rejects(Deno.stat(`${bundle}/replay`), Deno.errors.NotFound, "nothing ran");
      const replay = await specter(["replay", bundle, "--ack-unsafe-write"]);
      assert.equal(replay.code, 0, replay.stdout + replay.stderr);
      assert.match(replay.stderr, /^ {2}write: +".*"$/m);
      assert.match(replay.stderr, /\[accepted by --ack-unsafe-write\]/);
      assert.equal(
        await Deno.readTextFile(`${bundle}/replay/run/workspace/notes.txt`),
        "first line\nsecond line\n",
      );
      const before = JSON.parse(await Deno.readTextFile(`${bundle}/policy.effective.json`));
      const after = JSON.parse(await Deno.readTextFile(`${bundle}/replay/run/policy.effective.json`));
      const workspace =
        JSON.parse(await Deno.readTextFile(`${bundle}/replay/run/scenario.resolved.json`)).workspace_dir;
      assert.notEqual(after.fs.write[0], before.fs.write[0]);
      assert.deepEqual(after.fs.write, [workspace]);
    });
  },
  60_000,
);

sessionTest(
  "replay: the policy's [replay] table sets normalization defaults; flags override it",
  async () => {
    await withTempDir(async (dir) => {
      await Deno.mkdir(`${dir}/s`);
      await Deno.writeTextFile(
        `${dir}/s/p.toml`,
        'version = 1\nexec = ["/usr/bin"]\n[replay]\nnormalize = ["clock_times"]\n' +
          'redactions = [{ pattern = "x\\\\d+", replacement = "x<n>" }]\n',
      );
      await Deno.writeTextFile(`${dir}/s/clock.yaml`, CLOCK.replace("policy: basic", "policy: ./p.toml"));
      const bundle = `${dir}/bundle`;
      const run = await specter(["test", "--artifacts", bundle, `${dir}/s/clock.yaml`]);
      assert.equal(run.code, 0, run.stdout + run.stderr);

      const explain = await specter(["replay", bundle, "--explain"]);
      assert.match(explain.stdout, /^filters: +clock_times +\[policy replay\.normalize\]$/m);
      assert.match(explain.stdout, /^redactions: \/x\\d\+\/ → "x<n>" +\[policy replay\.redactions\]$/m);
      // The clock filter and the redaction hide both varying lines.
      const match = await specter(["replay", bundle]);
      assert.equal(match.code, 0, match.stdout + match.stderr);
      const settings = JSON.parse(await Deno.readTextFile(`${bundle}/replay/normalization.json`));
      assert.equal(settings.filters.source, "policy replay.normalize");
      // --normalize none overrides the policy's filters (its redactions stay): the clock differs.
      const none = await specter(["replay", bundle, "--normalize", "none"]);
      assert.equal(none.code, 1);
      assert.match(none.stdout, /\n-\d{2}:\d{2}:\d{2}\.\d{9}\n\+\d{2}:\d{2}:\d{2}\.\d{9}\n/);
      assert.doesNotMatch(none.stdout, /\n-\/tmp\/x\d/);
    });
  },
  60_000,
);

sessionTest(
  "replay: a backtracking redaction from the bundle's policy cannot stop the clock (E_REPLAY_NORMALIZE, exit 2)",
  async () => {
    await withTempDir(async (dir) => {
      await Deno.mkdir(`${dir}/s`);
      await Deno.writeTextFile(
        `${dir}/s/p.toml`,
        'version = 1\nexec = ["/usr/bin"]\n[replay]\nredactions = [{ pattern = "(a+)+$", replacement = "x" }]\n',
      );
      await Deno.writeTextFile(
        `${dir}/s/flood.yaml`,
        `version: 1\nname: flood\nrun:\n  policy: ./p.toml\n  argv: [/usr/bin/printf, "${
          "a".repeat(40)
        }!\\n"]\n` +
          `steps:\n  - wait_for: { exit: true }\n`,
      );
      const bundle = `${dir}/bundle`;
      const run = await specter(["test", "--artifacts", bundle, `${dir}/s/flood.yaml`]);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      const started = performance.now();
      const replay = await specter(["replay", bundle]);
      assert.equal(replay.code, 2, replay.stdout + replay.stderr);
      assert.match(replay.stderr, /E_REPLAY_NORMALIZE/);
      // 2 s per text, and the first text already times out.
      assert.ok(performance.now() - started < 15_000, `took ${performance.now() - started} ms`);
    });
  },
  60_000,
);
