import assert from "node:assert/strict";
import { loadPolicy, PRESET_NAMES } from "../../policy/mod.ts";
import { testPolicy } from "../../policy/_testing.ts";
import type { LaunchRequest } from "../plan.ts";
import { filterValues, parseRules, type Rule, rulesFor } from "./_testing.ts";
import { ancestorsOf } from "./paths.ts";
import { seatbeltProfile } from "./profile.ts";
import { readSexps } from "./sexp.ts";
import { DEVICE_PATHS } from "./system_paths.ts";

const request: LaunchRequest = {
  program: "/bin/zsh",
  args: ["-i"],
  cwd: "/Users/me/project",
  env: { HOME: "/Users/me", TERM: "xterm-256color" },
};
const rulesOf = (...args: Parameters<typeof seatbeltProfile>): Rule[] => parseRules(seatbeltProfile(...args));

/** Every path some rule allows writing to (devices, fs.write, the temp dir). */
function writable(rules: readonly Rule[]): string[] {
  return rules.filter((rule) => rule.action === "allow" && rule.operations.includes("file-write*"))
    .flatMap((rule) => rule.filters.flatMap((filter) => (filter.value === null ? [] : [filter.value])));
}

function unlinkDenied(rules: readonly Rule[]): string[] {
  return filterValues(rulesFor(rules, "deny", ["file-write-unlink"]), "literal");
}

/** The index of the one rule with exactly this action, operations and single filter. */
function indexOf(
  rules: readonly Rule[],
  action: string,
  operations: string[],
  kind: string,
  path: string,
): number {
  const found = rules.flatMap((rule, i) =>
    rule.action === action && JSON.stringify(rule.operations) === JSON.stringify(operations) &&
      rule.filters.length === 1 && rule.filters[0]!.kind === kind && rule.filters[0]!.value === path
      ? [i]
      : []
  );
  assert.equal(found.length, 1, `${action} ${operations.join(" ")} (${kind} ${path}): ${found.length} rules`);
  return found[0]!;
}

Deno.test("deny by default: (version 1) then (deny default) before any grant", () => {
  const forms = readSexps(seatbeltProfile(testPolicy(), request));
  assert.equal(
    JSON.stringify(forms.slice(0, 2).map((form) => form.type === "list" && form.items.length)),
    "[2,2]",
  );
  const rules = rulesOf(testPolicy(), request);
  assert.deepEqual(rules[0], { action: "deny", operations: ["default"], filters: [] });
  assert.equal(rules.filter((rule) => rule.operations.includes("default")).length, 1);
});

Deno.test("processes: fork, and signals and process info only within the sandbox", () => {
  const rules = rulesOf(testPolicy(), request);
  assert.equal(rulesFor(rules, "allow", ["process-fork"]).length, 1);
  for (const operation of ["signal", "process-info*"]) {
    const granted = rules.filter((rule) => rule.operations.includes(operation));
    assert.deepEqual(granted.map((rule) => [rule.action, rule.filters.map((f) => [f.kind, f.symbol])]), [
      ["allow", [["target", "same-sandbox"]]],
    ]);
  }
});

Deno.test("network: allowed only when the policy says on, explicitly denied otherwise", () => {
  const off = rulesOf(testPolicy(), request);
  const on = rulesOf(testPolicy({ network: "on" }), request);
  const network = (rules: Rule[]) =>
    rules.filter((rule) => rule.operations.some((op) => op.startsWith("network"))).map((rule) => [
      rule.action,
      rule.operations,
      rule.filters.length,
    ]);
  assert.deepEqual(network(off), [["deny", ["network*"], 0]]);
  assert.deepEqual(network(on), [["allow", ["network*"], 0]]);
});

