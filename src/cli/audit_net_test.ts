import assert from "node:assert/strict";
import { join } from "node:path";
import { AUDIT_FILE, AuditLog, recordHash } from "../artifacts/mod.ts";
import { AuditError } from "../errors.ts";
import { auditCommand } from "./audit.ts";
import { readNetRecords, shown } from "./audit_net.ts";

const TS = Date.UTC(2026, 10, 27, 22, 0, 0) / 1000;

const ALLOWED = {
  decision: "allowed",
  method: "CONNECT",
  host: "registry.npmjs.org",
  port: 443,
  rule: "registry.npmjs.org",
  reason: null,
  address: "104.16.1.34",
  bytes_up: 1200,
  bytes_down: 34000,
  duration_ms: 120.4,
};
const REFUSED = {
  decision: "refused",
  method: "GET",
  host: "vm",
  port: 8081,
  rule: null,
  reason: "no rule allows vm:8081",
  address: null,
  bytes_up: 0,
  bytes_down: 0,
  duration_ms: 1,
};

/** A run directory whose audit log (written by the real writer) holds a launch, two connections, an end. */
function runDir(): string {
  const dir = Deno.makeTempDirSync();
  const log = AuditLog.open(dir, "run-1");
  log.record("launch", { backend: "bwrap" });
  log.record("net", { ...ALLOWED });
  log.record("net", { ...REFUSED, ts: TS + 1 });
  log.record("end", { code: 0 });
  log.close();
  return dir;
}

async function run(args: string[]): Promise<string[]> {
  const out: string[] = [];
  await auditCommand(args, (line) => out.push(line));
  return out;
}

/** The log's lines with `ts` fixed, re-chained (as a forger with the whole file would). */
function rechained(lines: string[]): string {
  let prev = "0".repeat(64);
  const out: string[] = [];
  for (const line of lines) {
    const { prev: _old, ...record } = JSON.parse(line);
    const text = JSON.stringify({ ...record, prev });
    out.push(text);
    prev = recordHash(text);
  }
  return `${out.join("\n")}\n`;
}

function fixTimes(dir: string): void {
  const path = join(dir, AUDIT_FILE);
  const lines = Deno.readTextFileSync(path).trimEnd().split("\n");
  const fixed = lines.map((line, i) => JSON.stringify({ ...JSON.parse(line), ts: TS + i }));
  Deno.writeTextFileSync(path, rechained(fixed));
}

Deno.test("audit net: one line per connection, then the totals", async () => {
  const dir = runDir();
  try {
    fixTimes(dir);
    const out = await run(["net", dir]);
    assert.deepEqual(out, [
      "2026-11-27T22:00:01.000Z  allowed  CONNECT  registry.npmjs.org:443 via 104.16.1.34  rule " +
      "registry.npmjs.org  up 1200 B, down 34000 B, 120 ms",
      "2026-11-27T22:00:02.000Z  refused  GET      vm:8081  reason no rule allows vm:8081  up 0 B, down 0 B, 1 ms",
      "2 connection(s): 1 allowed, 1 refused; 1200 bytes up, 34000 bytes down",
    ]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("audit net --json: NDJSON, each connection with its record number, then the totals", async () => {
  const dir = runDir();
  try {
    const out = (await run(["net", join(dir, AUDIT_FILE), "--json"])).map((line) => JSON.parse(line));
    assert.deepEqual(out.map((o) => [o.event, o.record ?? null, o.decision ?? null, o.host ?? null]), [
      ["net", 2, "allowed", "registry.npmjs.org"],
      ["net", 3, "refused", "vm"],
      ["totals", null, null, null],
    ]);
    assert.deepEqual(out[2], {
      event: "totals",
      connections: 2,
      allowed: 1,
      refused: 1,
      unreadable: 0,
      bytes_up: 1200,
      bytes_down: 34000,
    });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("audit net: a broken chain is not summarised (E_AUDIT_TAMPERED, exit 1)", async () => {
  const dir = runDir();
  try {
    const path = join(dir, AUDIT_FILE);
    // Someone hides a refused connection's traces: the chain breaks at the record after it.
    Deno.writeTextFileSync(path, Deno.readTextFileSync(path).replace('"bytes_up":1200', '"bytes_up":12'));
    await assert.rejects(() => run(["net", dir]), (error: unknown) => {
      assert.ok(error instanceof AuditError);
      assert.equal(error.code, "E_AUDIT_TAMPERED");
      assert.match(
        error.message,
        /^The audit log's chain is broken, so its connections are not summarised: /,
      );
      return true;
    });
    await assert.rejects(() => run(["net", dir, "--expect", "0".repeat(64)]), AuditError);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("audit net: hostile strings are escaped; a malformed net record breaks the chain check", () => {
  const hostile = [
    JSON.stringify({ ts: TS, run_id: "r", event: "net", ...REFUSED, host: "evil\u001b[2J\u202e.example" }),
  ];
  const summary = readNetRecords(new TextEncoder().encode(rechained(hostile)));
  assert.equal(summary.connections.length, 1);
  assert.equal(summary.connections[0]!.host, "evil\u001b[2J\u202e.example");
  assert.equal(shown("evil\u001b[2J\u202e.example"), "evil\\u{1b}[2J\\u{202e}.example");
  assert.equal(shown("a".repeat(300)).length, 201);
  // The audit reader checks every field of a net record (src/protocol/net.ts): a malformed one is a broken log.
  const malformed = [...hostile, JSON.stringify({ ts: TS, run_id: "r", event: "net", decision: "maybe" })];
  assert.throws(() => readNetRecords(new TextEncoder().encode(rechained(malformed))), (error: unknown) => {
    assert.ok(error instanceof AuditError);
    assert.match(error.message, /record 2 .*"decision"/);
    return true;
  });
});

Deno.test("audit: an unknown subcommand names both", async () => {
  await assert.rejects(() => run(["summary", "x"]), /try: specter audit verify FILE, specter audit net FILE/);
});
