import assert from "node:assert/strict";
import { testPolicy } from "../policy/_testing.ts";
import { bwrapPlan } from "./bwrap.ts";
import type { HostFacts } from "./plan.ts";
import { DEFAULT_TMPFS_BYTES, SCRATCH_TMPFS, scratchArgs, tmpfsSizeBytes } from "./scratch.ts";

const host: HostFacts = {
  bwrap: "/usr/bin/bwrap",
  mergedUsr: true,
  seccompFilter: new Uint8Array(),
  rootLauncher: null,
  maskedPaths: [],
};

function withMemory(memory: number | null) {
  const policy = testPolicy();
  return { ...policy, budgets: { ...policy.budgets, memory_bytes: memory } };
}

Deno.test("tmpfs size: the memory budget when there is one, else the default cap", () => {
  assert.equal(tmpfsSizeBytes(withMemory(null)), DEFAULT_TMPFS_BYTES);
  assert.equal(tmpfsSizeBytes(withMemory(64 * 1024 * 1024)), 64 * 1024 * 1024);
  assert.equal(tmpfsSizeBytes(withMemory(4 * DEFAULT_TMPFS_BYTES)), 4 * DEFAULT_TMPFS_BYTES);
});

for (const path of SCRATCH_TMPFS) {
  Deno.test(`tmpfs ${path}: every --tmpfs of it in the plan is preceded by --size`, () => {
    for (const memory of [null, 12345678]) {
      const argv = bwrapPlan(withMemory(memory), {
        program: "/usr/bin/bash",
        args: [],
        cwd: "/w",
        env: {},
      }, host).argv;
      const at = argv.findIndex((arg, i) => arg === "--tmpfs" && argv[i + 1] === path);
      assert.ok(at > argv.indexOf("--dev"), `${path} is mounted after --dev`);
      assert.deepEqual(argv.slice(at - 2, at), ["--size", String(memory ?? DEFAULT_TMPFS_BYTES)]);
    }
  });
}

Deno.test("tmpfs: every --tmpfs that stays writable has a --size; /dev becomes read-only", () => {
  const argv = scratchArgs(withMemory(null));
  assert.deepEqual(argv.slice(-2), ["--remount-ro", "/dev"]);
  const plan = bwrapPlan(withMemory(null), { program: "/usr/bin/bash", args: [], cwd: "/w", env: {} }, {
    ...host,
    maskedPaths: undefined,
  }).argv;
  plan.forEach((arg, i) => {
    if (arg !== "--tmpfs") return;
    const dest = plan[i + 1]!;
    const sized = plan[i - 2] === "--size";
    const readOnly = plan.some((a, j) => a === "--remount-ro" && plan[j + 1] === dest && j > i);
    assert.ok(sized || readOnly, `${dest} is sized or read-only`);
  });
});
