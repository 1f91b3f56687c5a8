/**
 * Every subcommand turns a malformed command line (unknown flag, missing value, extra positional, bad
 * number or duration) into `E_USAGE` and exit 2, and a file argument that is not a bounded regular file
 * (FIFO, device, directory, huge file) into its typed code and exit 2: through the real CLI, never a
 * hang, an untyped `E_IO` or exit 125. And `specter test --json` prints exactly one JSON document.
 */
import assert from "node:assert/strict";
import { runCli, withTempDir } from "./_helpers.ts";

/** [args, expected error code]; every case exits 2. */
const USAGE_CASES: readonly (readonly [readonly string[], string])[] = [
  // unknown commands and help
  [["nope"], "E_USAGE"],
  [["help", "nope"], "E_USAGE"],
  [["help", "run", "extra"], "E_USAGE"],
  [["--version", "extra"], "E_USAGE"],
  // run
  [["run"], "E_USAGE"],
  [["run", "--bogus", "--", "true"], "E_USAGE"],
  [["run", "-x", "--", "true"], "E_USAGE"],
  [["run", "--timeout"], "E_USAGE"],
  [["run", "--timeout", "5x", "--", "true"], "E_USAGE"],
  [["run", "--timeout", "30", "--", "true"], "E_USAGE"],
  [["run", "--timeout", "1000h", "--", "true"], "E_USAGE"],
  [["run", "--idle", "2147483648ms", "--", "true"], "E_USAGE"],
  [["run", "--cols", "0", "--", "true"], "E_USAGE"],
  [["run", "--rows", "1e3", "--", "true"], "E_USAGE"],
  [["run", "--max-output", "99999999999G", "--", "true"], "E_USAGE"],
  [["run", "--max-procs", "-1", "--", "true"], "E_USAGE"],
  [["run", "--framing", "xml", "--", "true"], "E_USAGE"],
  [["run", "--heartbeat", "often", "--", "true"], "E_USAGE"],
  [["run", "--sandbox", "magic", "--", "true"], "E_USAGE"],
  [["run", "--record-input=yes", "--", "true"], "E_USAGE"],
  [["run", "--json", "--", "true"], "E_USAGE"],
  [["run", "--env", "=x", "--", "true"], "E_USAGE"],
  [["run", "--cwd", "relative", "--", "true"], "E_USAGE"],
  // exec
  [["exec"], "E_USAGE"],
  [["exec", "--bogus", "--", "true"], "E_USAGE"],
  [["exec", "--input"], "E_USAGE"],
  [["exec", "--input", "\\q", "--", "true"], "E_USAGE"],
  [["exec", "--grace", "-1s", "--", "true"], "E_USAGE"],
  [["exec", "--raw=1", "--", "true"], "E_USAGE"],
  // sandbox
  [["sandbox"], "E_USAGE"],
  [["sandbox", "nope"], "E_USAGE"],
  [["sandbox", "probe", "extra"], "E_USAGE"],
  [["sandbox", "probe", "--bogus"], "E_USAGE"],
  [["sandbox", "probe", "--json=1"], "E_USAGE"],
  // test
  [["test"], "E_USAGE"],
  [["test", "--bogus", "x.yaml"], "E_USAGE"],
  [["test", "--artifacts"], "E_USAGE"],
  [["test", "--json=yes", "x.yaml"], "E_USAGE"],
  // replay
  [["replay"], "E_USAGE"],
  [["replay", "a", "b"], "E_USAGE"],
  [["replay", "--bogus", "dir"], "E_USAGE"],
  [["replay", "--normalize"], "E_USAGE"],
  [["replay", "--normalize", "nope", "dir"], "E_USAGE"],
  [["replay", "--strict", "--normalize", "ansi", "dir"], "E_USAGE"],
  [["replay", "report"], "E_USAGE"],
  [["replay", "report", "a", "b"], "E_USAGE"],
  [["replay", "report", "--strict", "dir"], "E_USAGE"],
  // verify
  [["verify"], "E_USAGE"],
  [["verify", "g.txt"], "E_USAGE"],
  [["verify", "--", "true"], "E_USAGE"],
  [["verify", "g.txt", "extra", "--", "true"], "E_USAGE"],
  [["verify", "g.txt", "--bogus", "--", "true"], "E_USAGE"],
  [["verify", "g.txt", "--what", "pixels", "--", "true"], "E_USAGE"],
  [["verify", "g.txt", "--normalize", "nope", "--", "true"], "E_USAGE"],
  [["verify", "g.cast", "--update", "--", "true"], "E_USAGE"],
  [["verify", "g.txt", "--timeout", "1000h", "--", "true"], "E_USAGE"],
  // policy
  [["policy"], "E_USAGE"],
  [["policy", "nope", "strict"], "E_USAGE"],
  [["policy", "check"], "E_USAGE"],
  [["policy", "check", "strict", "extra"], "E_USAGE"],
  [["policy", "check", "strict", "--bogus"], "E_USAGE"],
  [["policy", "check", "strict", "--cwd"], "E_USAGE"],
  [["policy", "check", "strict", "--backend", "bwrap"], "E_USAGE"],
  [["policy", "explain", "strict", "--", "ls"], "E_USAGE"],
  [["policy", "render", "strict", "--backend", "vm"], "E_USAGE"],
  [["policy", "render", "strict", "--max-memory", "lots"], "E_USAGE"],
  [["policy", "render", "strict", "--"], "E_USAGE"],
  // audit
  [["audit"], "E_USAGE"],
  [["audit", "nope", "x"], "E_USAGE"],
  [["audit", "verify"], "E_USAGE"],
  [["audit", "verify", "a", "b"], "E_USAGE"],
  [["audit", "verify", "--bogus", "x"], "E_USAGE"],
  [["audit", "verify", "--json=1", "x"], "E_USAGE"],
  [["audit", "verify", "x", "--expect"], "E_USAGE"],
  [["audit", "verify", "--expect", "ABC", "x"], "E_USAGE"],
  // view
  [["view"], "E_USAGE"],
  [["view", "a.cast", "b.cast"], "E_USAGE"],
  [["view", "--mode", "raw", "fixtures/workloads/top.cast"], "E_USAGE"],
  [["view", "--mode"], "E_USAGE"],
  [["view", "--bogus", "fixtures/workloads/top.cast"], "E_USAGE"],
  [["view", "--text=1", "fixtures/workloads/top.cast"], "E_USAGE"],
  [["view", "deno.json"], "E_USAGE"],
  [["view", "missing.cast"], "E_PATH_NOT_FOUND"],
];

