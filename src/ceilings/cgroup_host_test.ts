import assert from "node:assert/strict";
import {
  CGROUP_CEILINGS,
  cgroupDir,
  CONTROLLER_OF,
  isSessionCgroupName,
  ownerOf,
  parseCgroupMounts,
  parseKeyed,
  parseNumber,
  parseProcCgroup,
  placeCeilings,
  sessionCgroupName,
} from "./cgroup_host.ts";

// A CI host: v1 controllers (cpu and cpuacct apart), v2 mounted without controllers, our memory cgroup nested.
const V1_MOUNTINFO = [
  "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
  "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
  "32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct",
  "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
  "38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
  "39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd",
  "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
  "41 22 0:38 / /proc rw - proc proc rw",
].join("\n");
const V1_OWN = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/b01\n2:cpuacct:/\n1:cpu:/\n0::/\n";

Deno.test("v1 mounts: controllers from the super options, names and options told apart", () => {
  const mounts = parseCgroupMounts(V1_MOUNTINFO);
  assert.deepEqual(mounts.map((m) => [m.version, m.mountPoint, m.controllers.join(",")]), [
    ["v1", "/sys/fs/cgroup/cpu", "cpu"],
    ["v1", "/sys/fs/cgroup/cpuacct", "cpuacct"],
    ["v1", "/sys/fs/cgroup/memory", "memory"],
    ["v1", "/sys/fs/cgroup/pids", "pids"],
    ["v1", "/sys/fs/cgroup/systemd", ""],
    ["v2", "/sys/fs/cgroup/unified", ""],
  ]);
});

Deno.test("co-mounted cpu,cpuacct and escaped mount points are parsed", () => {
  const [mount] = parseCgroupMounts(
    "31 30 0:28 /docker/x /sys/fs/cgroup/cpu\\040acct rw - cgroup cgroup rw,nosuid,cpu,cpuacct",
  );
  assert.deepEqual(mount, {
    version: "v1",
    mountPoint: "/sys/fs/cgroup/cpu acct",
    root: "/docker/x",
    controllers: ["cpu", "cpuacct"],
  });
});

Deno.test("/proc/self/cgroup: v1 by controller (co-mounted ones each), v2 as 0::", () => {
  const own = parseProcCgroup("2:cpu,cpuacct:/a\n4:memory:/m\n0::/user.slice/x\n");
  assert.deepEqual([...own.v1], [["cpu", "/a"], ["cpuacct", "/a"], ["memory", "/m"]]);
  assert.equal(own.v2, "/user.slice/x");
});

Deno.test("cgroupDir: our cgroup beneath the mount's root; outside it or with .. it is not ours", () => {
  const mount = { version: "v1" as const, mountPoint: "/sys/fs/cgroup/memory", root: "/", controllers: [] };
  assert.equal(cgroupDir(mount, "/"), "/sys/fs/cgroup/memory");
  assert.equal(cgroupDir(mount, "/process_api/b01"), "/sys/fs/cgroup/memory/process_api/b01");
  const sub = { ...mount, root: "/docker/x" };
  assert.equal(cgroupDir(sub, "/docker/x/y"), "/sys/fs/cgroup/memory/y");
  assert.equal(cgroupDir(sub, "/docker/xy"), null);
  assert.equal(cgroupDir(sub, "/other"), null);
  assert.equal(cgroupDir(mount, "/a/../b"), null);
});

Deno.test("placement on a v1 host: memory in our nested cgroup, pids, cpuacct for CPU", () => {
  const placed = placeCeilings(parseCgroupMounts(V1_MOUNTINFO), parseProcCgroup(V1_OWN), []);
  assert.deepEqual(Object.fromEntries(placed), {
    memory: { version: "v1", controller: "memory", base: "/sys/fs/cgroup/memory/process_api/b01" },
    processes: { version: "v1", controller: "pids", base: "/sys/fs/cgroup/pids" },
    cpu: { version: "v1", controller: "cpuacct", base: "/sys/fs/cgroup/cpuacct" },
  });
});

