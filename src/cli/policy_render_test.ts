import assert from "node:assert/strict";
import { testPolicy } from "../policy/_testing.ts";
import { bwrapPlan } from "../sandbox/bwrap.ts";
import { fingerprintPlan, REDACTED, sha256 } from "../sandbox/fingerprint.ts";
import type { HostFacts, LaunchPlan } from "../sandbox/plan.ts";
import { SANDBOX_EXEC } from "../sandbox/seatbelt/mod.ts";
import { compileSeccomp, describeRules, seccompArchFor } from "../sandbox/seccomp/mod.ts";
import {
  commandLines,
  formatRendering,
  renderPlan,
  seatbeltProfileOf,
  SECCOMP_PURPOSE,
  shellQuote,
} from "./policy_render.ts";

const ARCH = seccompArchFor(Deno.build.arch);
const FILTER = compileSeccomp(ARCH, { network: false });
const HOST: HostFacts = {
  bwrap: "/usr/bin/bwrap",
  mergedUsr: true,
  seccompFilter: FILTER,
  rootLauncher: null,
};
const SECRET = "s3cret-value-never-printed";

function plan(): LaunchPlan {
  return bwrapPlan(testPolicy({ source: "preset:strict", env: ["API_TOKEN"] }), {
    program: "/bin/sh",
    args: ["-c", "echo hi"],
    cwd: "/work/project",
    env: { TERM: "xterm-256color", HOME: "/home/me", API_TOKEN: SECRET },
  }, HOST);
}

Deno.test("renderPlan: redacted argv, the fingerprint, and the seccomp filter with its rules", () => {
  const launch = plan();
  const rendering = renderPlan(launch, "/bin/sh");
  assert.equal(rendering.backend, "bwrap");
  assert.equal(rendering.source, "preset:strict");
  assert.equal(rendering.program, "/bin/sh");
  assert.equal(rendering.program_cwd, "/tmp");
  assert.deepEqual(rendering.env_names, []);
  assert.ok(!JSON.stringify(rendering).includes(SECRET));
  const i = rendering.argv.indexOf("API_TOKEN");
  assert.deepEqual(rendering.argv.slice(i - 1, i + 2), ["--setenv", "API_TOKEN", REDACTED]);
  assert.deepEqual(rendering.fingerprint, fingerprintPlan(launch));
  assert.deepEqual(rendering.seccomp, {
    arch: ARCH,
    fd: 3,
    bytes: FILTER.length,
    sha256: sha256(FILTER),
    rules: describeRules(ARCH),
  });
  assert.equal(rendering.seccomp?.sha256, rendering.fingerprint.files_sha256[SECCOMP_PURPOSE]);
  assert.equal(rendering.profile, undefined);
});

Deno.test("formatRendering: the command line, the rule table and the fingerprint, never an env value", () => {
  const rendering = renderPlan(plan(), "/bin/sh");
  const text = formatRendering(rendering);
  assert.ok(!text.includes(SECRET));
  const lines = text.split("\n");
  assert.deepEqual(lines.slice(0, 4), [
    "Backend: bwrap",
    "Policy: preset:strict",
    "Program: /bin/sh, starting in /tmp",
    "Launcher environment (names only): none",
  ]);
  assert.ok(lines.includes("  /usr/bin/bwrap \\"));
  assert.ok(lines.includes("    --unshare-all \\"));
  assert.ok(lines.includes("    --setenv API_TOKEN '<redacted>' \\"));
  assert.ok(lines.includes("    --seccomp 3 \\"));
  assert.ok(lines.includes("    -- /bin/sh \\"));
  assert.ok(lines.includes("    -c 'echo hi'"));
  assert.ok(lines.some((line) => line.startsWith("Seccomp filter (fd 3, ") && line.endsWith(sha256(FILTER))));
  for (const rule of describeRules(ARCH)) {
    assert.ok(lines.some((line) => line.startsWith(`  ${rule.syscall} `) && line.endsWith(rule.reason)));
    if (rule.condition !== null) {
      assert.ok(lines.some((line) => line.endsWith(`only when ${rule.condition}`)));
    }
  }
  const fingerprint = rendering.fingerprint;
  assert.deepEqual(lines.slice(-5), [
    "Fingerprint (the audit log of a run with the same options records the same values):",
    "  backend: bwrap",
    `  argv_sha256: ${fingerprint.argv_sha256}`,
    `  files_sha256["seccomp-bpf filter"]: ${sha256(FILTER)}`,
    `  policy_sha256: ${fingerprint.policy_sha256}`,
  ]);
});

