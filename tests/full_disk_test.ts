/**
 * Nothing is lost on a full disk: on a real tmpfs filled up by the test, the exit frame and the
 * RunResult still reach stdout, the audit log holds whole records only, a `.cast` never ends in a torn
 * line, and each loss has its typed error code and exit status. (Mounting needs root, as CI runs.)
 */
import assert from "node:assert/strict";
import { FileError } from "../src/errors.ts";
import { closeFd, LineFile, openWriteDir, writeFileWhole } from "../src/fsafe/mod.ts";
import { runCli, sessionTest, withTempDir } from "./_helpers.ts";
import { CAN_MOUNT, fill, PAGE, withFullTmpfs } from "./_tmpfs.ts";

/** Every line of `text` is JSON and the text ends in a newline (or is empty): nothing torn. */
function assertWholeLines(text: string, what: string): unknown[] {
  if (text === "") return [];
  assert.ok(text.endsWith("\n"), `${what} ends in a torn line: ${JSON.stringify(text.slice(-80))}`);
  return text.slice(0, -1).split("\n").map((line, i) => {
    try {
      return JSON.parse(line);
    } catch {
      throw new Error(`${what} line ${i + 1} is not whole JSON: ${JSON.stringify(line.slice(0, 80))}`);
    }
  });
}

function fullDiskTest(name: string, fn: () => Promise<void>): void {
  if (!CAN_MOUNT) {
    Deno.test({ name: `${name} (needs root to mount a tmpfs)`, ignore: true, fn() {} });
    return;
  }
  sessionTest(name, fn, 60_000);
}

fullDiskTest("LineFile: a line cut short by ENOSPC is truncated away; later appends fail alike", async () => {
  await withFullTmpfs(64, 2, async (dir) => {
    await Deno.writeTextFile(`${dir}/old.json`, "{}");
    const dirFd = openWriteDir(dir);
    const file = LineFile.appendBeneath(dirFd, "log.ndjson", `${dir}/log.ndjson`);
    closeFd(dirFd);
    let failure: unknown = null;
    let lines = 0;
    for (let i = 0; i < 1000 && failure === null; i++) {
      try {
        // 37 bytes a line: a page never holds a whole number of them, so one write is cut short.
        file.append(JSON.stringify({ n: String(i).padStart(6, "0"), pad: "x".repeat(15) }) + "\n");
        lines++;
      } catch (error: unknown) {
        failure = error;
      }
    }
    assert.ok(failure instanceof FileError && failure.code === "E_FILE_WRITE", String(failure));
    assert.equal(failure.details.reason, "disk_full");
    assert.throws(() => file.append("{}\n"), (e: unknown) => e === failure);
    file.close();
    const text = await Deno.readTextFile(`${dir}/log.ndjson`);
    assert.equal(assertWholeLines(text, "log").length, lines);
    assert.ok(lines > 50, `only ${lines} lines fit in a page`);

    // A whole-file write on the full disk leaves the old content and no temporary file.
    fill(`${dir}/.fill2`, 0);
    assert.throws(
      () => writeFileWhole(`${dir}/old.json`, "x".repeat(3 * PAGE)),
      (e: unknown) => e instanceof FileError && e.code === "E_FILE_WRITE",
    );
    assert.equal(await Deno.readTextFile(`${dir}/old.json`), "{}");
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.deepEqual(names, [".fill", ".fill2", "log.ndjson", "old.json"]);
  });
});

fullDiskTest(
  "run --record: the disk fills mid-run, the .cast ends on a whole line, the exit frame arrives",
  async () => {
    await withTempDir(async (artifacts) => {
      await withFullTmpfs(64, 1, async (dir) => {
        const cast = `${dir}/session.cast`;
        const { code, frames, stderr } = await runCli([
          "run",
          "--artifacts",
          artifacts,
          "--policy",
          "basic",
          "--record",
          cast,
          "--",
          "sh",
          "-c",
          // Small events, slowly (each its own cast line), then a burst; the end must still arrive.
          'for i in $(seq 1 300); do echo "line $i of the output padded out"; sleep 0.002; done; seq 1 20000',
        ]);
        const exit = frames.find((f) => f.type === "exit");
        assert.ok(exit, `no exit frame; stderr: ${stderr}`);
        assert.equal(exit.code, 0);
        const errors = frames.filter((f) => f.type === "error");
        assert.equal(errors.length, 1, "one E_RECORD error frame, not one per event");
        assert.equal(errors[0]!.code, "E_RECORD");
        assert.equal((errors[0]!.details as { reason: string }).reason, "disk_full");
        // The program succeeded but its recording was lost: not a pass.
        assert.equal(code, 125);
        assert.match(stderr, /E_RECORD/);
        const events = assertWholeLines(await Deno.readTextFile(cast), "session.cast");
        assert.equal((events[0] as { version: number }).version, 2);
        assert.ok(events.length > 2, "the recording kept what fit");
        // The output after the recording stopped still reached stdout.
        const out = frames.filter((f) => f.type === "stdout").map((f) => f.data).join("");
        assert.match(out, /\b20000\r?\n/);
      });
    });
  },
);