Deno.test("writes: only fs.write roots and the devices; nothing is writable under strict or basic", () => {
  const devices = DEVICE_PATHS.map((entry) => entry.path);
  assert.deepEqual(writable(rulesOf(testPolicy(), request)), devices);
  assert.deepEqual(
    writable(
      rulesOf(testPolicy({ exec: ["/usr/bin"], fs: { read: ["/Users/me/src"], write: [] } }), request),
    ),
    devices,
  );
  const rules = rulesOf(
    testPolicy({ fs: { read: ["/Users/me/docs"], write: ["/Users/me/project", "/Volumes/scratch/out"] } }),
    request,
  );
  assert.deepEqual(writable(rules).sort(), [...devices, "/Users/me/project", "/Volumes/scratch/out"].sort());
  indexOf(rules, "allow", ["file-read*", "file-write*"], "subpath", "/Users/me/project");
  indexOf(rules, "allow", ["file-read*"], "subpath", "/Users/me/docs");
  assert.ok(!writable(rules).includes("/Users/me/docs"));
});

Deno.test("unlink is denied on every ancestor of every writable root, after every grant", () => {
  const roots = ["/Users/me/project", "/Volumes/scratch/a b/out", "/opt/x"];
  const rules = rulesOf(testPolicy({ fs: { read: [], write: roots } }), request);
  assert.deepEqual(unlinkDenied(rules), [...new Set(roots.flatMap(ancestorsOf))].sort());
  assert.deepEqual(unlinkDenied(rules), [
    "/",
    "/Users",
    "/Users/me",
    "/Volumes",
    "/Volumes/scratch",
    "/Volumes/scratch/a b",
    "/opt",
  ]);
  // Last match wins: the denials come after every allow.
  const last = rules.findIndex((rule) => rule.operations.includes("file-write-unlink"));
  assert.equal(last, rules.length - 1);
  assert.equal(unlinkDenied(rulesOf(testPolicy(), request)).length, 0, "no writable root, no denial");
  assert.equal(rulesFor(rulesOf(testPolicy(), request), "deny", ["file-write-unlink"]).length, 0);
});

Deno.test("exec: the target is a literal, exec entries subpaths, all readable; no other exec grant", () => {
  const policy = testPolicy({ exec: ["/usr/bin", "/opt/homebrew/bin/git", "/bin/zsh"] });
  const rules = rulesOf(policy, request);
  const execRules = rules.filter((rule) => rule.operations.includes("process-exec"));
  assert.deepEqual(
    execRules.map((rule) => [rule.action, rule.operations, rule.filters.map((f) => [f.kind, f.value])]),
    [
      // Shallowest first (bubblewrap's bind order); /bin/zsh in exec is the target itself, listed once.
      ["allow", ["process-exec", "file-read*"], [["literal", "/bin/zsh"]]],
      ["allow", ["process-exec", "file-read*"], [["subpath", "/usr/bin"]]],
      ["allow", ["process-exec", "file-read*"], [["subpath", "/opt/homebrew/bin/git"]]],
    ],
  );
  const strict = rulesOf(testPolicy(), request).filter((rule) => rule.operations.includes("process-exec"));
  assert.deepEqual(strict.map((rule) => rule.filters.map((f) => [f.kind, f.value])), [[[
    "literal",
    "/bin/zsh",
  ]]]);
});

Deno.test("a read-only path inside a writable root stays read-only, and cannot be renamed away", () => {
  const policy = testPolicy({
    exec: ["/Users/me/project/tools"],
    fs: {
      read: ["/Users/me/project/vendor", "/Users/me/project"],
      write: ["/Users/me/project", "/Users/me/project/vendor/build"],
    },
  });
  const program = { ...request, program: "/Users/me/project/run.sh" };
  const rules = rulesOf(policy, program);
  const root = indexOf(rules, "allow", ["file-read*", "file-write*"], "subpath", "/Users/me/project");
  const vendor = indexOf(rules, "deny", ["file-write*"], "subpath", "/Users/me/project/vendor");
  const tools = indexOf(rules, "deny", ["file-write*"], "subpath", "/Users/me/project/tools");
  const target = indexOf(rules, "deny", ["file-write*"], "literal", "/Users/me/project/run.sh");
  const build = indexOf(
    rules,
    "allow",
    ["file-read*", "file-write*"],
    "subpath",
    "/Users/me/project/vendor/build",
  );
  // Last match wins: each denial after the root it carves from; the deeper writable root after the denial.
  assert.ok(
    root < vendor && root < tools && root < target && vendor < build,
    JSON.stringify([root, vendor, tools, target, build]),
  );
  // An equal read and write path stays writable (read is listed first, as bubblewrap binds it first).
  assert.equal(
    rulesFor(rules, "deny", ["file-write*"]).filter((r) => r.filters[0]!.value === "/Users/me/project")
      .length,
    0,
  );
  assert.deepEqual(unlinkDenied(rules), [
    "/",
    "/Users",
    "/Users/me",
    "/Users/me/project",
    "/Users/me/project/vendor",
  ]);
});

