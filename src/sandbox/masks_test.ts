import assert from "node:assert/strict";
import { testPolicy } from "../policy/_testing.ts";
import { pathSafetyReason } from "../policy/mod.ts";
import { bwrapPlan } from "./bwrap.ts";
import { maskArgs, MASKED_PATHS, presentMasks } from "./masks.ts";
import type { HostFacts, LaunchRequest } from "./plan.ts";

const request: LaunchRequest = { program: "/usr/bin/bash", args: [], cwd: "/work", env: {} };

function host(maskedPaths?: readonly string[]): HostFacts {
  return {
    bwrap: "/usr/bin/bwrap",
    mergedUsr: true,
    seccompFilter: new Uint8Array(),
    rootLauncher: null,
    ...(maskedPaths === undefined ? {} : { maskedPaths }),
  };
}

/** Index of the `flag a b` triple in argv, or -1. */
function triple(argv: readonly string[], flag: string, a: string, b?: string): number {
  return argv.findIndex((x, i) => x === flag && argv[i + 1] === a && (b === undefined || argv[i + 2] === b));
}

for (const mask of MASKED_PATHS) {
  Deno.test(`mask ${mask.path} (${mask.kind}): ${mask.why}`, () => {
    const everything = MASKED_PATHS.map((m) => m.path);
    const argv = bwrapPlan(testPolicy(), request, host(everything)).argv;
    const proc = triple(argv, "--proc", "/proc");
    assert.ok(proc >= 0);
    switch (mask.kind) {
      case "null": {
        const at = triple(argv, "--ro-bind", "/dev/null", mask.path);
        assert.ok(at > proc, `${mask.path} is covered by /dev/null after --proc`);
        break;
      }
      case "empty_dir": {
        const at = triple(argv, "--tmpfs", mask.path);
        assert.ok(at > proc, `${mask.path} gets a tmpfs after --proc`);
        assert.ok(triple(argv, "--remount-ro", mask.path) > at, `${mask.path}'s tmpfs is read-only`);
        break;
      }
      case "read_only": {
        const at = triple(argv, "--ro-bind", mask.path, mask.path);
        assert.ok(at > proc, `${mask.path} is bound read-only over itself after --proc`);
        // Before every file mask, so that none beneath it is covered again.
        for (const other of MASKED_PATHS.filter((m) => m.kind === "null" || m.kind === "empty_dir")) {
          const covered = Math.max(
            triple(argv, "--ro-bind", "/dev/null", other.path),
            triple(argv, "--tmpfs", other.path),
          );
          assert.ok(covered > at, `${other.path} is masked after ${mask.path} is made read-only`);
        }
        break;
      }
      case "unmounted": {
        // Nothing in the plan mounts /sys or anything that contains the path, and no policy may grant it.
        assert.ok(!argv.some((arg) => arg === "/sys" || arg.startsWith("/sys/")), argv.join(" "));
        const home = "/home/me";
        for (const use of ["read", "write", "exec"] as const) {
          assert.match(pathSafetyReason(mask.path, use, home) ?? "", /may never grant/);
        }
        assert.match(pathSafetyReason("/sys", "read", home) ?? "", /may never grant/);
        break;
      }
      default: {
        const never: never = mask;
        throw new Error(`Unknown kind ${JSON.stringify(never)}`);
      }
    }
    // A host without it: not mounted over (bwrap cannot create files in procfs).
    const without = bwrapPlan(testPolicy(), request, host(everything.filter((p) => p !== mask.path))).argv;
    assert.equal(without.filter((arg) => arg === mask.path).length, 0);
  });
}

Deno.test("masks: paths are unique, absolute and under /proc or /sys", () => {
  const paths = MASKED_PATHS.map((m) => m.path);
  assert.equal(new Set(paths).size, paths.length);
  for (const mask of MASKED_PATHS) {
    assert.match(mask.path, mask.kind === "unmounted" ? /^\/sys\/[a-z_/-]+$/ : /^\/proc(\/[a-z0-9_.-]+)+$/);
  }
});

Deno.test("masks: unknown host facts mask every mountable entry (loud failure, never unmasked)", () => {
  const all = maskArgs(undefined);
  for (const mask of MASKED_PATHS) {
    assert.equal(all.includes(mask.path), mask.kind !== "unmounted", mask.path);
  }
  assert.deepEqual(maskArgs([]), []);
});

Deno.test("masks: presentMasks keeps present mountable entries in table order", () => {
  const present = new Set(["/proc/kcore", "/proc/cmdline", "/sys/firmware", "/proc/acpi"]);
  assert.deepEqual(presentMasks((p) => present.has(p)), ["/proc/cmdline", "/proc/kcore", "/proc/acpi"]);
  // On this host, /proc/cmdline exists on every Linux.
  assert.ok(presentMasks().includes("/proc/cmdline"));
});
