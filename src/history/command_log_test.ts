import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { deflateSync } from "node:zlib";
import { CommandLog, type CommandRecord, MIGRATIONS, OUTPUT_CAP } from "./command_log.ts";
import type { DaemonError } from "../errors.ts";

function record(overrides: Partial<CommandRecord> = {}): CommandRecord {
  return {
    session: "s",
    startedAt: 100,
    endedAt: 100.25,
    command: "make test",
    cwd: "/w",
    exitCode: 0,
    signal: null,
    output: "ok\n",
    policyHash: "abc",
    authorKind: "human",
    author: null,
    source: "osc133",
    reportedBy: "shell",
    seqFrom: 3,
    seqTo: 5,
    ...overrides,
  };
}

Deno.test("commands are recorded, compressed, capped and queried by session, failure and text", () => {
  const dir = Deno.makeTempDirSync();
  const log = CommandLog.open(join(dir, "log.sqlite"));
  assert.equal(log.version, MIGRATIONS.length);
  log.record(record());
  log.record(record({ session: "t", command: "false", exitCode: 1, startedAt: 101, endedAt: 101.5 }));
  log.record(
    record({ command: "yes | head", output: "y\n".repeat(OUTPUT_CAP), startedAt: 102, endedAt: 103 }),
  );
  log.record(
    record({
      command: "sleep 9",
      exitCode: 130,
      signal: "INT",
      startedAt: 104,
      endedAt: 105,
      authorKind: "agent",
    }),
  );
  const all = log.query();
  assert.deepEqual(all.map((row) => row.command), ["make test", "false", "yes | head", "sleep 9"]);
  assert.equal(all[0]!.duration_ms, 250);
  assert.equal(all[0]!.output, "ok\n");
  assert.equal(all[0]!.hostname, Deno.hostname());
  assert.equal(all[2]!.output_truncated, true);
  assert.equal(all[2]!.output_bytes, 2 * OUTPUT_CAP);
  assert.equal(new TextEncoder().encode(all[2]!.output).length, OUTPUT_CAP);
  assert.deepEqual(log.query({ session: "t" }).map((row) => row.command), ["false"]);
  assert.deepEqual(log.query({ failed: true }).map((row) => row.command), ["false", "sleep 9"]);
  assert.deepEqual(log.query({ grep: "head" }).map((row) => row.command), ["yes | head"]);
  assert.equal(log.query({ session: "s" }).at(-1)!.author_kind, "agent");
  log.close();
  // WAL mode, and the file is private.
  assert.equal(Deno.statSync(join(dir, "log.sqlite")).mode! & 0o777, 0o600);
  const db = new DatabaseSync(join(dir, "log.sqlite"));
  assert.equal((db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode, "wal");
  db.close();
});

Deno.test("a log from a newer schema is refused, not rewritten", () => {
  const dir = Deno.makeTempDirSync();
  const path = join(dir, "log.sqlite");
  const db = new DatabaseSync(path);
  db.exec(`PRAGMA user_version = ${MIGRATIONS.length + 1}`);
  db.close();
  assert.throws(
    () => CommandLog.open(path),
    (e: DaemonError) => e.code === "E_LOG_WRITE" && /schema version/.test(e.message),
  );
});

Deno.test("processes opening a fresh log at once migrate it once and all record", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const path = join(dir, "log.sqlite");
    const module = new URL("./command_log.ts", import.meta.url).href;
    const script = `import { CommandLog } from ${JSON.stringify(module)};
      const log = CommandLog.open(${JSON.stringify(path)});
      log.record({ session: "p" + Deno.pid, startedAt: 1, endedAt: 2, command: "true", cwd: null, exitCode: 0,
        signal: null, output: "", policyHash: null, authorKind: "human", author: null, source: "exec",
        reportedBy: "specter", seqFrom: null, seqTo: null });
      log.close();`;
    const runs = await Promise.all(
      [0, 1, 2, 3, 4, 5].map(() =>
        new Deno.Command(Deno.execPath(), { args: ["eval", script], stderr: "piped" }).output()
      ),
    );
    for (const run of runs) assert.ok(run.success, new TextDecoder().decode(run.stderr));
    const log = CommandLog.open(path);
    assert.equal(log.query({}).length, 6);
    assert.equal(log.version, MIGRATIONS.length);
    log.close();
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a 0.6 log is migrated: its rows kept, who reported them said (unknown for marks), remote authors taken", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const path = join(dir, "log.sqlite");
    const db = new DatabaseSync(path);
    db.exec(MIGRATIONS[0]!);
    db.exec("PRAGMA user_version = 1");
    const insert = db.prepare(
      `INSERT INTO commands (session, started_at, ended_at, duration_ms, command, cwd, exit_code, signal, output,
        output_bytes, output_cap, output_truncated, policy_hash, hostname, author_kind, author, source, seq_from,
        seq_to) VALUES (?, 1, 2, 1000, ?, NULL, ?, NULL, ?, 0, 65536, 0, NULL, 'h', ?, NULL, ?, NULL, NULL)`,
    );
    const empty = deflateSync(new Uint8Array());
    insert.run("old", "make", 2, empty, "human", "osc133");
    insert.run("old", "true", 0, empty, "agent", "exec");
    db.close();
    const log = CommandLog.open(path);
    assert.equal(log.version, MIGRATIONS.length);
    const rows = log.query({});
    assert.deepEqual(rows.map((r) => [r.command, r.author_kind, r.reported_by]), [
      ["make", "human", "unknown"],
      ["true", "agent", "specter"],
    ]);
    log.record(
      record({ authorKind: "remote", author: "ci", reportedBy: "output", startedAt: 3, endedAt: 4 }),
    );
    const last = log.query({}).at(-1)!;
    assert.deepEqual([last.author_kind, last.author, last.reported_by], ["remote", "ci", "output"]);
    log.close();
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