Deno.test("strict-write protect paths: write denied after the root, their parents not renamable", () => {
  const policy = testPolicy({ fs: { read: [], write: ["/Users/me/project"] } });
  const rules = rulesOf(policy, request, {
    protect: ["/Users/me/project/.git", "/Users/me/project/sub/.envrc"],
  });
  const root = indexOf(rules, "allow", ["file-read*", "file-write*"], "subpath", "/Users/me/project");
  const git = indexOf(rules, "deny", ["file-write*"], "subpath", "/Users/me/project/.git");
  const envrc = indexOf(rules, "deny", ["file-write*"], "subpath", "/Users/me/project/sub/.envrc");
  assert.ok(root < git && git < envrc);
  assert.deepEqual(unlinkDenied(rules), [
    "/",
    "/Users",
    "/Users/me",
    "/Users/me/project",
    "/Users/me/project/sub",
  ]);
});

Deno.test("secrets a grant contains: reading and writing denied after every grant, the last rule", () => {
  const policy = testPolicy({ fs: { read: ["/Users/other"], write: ["/Users/other/.config"] } });
  const rules = rulesOf(policy, request, {
    hide: ["/Users/other/.ssh"],
    hideFiles: ["/Users/other/.netrc", "/Users/other/.config/gh/hosts.yml"],
  });
  const write = indexOf(rules, "allow", ["file-read*", "file-write*"], "subpath", "/Users/other/.config");
  const denied = rulesFor(rules, "deny", ["file-read*", "file-write*"]);
  assert.equal(denied.length, 1);
  assert.deepEqual(filterValues(denied, "subpath"), [
    "/Users/other/.config/gh/hosts.yml",
    "/Users/other/.netrc",
    "/Users/other/.ssh",
  ]);
  assert.equal(rules.indexOf(denied[0]!), rules.length - 1);
  assert.ok(write < rules.length - 1);
  // None: no such rule.
  assert.deepEqual(rulesFor(rulesOf(policy, request), "deny", ["file-read*", "file-write*"]), []);
});

Deno.test("a private temp dir is readable and writable, and its parents are not renamable", () => {
  const tmpDir = "/private/var/folders/zz/abc/T/specter-1";
  const text = seatbeltProfile(testPolicy(), request, { tmpDir });
  const rules = parseRules(text);
  indexOf(rules, "allow", ["file-read*", "file-write*"], "subpath", tmpDir);
  assert.deepEqual(unlinkDenied(rules), ancestorsOf(tmpDir));
  assert.ok(!text.includes("No private temp dir"));
  assert.ok(seatbeltProfile(testPolicy(), request).includes("No private temp dir"));
});

Deno.test("stat() is allowed on every ancestor of every granted path, and only stat()", () => {
  const rules = rulesOf(
    testPolicy({ exec: ["/opt/tools/bin"], fs: { read: ["/Users/me/a/b"], write: [] } }),
    request,
  );
  const metadata = rulesFor(rules, "allow", ["file-read-metadata"]);
  assert.equal(metadata.length, 1);
  const paths = filterValues(metadata, "literal");
  for (
    const path of [
      "/",
      "/opt",
      "/opt/tools",
      "/Users",
      "/Users/me",
      "/Users/me/a",
      "/bin",
      "/usr",
      "/private/etc",
    ]
  ) {
    assert.ok(paths.includes(path), path);
  }
  assert.ok(!paths.includes("/Users/me/a/b"), "a granted path itself is not in the metadata list");
  assert.deepEqual(paths, [...paths].sort(), "sorted");
});

