import assert from "node:assert/strict";
import type { SessionEntry } from "../protocol/mod.ts";
import { humanDuration, sessionTable, sortSessions, startedLine, statusText } from "./session_lines.ts";

function entry(fields: Partial<SessionEntry>): SessionEntry {
  return {
    name: "a",
    pid: 1,
    running: false,
    exit_code: null,
    signal: null,
    timed_out: false,
    duration_ms: null,
    started: 0,
    argv: ["/bin/sh"],
    title: null,
    description: null,
    parent_agent: null,
    clients: 0,
    next_seq: 1,
    log_id: null,
    persist: null,
    audit: null,
    ...fields,
  };
}

Deno.test("statusText says timed out, not killed (HUP), for a session its timeout ended", () => {
  assert.equal(statusText(entry({ running: true })), "running");
  assert.equal(statusText(entry({ exit_code: 3 })), "exited 3");
  assert.equal(statusText(entry({ signal: "TERM" })), "killed (TERM)");
  assert.equal(
    statusText(entry({ signal: "HUP", timed_out: true, duration_ms: 30_012 })),
    "timed out after 30s",
  );
  assert.equal(statusText(entry({ signal: "HUP", timed_out: true })), "timed out");
});

Deno.test("humanDuration", () => {
  assert.equal(humanDuration(850), "850ms");
  assert.equal(humanDuration(1_499), "1s");
  assert.equal(humanDuration(125_000), "2m5s");
  assert.equal(humanDuration(120_000), "2m");
  assert.equal(humanDuration(3_720_000), "1h2m");
});

Deno.test("sessions are listed by creation time, then name", () => {
  const sessions = [
    entry({ name: "c", started: 2 }),
    entry({ name: "b", started: 1 }),
    entry({ name: "a", started: 2 }),
  ];
  assert.deepEqual(sortSessions(sessions).map((e) => e.name), ["b", "a", "c"]);
  const table = sessionTable(sessions);
  assert.equal(table[0], "NAME\tSTATUS\tPID\tCLIENTS\tCOMMAND");
  assert.deepEqual(table.slice(1).map((row) => row.split("\t")[0]), ["b", "a", "c"]);
});

Deno.test("startedLine names the session, its pid and how to attach", () => {
  assert.equal(
    startedLine({ name: "build", pid: 42 }),
    "started build (pid 42); attach with: specter attach build",
  );
});