function seatbeltPlan(profile: string): LaunchPlan {
  return {
    backend: "seatbelt",
    argv: [SANDBOX_EXEC, "-p", profile, "/bin/sh", "-c", "it's"],
    argv0: SANDBOX_EXEC,
    env: { TERM: "xterm-256color", API_TOKEN: SECRET },
    cwd: "/work/project",
    programCwd: "/work/project",
    files: [],
    descriptors: [],
    gate: null,
    policy: testPolicy({ source: "preset:basic" }),
  };
}

Deno.test("a Seatbelt plan renders its profile verbatim and its env by name only", () => {
  const profile = '(version 1)\n(deny default)\n(allow file-read* (subpath "/work/a\\"b"))\n';
  const launch = seatbeltPlan(profile);
  const rendering = renderPlan(launch, "/bin/sh");
  assert.equal(rendering.profile, profile);
  assert.equal(rendering.seccomp, undefined);
  assert.deepEqual(rendering.env_names, ["API_TOKEN", "TERM"]);
  assert.deepEqual(rendering.fingerprint, fingerprintPlan(launch));
  const text = formatRendering(rendering);
  assert.ok(!text.includes(SECRET));
  assert.ok(
    text.includes(
      `  ${SANDBOX_EXEC} \\\n    -p <the Seatbelt profile below> /bin/sh \\\n    -c 'it'\\''s'\n`,
    ),
  );
  assert.ok(
    text.includes(`Seatbelt profile (passed with -p; 3 lines, sha256 ${sha256(profile)}):\n${profile}\n`),
  );
});

Deno.test("seatbeltProfileOf refuses a plan of another shape", () => {
  assert.throws(() => seatbeltProfileOf({ ...seatbeltPlan("(version 1)"), argv: ["/bin/sh"] }), {
    code: "E_SANDBOX_START",
  });
});

Deno.test("shellQuote leaves plain words alone and quotes everything else reversibly", () => {
  const cases: [string, string][] = [
    ["/usr/bin/bwrap", "/usr/bin/bwrap"],
    ["--reuid=65534", "--reuid=65534"],
    ["", "''"],
    ["a b", "'a b'"],
    ["it's", "'it'\\''s'"],
    [REDACTED, "'<redacted>'"],
    ["a\nb", "$'a\\nb'"],
    ["tab\there", "$'tab\\there'"],
    ["q'\\\x01", "$'q\\'\\\\\\x01'"],
  ];
  for (const [arg, quoted] of cases) assert.equal(shellQuote(arg), quoted, JSON.stringify(arg));
});

Deno.test("bash reads every quoted argument back as it was", async () => {
  const args = ["plain", "", "a b", "it's", "a\nb\tc", "\\'\"$x`y`", "ünïcødé (", "\x01\x7f"];
  const script = `for a in ${args.map(shellQuote).join(" ")}; do printf '%s\\0' "$a"; done`;
  const { code, stdout } = await new Deno.Command("bash", { args: ["-c", script], stdout: "piped" }).output();
  assert.equal(code, 0);
  assert.deepEqual(new TextDecoder().decode(stdout).split("\0").slice(0, -1), args);
});

Deno.test("commandLines puts each option on its own line and keeps every argument in order", () => {
  const args = ["/usr/bin/bwrap", "--unshare-all", "--bind", "/a", "/a", "--", "/bin/sh", "-c", "x"];
  const lines = commandLines(args);
  assert.deepEqual(lines, [
    "/usr/bin/bwrap \\",
    "  --unshare-all \\",
    "  --bind /a /a \\",
    "  -- /bin/sh \\",
    "  -c x",
  ]);
  assert.deepEqual(lines.join(" ").replaceAll(" \\", "").split(/\s+/), args);
});
