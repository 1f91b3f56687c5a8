import assert from "node:assert/strict";
import type { PolicyProblem } from "../errors.ts";
import { checkPolicyDocument, type PolicyContext } from "./check.ts";
import { parsePolicyText } from "./parse.ts";

const CTX: PolicyContext = {
  workspace: "/work/proj",
  home: "/home/me",
  acks: { unsafeWrite: false, network: false },
};
const ACKED: PolicyContext = { ...CTX, acks: { unsafeWrite: true, network: true } };

function problems(doc: unknown, ctx: PolicyContext = CTX): PolicyProblem[] {
  const result = checkPolicyDocument(doc, "test", ctx);
  if (result.problems.length > 0) assert.equal(result.policy, null);
  for (const problem of result.problems) {
    // Every message names its field (quoted) and follows the message style.
    if (problem.field !== "(policy)") {
      assert.ok(problem.message.includes(`"${problem.field}"`), problem.message);
    }
    assert.doesNotMatch(problem.message, /\.$/);
    assert.match(problem.message, /^[A-Z]/);
  }
  return result.problems;
}

function only(doc: unknown, ctx: PolicyContext = CTX): PolicyProblem {
  const found = problems(doc, ctx);
  assert.equal(found.length, 1, JSON.stringify(found));
  return found[0]!;
}

function assertOnly(
  doc: unknown,
  code: string,
  field: string,
  message?: RegExp,
  ctx: PolicyContext = CTX,
): void {
  const problem = only(doc, ctx);
  assert.equal(problem.code, code);
  assert.equal(problem.field, field);
  if (message !== undefined) assert.match(problem.message, message);
}

Deno.test("the smallest policy is version 1 alone, and denies everything", () => {
  const { policy, problems } = checkPolicyDocument({ version: 1 }, "file:/p.json", CTX);
  assert.deepEqual(problems, []);
  assert.deepEqual(policy, {
    version: 1,
    source: "file:/p.json",
    exec: [],
    fs: { read: [], write: [] },
    env: [],
    network: "off",
    budgets: {
      wall_ms: null,
      cpu_seconds: null,
      memory_bytes: null,
      processes: null,
      output_bytes: null,
      file_size_bytes: null,
    },
    replay: { normalize: null, redactions: [] },
  });
});

