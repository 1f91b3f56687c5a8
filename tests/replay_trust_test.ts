/**
 * A bundle is untrusted input: attacks on `specter replay` as an attacker who can edit a bundle (and
 * recompute its checksums.json) would make them. Every bundle here is produced by a real `specter test`
 * run; each attack must be refused with its typed code before anything runs, no host file content may
 * reach any output or result file, and nothing tampered may ever report MATCH.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { ROOT, runCli, sessionTest, withTempDir } from "./_helpers.ts";

const specter = (args: string[]) => runCli(args);

const PASSWD = "root:x:0:0";

/** A scenario comparing its screen with a golden (relative to the scenario's directory). */
const GOLDEN_SCENARIO = `version: 1
name: golden screen
run:
  policy: basic
  argv: [/bin/sh, -c, "echo golden-screen"]
steps:
  - wait_for: { exit: true }
  - snapshot: end
  - expect: { snapshot_equals: golden.txt }
`;

/** Records the menu fixture into `dir/menu`. */
async function recordMenu(dir: string): Promise<string> {
  const bundle = `${dir}/menu`;
  const run = await specter(["test", "--artifacts", bundle, `${ROOT}/fixtures/scenarios/menu.yaml`]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  return bundle;
}

/** Records GOLDEN_SCENARIO (its golden created first) into `dir/golden`. */
async function recordGolden(dir: string): Promise<string> {
  await Deno.mkdir(`${dir}/s`, { recursive: true });
  await Deno.writeTextFile(`${dir}/s/golden.yaml`, GOLDEN_SCENARIO);
  const update = await specter([
    "test",
    "--update-goldens",
    "--artifacts",
    `${dir}/u`,
    `${dir}/s/golden.yaml`,
  ]);
  assert.equal(update.code, 0, update.stdout + update.stderr);
  const bundle = `${dir}/golden`;
  const run = await specter(["test", "--artifacts", bundle, `${dir}/s/golden.yaml`]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.equal(
    await Deno.readTextFile(`${bundle}/goldens/golden.txt`),
    await Deno.readTextFile(`${dir}/s/golden.txt`),
    "the bundle keeps the golden it compared with",
  );
  return bundle;
}

/** A fresh copy of `bundle` named `name` (without an earlier replay). */
async function copyOf(bundle: string, name: string): Promise<string> {
  const copy = `${bundle}-${name.replace(/\W+/g, "-")}`;
  await Deno.remove(copy, { recursive: true }).catch(() => {}); // Not there yet: nothing to remove.
  const cp = await new Deno.Command("cp", { args: ["-a", bundle, copy] }).output();
  assert.ok(cp.success);
  await Deno.remove(`${copy}/replay`, { recursive: true }).catch(() => {}); // No earlier replay.
  return copy;
}

/**
 * Recomputes checksums.json as an attacker would, so that checksums "match": sha256 of every file's
 * content, symlinks followed (the digest of whatever they point at), except special files, which get the
 * text a lax verifier would list.
 */
async function reseal(dir: string): Promise<void> {
  const sums: Record<string, string> = {};
  const walk = async (sub: string) => {
    for await (const entry of Deno.readDir(sub === "" ? dir : `${dir}/${sub}`)) {
      const rel = sub === "" ? entry.name : `${sub}/${entry.name}`;
      if (rel === "checksums.json" || rel === "replay") continue;
      const info = await Deno.lstat(`${dir}/${rel}`);
      if (info.isDirectory) await walk(rel);
      else if (info.isFile) sums[rel] = sha256(await Deno.readFile(`${dir}/${rel}`));
      else if (info.isSymlink) {
        const target = await Deno.stat(`${dir}/${rel}`).catch(() => null);
        sums[rel] = target?.isFile && target.size < 1e6
          ? sha256(await Deno.readFile(`${dir}/${rel}`))
          : "special";
      } else sums[rel] = "special";
    }
  };
  await walk("");
  await Deno.writeTextFile(`${dir}/checksums.json`, JSON.stringify(sums, null, 2));
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Every regular file's text under `dir` (recursively; links and special files are not opened). */
async function everyFile(dir: string): Promise<string> {
  let all = "";
  const walk = async (path: string) => {
    for await (const entry of Deno.readDir(path)) {
      const full = `${path}/${entry.name}`;
      const info = await Deno.lstat(full);
      if (info.isDirectory) await walk(full);
      else if (info.isFile && info.size < 64 * 1024 * 1024) all += await Deno.readTextFile(full) + "\n";
    }
  };
  await walk(dir);
  return all;
}

/** Replays `copy` with `flags`: must be refused with `code` (exit 2), no secret anywhere, nothing ran. */
async function refused(
  what: string,
  copy: string,
  flags: string[],
  code: RegExp,
  secrets: readonly string[],
): Promise<string> {
  const started = performance.now();
  const r = await specter(["replay", copy, ...flags]);
  assert.equal(r.code, 2, `${what}: ${r.stdout}${r.stderr}`);
  assert.match(r.stderr, code, what);
  assert.doesNotMatch(r.stdout, /MATCH/, what);
  await assert.rejects(Deno.stat(`${copy}/replay`), Deno.errors.NotFound, `${what}: nothing ran`);
  const files = await everyFile(copy);
  for (const secret of secrets) {
    assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret), `${what}: secret in the output`);
    assert.ok(!files.includes(secret), `${what}: secret in a bundle file`);
  }
  assert.ok(performance.now() - started < 20_000, `${what}: refused promptly (no hang, no huge read)`);
  return r.stderr;
}

sessionTest(
  "replay re-decides trust: a write or network grant and the bundle's own acknowledgement are refused",
  async () => {
    await withTempDir(async (dir) => {
      const bundle = await recordMenu(dir);
      const policy = JSON.parse(await Deno.readTextFile(`${bundle}/policy.effective.json`));
      const grants: [string, (p: Record<string, unknown>) => void, RegExp][] = [
        [
          "write grant",
          (p) => (p.fs as Record<string, unknown>).write = [dir],
          /E_UNSAFE_ACK_REQUIRED: .*grants fs\.write \[".*"\].*pass --ack-unsafe-write/,
        ],
        ["network", (p) => p.network = "on", /E_UNSAFE_ACK_REQUIRED: .*network "on".*pass --ack-network/],
        [
          "host socket",
          (p) => (p.fs as Record<string, unknown>).sockets = ["/run/specter-test.sock"],
          /E_UNSAFE_ACK_REQUIRED: .*fs\.sockets .*pass --ack-host-sockets/,
        ],
      ];
      for (const [what, change, expected] of grants) {
        const copy = await copyOf(bundle, what);
        const edited = structuredClone(policy);
        change(edited);
        await Deno.writeTextFile(`${copy}/policy.effective.json`, JSON.stringify(edited));
        // The bundle acknowledges it itself, every way it could, and its checksums match.
        const scenario = JSON.parse(await Deno.readTextFile(`${copy}/scenario.resolved.json`));
        scenario.run.ack_unsafe_write = true;
        await Deno.writeTextFile(`${copy}/scenario.resolved.json`, JSON.stringify(scenario));
        await reseal(copy);
        await refused(what, copy, [], expected, []);
        await refused(`${what} (explain)`, copy, ["--explain"], expected, []);
        await refused(`${what} (unverified)`, copy, ["--allow-unverified"], expected, []);
      }
      // An acknowledgement written into the recorded policy is an unknown key, never an acknowledgement.
      const acked = await copyOf(bundle, "acks key");
      await Deno.writeTextFile(
        `${acked}/policy.effective.json`,
        JSON.stringify({ ...policy, fs: { ...policy.fs, write: [dir] }, acks: { unsafeWrite: true } }),
      );
      await reseal(acked);
      await refused("acks key", acked, [], /E_REPLAY_BUNDLE: .*E_POLICY_UNKNOWN_KEY/, []);

      // Acknowledged on the replaying command line, the grant runs and is shown on stderr and in the report.
      // (Not the directory holding the bundle: a grant containing the replay's artifacts is refused.)
      const granted = await Deno.makeTempDir({ prefix: "specter-granted-" });
      const write = await copyOf(bundle, "accepted");
      await Deno.writeTextFile(
        `${write}/policy.effective.json`,
        JSON.stringify({ ...policy, fs: { ...policy.fs, write: [granted] } }),
      );
      await reseal(write);
      const accepted = await specter(["replay", write, "--ack-unsafe-write"]);
      assert.equal(accepted.code, 0, accepted.stdout + accepted.stderr);
      assert.match(
        accepted.stderr,
        new RegExp(`^ {2}write: +${JSON.stringify(granted).replace(/[/]/g, "\\/")}$`, "m"),
      );
      assert.match(accepted.stderr, /\[accepted by --ack-unsafe-write\]/);
      const report = JSON.parse(await Deno.readTextFile(`${write}/replay/replay.json`));
      assert.deepEqual(report.policy.write, [granted]);
      await Deno.remove(granted, { recursive: true });
      assert.deepEqual(report.policy.acknowledged, ["--ack-unsafe-write"]);
      assert.equal(report.status, "Match");
      assert.equal(report.verified, true);
    });
  },
  120_000,
);

sessionTest(
  "a missing or altered recorded policy, checksums or events: E_REPLAY_INCOMPLETE / E_REPLAY_TAMPERED",
  async () => {
    await withTempDir(async (dir) => {
      const bundle = await recordMenu(dir);
      const cases: [string, (c: string) => Promise<void>, boolean, string[], RegExp][] = [
        [
          "policy deleted",
          (c) => Deno.remove(`${c}/policy.effective.json`),
          false,
          [],
          /E_REPLAY_TAMPERED: .*"policy\.effective\.json"/,
        ],
        [
          "policy deleted, resealed",
          (c) => Deno.remove(`${c}/policy.effective.json`),
          true,
          [],
          /E_REPLAY_INCOMPLETE: .*"policy\.effective\.json" is missing/,
        ],
        [
          "policy deleted, no checksums, relaxed",
          async (c) => {
            await Deno.remove(`${c}/policy.effective.json`);
            await Deno.remove(`${c}/checksums.json`);
          },
          false,
          ["--allow-unverified"],
          /E_REPLAY_INCOMPLETE: .*"policy\.effective\.json" is missing/,
        ],
        [
          "policy altered, relaxed",
          async (c) => {
            const p = JSON.parse(await Deno.readTextFile(`${c}/policy.effective.json`));
            p.exec = ["/usr/bin", "/bin"];
            await Deno.writeTextFile(`${c}/policy.effective.json`, JSON.stringify(p));
          },
          false,
          ["--allow-unverified"],
          /E_REPLAY_TAMPERED: .*"policy\.effective\.json" does not match/,
        ],
        [
          "checksums deleted",
          (c) => Deno.remove(`${c}/checksums.json`),
          false,
          [],
          /E_REPLAY_INCOMPLETE: .*"checksums\.json" is missing/,
        ],
        [
          "checksums a symlink",
          async (c) => {
            await Deno.rename(`${c}/checksums.json`, `${c}/../sums-${crypto.randomUUID()}.json`);
            await Deno.symlink("/etc/passwd", `${c}/checksums.json`);
          },
          false,
          [],
          /E_REPLAY_TAMPERED: .*"checksums\.json" is not a regular file/,
        ],
        [
          "events deleted",
          (c) => Deno.remove(`${c}/events.ndjson`),
          false,
          [],
          /E_REPLAY_TAMPERED: .*"events\.ndjson" missing/,
        ],
        [
          "events deleted, resealed",
          (c) => Deno.remove(`${c}/events.ndjson`),
          true,
          [],
          /E_REPLAY_INCOMPLETE: .*"events\.ndjson" is missing/,
        ],
        [
          "snapshot altered",
          async (c) => {
            const path = `${c}/snapshots/002-on-cherry.json`;
            await Deno.writeTextFile(path, (await Deno.readTextFile(path)).replace("cherry", "cherie"));
          },
          false,
          [],
          /E_REPLAY_TAMPERED: .*"snapshots\/002-on-cherry\.json" altered/,
        ],
        [
          "file added",
          (c) => Deno.writeTextFile(`${c}/snapshots/000-extra.json`, "{}"),
          false,
          [],
          /E_REPLAY_TAMPERED: .*"snapshots\/000-extra\.json" added/,
        ],
      ];
      for (const [what, change, resealed, flags, expected] of cases) {
        const copy = await copyOf(bundle, what);
        await change(copy);
        if (resealed) await reseal(copy);
        await refused(what, copy, flags, expected, []);
      }
    });
  },
  120_000,
);

sessionTest(
  "a tampered bundle never replays as MATCH: resealed it drifts; relaxed it is MATCH-UNVERIFIED at best",
  async () => {
    await withTempDir(async (dir) => {
      const bundle = await recordMenu(dir);
      // An altered snapshot with matching checksums: not detectable as tampering, so it drifts.
      const altered = await copyOf(bundle, "altered");
      const path = `${altered}/snapshots/002-on-cherry.json`;
      await Deno.writeTextFile(path, (await Deno.readTextFile(path)).replace("cherry", "cherie"));
      await reseal(altered);
      const drift = await specter(["replay", altered]);
      assert.equal(drift.code, 1, drift.stdout + drift.stderr);
      assert.match(drift.stdout, /^replay: DRIFT /m);
      // Checks relaxed on a bundle that does not verify: no difference, but never a plain MATCH (exit 1).
      const relaxed = await copyOf(bundle, "relaxed");
      await Deno.remove(`${relaxed}/checksums.json`);
      const unverified = await specter(["replay", relaxed, "--allow-unverified"]);
      assert.equal(unverified.code, 1, unverified.stdout + unverified.stderr);
      assert.match(unverified.stdout, /^replay: MATCH-UNVERIFIED /m);
      assert.doesNotMatch(unverified.stdout, /^replay: MATCH /m);
      assert.match(unverified.stderr, /NOT VERIFIED \(--allow-unverified\): E_REPLAY_INCOMPLETE: /);
      const report = await specter(["replay", "report", relaxed, "--json"]);
      assert.equal(report.code, 1);
      const parsed = JSON.parse(report.stdout);
      assert.equal(parsed.status, "MatchUnverified");
      assert.equal(parsed.verified, false);
      assert.equal(parsed.unverified[0].code, "E_REPLAY_INCOMPLETE");
      // The flags contradict each other.
      const both = await specter(["replay", relaxed, "--allow-unverified", "--require-checksums"]);
      assert.equal(both.code, 2);
      assert.match(both.stderr, /E_USAGE: Flags "--allow-unverified" and "--require-checksums"/);
    });
  },
  120_000,
);

sessionTest(
  "goldens, snapshots and expect files in a bundle never reach host files (paths, links, FIFOs, devices, huge)",
  async () => {
    await withTempDir(async (dir) => {
      const secret = `HOST-SECRET-${crypto.randomUUID()}`;
      await Deno.writeTextFile(`${dir}/secret`, `${secret}\n`);
      const secrets = [secret, PASSWD];
      const golden = await recordGolden(dir);
      const replaced = async (copy: string, file: string, how: string) => {
        const path = `${copy}/${file}`;
        await Deno.remove(path);
        const sh = await new Deno.Command("sh", { args: ["-c", how.replaceAll("$F", path)] }).output();
        return sh.success; // mknod needs root (or CAP_MKNOD): without it that case is skipped.
      };
      const scenarioEdit =
        (edit: (s: { run: Record<string, unknown>; steps: unknown[] }) => void) => async (copy: string) => {
          const s = JSON.parse(await Deno.readTextFile(`${copy}/scenario.resolved.json`));
          edit(s);
          await Deno.writeTextFile(`${copy}/scenario.resolved.json`, JSON.stringify(s));
        };
      const kinds: [string, string, RegExp][] = [
        ["symlink to a host file", `ln -s ${dir}/secret $F`, /E_PATH_SYMLINK: /],
        ["symlink to /etc/passwd", "ln -s /etc/passwd $F", /E_PATH_SYMLINK: /],
        ["symlink to /dev/zero", "ln -s /dev/zero $F", /E_PATH_SYMLINK: /],
        ["FIFO", "mkfifo $F", /E_FILE_TYPE: .*is a fifo/],
        ["device like /dev/zero", "mknod $F c 1 5", /E_FILE_TYPE: .*is a char/],
        ["2 GB sparse file", "truncate -s 2G $F", /E_FILE_TOO_LARGE: /],
      ];
      const targets: [string, string][] = [
        [golden, "goldens/golden.txt"],
        [golden, "snapshots/001-end.json"],
      ];
      for (const [bundle, file] of targets) {
        await Deno.lstat(`${bundle}/${file}`);
        for (const [kind, how, code] of kinds) {
          const copy = await copyOf(bundle, `${file}-${kind}`);
          if (!await replaced(copy, file, how)) {
            assert.ok(how.startsWith("mknod") && Deno.uid() !== 0, `${kind}: could not be planted`);
            continue;
          }
          await reseal(copy);
          await refused(`${file} ${kind}`, copy, [], /E_REPLAY_TAMPERED: /, secrets);
          await refused(`${file} ${kind} (relaxed)`, copy, ["--allow-unverified"], code, secrets);
        }
      }
      const paths: [string, (c: string) => Promise<void>, RegExp][] = [
        [
          "golden at /etc/passwd",
          scenarioEdit((s) => s.steps[2] = { expect: { snapshot_equals: "/etc/passwd" } }),
          /E_REPLAY_BUNDLE: .*field "steps\.2\.expect/,
        ],
        [
          "golden at ../../secret",
          scenarioEdit((s) => s.steps[2] = { expect: { snapshot_equals: "../../secret" } }),
          /E_REPLAY_BUNDLE: .*field "steps\.2\.expect/,
        ],
        [
          "expect file /etc/passwd",
          scenarioEdit((s) => s.steps[2] = { expect: { file: "/etc/passwd", contains: "x" } }),
          /E_REPLAY_BUNDLE: .*field "steps\.2\.expect/,
        ],
        [
          "expect file ../../secret",
          scenarioEdit((s) => s.steps[2] = { expect: { file: "../../secret", contains: "x" } }),
          /E_REPLAY_BUNDLE: .*field "steps\.2\.expect/,
        ],
      ];
      for (const [what, change, code] of paths) {
        const copy = await copyOf(golden, what);
        await change(copy);
        await reseal(copy);
        await refused(what, copy, [], code, secrets);
      }
      // The recorded cwd is a host path the bundle chose: an expect {file} there is not read in a replay.
      const cwd = await copyOf(golden, "cwd");
      await scenarioEdit((s) => {
        s.run.cwd = dir;
        s.steps[2] = { expect: { file: "secret", equals: "guess" } };
      })(cwd);
      await reseal(cwd);
      const r = await specter(["replay", cwd]);
      assert.notEqual(r.code, 0, r.stdout + r.stderr);
      assert.doesNotMatch(r.stdout, /MATCH/);
      assert.ok(!(r.stdout + r.stderr).includes(secret), "no secret in the output");
      assert.ok(!(await everyFile(cwd)).includes(secret), "no secret in any result file");
      const run = JSON.parse(await Deno.readTextFile(`${cwd}/replay/run/run.json`));
      assert.match(run.steps[2].message, /is not read in a replay/);
    });
  },
  300_000,
);

sessionTest(
  "race: a golden swapped for a symlink to a host secret while replays run never leaks it",
  async () => {
    await withTempDir(async (dir) => {
      const secret = `HOST-SECRET-${crypto.randomUUID()}`;
      await Deno.writeTextFile(`${dir}/secret`, `${secret}\n`);
      const golden = await recordGolden(dir);
      const copy = await copyOf(golden, "race");
      const path = `${copy}/goldens/golden.txt`;
      await Deno.copyFile(path, `${dir}/genuine.txt`);
      // Checksums list the genuine golden, as the attacker wants them to verify.
      await reseal(copy);
      // The attacker flips the golden between the genuine file and a symlink to the secret, atomically.
      const attacker = new Deno.Command("sh", {
        args: [
          "-c",
          `while :; do ln -sfn ${dir}/secret ${copy}/goldens/.l; mv -T ${copy}/goldens/.l ${path}; ` +
          `cp ${dir}/genuine.txt ${copy}/goldens/.g; mv -T ${copy}/goldens/.g ${path}; done`,
        ],
        stdout: "null",
        stderr: "null",
      }).spawn();
      const outcomes: Record<string, number> = {};
      try {
        for (let i = 0; i < 12; i++) {
          await Deno.remove(`${copy}/replay`, { recursive: true }).catch(() => {}); // First round: none.
          const r = await specter(["replay", copy]);
          const seen = r.stdout + r.stderr;
          assert.ok(!seen.includes(secret), `round ${i}: the secret reached the output`);
          const code = /specter: (E_[A-Z_]+)/.exec(r.stderr)?.[1] ?? /^replay: (\S+)/m.exec(r.stdout)?.[1] ??
            "?";
          outcomes[code] = (outcomes[code] ?? 0) + 1;
          // A MATCH is only ever of the genuine golden (the checked bytes); anything else is refused.
          assert.ok(
            ["E_REPLAY_TAMPERED", "E_PATH_SYMLINK", "MATCH"].includes(code),
            `round ${i}: ${r.stdout}${r.stderr}`,
          );
          const files = await Deno.lstat(`${copy}/replay`).then(() => everyFile(`${copy}/replay`), () => "");
          assert.ok(!files.includes(secret), `round ${i}: the secret reached a result file`);
        }
      } finally {
        attacker.kill("SIGKILL");
        await attacker.status;
      }
      assert.ok(
        (outcomes["E_REPLAY_TAMPERED"] ?? 0) + (outcomes["E_PATH_SYMLINK"] ?? 0) > 0,
        JSON.stringify(outcomes),
      );
    });
  },
  300_000,
);

sessionTest(
  "race: expect {file} while the sandboxed program flips it between a file and a symlink to a host file",
  async () => {
    await withTempDir(async (dir) => {
      const checks = Array.from({ length: 40 }, () => '  - expect: { file: flip, equals: "ok\\n" }\n').join(
        "",
      );
      const scenario = `version: 1
name: flips a file and a symlink
run:
  argv: [/bin/sh, -c, "echo ok > g; i=0; while [ $i -lt 4000 ]; do ln -sfn /etc/passwd l; mv -T l flip; cp g h; mv -T h flip; i=$((i+1)); done"]
  workspace: { files: { seed.txt: "x" } }
  policy: workspace
  ack_unsafe_write: true
steps:
  - wait_for: { idle: 1 }
${checks}`;
      await Deno.writeTextFile(`${dir}/flip.yaml`, scenario);
      const seen: Record<string, number> = {};
      for (let i = 0; i < 5; i++) {
        const r = await specter(["test", "--json", "--artifacts", `${dir}/b${i}`, `${dir}/flip.yaml`]);
        assert.ok(!r.stdout.includes(PASSWD), `round ${i}: host /etc/passwd reached the result`);
        assert.ok(!(await everyFile(`${dir}/b${i}`)).includes(PASSWD), `round ${i}: … or a bundle file`);
        const failed = JSON.parse(r.stdout).steps.find((s: { status: string }) => s.status === "failed");
        const why = failed === undefined ? "passed" : /E_[A-Z_]+|does not exist/.exec(failed.message)?.[0];
        seen[why ?? failed.message] = (seen[why ?? failed.message] ?? 0) + 1;
        for (const key of Object.keys(seen)) {
          assert.ok(["passed", "E_PATH_SYMLINK", "does not exist"].includes(key), JSON.stringify(seen));
        }
      }
    });
  },
  300_000,
);

sessionTest(
  "specter test: a golden is read and updated beneath the scenario's directory, never through a symlink",
  async () => {
    await withTempDir(async (dir) => {
      const secret = `HOST-SECRET-${crypto.randomUUID()}`;
      await Deno.writeTextFile(`${dir}/secret`, `${secret}\n`);
      await Deno.mkdir(`${dir}/s`);
      await Deno.writeTextFile(`${dir}/s/golden.yaml`, GOLDEN_SCENARIO);
      await Deno.symlink(`${dir}/secret`, `${dir}/s/golden.txt`);
      const read = await specter(["test", "--json", "--artifacts", `${dir}/b`, `${dir}/s/golden.yaml`]);
      assert.equal(read.code, 1, read.stdout + read.stderr);
      assert.match(
        JSON.parse(read.stdout).steps[2].message,
        /Golden "golden\.txt" is refused: E_PATH_SYMLINK/,
      );
      assert.ok(!read.stdout.includes(secret), "the secret is not in the result");
      assert.ok(!(await everyFile(`${dir}/b`)).includes(secret), "… nor in the bundle");
      const update = await specter([
        "test",
        "--update-goldens",
        "--artifacts",
        `${dir}/u`,
        `${dir}/s/golden.yaml`,
      ]);
      assert.equal(update.code, 1, update.stdout + update.stderr);
      assert.match(update.stdout, /E_PATH_SYMLINK/);
      assert.equal(
        await Deno.readTextFile(`${dir}/secret`),
        `${secret}\n`,
        "the link's target is not written",
      );
      const escape = GOLDEN_SCENARIO.replace("golden.txt", "../secret");
      await Deno.writeTextFile(`${dir}/s/escape.yaml`, escape);
      const schema = await specter(["test", "--artifacts", `${dir}/e`, `${dir}/s/escape.yaml`]);
      assert.equal(schema.code, 2);
      assert.match(schema.stdout + schema.stderr, /E_SCENARIO_SCHEMA: .*snapshot_equals/);
    });
  },
  60_000,
);
