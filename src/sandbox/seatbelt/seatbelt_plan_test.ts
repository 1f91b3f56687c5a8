import assert from "node:assert/strict";
import { testPolicy } from "../../policy/_testing.ts";
import { compileLaunchPlan, type HostFacts, type LaunchRequest } from "../plan.ts";
import { seatbeltProfile } from "./profile.ts";
import { SANDBOX_EXEC, seatbeltPlan } from "./seatbelt_plan.ts";

const host: HostFacts = {
  bwrap: "/usr/bin/bwrap",
  mergedUsr: true,
  seccompFilter: new Uint8Array([1, 2, 3]),
  rootLauncher: null,
};
const request: LaunchRequest = {
  program: "/bin/zsh",
  args: ["-c", 'echo "$HOME"; ls -- -x'],
  argv0: "zsh",
  cwd: "/Users/me/project",
  env: { HOME: "/Users/me", TERM: "xterm-256color", PATH: "/usr/bin:/bin" },
};
const policy = testPolicy({ fs: { read: [], write: ["/Users/me/project"] } });

Deno.test("the plan runs /usr/bin/sandbox-exec -p PROFILE program args, by absolute path", () => {
  const plan = seatbeltPlan(policy, request, host);
  assert.equal(SANDBOX_EXEC, "/usr/bin/sandbox-exec");
  assert.deepEqual(plan.argv, [
    SANDBOX_EXEC,
    "-p",
    seatbeltProfile(policy, request),
    "/bin/zsh",
    "-c",
    'echo "$HOME"; ls -- -x',
  ]);
  assert.deepEqual(
    [plan.backend, plan.argv0, plan.cwd, plan.programCwd, plan.files, plan.policy],
    ["seatbelt", SANDBOX_EXEC, "/Users/me/project", "/Users/me/project", [], policy],
  );
  assert.equal(plan.env, request.env, "the environment is the request's, unchanged");
});

Deno.test("host facts do not matter: the plan is the same for any host", () => {
  const other: HostFacts = {
    bwrap: "",
    mergedUsr: false,
    seccompFilter: new Uint8Array(),
    rootLauncher: null,
  };
  assert.deepEqual(seatbeltPlan(policy, request, host), seatbeltPlan(policy, request, other));
});

Deno.test("a private temp dir is granted in the profile and named by TMPDIR", () => {
  const tmpDir = "/private/var/folders/zz/abc/T/specter-1";
  const plan = seatbeltPlan(policy, request, host, { tmpDir });
  assert.deepEqual(plan.env, { ...request.env, TMPDIR: tmpDir });
  assert.equal(plan.argv[2], seatbeltProfile(policy, request, { tmpDir }));
});

Deno.test("rlimits are refused (no prlimit on macOS): never a run weaker than asked", () => {
  const limited = { ...request, rlimits: { prlimit: "/usr/bin/prlimit", processes: 64 } };
  assert.throws(() => seatbeltPlan(policy, limited, host), (error: unknown) => {
    const e = error as { code: string; details: { rlimits: readonly string[] } };
    assert.equal(e.code, "E_SANDBOX_UNAVAILABLE");
    assert.deepEqual(e.details.rlimits, ["processes"]);
    return true;
  });
  // A launcher path alone, with no limit, asks for nothing.
  assert.doesNotThrow(() =>
    seatbeltPlan(policy, { ...request, rlimits: { prlimit: "/usr/bin/prlimit" } }, host)
  );
});

Deno.test("compileLaunchPlan('seatbelt') is this plan, passes the protect list on, and needs a policy", () => {
  assert.deepEqual(compileLaunchPlan(policy, request, "seatbelt", host), seatbeltPlan(policy, request, host));
  const protect = ["/Users/me/project/.git"];
  const plan = compileLaunchPlan(policy, request, "seatbelt", host, { protect });
  assert.equal(plan.argv[2], seatbeltProfile(policy, request, { protect }));
  assert.ok(plan.argv[2]!.includes('(deny file-write* (subpath "/Users/me/project/.git"))'));
  assert.throws(() => compileLaunchPlan(null, request, "seatbelt", host), { code: "E_SANDBOX_START" });
});

Deno.test("compiling a Seatbelt plan is pure: it works on any OS (availability is checked at spawn)", () => {
  assert.equal(compileLaunchPlan(policy, request, "seatbelt", host).backend, "seatbelt");
});
