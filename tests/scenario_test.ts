/**
 * Scenarios end to end: the fixture scenarios run for real in the sandbox, deterministically; failures
 * carry a diagnostic; artifacts are complete, checksummed, and written also when a run fails.
 */
import assert from "node:assert/strict";
import { verifyChecksums } from "../src/artifacts/bundle.ts";
import { loadScenario, parseScenario } from "../src/scenario/load.ts";
import { runScenario } from "../src/scenario/runner.ts";
import { DENO, ROOT, sessionTest, withTempDir } from "./_helpers.ts";

const FIXTURES = ["menu", "progress", "fullscreen", "prompt", "pager"];

async function snapshotsOf(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const entry of Deno.readDir(`${dir}/snapshots`)) {
    if (entry.name.endsWith(".txt")) {
      out[entry.name] = await Deno.readTextFile(`${dir}/snapshots/${entry.name}`);
    }
  }
  return out;
}

for (const name of FIXTURES) {
  sessionTest(
    `fixture scenario "${name}" passes 20 runs in a row with byte-identical snapshots`,
    async () => {
      const loaded = await loadScenario(`${ROOT}/fixtures/scenarios/${name}.yaml`);
      await withTempDir(async (tmp) => {
        let first: Record<string, string> | undefined;
        for (let run = 0; run < 20; run++) {
          const result = await runScenario(loaded, { artifacts: `${tmp}/${run}` });
          assert.equal(
            result.status,
            "Passed",
            JSON.stringify(result.error ?? result.steps.find((s) => s.status === "failed")),
          );
          const snapshots = await snapshotsOf(`${tmp}/${run}`);
          assert.ok(Object.keys(snapshots).length > 0);
          if (first === undefined) first = snapshots;
          else assert.deepEqual(snapshots, first, `run ${run} drifted`);
        }
      });
    },
    120_000,
  );
}

/** Scenarios that drive real programs from Debian (installed by .ci/run and scripts/dev). */
const REAL_PROGRAMS = ["vim", "python_repl", "less", "top"];

for (const name of REAL_PROGRAMS) {
  sessionTest(`real-program scenario "${name}" passes 5 runs in a row`, async () => {
    const loaded = await loadScenario(`${ROOT}/fixtures/scenarios/${name}.yaml`);
    await withTempDir(async (tmp) => {
      for (let run = 0; run < 5; run++) {
        const result = await runScenario(loaded, { artifacts: `${tmp}/${run}` });
        assert.equal(
          result.status,
          "Passed",
          JSON.stringify(result.steps.find((s) => s.status === "failed")),
        );
        assert.equal(verifyChecksums(`${tmp}/${run}`).ok, true);
      }
    });
  }, 60_000);
}

sessionTest(
  "vim edits a file in a scratch workspace, archived in the bundle; a wrong file expectation fails",
  async () => {
    await withTempDir(async (tmp) => {
      const loaded = await loadScenario(`${ROOT}/fixtures/scenarios/vim.yaml`);
      const result = await runScenario(loaded, { artifacts: `${tmp}/ok` });
      assert.equal(result.status, "Passed");
      assert.equal(await Deno.readTextFile(`${tmp}/ok/workspace/notes.txt`), "first line\nsecond line\n");
      const sums = JSON.parse(await Deno.readTextFile(`${tmp}/ok/checksums.json`));
      assert.ok("workspace/notes.txt" in sums, "the archived workspace is checksummed");
      const resolved = JSON.parse(await Deno.readTextFile(`${tmp}/ok/scenario.resolved.json`));
      assert.match(resolved.workspace_dir, /\/specter-workspace-/);
      await assert.rejects(
        Deno.stat(resolved.workspace_dir),
        Deno.errors.NotFound,
        "the live workspace is removed",
      );
      // The program wrote where the policy allowed: only the workspace was writable.
      const policy = JSON.parse(await Deno.readTextFile(`${tmp}/ok/policy.effective.json`));
      assert.deepEqual(policy.fs.write, [resolved.workspace_dir]);

      const text = (await Deno.readTextFile(`${ROOT}/fixtures/scenarios/vim.yaml`))
        .replace('equals: "first line\\nsecond line\\n"', 'equals: "first line\\n"');
      const wrong = parseScenario(text, `${ROOT}/fixtures/scenarios/vim-wrong.yaml`);
      const failed = await runScenario(wrong, { artifacts: `${tmp}/wrong` });
      assert.equal(failed.status, "Failed");
      const step = failed.steps.find((s) => s.status === "failed")!;
      assert.match(step.message ?? "", /File ".*notes\.txt" is "first line\\nsecond line\\n"/);
    });
  },
  60_000,
);

sessionTest(
  "a wrong expectation fails with a diagnostic: expected vs actual screen, source line",
  async () => {
    const text = `version: 1
name: wrong on purpose
run:
  argv: [/usr/bin/python3, menu.py]
  cwd: ${ROOT}/fixtures/tuis
  policy: ${ROOT}/fixtures/scenarios/tui.policy.toml
steps:
  - wait_for: { text: "> apple" }
  - expect: { screen_contains: "> mango" }
  - press: enter
`;
    const loaded = parseScenario(text, `${ROOT}/fixtures/scenarios/wrong.yaml`);
    await withTempDir(async (dir) => {
      const result = await runScenario(loaded, { artifacts: dir });
      assert.equal(result.status, "Failed");
      const failed = result.steps[1]!;
      assert.equal(failed.status, "failed");
      assert.equal(failed.line, 9);
      assert.match(failed.diagnostic!.expected, /> mango/);
      assert.match(failed.diagnostic!.actual_screen, /> apple/);
      assert.ok(failed.diagnostic!.last_frames.length > 0);
      assert.equal(result.steps[2]!.status, "skipped");
      assert.equal(verifyChecksums(dir).ok, true, "artifacts are complete even for a failed run");
    });
  },
);

