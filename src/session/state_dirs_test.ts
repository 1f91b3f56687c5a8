import assert from "node:assert/strict";
import { defaultArtifactsDir } from "../artifacts/mod.ts";
import { defaultCommandLogPath } from "../history/mod.ts";
import { defaultPersistRoot, defaultSocketPath, defaultStateDir, specterStateDirs } from "./state_dirs.ts";

function envOf(vars: Record<string, string>): (name: string) => string | undefined {
  return (name) => vars[name];
}

Deno.test("specterStateDirs: the daemon's socket, state and homes, the runs and the command log, by XDG", () => {
  const env = envOf({ HOME: "/h", XDG_STATE_HOME: "/s", XDG_DATA_HOME: "/d", XDG_RUNTIME_DIR: "/r" });
  assert.deepEqual(specterStateDirs(env), [
    "/r/specter",
    "/s/specter/daemon",
    "/s/specter/persist",
    "/s/specter/runs",
    "/d/specter",
  ]);
  // The places the daemon, the runs and the command log really use.
  assert.equal(defaultStateDir(env), "/s/specter/daemon");
  assert.equal(defaultPersistRoot(defaultStateDir(env)), "/s/specter/persist");
  assert.equal(defaultSocketPath(env), "/r/specter/daemon.sock");
  assert.equal(defaultArtifactsDir("id", { get: env }), "/s/specter/runs/id");
  assert.equal(defaultCommandLogPath(env), "/d/specter/log.sqlite");
});

Deno.test("specterStateDirs: without XDG variables, under HOME (and /tmp/specter-UID for the socket)", () => {
  assert.deepEqual(specterStateDirs(envOf({ HOME: "/home/me" })), [
    `/tmp/specter-${Deno.uid()}`,
    "/home/me/.local/state/specter/daemon",
    "/home/me/.local/state/specter/persist",
    "/home/me/.local/state/specter/runs",
    "/home/me/.local/share/specter",
  ]);
});
