import assert from "node:assert/strict";
import { resolveOptions } from "./options.ts";
import { SANDBOX_SHELL_DIR, setUpShell } from "./shell_setup.ts";
import { NONCE_FD } from "./shell_integration.ts";

const request = { program: "/usr/bin/bash", args: [], cwd: "/tmp", env: { HOME: "/tmp" } };
const options = resolveOptions({ argv: ["bash"], shellIntegration: true });

Deno.test("setUpShell: off unless asked, and only for an interactive bash or zsh", () => {
  const off = resolveOptions({ argv: ["bash"] });
  assert.equal(setUpShell(request, off, "bwrap").request, request);
  const script = { ...request, args: ["-c", "true"] };
  assert.equal(setUpShell(script, options, "bwrap").request, script);
});

Deno.test("setUpShell: under bwrap the files are data files in the sandbox, nothing on the host", () => {
  const setup = setUpShell(request, options, "bwrap");
  assert.deepEqual(setup.request.args, ["--init-file", `${SANDBOX_SHELL_DIR}/bash_init`]);
  assert.deepEqual(setup.request.dataFiles?.map((f) => f.dest), [`${SANDBOX_SHELL_DIR}/bash_init`]);
  assert.equal(setup.madeDir, null);
  const nonce = setup.options.commandMarkNonce ?? "";
  assert.match(nonce, /^[0-9a-f]{32}$/);
  // The nonce goes on its descriptor, a secret (no fingerprint shows it), and nowhere else.
  assert.deepEqual(setup.request.passFiles?.map((f) => [f.target, f.secret]), [[NONCE_FD, true]]);
  assert.equal(new TextDecoder().decode(setup.request.passFiles![0]!.content), `${nonce}\n`);
  const everywhere = JSON.stringify({ ...setup.request, passFiles: [] }) +
    setup.request.dataFiles!.map((f) => new TextDecoder().decode(f.content)).join("");
  assert.ok(!everywhere.includes(nonce), everywhere);
  // The shell runs from an exec-only copy of itself beside its files.
  assert.equal(setup.request.execOnlyCopy, `${SANDBOX_SHELL_DIR}/bash`);
});

Deno.test("setUpShell: under Seatbelt the files go to the run's private temp directory", async () => {
  const tmpDir = await Deno.makeTempDir();
  try {
    const setup = setUpShell(request, options, "seatbelt", { tmpDir });
    const file = `${tmpDir}/.specter-shell/bash_init`;
    assert.deepEqual(setup.request.args, ["--init-file", file]);
    assert.equal(setup.request.dataFiles, undefined);
    const init = await Deno.readTextFile(file);
    assert.ok(init.includes(`<&${NONCE_FD}`) && !init.includes(setup.options.commandMarkNonce!), init);
    assert.equal(setup.request.passFiles?.[0]?.target, NONCE_FD);
    assert.equal(setup.request.execOnlyCopy, undefined, "only bwrap can give an exec-only copy");
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(`${tmpDir}/.specter-shell`)).mode! & 0o777, 0o700);
    // A plan rendered without a temp directory: marks through the environment.
    assert.ok(setUpShell(request, options, "seatbelt").request.env.PROMPT_COMMAND?.includes("133;D"));
  } finally {
    await Deno.remove(tmpDir, { recursive: true });
  }
});

Deno.test("setUpShell: without a sandbox a private directory is made; under external, the environment", async () => {
  const made: string[] = [];
  const setup = setUpShell({ ...request, program: "/usr/bin/zsh" }, options, "none", {
    makeDir: () => {
      const dir = Deno.makeTempDirSync();
      made.push(dir);
      return dir;
    },
  });
  try {
    assert.equal(setup.madeDir, made[0]);
    assert.equal(setup.request.env.ZDOTDIR, made[0]);
    assert.ok((await Deno.readTextFile(`${made[0]}/.zshenv`)).includes("precmd_functions"));
  } finally {
    await Deno.remove(made[0]!, { recursive: true });
  }
  const external = setUpShell(request, options, "external");
  assert.deepEqual(external.request.args, []);
  assert.ok(external.request.env.PROMPT_COMMAND?.includes("133;D"));
});

Deno.test("setUpShell: a directory made for files that cannot be written is removed", () => {
  const made: string[] = [];
  assert.throws(() =>
    setUpShell({ ...request, program: "/usr/bin/zsh" }, options, "none", {
      makeDir: () => {
        const dir = Deno.makeTempDirSync();
        made.push(dir);
        Deno.writeTextFileSync(`${dir}/.zshenv`, "taken"); // createNew fails on it
        return dir;
      },
    })
  );
  assert.throws(() => Deno.statSync(made[0]!), Deno.errors.NotFound);
});