sessionTest("invalid UTF-8 fails the run with E_TERMINAL_PARSE and still writes every artifact", async () => {
  const loaded = parseScenario(
    `version: 1\nname: binary\nrun:\n  argv: [/usr/bin/printf, "ok\\\\377\\\\n"]\nsteps:\n  - wait_for: { exit: true }\n`,
    `${ROOT}/fixtures/scenarios/binary.yaml`,
  );
  await withTempDir(async (dir) => {
    const result = await runScenario(loaded, { artifacts: dir });
    assert.equal(result.status, "Error");
    assert.equal(result.error?.code, "E_TERMINAL_PARSE");
    for (const file of ["run.json", "events.ndjson", "session.cast", "audit.ndjson", "checksums.json"]) {
      await Deno.stat(`${dir}/${file}`);
    }
    const allowed = parseScenario(
      `version: 1\nname: binary ok\nrun:\n  argv: [/usr/bin/printf, "ok\\\\377\\\\n"]\n  allow_binary: true\nsteps:\n  - wait_for: { exit: true }\n`,
      `${ROOT}/fixtures/scenarios/binary.yaml`,
    );
    assert.equal((await runScenario(allowed, { artifacts: `${dir}/allowed` })).status, "Passed");
  });
});

sessionTest("tampering with any artifact is detected by its checksums", async () => {
  const loaded = await loadScenario(`${ROOT}/fixtures/scenarios/menu.yaml`);
  await withTempDir(async (dir) => {
    await runScenario(loaded, { artifacts: dir });
    const files = Object.keys(JSON.parse(await Deno.readTextFile(`${dir}/checksums.json`)));
    assert.ok(files.includes("events.ndjson") && files.includes("snapshots/001-start.txt"), files.join(","));
    for (const file of files) {
      const original = await Deno.readFile(`${dir}/${file}`);
      await Deno.writeFile(`${dir}/${file}`, new Uint8Array([...original, 0x20]));
      assert.deepEqual(verifyChecksums(dir).altered, [file]);
      await Deno.writeFile(`${dir}/${file}`, original);
    }
    assert.equal(verifyChecksums(dir).ok, true);
  });
});

sessionTest("specter test: progress lines, --json RunResult, non-zero exit on failure", async () => {
  await withTempDir(async (dir) => {
    const run = (args: string[]) =>
      new Deno.Command(DENO, {
        args: ["run", "--quiet", "-A", `${ROOT}/main.ts`, "test", ...args],
        stdout: "piped",
        stderr: "piped",
      })
        .output();
    const human = await run(["--artifacts", `${dir}/h`, `${ROOT}/fixtures/scenarios/menu.yaml`]);
    const text = new TextDecoder().decode(human.stdout);
    assert.equal(human.code, 0, text);
    assert.match(text, /✓ {2}3 press \["down","down"\]/);
    assert.match(text, /PASSED {2}10\/10 steps/);
    await Deno.writeTextFile(
      `${dir}/wrong.yaml`,
      `version: 1\nname: wrong\nrun:\n  argv: [/usr/bin/true]\nsteps:\n  - wait_for: { exit: true }\n  - expect: { exit_code: 3 }\n`,
    );
    const json = await run(["--json", "--artifacts", `${dir}/j`, `${dir}/wrong.yaml`]);
    assert.equal(json.code, 1);
    const result = JSON.parse(new TextDecoder().decode(json.stdout));
    assert.equal(result.status, "Failed");
    assert.equal(result.steps[1].message, "Exit code was 0");
  });
});

sessionTest(
  "expect {file} reads only regular files inside the working directory (no planted symlinks)",
  async () => {
    await withTempDir(async (tmp) => {
      const text = `version: 1
name: plants a symlink
run:
  argv: [/bin/sh, -c, "ln -s /etc/passwd leak; mkdir d; ln -s /etc d/etc; echo done"]
  workspace: { files: { seed.txt: "x" } }
  policy: workspace
  ack_unsafe_write: true
steps:
  - wait_for: { exit: true }
  - expect: { file: leak, contains: root }
`;
      const run = (steps: string) =>
        runScenario(
          parseScenario(text.replace("  - expect: { file: leak, contains: root }\n", steps), `${tmp}/s.yaml`),
          {
            artifacts: `${tmp}/${crypto.randomUUID()}`,
          },
        );
      const cases: [string, RegExp][] = [
        [
          "  - expect: { file: leak, contains: root }\n",
          /File "leak" is refused: E_PATH_SYMLINK: /,
        ],
        [
          "  - expect: { file: d/etc/passwd, contains: root }\n",
          /File "d\/etc\/passwd" is refused: E_PATH_SYMLINK/,
        ],
        [
          "  - expect: { file: d, contains: x }\n",
          /File "d" is refused: E_FILE_TYPE: .* is a dir, not a regular/,
        ],
        [
          "  - expect: { file: missing.txt, contains: such }\n",
          /File "missing\.txt" does not exist/,
        ],
      ];
      for (const [step, message] of cases) {
        const result = await run(step);
        assert.equal(result.status, "Failed", step);
        const failed = result.steps.find((s) => s.status === "failed")!;
        assert.match(failed.message ?? "", message);
        assert.doesNotMatch(JSON.stringify(result), /root:x:0:0/, "no host file content in the result");
      }
      assert.equal((await run("  - expect: { file: seed.txt, equals: x }\n")).status, "Passed");
    });
  },
  60_000,
);
