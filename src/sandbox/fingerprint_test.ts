import assert from "node:assert/strict";
import { fingerprintPlan, REDACTED, redactedArgv, sha256 } from "./fingerprint.ts";

Deno.test("setenv values are redacted, names and everything else kept", () => {
  assert.deepEqual(
    redactedArgv(["bwrap", "--setenv", "TOKEN", "s3cret", "--setenv", "TERM", "xterm", "--", "sh"]),
    ["bwrap", "--setenv", "TOKEN", REDACTED, "--setenv", "TERM", REDACTED, "--", "sh"],
  );
});

Deno.test("a fingerprint never depends on env values, and changes with anything else", () => {
  const plan = (value: string, program = "/usr/bin/sh") => ({
    backend: "bwrap" as const,
    argv: ["/usr/bin/bwrap", "--setenv", "SECRET", value, "--", program],
    argv0: "bwrap",
    env: {},
    cwd: "/",
    programCwd: "/tmp",
    files: [{ target: 3, purpose: "seccomp-bpf filter", content: new Uint8Array([1, 2]) }],
    descriptors: [],
    gate: null,
    policy: null,
  });
  assert.deepEqual(fingerprintPlan(plan("a")), fingerprintPlan(plan("b")));
  assert.notEqual(
    fingerprintPlan(plan("a")).argv_sha256,
    fingerprintPlan(plan("a", "/usr/bin/bash")).argv_sha256,
  );
  assert.equal(fingerprintPlan(plan("a")).files_sha256["seccomp-bpf filter"], sha256(new Uint8Array([1, 2])));
  assert.ok(!JSON.stringify(fingerprintPlan(plan("hunter2"))).includes("hunter2"));
});
