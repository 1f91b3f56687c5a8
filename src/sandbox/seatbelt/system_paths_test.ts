import assert from "node:assert/strict";
import { BROAD_ROOTS } from "../../policy/broad_roots.ts";
import { testPolicy } from "../../policy/_testing.ts";
import { filterValues, parseRules, rulesFor } from "./_testing.ts";
import { isWithin } from "../../fsafe/mod.ts";
import { profilePathProblem } from "./paths.ts";
import { seatbeltProfile } from "./profile.ts";
import {
  DEVICE_PATHS,
  NETWORK_READ_PATHS,
  SYSTEM_READ_PATHS,
  type SystemPath,
  TTY_REGEX,
} from "./system_paths.ts";

const request = { program: "/bin/zsh", args: [], cwd: "/Users/me/project", env: {} };
const strict = parseRules(seatbeltProfile(testPolicy(), request));
const online = parseRules(seatbeltProfile(testPolicy({ network: "on" }), request));

/** Directories of programs: never granted by the system tables (only `exec` makes programs visible). */
const BINARY_DIRS = [
  "/bin",
  "/sbin",
  "/usr/bin",
  "/usr/sbin",
  "/usr/local/bin",
  "/usr/libexec",
  "/opt/homebrew",
];
/** Where users' and other programs' data live: never granted by the system tables. */
const USER_DATA = ["/Users", "/Volumes", "/Applications", "/private/tmp", "/private/var/folders", "/Library"];

/** Every rule with a file-write operation that names `path`. */
function writeGrants(rules: ReturnType<typeof parseRules>, path: string): number {
  return rules.filter((rule) =>
    rule.action === "allow" && rule.operations.some((op) => op.startsWith("file-write")) &&
    rule.filters.some((filter) => filter.value === path)
  ).length;
}

function checkEntry(entry: SystemPath): void {
  assert.equal(profilePathProblem(entry.path), null, "absolute and normalized");
  assert.ok(entry.why.length > 10, "says why");
  assert.ok(!(BROAD_ROOTS as readonly string[]).includes(entry.path), "not a broad root");
  for (const dir of BINARY_DIRS) assert.ok(!isWithin(entry.path, dir) && !isWithin(dir, entry.path), dir);
  for (const dir of USER_DATA) assert.ok(!isWithin(entry.path, dir) && !isWithin(dir, entry.path), dir);
}

for (const entry of SYSTEM_READ_PATHS) {
  Deno.test(`system read path ${entry.filter} ${entry.path}: read-only, in every profile`, () => {
    checkEntry(entry);
    for (const rules of [strict, online]) {
      const [read] = rulesFor(rules, "allow", ["file-read*"]);
      assert.equal(read!.filters.filter((f) => f.kind === entry.filter && f.value === entry.path).length, 1);
      assert.equal(writeGrants(rules, entry.path), 0, "never writable");
    }
  });
}

for (const entry of DEVICE_PATHS) {
  Deno.test(`device ${entry.filter} ${entry.path}: read, write and ioctl, in every profile`, () => {
    checkEntry(entry);
    assert.ok(entry.path.startsWith("/dev/"), "a device");
    for (const rules of [strict, online]) {
      const [devices] = rulesFor(rules, "allow", ["file-read*", "file-write*", "file-ioctl"]);
      assert.equal(
        devices!.filters.filter((f) => f.kind === entry.filter && f.value === entry.path).length,
        1,
      );
      assert.equal(writeGrants(rules, entry.path), 1, "writable by this rule only");
    }
  });
}

for (const entry of NETWORK_READ_PATHS) {
  Deno.test(`network read path ${entry.filter} ${entry.path}: read-only, only when network is on`, () => {
    checkEntry(entry);
    assert.deepEqual(filterValues(strict, entry.filter).filter((path) => path === entry.path), []);
    const reads = rulesFor(online, "allow", ["file-read*"]);
    assert.equal(filterValues(reads, entry.filter).filter((path) => path === entry.path).length, 1);
    assert.equal(writeGrants(online, entry.path), 0, "never writable");
  });
}

Deno.test("the tables have no duplicates", () => {
  const all = [...SYSTEM_READ_PATHS, ...DEVICE_PATHS, ...NETWORK_READ_PATHS].map((entry) => entry.path);
  assert.equal(new Set(all).size, all.length);
});

Deno.test("the TTY regex matches the PTY slaves only", () => {
  const regex = new RegExp(TTY_REGEX);
  for (const path of ["/dev/ttys000", "/dev/ttys1", "/dev/ttys123"]) assert.ok(regex.test(path), path);
  for (
    const path of [
      "/dev/tty",
      "/dev/ttys",
      "/dev/ttysa",
      "/dev/ttys0/x",
      "/dev/ttys0\n",
      "/x/dev/ttys0",
      "/dev/cu.x",
    ]
  ) {
    assert.ok(!regex.test(path), path);
  }
  assert.ok(!TTY_REGEX.includes('"'), 'fits in #"…" unescaped');
});
