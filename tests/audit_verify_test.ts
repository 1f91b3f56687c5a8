/**
 * `specter audit verify`: a real run's audit log verifies; every way of tampering with it an attacker
 * would try (edit, delete, reorder, truncate, insert or append a forged record, rewrite the tail with
 * fresh hashes) is caught, naming the first bad record, with exit 1 and E_AUDIT_TAMPERED.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { runCli, sessionTest, withTempDir } from "./_helpers.ts";

const GENESIS = "0".repeat(64);

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** A real audit log: two runs appended to one artifacts directory (3 + 3 records, one chain). */
async function realLog(dir: string): Promise<string[]> {
  for (const command of [["sh", "-c", "echo one"], ["sh", "-c", "exit 3"]]) {
    await runCli(["exec", "--artifacts", dir, "--", ...command]);
  }
  const text = await Deno.readTextFile(`${dir}/audit.ndjson`);
  assert.ok(text.endsWith("\n"));
  return text.slice(0, -1).split("\n");
}

async function verify(
  path: string,
  ...flags: string[]
): Promise<{ code: number; json: Record<string, unknown>; stderr: string }> {
  const { code, stdout, stderr } = await runCli(["audit", "verify", "--json", ...flags, path]);
  return { code, json: JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}"), stderr };
}

/** Writes `lines` (each a record) as a log and expects verification to fail at `record`. */
async function assertTampered(dir: string, text: string, record: number, what: string): Promise<void> {
  const path = `${dir}/tampered.ndjson`;
  await Deno.writeTextFile(path, text);
  const { code, json, stderr } = await verify(path);
  assert.equal(code, 1, `${what}: ${stderr}`);
  assert.equal(json.ok, false, what);
  assert.equal(json.code, "E_AUDIT_TAMPERED", what);
  assert.equal(json.record, record, `${what}: ${json.message}`);
  assert.match(stderr, /E_AUDIT_TAMPERED: Audit record \d+/, what);
}

sessionTest("a real audit log verifies: record count, last hash, chain across two runs", async () => {
  await withTempDir(async (dir) => {
    const lines = await realLog(dir);
    assert.equal(lines.length, 6);
    assert.equal(JSON.parse(lines[0]!).prev, GENESIS);
    // The second run continued the first run's chain.
    assert.equal(JSON.parse(lines[3]!).prev, sha256(lines[2]!));
    const { code, json } = await verify(dir);
    assert.equal(code, 0);
    assert.deepEqual(json, { ok: true, file: `${dir}/audit.ndjson`, records: 6, last: sha256(lines[5]!) });
    assert.equal((await verify(`${dir}/audit.ndjson`, "--expect", sha256(lines[5]!))).code, 0);
    const text = await runCli(["audit", "verify", dir]);
    assert.match(text.stdout, new RegExp(`intact, 6 record\\(s\\), last sha256 ${sha256(lines[5]!)}`));
  });
});

