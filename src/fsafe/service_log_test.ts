import assert from "node:assert/strict";
import { ServiceLog } from "./service_log.ts";

Deno.test("a service log appends timestamped lines, one per message, with the pid", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const log = ServiceLog.open(`${dir}/daemon.log`);
    log.write("started");
    log.write("a message\nspread over\r\nlines");
    log.close();
    const lines = Deno.readTextFileSync(`${dir}/daemon.log`).split("\n");
    assert.equal(lines.length, 3);
    assert.match(lines[0]!, new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\[${Deno.pid}\\] started$`));
    assert.ok(lines[1]!.endsWith("a message spread over lines"), lines[1]);
    assert.equal(Deno.statSync(`${dir}/daemon.log`).mode! & 0o777, 0o600);
    // Reopened, it appends.
    const again = ServiceLog.open(`${dir}/daemon.log`);
    again.write("restarted");
    again.close();
    assert.ok(Deno.readTextFileSync(`${dir}/daemon.log`).trimEnd().endsWith("restarted"));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a service log rotates at its cap: at most two files, the newest lines kept", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const log = ServiceLog.open(`${dir}/keeper.log`, 16 * 1024);
    for (let i = 0; i < 2000; i++) log.write(`line ${i}`);
    log.close();
    const current = Deno.readTextFileSync(`${dir}/keeper.log`);
    const rotated = Deno.readTextFileSync(`${dir}/keeper.log.1`);
    assert.ok(current.length <= 16 * 1024 && rotated.length <= 16 * 1024);
    assert.ok(current.trimEnd().endsWith("line 1999"));
    assert.deepEqual(Deno.readDirSync(dir).toArray().map((e) => e.name).sort(), [
      "keeper.log",
      "keeper.log.1",
    ]);
    // The rotated file ends where the current one starts.
    const last = Number(/line (\d+)\n$/.exec(rotated)![1]);
    const first = Number(/line (\d+)/.exec(current)![1]);
    assert.equal(first, last + 1);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a huge message is cut to a bounded line", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const log = ServiceLog.open(`${dir}/d.log`);
    log.write("x".repeat(1_000_000));
    log.close();
    const size = Deno.statSync(`${dir}/d.log`).size;
    assert.ok(size > 4096 && size < 4300, `${size}`);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a log that cannot be opened drops lines instead of failing its service", () => {
  const log = ServiceLog.open("/nonexistent-dir/specter/daemon.log");
  log.write("dropped");
  log.close();
  assert.throws(() => Deno.statSync("/nonexistent-dir/specter/daemon.log"), Deno.errors.NotFound);
});