/** Runs the cases two at a time (the machine is shared) and reports every mismatch at once. */
async function runAll(cases: readonly (readonly [readonly string[], string])[]): Promise<string[]> {
  const problems: string[] = [];
  const queue = [...cases];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const [args, code] = next;
      const started = performance.now();
      const result = await runCli([...args]);
      const ms = performance.now() - started;
      // The code: on stderr (`specter: CODE: …`), else where the command reports it on stdout
      // (`✗ FILE: CODE: …` from test, `CODE (policy): …` from policy check).
      const seen = /\b(E_[A-Z_]+)\b/.exec(result.stderr)?.[1] ?? /\b(E_[A-Z_]+)\b/.exec(result.stdout)?.[1] ??
        "(none)";
      if (result.code !== 2 || seen !== code || ms > 15_000) {
        problems.push(
          `specter ${args.join(" ")}: exit ${result.code}, ${seen} in ${Math.round(ms)} ms ` +
            `(want exit 2, ${code}); stderr: ${result.stderr.trim().slice(0, 200)}`,
        );
      }
    }
  };
  await Promise.all([worker(), worker()]);
  return problems;
}

Deno.test({
  name: "every subcommand: a malformed command line exits 2 with E_USAGE",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const problems = await runAll(USAGE_CASES);
    assert.deepEqual(problems, [], problems.join("\n"));
  },
});