sessionTest("every tampering is caught at the first bad record", async () => {
  await withTempDir(async (dir) => {
    const lines = await realLog(`${dir}/run`);
    const join = (records: string[]) => records.join("\n") + "\n";

    // An edited record (a field added to the second launch): the record after it no longer follows.
    const edited = [...lines];
    edited[4] = edited[4]!.replace('"launch"', '"launch","note":"x"');
    await assertTampered(dir, join(edited), 6, "edited");
    const endEdited = [...lines];
    endEdited[5] = endEdited[5]!.replace('"code":3', '"code":0');
    assert.notEqual(endEdited[5], lines[5]);
    // The last record edited: the chain holds, the pinned hash catches it.
    await Deno.writeTextFile(`${dir}/last.ndjson`, join(endEdited));
    assert.equal((await verify(`${dir}/last.ndjson`)).code, 0);
    const pinned = await verify(`${dir}/last.ndjson`, "--expect", sha256(lines[5]!));
    assert.equal(pinned.code, 1);
    assert.equal(pinned.json.record, 6);

    // A deleted record, in the middle and at the start.
    await assertTampered(dir, join([...lines.slice(0, 2), ...lines.slice(3)]), 3, "deleted");
    await assertTampered(dir, join(lines.slice(1)), 1, "deleted first");
    // Two records swapped.
    await assertTampered(dir, join([lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)]), 2, "reordered");
    // A torn last line (truncated mid-record), and one cut just before its newline.
    const full = join(lines);
    await assertTampered(dir, full.slice(0, full.length - 40), 6, "truncated");
    await assertTampered(dir, full.slice(0, -1), 6, "no newline");
    // A forged record appended with the right prev, after a record in the middle was altered.
    const forged = [...lines];
    forged[1] = forged[1]!.replace('"backend":"bwrap"', '"backend":"none"');
    const appended = JSON.stringify({
      ts: 1,
      run_id: "x",
      event: "end",
      code: 0,
      prev: sha256(forged.at(-1)!),
    });
    await assertTampered(dir, join([...forged, appended]), 3, "forged append");
    // An inserted record whose prev is right: the record after it breaks.
    const inserted = JSON.stringify({ ts: 1, run_id: "x", event: "breach", prev: sha256(lines[2]!) });
    await assertTampered(dir, join([...lines.slice(0, 3), inserted, ...lines.slice(3)]), 5, "inserted");
    // Not JSON, not a record, an empty line, invalid UTF-8.
    await assertTampered(dir, join([lines[0]!, "{nope", ...lines.slice(1)]), 2, "not JSON");
    await assertTampered(dir, join([lines[0]!, '{"a":1}']), 2, "not a record");
    await assertTampered(dir, join([lines[0]!, "", lines[1]!]), 2, "empty line");
    const path = `${dir}/bytes.ndjson`;
    await Deno.writeFile(path, new Uint8Array([0x7b, 0xff, 0x0a]));
    assert.equal((await verify(path)).code, 1);

    // The whole tail rewritten with fresh hashes keeps a valid chain: only a pinned hash catches it.
    const rewritten = [...lines];
    rewritten[4] = rewritten[4]!.replace('"launch"', '"launch","note":"x"');
    rewritten[5] = JSON.stringify({ ...JSON.parse(rewritten[5]!), prev: sha256(rewritten[4]!) });
    await Deno.writeTextFile(`${dir}/rewritten.ndjson`, join(rewritten));
    assert.equal((await verify(`${dir}/rewritten.ndjson`)).code, 0);
    assert.equal((await verify(`${dir}/rewritten.ndjson`, "--expect", sha256(lines[5]!))).code, 1);
  });
}, 90_000); // Many verify runs: on a loaded 2-core machine they took over 30 s.

sessionTest("a run refuses to append to a log whose chain is already broken", async () => {
  await withTempDir(async (dir) => {
    const lines = await realLog(dir);
    await Deno.writeTextFile(`${dir}/audit.ndjson`, [lines[0], lines[2]].join("\n") + "\n");
    const { code, stderr } = await runCli(["exec", "--artifacts", dir, "--", "true"]);
    assert.equal(code, 125, stderr);
    assert.match(stderr, /E_AUDIT/);
  });
});

sessionTest("audit verify: paths that are not a bounded regular file are typed errors (exit 2)", async () => {
  await withTempDir(async (dir) => {
    const missing = await runCli(["audit", "verify", `${dir}/nope`]);
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /E_PATH_NOT_FOUND/);
    await Deno.mkdir(`${dir}/run`);
    await Deno.symlink("/etc/passwd", `${dir}/run/audit.ndjson`);
    const link = await runCli(["audit", "verify", `${dir}/run`]);
    assert.equal(link.code, 2, link.stderr);
    assert.match(link.stderr, /E_PATH_SYMLINK/);
    const fifo = `${dir}/fifo`;
    assert.equal((await new Deno.Command("mkfifo", { args: [fifo] }).output()).code, 0);
    const pipe = await runCli(["audit", "verify", fifo]);
    assert.equal(pipe.code, 2, pipe.stderr);
    assert.match(pipe.stderr, /E_FILE_TYPE/);
    const big = `${dir}/big.ndjson`;
    const file = await Deno.open(big, { create: true, write: true });
    await file.truncate(64 * 1024 * 1024 + 1);
    file.close();
    const huge = await runCli(["audit", "verify", big]);
    assert.equal(huge.code, 2, huge.stderr);
    assert.match(huge.stderr, /E_FILE_TOO_LARGE/);
  });
});
