import assert from "node:assert/strict";
import { ArtifactBundle, checksums, verifyChecksums } from "./bundle.ts";

Deno.test("a finished bundle verifies; tampering, deletion and additions are each detected", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const bundle = new ArtifactBundle(dir);
    bundle.writeJson("run.json", { status: "Passed" });
    bundle.event({ seq: 0, type: "start" });
    bundle.event({ seq: 1, type: "exit" });
    bundle.writeText(`${ArtifactBundle.snapshotPath(1, "first")}.txt`, "screen\n");
    const sums = bundle.finish();
    assert.deepEqual(Object.keys(sums), ["events.ndjson", "run.json", "snapshots/001-first.txt"]);
    assert.equal(verifyChecksums(dir).ok, true);

    await Deno.writeTextFile(`${dir}/run.json`, '{"status":"Passed!"}');
    assert.deepEqual(verifyChecksums(dir).altered, ["run.json"]);
    await Deno.remove(`${dir}/run.json`);
    assert.deepEqual(verifyChecksums(dir).missing, ["run.json"]);
    await Deno.writeTextFile(`${dir}/extra.txt`, "x");
    assert.deepEqual(verifyChecksums(dir).added, ["extra.txt"]);
    await Deno.remove(`${dir}/checksums.json`);
    assert.equal(verifyChecksums(dir).noChecksums, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a symlink added to a bundle is an addition (never followed); replay/ is not covered", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const bundle = new ArtifactBundle(dir);
    bundle.writeText("run.json", "{}");
    bundle.finish();
    Deno.mkdirSync(`${dir}/replay`);
    Deno.writeTextFileSync(`${dir}/replay/replay.json`, "{}");
    assert.equal(verifyChecksums(dir).ok, true);
    Deno.symlinkSync("/etc/passwd", `${dir}/snapshots/000-x.json`);
    Deno.symlinkSync("/etc", `${dir}/snapshots/dir-link`);
    const report = verifyChecksums(dir);
    assert.equal(report.ok, false);
    assert.deepEqual(report.added, ["snapshots/000-x.json", "snapshots/dir-link"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a marker copied into checksums.json never verifies: symlinks and FIFOs are always altered", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const bundle = new ArtifactBundle(dir);
    bundle.writeText("run.json", "{}");
    bundle.finish();
    Deno.symlinkSync("/etc/passwd", `${dir}/snapshots/leak.json`);
    const fifo = await new Deno.Command("mkfifo", { args: [`${dir}/snapshots/pipe.json`] }).output();
    assert.ok(fifo.success);
    // The attacker recomputes checksums.json: every listed value is exactly what checksums() reports.
    Deno.writeTextFileSync(`${dir}/checksums.json`, JSON.stringify(checksums(dir)));
    const report = verifyChecksums(dir);
    assert.equal(report.ok, false);
    assert.deepEqual(report.altered, ["snapshots/leak.json", "snapshots/pipe.json"]);
    Deno.writeTextFileSync(`${dir}/checksums.json`, "[1]");
    assert.equal(verifyChecksums(dir).checksumsFile, "invalid");
    Deno.removeSync(`${dir}/checksums.json`);
    Deno.symlinkSync(`${dir}/run.json`, `${dir}/checksums.json`);
    assert.equal(verifyChecksums(dir).checksumsFile, "invalid");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
