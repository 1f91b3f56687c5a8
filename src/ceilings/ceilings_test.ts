import assert from "node:assert/strict";
import { chooseMechanisms, MECHANISMS } from "./ceilings.ts";
import { parseStat } from "./pidns_usage.ts";

const ALL = { memoryBytes: 1, cpuSeconds: 1, processes: 1, fileSizeBytes: 1 };
const NONE = { memoryBytes: null, cpuSeconds: null, processes: null, fileSizeBytes: null };

Deno.test("a ceiling held by a cgroup is enforced by that cgroup version", () => {
  const by = chooseMechanisms(ALL, new Map([["memory", "v1"], ["processes", "v2"]]), true);
  assert.deepEqual(by, {
    memory: "cgroup-v1",
    cpu: "pidns-sampler",
    processes: "cgroup-v2",
    file_size: "rlimit",
  });
});

Deno.test("without a cgroup: the pid-namespace sampler in a sandbox, the session sampler without", () => {
  assert.deepEqual(chooseMechanisms(ALL, new Map(), true), {
    memory: "pidns-sampler",
    cpu: "pidns-sampler",
    processes: "pidns-sampler",
    file_size: "rlimit",
  });
  assert.equal(chooseMechanisms(ALL, new Map(), false).memory, "session-sampler");
});

Deno.test("an unset ceiling has no mechanism, even when a cgroup could hold it", () => {
  assert.deepEqual(chooseMechanisms(NONE, new Map([["memory", "v1"]]), true), {
    memory: null,
    cpu: null,
    processes: null,
    file_size: null,
  });
});

Deno.test("every mechanism chooseMechanisms can return is in the wire enum", () => {
  const seen = new Set<string>();
  for (const sandboxed of [true, false]) {
    for (const version of ["v1", "v2"] as const) {
      const by = chooseMechanisms(ALL, new Map([["cpu", version]]), sandboxed);
      for (const value of Object.values(by)) if (value !== null) seen.add(value);
    }
  }
  assert.deepEqual([...seen].sort(), [...MECHANISMS].sort());
});

Deno.test("/proc/PID/stat: times after the last ')' (names may hold spaces and parentheses)", () => {
  const stat = "1234 (a) b (c)) S 1 1234 1234 0 -1 4194560 100 0 0 0 17 5 40 9 20 0 1 0 100 1000 50";
  assert.deepEqual(parseStat(stat), { state: "S", utime: 17, stime: 5, cutime: 40, cstime: 9 });
  assert.equal(parseStat("1234 (x) S 1 2"), null);
  assert.equal(parseStat("no parenthesis"), null);
  assert.equal(parseStat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 a b c d 20"), null);
});

Deno.test("parseStat agrees with this process's own stat", () => {
  const stat = parseStat(Deno.readTextFileSync("/proc/self/stat"));
  assert.ok(stat !== null && stat.state.length === 1 && stat.utime >= 0);
});