Deno.test("placement on a v2 host: the delegated controllers, beneath our own cgroup", () => {
  const mounts = parseCgroupMounts("40 30 0:37 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate");
  const own = parseProcCgroup("0::/user.slice/user-1000.slice/app.scope\n");
  const placed = placeCeilings(mounts, own, ["memory", "pids"]);
  const base = "/sys/fs/cgroup/user.slice/user-1000.slice/app.scope";
  assert.deepEqual(Object.fromEntries(placed), {
    memory: { version: "v2", controller: "memory", base },
    processes: { version: "v2", controller: "pids", base },
  }, "cpu is not delegated: it is sampled");
});

Deno.test("placement prefers v2 where a controller is enabled there, v1 for the rest", () => {
  const placed = placeCeilings(parseCgroupMounts(V1_MOUNTINFO), parseProcCgroup(V1_OWN), ["pids"]);
  assert.equal(placed.get("processes")?.version, "v2");
  assert.equal(placed.get("memory")?.version, "v1");
});

Deno.test("no cgroup mounts: nothing is placed", () => {
  assert.equal(placeCeilings([], parseProcCgroup(""), []).size, 0);
});

Deno.test("every cgroup ceiling names a controller for each version", () => {
  for (const ceiling of CGROUP_CEILINGS) {
    assert.ok(CONTROLLER_OF[ceiling].v1.length > 0 && CONTROLLER_OF[ceiling].v2.length > 0, ceiling);
  }
  assert.deepEqual(CONTROLLER_OF.cpu, { v1: "cpuacct", v2: "cpu" });
});

Deno.test("keyed and single-number cgroup files", () => {
  const oom = parseKeyed("oom_kill_disable 1\nunder_oom 1\noom_kill 0\n");
  assert.deepEqual([...oom], [["oom_kill_disable", 1], ["under_oom", 1], ["oom_kill", 0]]);
  assert.equal(parseKeyed("max 3\n").get("max"), 3);
  assert.equal(parseKeyed("garbage\nusage_usec x\n").size, 0);
  assert.equal(parseNumber("1234567\n"), 1234567);
  assert.equal(parseNumber("max\n"), Infinity);
  assert.ok(Number.isNaN(parseNumber("")));
  assert.ok(Number.isNaN(parseNumber("-1")));
});

Deno.test("session cgroup names carry their owner's pid; only such names are swept", () => {
  assert.equal(sessionCgroupName(4242, 7, "run/1 x"), "4242-7-run_1_x");
  assert.equal(sessionCgroupName(4242, 7, ""), "4242-7");
  assert.equal(sessionCgroupName(1, 1, "a".repeat(200)).length, "1-1-".length + 64);
  assert.equal(ownerOf("4242-7-run_1_x"), 4242);
  assert.equal(ownerOf("4242-7"), 4242);
  for (const name of ["specter", "0-1", "x-1-2", "4242", "4242-", "-1-2"]) {
    assert.equal(ownerOf(name), null, name);
  }
});

Deno.test("a session cgroup name is recognised as one owner's session's, and no other's", () => {
  const name = sessionCgroupName(4242, 99000007, "heavy");
  assert.equal(isSessionCgroupName(name, 4242, "heavy"), true);
  assert.equal(isSessionCgroupName(sessionCgroupName(4242, 3, ""), 4242, ""), true);
  assert.equal(isSessionCgroupName(sessionCgroupName(4242, 3, "a/b"), 4242, "a/b"), true);
  for (
    const [other, owner, id] of [
      [name, 4243, "heavy"], // Another owner.
      [name, 4242, "eavy"], // Another session whose id ends the same.
      [sessionCgroupName(4242, 7, "x-heavy"), 4242, "heavy"], // An id with this one as its tail.
      [sessionCgroupName(4242, 7, "heavy"), 4242, "x-heavy"],
      ["4242--heavy", 4242, "heavy"], // No sequence.
      ["4242-7-heavy/..", 4242, "heavy"],
      ["4242-7-heavy", 4242, ""],
    ] as const
  ) {
    assert.equal(isSessionCgroupName(other, owner, id), false, `${other} as ${owner}/${id}`);
  }
});