fullDiskTest(
  "run --record on a disk with no room for the header fails with E_RECORD, file empty",
  async () => {
    await withTempDir(async (artifacts) => {
      await withFullTmpfs(64, 0, async (dir) => {
        const cast = `${dir}/session.cast`;
        const { code, frames } = await runCli([
          "run",
          "--artifacts",
          artifacts,
          "--policy",
          "basic",
          "--record",
          cast,
          "--",
          "true",
        ]);
        assert.equal(code, 125);
        assert.equal(frames.at(-1)?.code, "E_RECORD");
        assert.equal(await Deno.readTextFile(cast), "");
      });
    });
  },
);

const RUN_ARGS = (artifacts: string) => [
  "run",
  "--id",
  "full-disk-audit",
  "--artifacts",
  artifacts,
  "--policy",
  "basic",
  "--",
  "true",
];

fullDiskTest(
  "audit: the disk fills after the start record; records stay whole, the run still ends",
  async () => {
    // How long this run's start record is, measured on a roomy disk.
    const startLength = await withTempDir(async (roomy) => {
      await runCli(RUN_ARGS(roomy));
      return (await Deno.readTextFile(`${roomy}/audit.ndjson`)).indexOf("\n") + 1;
    });
    await withFullTmpfs(64, 0, async (dir) => {
      // An earlier run's record fills the log's page so that the start record fits and launch does not.
      const artifacts = `${dir}/art`;
      Deno.removeSync(`${dir}/.fill`);
      Deno.mkdirSync(artifacts);
      // (A whole chained record: a run refuses to append to a log whose hash chain is broken.)
      const record = (pad: string) =>
        JSON.stringify({ ts: 0, run_id: "earlier", event: "start", pad, prev: "0".repeat(64) });
      const length = PAGE - startLength - 150 + JSON.stringify({ event: "earlier", pad: "" }).length;
      const earlier = record("e".repeat(length - record("").length)) + "\n";
      Deno.writeTextFileSync(`${artifacts}/audit.ndjson`, earlier);
      fill(`${dir}/.fill`, 0);
      const { code, frames, stderr } = await runCli(RUN_ARGS(artifacts));
      assert.equal(frames.find((f) => f.type === "exit")?.code, 0, `no exit frame; stderr: ${stderr}`);
      assert.equal(code, 125, "a run that lost its audit does not pass");
      assert.match(stderr, /specter: E_AUDIT: .*disk is full/);
      const records = assertWholeLines(await Deno.readTextFile(`${artifacts}/audit.ndjson`), "audit.ndjson");
      assert.deepEqual(records.map((r) => (r as { run_id: string }).run_id !== "earlier"), [false, true]);
    });
  },
);

fullDiskTest(
  "audit: a run whose start record cannot be written does not start (E_AUDIT, exit 125)",
  async () => {
    await withFullTmpfs(64, 0, async (dir) => {
      const { code, frames, stderr } = await runCli(RUN_ARGS(`${dir}/art`));
      assert.equal(code, 125);
      assert.match(stderr, /^specter: E_AUDIT: /m);
      assert.equal(frames.length, 1);
      assert.equal(frames[0]!.code, "E_AUDIT");
      assert.equal(await Deno.readTextFile(`${dir}/art/audit.ndjson`), "");
    });
  },
);

fullDiskTest(
  "specter test --json on a full disk: one RunResult on stdout, typed error, whole files",
  async () => {
    await withTempDir(async (src) => {
      const scenario = `${src}/echo.yaml`;
      await Deno.writeTextFile(
        scenario,
        "version: 1\nname: echo\nrun: {argv: [/usr/bin/seq, '1', '3000'], policy: basic}\n" +
          "steps:\n  - wait_for: {exit: true}\n  - expect: {exit_code: 0}\n",
      );
      for (const free of [0, 1, 2, 4]) {
        await withFullTmpfs(128, free, async (dir) => {
          const artifacts = `${dir}/bundle`;
          const { code, stdout, stderr } = await runCli([
            "test",
            "--json",
            "--artifacts",
            artifacts,
            scenario,
          ]);
          const result = JSON.parse(stdout) as { status: string; error: { code: string } | null };
          assert.equal(result.status, "Error", `free pages ${free}: ${stdout} ${stderr}`);
          assert.ok(["E_ARTIFACTS", "E_AUDIT", "E_RECORD"].includes(result.error!.code), result.error!.code);
          assert.equal(code, 125);
          for (const entry of Deno.readDirSync(artifacts)) {
            if (!entry.isFile) continue;
            const text = Deno.readTextFileSync(`${artifacts}/${entry.name}`);
            assert.ok(!entry.name.endsWith(".tmp"), `temporary file left: ${entry.name}`);
            if (entry.name.endsWith(".json")) JSON.parse(text);
            else assertWholeLines(text, entry.name);
          }
        });
      }
    });
  },
);
