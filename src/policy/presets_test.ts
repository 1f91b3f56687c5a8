import assert from "node:assert/strict";
import { checkPolicyDocument, type PolicyContext } from "./check.ts";
import {
  AGENT_DEFAULT_PRESET,
  DEFAULT_PRESET,
  isPresetName,
  PRESET_DOCUMENTS,
  PRESET_NAMES,
  type PresetName,
} from "./presets.ts";

const CTX: PolicyContext = {
  workspace: "/work/proj",
  home: "/home/me",
  acks: { unsafeWrite: false, network: false },
};
const WRITE_ACK: PolicyContext = { ...CTX, acks: { unsafeWrite: true, network: false } };
const SYSTEM_BIN = ["/usr/local/bin", "/usr/bin", "/bin"];

function check(name: PresetName, ctx: PolicyContext = CTX) {
  return checkPolicyDocument(PRESET_DOCUMENTS[name], `preset:${name}`, ctx);
}

Deno.test("the presets are strict, basic, workspace and agent; strict is the default, agent the agents'", () => {
  assert.deepEqual(PRESET_NAMES, ["strict", "basic", "workspace", "agent"]);
  assert.equal(DEFAULT_PRESET, "strict");
  assert.equal(AGENT_DEFAULT_PRESET, "agent");
  assert.ok(isPresetName("basic"));
  assert.ok(!isPresetName("Strict"));
  assert.ok(!isPresetName("strict.json"));
});

Deno.test("strict: nothing beyond the target program, no host files, no env, no network", () => {
  const { policy, problems } = check("strict");
  assert.deepEqual(problems, []);
  assert.equal(policy?.source, "preset:strict");
  assert.deepEqual(policy?.exec, []);
  assert.deepEqual(policy?.fs, { read: [], write: [] });
  assert.deepEqual(policy?.env, []);
  assert.equal(policy?.network, "off");
});

Deno.test("basic: strict plus the system program directories", () => {
  const { policy, problems } = check("basic");
  assert.deepEqual(problems, []);
  assert.deepEqual(policy?.exec, SYSTEM_BIN);
  assert.deepEqual(policy?.fs, { read: [], write: [] });
  assert.deepEqual(policy?.env, []);
  assert.equal(policy?.network, "off");
});

Deno.test("workspace: basic plus reading and writing the workspace, which needs --ack-unsafe-write", () => {
  assert.deepEqual(check("workspace").problems.map((p) => [p.code, p.field]), [[
    "E_POLICY_WRITE_ACK",
    "fs.write",
  ]]);
  const { policy, problems } = check("workspace", WRITE_ACK);
  assert.deepEqual(problems, []);
  assert.deepEqual(policy?.exec, SYSTEM_BIN);
  assert.deepEqual(policy?.fs, { read: ["/work/proj"], write: ["/work/proj"] });
  assert.equal(policy?.network, "off");
});

Deno.test("workspace: a workspace that is a broad root or the home directory is rejected", () => {
  for (const workspace of ["/", "/home/me", "/home", "/tmp", "/usr"]) {
    const { policy, problems } = check("workspace", { ...WRITE_ACK, workspace });
    assert.equal(policy, null);
    assert.deepEqual(problems.map((p) => [p.code, p.field]), [
      ["E_POLICY_BROAD_ROOT", "fs.read[0]"],
      ["E_POLICY_BROAD_ROOT", "fs.write[0]"],
    ], workspace);
  }
});

Deno.test("workspace: a relative workspace is rejected before anything is expanded", () => {
  const { problems } = check("workspace", { ...WRITE_ACK, workspace: "proj" });
  assert.deepEqual(problems.map((p) => [p.code, p.field]), [
    ["E_POLICY_PATH_RELATIVE", "cwd"],
    ["E_POLICY_PATH_RELATIVE", "fs.read[0]"],
    ["E_POLICY_PATH_RELATIVE", "fs.write[0]"],
  ]);
});

Deno.test("agent: every system program directory, the workspace and build inputs read-only, no writes", () => {
  // Without HOME (an agent host may start the server with a bare environment) it still loads.
  assert.deepEqual(check("agent", { ...CTX, home: "" }).problems, []);
  const { policy, problems } = check("agent");
  assert.deepEqual(problems, []);
  assert.ok(policy !== null);
  for (const dir of ["/usr/local/bin", "/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/libexec"]) {
    assert.ok(policy.exec.includes(dir), dir);
  }
  for (const path of ["/work/proj", "/usr/include", "/usr/local", "/etc/profile"]) {
    assert.ok(policy.fs.read.includes(path), path);
  }
  assert.deepEqual(policy.fs.write, []);
  assert.deepEqual(policy.env, []);
  assert.equal(policy.network, "off");
  // Nothing of /etc wholesale, nothing of the home (so it needs no HOME), no secret.
  for (const path of policy.fs.read) {
    assert.ok(!path.startsWith("/home/me"), path);
    assert.ok(!["/etc", "/home", "/home/me", "/root", "/opt", "/"].includes(path), path);
    assert.doesNotMatch(path, /shadow|sudoers|\/\.ssh|\/\.gnupg|\/\.aws|private|credential/, path);
  }
});

Deno.test("agent: a working directory that is a broad root or the home directory is refused", () => {
  for (const workspace of ["/", "/home/me", "/tmp", "/etc"]) {
    const { policy, problems } = check("agent", { ...CTX, workspace });
    assert.equal(policy, null, workspace);
    assert.deepEqual(
      problems.map((p) => [p.code, p.field]),
      [["E_POLICY_BROAD_ROOT", "fs.read[0]"]],
      workspace,
    );
  }
});

/** Every preset's process cap: room for parallel builds (threads count under a pids cgroup), not for a fork bomb. */
const PRESET_PROCESS_CAP = 512;

for (const name of PRESET_NAMES) {
  Deno.test(`preset ${name} caps processes (${PRESET_PROCESS_CAP}), sets no other budget, needs no network ack`, () => {
    const { policy } = check(name, WRITE_ACK);
    assert.ok(policy !== null);
    const { processes, ...others } = policy.budgets;
    assert.equal(processes, PRESET_PROCESS_CAP, "a fork bomb under any preset meets a ceiling");
    assert.ok(Object.values(others).every((value) => value === null));
    assert.equal(policy.network, "off");
  });
}

Deno.test("presets are imported as JSON modules (embedded by deno compile), not read at run time", async () => {
  const source = await Deno.readTextFile(new URL("./presets.ts", import.meta.url));
  for (const name of PRESET_NAMES) {
    assert.match(source, new RegExp(`profiles/presets/${name}\\.json" with \\{ type: "json" \\}`));
  }
  assert.doesNotMatch(source, /Deno\.read/);
});