Deno.test({
  name:
    "file arguments (scenario, golden, --policy, policy check, audit log): FIFO, device, directory, huge file",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await withTempDir(async (dir) => {
      new Deno.Command("mkfifo", { args: [`${dir}/fifo.yaml`, `${dir}/fifo.txt`, `${dir}/fifo.json`] })
        .outputSync();
      await Deno.mkdir(`${dir}/dir.yaml`);
      await Deno.mkdir(`${dir}/dir.txt`);
      await Deno.symlink("/dev/urandom", `${dir}/random.json`);
      const huge = (name: string, bytes: number) => {
        // Sparse: the size is what counts, no disk is spent.
        const file = Deno.openSync(`${dir}/${name}`, { write: true, create: true });
        file.truncateSync(bytes);
        file.close();
      };
      huge("huge.yaml", 5 * 1024 * 1024);
      huge("huge.txt", 65 * 1024 * 1024);
      huge("huge.json", 2 * 1024 * 1024);
      const cases: (readonly [readonly string[], string])[] = [
        [["test", `${dir}/fifo.yaml`], "E_FILE_TYPE"],
        [["test", "/dev/zero"], "E_FILE_TYPE"],
        [["test", `${dir}/dir.yaml`], "E_FILE_TYPE"],
        [["test", `${dir}/huge.yaml`], "E_FILE_TOO_LARGE"],
        [["test", `${dir}/missing.yaml`], "E_PATH_NOT_FOUND"],
        [["verify", `${dir}/fifo.txt`, "--", "true"], "E_FILE_TYPE"],
        [["verify", "/dev/urandom", "--", "true"], "E_FILE_TYPE"],
        [["verify", `${dir}/dir.txt`, "--", "true"], "E_FILE_TYPE"],
        [["verify", `${dir}/huge.txt`, "--", "true"], "E_FILE_TOO_LARGE"],
        [["verify", `${dir}/missing.txt`, "--", "true"], "E_PATH_NOT_FOUND"],
        [["verify", `${dir}/fifo.txt`, "--update", "--", "true"], "E_FILE_TYPE"],
        [["run", "--policy", `${dir}/fifo.json`, "--", "true"], "E_FILE_TYPE"],
        [["exec", "--policy", `${dir}/random.json`, "--", "true"], "E_FILE_TYPE"],
        [["run", "--policy", `${dir}/huge.json`, "--", "true"], "E_FILE_TOO_LARGE"],
        [["policy", "check", `${dir}/fifo.json`], "E_FILE_TYPE"],
        [["policy", "check", "/dev/zero"], "E_FILE_TYPE"],
        [["policy", "check", `${dir}/huge.json`], "E_FILE_TOO_LARGE"],
        [["audit", "verify", `${dir}/fifo.txt`], "E_FILE_TYPE"],
        [["audit", "verify", "/dev/zero"], "E_FILE_TYPE"],
        [["audit", "verify", `${dir}/dir.txt`], "E_PATH_NOT_FOUND"],
        [["audit", "verify", `${dir}/huge.txt`], "E_FILE_TOO_LARGE"],
        [["audit", "verify", `${dir}/missing.ndjson`], "E_PATH_NOT_FOUND"],
      ];
      const problems = await runAll(cases);
      assert.deepEqual(problems, [], problems.join("\n"));
    });
  },
});

Deno.test({
  name: "test --json prints one JSON document, also when a scenario cannot be loaded",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await withTempDir(async (dir) => {
      await Deno.writeTextFile(`${dir}/bad.yaml`, "version: 1\nname: [unclosed\n");
      await Deno.writeTextFile(`${dir}/schema.yaml`, "version: 1\nname: x\n");
      const many = await runCli([
        "test",
        "--json",
        `${dir}/bad.yaml`,
        `${dir}/missing.yaml`,
        `${dir}/schema.yaml`,
      ]);
      const doc = JSON.parse(many.stdout);
      assert.ok(Array.isArray(doc), many.stdout);
      assert.deepEqual(
        doc.map((r: { error: { code: string } }) => r.error.code),
        ["E_SCENARIO_PARSE", "E_PATH_NOT_FOUND", "E_SCENARIO_SCHEMA"],
      );
      assert.equal(many.code, 2);
      const one = await runCli(["test", "--json", `${dir}/bad.yaml`]);
      assert.equal(JSON.parse(one.stdout).error.code, "E_SCENARIO_PARSE");
      assert.equal(one.stdout.trim().split("\n").length, 1);
    });
  },
});