Deno.test("a full policy resolves with variables substituted", () => {
  const { policy, problems } = checkPolicyDocument(
    {
      version: 1,
      exec: ["/usr/bin", "${workspace}/bin/tool"],
      fs: { read: ["${home}/.gitconfig", "/usr/share/doc"], write: ["${workspace}", "/srv/data/out"] },
      env: ["LANG", "_X1"],
      network: "on",
      budgets: { wall_ms: 60000, output_bytes: 1 },
    },
    "file:/p.json",
    ACKED,
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(policy?.exec, ["/usr/bin", "/work/proj/bin/tool"]);
  assert.deepEqual(policy?.fs, {
    read: ["/home/me/.gitconfig", "/usr/share/doc"],
    write: ["/work/proj", "/srv/data/out"],
  });
  assert.deepEqual(policy?.env, ["LANG", "_X1"]);
  assert.equal(policy?.network, "on");
  assert.deepEqual(policy?.budgets, {
    wall_ms: 60000,
    cpu_seconds: null,
    memory_bytes: null,
    processes: null,
    output_bytes: 1,
    file_size_bytes: null,
  });
});

Deno.test("the policy is deeply frozen", () => {
  const { policy } = checkPolicyDocument(
    { version: 1, exec: ["/usr/bin"], fs: { read: ["/srv/a"] }, env: ["A"] },
    "test",
    CTX,
  );
  assert.ok(policy !== null);
  for (
    const part of [
      policy,
      policy.exec,
      policy.fs,
      policy.fs.read,
      policy.fs.write,
      policy.env,
      policy.budgets,
    ]
  ) {
    assert.ok(Object.isFrozen(part));
  }
  assert.throws(() => (policy.exec as string[]).push("/bin"), TypeError);
  assert.throws(() => ((policy.fs as { read: readonly string[] }).read = []), TypeError);
});

Deno.test("the input document is not changed and not shared", () => {
  const doc = { version: 1, exec: ["/usr/bin"] };
  const { policy } = checkPolicyDocument(doc, "test", CTX);
  assert.notEqual(policy?.exec, doc.exec);
  assert.ok(!Object.isFrozen(doc.exec));
});

Deno.test("E_POLICY_VERSION: missing, other number, string", () => {
  assertOnly(
    {},
    "E_POLICY_VERSION",
    "version",
    /^Field "version" is missing: this Specter reads policy version 1$/,
  );
  assertOnly({ version: 2 }, "E_POLICY_VERSION", "version", /^Field "version" must be 1, got 2$/);
  assertOnly({ version: "1" }, "E_POLICY_VERSION", "version", /got "1"/);
});

Deno.test("E_POLICY_UNKNOWN_KEY: at the top, in fs, in budgets, never ignored", () => {
  assertOnly(
    { version: 1, network_mode: "on" },
    "E_POLICY_UNKNOWN_KEY",
    "network_mode",
    /^Unknown key "network_mode" \(known keys: "version", "exec", "fs", "env", "network", "budgets", "replay"\)$/,
  );
  assertOnly(
    { version: 1, fs: { exec: [] } },
    "E_POLICY_UNKNOWN_KEY",
    "fs.exec",
    /known keys in "fs": "read", "write"/,
  );
  assertOnly(
    { version: 1, budgets: { wall: 5 } },
    "E_POLICY_UNKNOWN_KEY",
    "budgets.wall",
    /known keys in "budgets"/,
  );
  assertOnly(JSON.parse('{"version":1,"__proto__":{"network":"on"}}'), "E_POLICY_UNKNOWN_KEY", "__proto__");
});

const SCHEMA_CASES: readonly [string, unknown, string, RegExp][] = [
  ["document null", null, "(policy)", /^The policy must be a table \(object\), got null$/],
  ["document array", [], "(policy)", /got an array/],
  ["document string", "strict", "(policy)", /got "strict"/],
  [
    "exec not an array",
    { version: 1, exec: "/usr/bin" },
    "exec",
    /^Field "exec" must be an array of absolute paths, got "\/usr\/bin"$/,
  ],
  [
    "exec entry a number",
    { version: 1, exec: [1] },
    "exec[0]",
    /must be an absolute path \(a string\), got 1/,
  ],
  [
    "fs not a table",
    { version: 1, fs: ["/a"] },
    "fs",
    /must be a table with "read" and "write", got an array/,
  ],
  ["fs.read a string", { version: 1, fs: { read: "/srv" } }, "fs.read", /array of absolute paths/],
  ["fs.read entry null", { version: 1, fs: { read: [null] } }, "fs.read[0]", /got null/],
  ["env not an array", { version: 1, env: "HOME" }, "env", /array of environment variable names/],
  ["env name with =", { version: 1, env: ["A=B"] }, "env[0]", /environment variable name.*got "A=B"/],
  ["env name with a leading digit", { version: 1, env: ["1A"] }, "env[0]", /got "1A"/],
  ["env name empty", { version: 1, env: [""] }, "env[0]", /got ""/],
  [
    "network yes",
    { version: 1, network: "yes" },
    "network",
    /^Field "network" must be "off", "on" or a table \{"allow": \[HOST\[:PORT\], …\]\}, got "yes"$/,
  ],
  ["network true", { version: 1, network: true }, "network", /got true/],
  ["budgets not a table", { version: 1, budgets: 5 }, "budgets", /table of positive integers, got 5/],
  [
    "budget zero",
    { version: 1, budgets: { wall_ms: 0 } },
    "budgets.wall_ms",
    /must be a positive integer.*, got 0$/,
  ],
  ["budget negative", { version: 1, budgets: { cpu_seconds: -1 } }, "budgets.cpu_seconds", /got -1/],
  [
    "wall_ms a timer cannot wait (it would fire at once)",
    { version: 1, budgets: { wall_ms: 2 ** 31 } },
    "budgets.wall_ms",
    /must be a positive integer of at most 2147483647 \(ms: the longest a timer waits\), got 2147483648$/,
  ],
  ["budget fraction", { version: 1, budgets: { memory_bytes: 1.5 } }, "budgets.memory_bytes", /got 1.5/],
  ["budget string", { version: 1, budgets: { processes: "5" } }, "budgets.processes", /got "5"/],
  [
    "budget unsafe integer",
    { version: 1, budgets: { output_bytes: 2 ** 60 } },
    "budgets.output_bytes",
    /positive integer/,
  ],
  ["budget null", { version: 1, budgets: { file_size_bytes: null } }, "budgets.file_size_bytes", /got null/],
  [
    "unknown variable",
    { version: 1, fs: { read: ["${project}/src"] } },
    "fs.read[0]",
    /unknown variable "\$\{project\}" \(known: "\$\{workspace\}", "\$\{home\}"\)/,
  ],
  ["NUL in a path", { version: 1, exec: ["/usr/bin/a\0b"] }, "exec[0]", /NUL byte/],
];

for (const [name, doc, field, message] of SCHEMA_CASES) {
  Deno.test(`E_POLICY_SCHEMA: ${name}`, () => assertOnly(doc, "E_POLICY_SCHEMA", field, message));
}

Deno.test("E_POLICY_SCHEMA: a TOML date is described as a date", () => {
  const doc = parsePolicyText("version = 1\nnetwork = 2024-01-01\n", "toml", "file:/p.toml");
  assertOnly(doc, "E_POLICY_SCHEMA", "network", /got a date/);
});

Deno.test("E_POLICY_PATH_RELATIVE: in exec, fs.read, fs.write and the cwd", () => {
  assertOnly(
    { version: 1, exec: ["bin/tool"] },
    "E_POLICY_PATH_RELATIVE",
    "exec[0]",
    /^Field "exec\[0\]" must be an absolute path, got "bin\/tool"$/,
  );
  assertOnly({ version: 1, fs: { read: ["", "/ok"] } }, "E_POLICY_PATH_RELATIVE", "fs.read[0]", /got ""/);
  assertOnly(
    { version: 1, fs: { write: ["~/x"] } },
    "E_POLICY_PATH_RELATIVE",
    "fs.write[0]",
    /instead of "~"/,
    ACKED,
  );
  assertOnly(
    { version: 1 },
    "E_POLICY_PATH_RELATIVE",
    "cwd",
    /^Field "cwd" \(the run's working directory\) must be an absolute path, got "proj"$/,
    { ...CTX, workspace: "proj" },
  );
});

Deno.test("E_POLICY_PATH_DOTDOT: .., ., // and a trailing slash, also after substitution, and in the cwd", () => {
  assertOnly(
    { version: 1, exec: ["/usr/../bin"] },
    "E_POLICY_PATH_DOTDOT",
    "exec[0]",
    /without "\.\." segments, got "\/usr\/\.\.\/bin"$/,
  );
  assertOnly(
    { version: 1, fs: { read: ["/srv/./a"] } },
    "E_POLICY_PATH_DOTDOT",
    "fs.read[0]",
    /"\." segments/,
  );
  assertOnly({ version: 1, fs: { read: ["/srv//a"] } }, "E_POLICY_PATH_DOTDOT", "fs.read[0]", /"\/\/"/);
  assertOnly(
    { version: 1, fs: { write: ["/srv/a/"] } },
    "E_POLICY_PATH_DOTDOT",
    "fs.write[0]",
    /trailing "\/"/,
    ACKED,
  );
  assertOnly(
    { version: 1, fs: { read: ["${workspace}/../other"] } },
    "E_POLICY_PATH_DOTDOT",
    "fs.read[0]",
    /got "\/work\/proj\/\.\.\/other" \(written "\$\{workspace\}\/\.\.\/other"\)/,
  );
  assertOnly({ version: 1 }, "E_POLICY_PATH_DOTDOT", "cwd", /cwd/, { ...CTX, workspace: "/work/proj/.." });
});

Deno.test("E_POLICY_BROAD_ROOT: broad roots in fs and exec (binary dirs excepted), the home directory", () => {
  assertOnly(
    { version: 1, fs: { read: ["/etc"] } },
    "E_POLICY_BROAD_ROOT",
    "fs.read[0]",
    /^Field "fs\.read\[0\]" is the broad root "\/etc": allow a narrower path$/,
  );
  assertOnly(
    { version: 1, fs: { write: ["/"] } },
    "E_POLICY_BROAD_ROOT",
    "fs.write[0]",
    /broad root "\/"/,
    ACKED,
  );
  assertOnly(
    { version: 1, fs: { read: ["${home}"] } },
    "E_POLICY_BROAD_ROOT",
    "fs.read[0]",
    /is the home directory "\/home\/me" \(written "\$\{home\}"\)/,
  );
  assertOnly(
    { version: 1, fs: { read: ["/home/me"] } },
    "E_POLICY_BROAD_ROOT",
    "fs.read[0]",
    /home directory/,
    { ...CTX, home: "/home/me/" },
  );
  assertOnly({ version: 1, exec: ["/"] }, "E_POLICY_BROAD_ROOT", "exec[0]", /broad root "\/"/);
  // An exec entry is bound into the sandbox like a read: /etc there would expose /etc/shadow.
  for (const broad of ["/usr", "/etc", "/home/me", "/root"]) {
    assert.deepEqual(
      problems({ version: 1, exec: [broad] }).map((p) => p.code),
      ["E_POLICY_BROAD_ROOT"],
      broad,
    );
  }
  assert.deepEqual(problems({ version: 1, exec: ["/usr/bin", "/bin", "/sbin", "/usr/local/bin"] }), []);
  assert.deepEqual(problems({ version: 1, fs: { read: ["/usr/share/doc", "/home/me/project"] } }), []);
});

Deno.test("E_POLICY_WRITE_ACK: a non-empty fs.write needs the ack; an empty one does not", () => {
  assertOnly(
    { version: 1, fs: { write: ["/srv/out"] } },
    "E_POLICY_WRITE_ACK",
    "fs.write",
    /--ack-unsafe-write/,
  );
  assert.deepEqual(
    problems({ version: 1, fs: { write: ["/srv/out"] } }, {
      ...CTX,
      acks: { unsafeWrite: true, network: false },
    }),
    [],
  );
  assert.deepEqual(problems({ version: 1, fs: { write: [] } }), []);
});

Deno.test("E_POLICY_NETWORK_ACK: network on needs the ack; off does not", () => {
  assertOnly(
    { version: 1, network: "on" },
    "E_POLICY_NETWORK_ACK",
    "network",
    /^Field "network" is "on": pass --ack-network to accept network access$/,
  );
  assert.deepEqual(
    problems({ version: 1, network: "on" }, { ...CTX, acks: { unsafeWrite: false, network: true } }),
    [],
  );
  assert.deepEqual(problems({ version: 1, network: "off" }), []);
});

Deno.test("variables: an unusable ${home} or ${workspace} is never expanded", () => {
  assertOnly(
    { version: 1, fs: { read: ["${home}/.ssh"] } },
    "E_POLICY_PATH_RELATIVE",
    "fs.read[0]",
    /uses "\$\{home\}" but HOME is empty or not set/,
    { ...CTX, home: "" },
  );
  assertOnly(
    { version: 1, fs: { read: ["${home}/x"] } },
    "E_POLICY_PATH_RELATIVE",
    "fs.read[0]",
    /the home directory "me" must be an absolute path/,
    { ...CTX, home: "me" },
  );
  const found = problems({ version: 1, exec: ["${workspace}/bin"] }, { ...CTX, workspace: "/a/../b" });
  assert.deepEqual(found.map((p) => [p.code, p.field]), [["E_POLICY_PATH_DOTDOT", "cwd"], [
    "E_POLICY_PATH_DOTDOT",
    "exec[0]",
  ]]);
  assert.match(
    found[1]!.message,
    /uses "\$\{workspace\}" but the working directory "\/a\/\.\.\/b" must be a normalized path/,
  );
});

Deno.test("every problem is collected, in document order", () => {
  const found = problems({
    network: "on",
    exec: ["rel", "/ok", "/"],
    fs: { write: ["/usr", "/srv/x/.."], bogus: 1, read: [7] },
    extra: true,
    env: ["OK", "NOT OK"],
    budgets: { wall_ms: 0, cpu: 1 },
  }, { ...CTX, workspace: "rel" });
  assert.deepEqual(found.map((p) => `${p.code} ${p.field}`), [
    "E_POLICY_PATH_RELATIVE cwd",
    "E_POLICY_VERSION version",
    "E_POLICY_NETWORK_ACK network",
    "E_POLICY_PATH_RELATIVE exec[0]",
    "E_POLICY_BROAD_ROOT exec[2]",
    "E_POLICY_WRITE_ACK fs.write",
    "E_POLICY_BROAD_ROOT fs.write[0]",
    "E_POLICY_PATH_DOTDOT fs.write[1]",
    "E_POLICY_UNKNOWN_KEY fs.bogus",
    "E_POLICY_SCHEMA fs.read[0]",
    "E_POLICY_UNKNOWN_KEY extra",
    "E_POLICY_SCHEMA env[1]",
    "E_POLICY_SCHEMA budgets.wall_ms",
    "E_POLICY_UNKNOWN_KEY budgets.cpu",
  ]);
});

Deno.test("TOML documents are checked in the order they are written", () => {
  const doc = parsePolicyText(
    [
      "version = 1",
      'exec = ["usr/bin"]',
      'network = "on"',
      "[fs]",
      'read = ["/etc"]',
      'write = ["${workspace}"]',
      "[budgets]",
      "wall = 5",
    ].join("\n"),
    "toml",
    "file:/p.toml",
  );
  assert.deepEqual(problems(doc).map((p) => `${p.code} ${p.field}`), [
    "E_POLICY_PATH_RELATIVE exec[0]",
    "E_POLICY_NETWORK_ACK network",
    "E_POLICY_BROAD_ROOT fs.read[0]",
    "E_POLICY_WRITE_ACK fs.write",
    "E_POLICY_UNKNOWN_KEY budgets.wall",
  ]);
});

Deno.test("a valid TOML document resolves like its JSON twin", () => {
  const toml = parsePolicyText(
    'version = 1\nexec = ["/usr/bin"]\nenv = ["TERM"]\n[fs]\nread = ["${workspace}"]\n[budgets]\nwall_ms = 1000\n',
    "toml",
    "file:/p.toml",
  );
  const json = {
    version: 1,
    exec: ["/usr/bin"],
    env: ["TERM"],
    fs: { read: ["${workspace}"] },
    budgets: { wall_ms: 1000 },
  };
  assert.deepEqual(checkPolicyDocument(toml, "s", CTX), checkPolicyDocument(json, "s", CTX));
  assert.deepEqual(checkPolicyDocument(toml, "s", CTX).policy?.fs.read, ["/work/proj"]);
});

Deno.test("replay: normalize (all, none or names) and redactions validate into the policy", () => {
  const of = (replay: unknown) => checkPolicyDocument({ version: 1, replay }, "test", CTX).policy?.replay;
  assert.deepEqual(of({ normalize: ["pids", "durations"] }), {
    normalize: ["pids", "durations"],
    redactions: [],
  });
  assert.equal(of({ normalize: "all" })?.normalize?.length, 6);
  assert.deepEqual(of({ normalize: "none" })?.normalize, []);
  assert.deepEqual(of({ redactions: [{ pattern: "tok=\\w+", replacement: "tok=<r>" }] }), {
    normalize: null,
    redactions: [{ pattern: "tok=\\w+", replacement: "tok=<r>" }],
  });
  const toml = parsePolicyText('version = 1\n[replay]\nnormalize = ["timestamps"]\n', "toml", "t.toml");
  assert.deepEqual(checkPolicyDocument(toml, "test", CTX).policy?.replay.normalize, ["timestamps"]);
});

Deno.test("replay: a bad filter, an invalid regex or an unknown key is a problem naming the field", () => {
  const bad = only({ version: 1, replay: { normalize: ["clock"] } });
  assert.equal(bad.code, "E_POLICY_SCHEMA");
  assert.equal(bad.field, "replay.normalize");
  assert.match(
    bad.message,
    /must be "all", "none" or an array of filter names \(timestamps, .*\), got an array$/,
  );
  const regex = only({ version: 1, replay: { redactions: [{ pattern: "(", replacement: "" }] } });
  assert.equal(regex.code, "E_POLICY_SCHEMA");
  assert.equal(regex.field, "replay.redactions[0].pattern");
  assert.match(regex.message, /must be a valid regular expression/);
  const unknown = only({ version: 1, replay: { filters: "all" } });
  assert.equal(unknown.code, "E_POLICY_UNKNOWN_KEY");
  assert.match(unknown.message, /known keys in "replay": "normalize", "redactions"/);
  const item = only({ version: 1, replay: { redactions: [{ pattern: "a", replacement: "b", flags: "i" }] } });
  assert.equal(item.code, "E_POLICY_UNKNOWN_KEY");
  assert.equal(item.field, "replay.redactions[0].flags");
});
