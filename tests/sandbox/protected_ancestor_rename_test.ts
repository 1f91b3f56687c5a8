/**
 * Strict-write binds each protected name read-only over itself, so the name cannot be written, removed
 * or renamed. Its parent directory is an ordinary directory of the write grant, though: a program
 * renames the parent (the read-only bind moves with it), recreates the parent under its old name and
 * plants its own `.git/hooks/pre-commit` and `.envrc` at the protected paths. After the run the host
 * must still hold the original files at those paths, or the run must at least name those paths as
 * changed; reporting only the moved originals (`sub2/.envrc`) points the user at the harmless copies.
 */
import assert from "node:assert/strict";
import { runCli, sessionTest } from "../_helpers.ts";
import { withHostDir } from "./_sandbox.ts";

async function shareTree(root: string): Promise<void> {
  if (Deno.uid() !== 0) return;
  const chown = await new Deno.Command("chown", { args: ["-R", "--no-dereference", "65534:65534", root] })
    .output();
  assert.equal(chown.code, 0);
}

const HOOK = "#!/bin/sh\nexit 0\n";
const ENVRC = "export SAFE=1\n";

sessionTest(
  "strict-write: renaming a protected name's parent does not let the program replace it unreported",
  async () => {
    await withHostDir(async (dir) => {
      const ws = `${dir}/ws`;
      await Deno.mkdir(`${ws}/libs/repo/.git/hooks`, { recursive: true });
      await Deno.mkdir(`${ws}/sub`, { recursive: true });
      await Deno.writeTextFile(`${ws}/libs/repo/.git/hooks/pre-commit`, HOOK);
      await Deno.writeTextFile(`${ws}/sub/.envrc`, ENVRC);
      await shareTree(ws);
      const policy = `${dir}/policy.json`;
      await Deno.writeTextFile(
        policy,
        JSON.stringify({ version: 1, exec: ["/usr/bin", "/bin"], fs: { write: [ws] } }),
      );
      const script = [
        `cd "${ws}"`,
        "mv libs libs2 && echo GOT mv-libs",
        "mkdir -p libs/repo/.git/hooks && printf '#!/bin/sh\\necho PWNED\\n' > libs/repo/.git/hooks/pre-commit" +
        " && echo GOT planted-hook",
        "mv sub sub2 && echo GOT mv-sub",
        "mkdir sub && echo 'echo PWNED' > sub/.envrc && echo GOT planted-envrc",
        "echo end",
      ].join("; ");
      const { code, stdout, stderr } = await runCli([
        "exec",
        "--policy",
        policy,
        "--ack-unsafe-write",
        "--strict-write",
        "--artifacts",
        `${dir}/art`,
        "--",
        "sh",
        "-c",
        script,
      ]);
      assert.equal(code, 0, `${stderr}${stdout}`);
      const result = JSON.parse(stdout);
      assert.match(result.output, /end/, result.output);
      const reported: string[] = result.protected_created ?? [];
      const hookPath = `${ws}/libs/repo/.git/hooks/pre-commit`;
      const envrcPath = `${ws}/sub/.envrc`;
      const hookNow = await Deno.readTextFile(hookPath).catch(() => null);
      const envrcNow = await Deno.readTextFile(envrcPath).catch(() => null);
      const hookOk = hookNow === HOOK || reported.some((p) => hookPath.startsWith(p));
      const envrcOk = envrcNow === ENVRC || reported.includes(envrcPath);
      assert.ok(
        hookOk && envrcOk,
        `the protected paths hold the program's files and the run does not name them:\n` +
          `${hookPath}: ${JSON.stringify(hookNow)}\n${envrcPath}: ${JSON.stringify(envrcNow)}\n` +
          `protected_created: ${JSON.stringify(reported)}\n${result.output}`,
      );
    });
  },
);
