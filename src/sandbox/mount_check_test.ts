import assert from "node:assert/strict";
import { checkMounts, parseMountInfo, WRITABLE_DEVICE_NODES, WRITABLE_SYSTEM_MOUNTS } from "./mount_check.ts";
import type { PlanDescriptor } from "./plan.ts";

function line(point: string, options: string, type: string): string {
  return `60 41 0:39 / ${point} ${options},nosuid,nodev - ${type} ${type} rw`;
}

const BASE = [
  line("/", "ro", "tmpfs"),
  line("/proc", "rw", "proc"),
  line("/dev", "ro", "tmpfs"),
  ...WRITABLE_DEVICE_NODES.map((node) => line(node, "rw", "devtmpfs")),
  line("/dev/pts", "rw", "devpts"),
  line("/dev/console", "rw", "devpts"),
  line("/dev/shm", "rw", "tmpfs"),
  line("/tmp", "rw", "tmpfs"),
];

const work: PlanDescriptor = {
  target: 6,
  path: "/host/work",
  dest: "/host/work",
  purpose: "write",
  writable: true,
  identity: "8:1:100",
};
const data: PlanDescriptor = {
  ...work,
  target: 7,
  path: "/host/work/data",
  dest: "/host/work/data",
  purpose: "read",
  writable: false,
  identity: "8:1:101",
};

const inspectAll = (dest: string) => {
  if (dest === work.dest) return { identity: work.identity, kind: "dir" };
  if (dest === data.dest) return { identity: data.identity, kind: "dir" };
  if ((WRITABLE_DEVICE_NODES as readonly string[]).includes(dest)) return { identity: "0:6:1", kind: "char" };
  return null;
};

const planned = [...BASE, line("/host/work", "rw", "ext4"), line("/host/work/data", "ro", "ext4")].join("\n");

Deno.test("a sandbox as planned has no problems", () => {
  assert.deepEqual(checkMounts(parseMountInfo(planned), [work, data], inspectAll), []);
});

Deno.test("a writable mount nobody granted is a problem (e.g. the host root, or an extra tmpfs)", () => {
  for (
    const extra of [line("/host", "rw", "ext4"), line("/etc", "rw", "tmpfs"), line("/usr", "rw", "ext4")]
  ) {
    const problems = checkMounts(parseMountInfo(`${planned}\n${extra}`), [work, data], inspectAll);
    assert.equal(problems.length, 1, extra);
    assert.match(problems[0]!, /writable .* is not granted/);
  }
});

Deno.test("a bind that landed elsewhere, holds another inode or has the wrong access is a problem", () => {
  const missing = [...BASE, line("/host/work", "rw", "ext4")].join("\n");
  assert.match(checkMounts(parseMountInfo(missing), [work, data], inspectAll).join(), /not mounted at/);
  const swapped = (dest: string) =>
    dest === data.dest ? { identity: "8:1:999", kind: "dir" } : inspectAll(dest);
  assert.match(
    checkMounts(parseMountInfo(planned), [work, data], swapped).join(),
    /does not hold the opened/,
  );
  const writableData = [...BASE, line("/host/work", "rw", "ext4"), line("/host/work/data", "rw", "ext4")]
    .join("\n");
  assert.match(
    checkMounts(parseMountInfo(writableData), [work, data], inspectAll).join(),
    /read-write, not as planned/,
  );
});

Deno.test("each allowed writable system mount is allowed only with its type at its place", () => {
  for (const [type, at] of WRITABLE_SYSTEM_MOUNTS) {
    const others = BASE.filter((l) => !l.includes(` ${at} `));
    assert.deepEqual(
      checkMounts(parseMountInfo([...others, line(at, "rw", type)].join("\n")), [], inspectAll),
      [],
    );
    const wrongType = checkMounts(
      parseMountInfo([...others, line(at, "rw", "ext4")].join("\n")),
      [],
      inspectAll,
    );
    assert.equal(wrongType.length, 1, `${at} as ext4`);
  }
});

Deno.test("each writable device node must come from devtmpfs or be a character device", () => {
  for (const node of WRITABLE_DEVICE_NODES) {
    const notChar = (dest: string) => dest === node ? { identity: "8:1:5", kind: "file" } : inspectAll(dest);
    // From devtmpfs (bwrap binds the host's nodes): accepted without a look.
    assert.deepEqual(checkMounts(parseMountInfo(planned), [work, data], notChar), [], node);
    // From anywhere else it must be a character device.
    const elsewhere = planned.replace(line(node, "rw", "devtmpfs"), line(node, "rw", "ext4"));
    assert.equal(checkMounts(parseMountInfo(elsewhere), [work, data], notChar).length, 1, node);
    assert.deepEqual(checkMounts(parseMountInfo(elsewhere), [work, data], inspectAll), [], node);
  }
});

Deno.test("escaped mount points decode; unparsable lines are a problem, never skipped", () => {
  const spaced = { ...work, path: "/host/my work", dest: "/host/my work" };
  const text = [...BASE, line("/host/my\\040work", "rw", "ext4")].join("\n");
  const inspect = (dest: string) =>
    dest === "/host/my work" ? { identity: work.identity, kind: "dir" } : inspectAll(dest);
  assert.deepEqual(checkMounts(parseMountInfo(text), [spaced], inspect), []);
  assert.match(
    checkMounts(parseMountInfo(`${planned}\ngarbage`), [work, data], inspectAll).join(),
    /does not parse/,
  );
});

Deno.test("parseMountInfo reads the optional (propagation) fields between the options and the dash", () => {
  const entries = parseMountInfo([
    "24 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
    "30 24 0:25 / /run/specter rw,nosuid unbindable - tmpfs tmpfs rw",
    "31 24 0:26 / /mnt\\040x rw master:3 shared:7 - tmpfs tmpfs rw",
    line("/tmp", "rw", "tmpfs"),
  ].join("\n"));
  assert.deepEqual(entries.map((e) => [e?.mountPoint, e?.propagation]), [
    ["/", ["shared:1"]],
    ["/run/specter", ["unbindable"]],
    ["/mnt x", ["master:3", "shared:7"]],
    ["/tmp", []],
  ]);
});