Deno.test("output is deterministic, printable ASCII, one rule per line group, ending in a newline", () => {
  const policy = testPolicy({
    exec: ["/usr/bin"],
    fs: { read: ["/Users/me/é"], write: ["/Users/me/project"] },
  });
  const text = seatbeltProfile(policy, request);
  assert.equal(text, seatbeltProfile(structuredClone(policy), structuredClone(request)));
  assert.match(text, /^[\x20-\x7e\n]+$/);
  assert.ok(text.endsWith(")\n"));
  assert.ok(text.includes(String.raw`(subpath "/Users/me/\xc3\xa9")`));
});

Deno.test("only the program is read from the request: args, cwd and env do not change the profile", () => {
  const other = { ...request, args: ["-c", "echo hi"], cwd: "/tmp", env: { SECRET: "hunter2" } };
  assert.equal(seatbeltProfile(testPolicy(), request), seatbeltProfile(testPolicy(), other));
  assert.ok(!seatbeltProfile(testPolicy(), other).includes("hunter2"));
});

const BAD_PATHS: readonly [string, Parameters<typeof seatbeltProfile>, string][] = [
  ["a relative program", [testPolicy(), { ...request, program: "zsh" }], "program"],
  ["a NUL in exec", [testPolicy({ exec: ["/usr/bin\0/x"] }), request], "exec[0]"],
  [
    "a dot-dot in fs.read",
    [testPolicy({ fs: { read: ["/a", "/a/../etc"], write: [] } }), request],
    "fs.read[1]",
  ],
  [
    "a trailing slash in fs.write",
    [testPolicy({ fs: { read: [], write: ["/a/"] } }), request],
    "fs.write[0]",
  ],
  ["a lone surrogate in protect", [testPolicy(), request, { protect: ["/a/\ud800"] }], "protect[0]"],
  ["an overlong tmpDir", [testPolicy(), request, { tmpDir: `/${"x".repeat(2000)}` }], "tmpDir"],
];

for (const [what, args, field] of BAD_PATHS) {
  Deno.test(`refuses ${what} (E_SANDBOX_START, field ${field})`, () => {
    assert.throws(() => seatbeltProfile(...args), (error: unknown) => {
      const e = error as { code: string; details: { field: string } };
      assert.equal(e.code, "E_SANDBOX_START");
      assert.equal(e.details.field, field);
      return true;
    });
  });
}

// --- Goldens ------------------------------------------------------------------------------------------
// The profile of each preset for a fixed launch, as `policy render --backend seatbelt` prints it (no
// protect list, no temp dir). Regenerate after an intended change with:
//   UPDATE_GOLDENS=1 deno test -A src/sandbox/seatbelt/profile_test.ts

const UPDATE_GOLDENS = Deno.env.get("UPDATE_GOLDENS") === "1";
const GOLDEN_CONTEXT = {
  workspace: "/Users/me/project",
  home: "/Users/me",
  acks: { unsafeWrite: true, network: false },
};

for (const preset of PRESET_NAMES) {
  Deno.test(`golden: the ${preset} preset's profile is fixtures/goldens/seatbelt/${preset}.sb`, async () => {
    const profile = seatbeltProfile(loadPolicy(preset, GOLDEN_CONTEXT), request);
    const url = new URL(`../../../fixtures/goldens/seatbelt/${preset}.sb`, import.meta.url);
    if (UPDATE_GOLDENS) await Deno.writeTextFile(url, profile);
    assert.equal(profile, await Deno.readTextFile(url), "run with UPDATE_GOLDENS=1 after an intended change");
    parseRules(profile);
  });
}
