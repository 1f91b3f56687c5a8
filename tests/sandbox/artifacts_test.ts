/**
 * Artifacts out of reach: a run whose artifacts directory (audit log, recording) a write grant would
 * expose is refused before the program starts, however the directory is named (directly, through a
 * symlink, through `..`, through a bind mount, as the default state directory), and a read grant that
 * contains it shows an empty read-only directory. The attacks run through the real CLI under bwrap.
 */
import assert from "node:assert/strict";
import { runCli, sessionTest } from "../_helpers.ts";
import { withHostDir } from "./_sandbox.ts";

/** Creates `path` (the sandbox runs as the caller, so the caller's directory is its to write). */
async function sharedDir(path: string): Promise<void> {
  await Deno.mkdir(path, { recursive: true });
}

/** A policy file granting `write` and `read`, written into `dir`. */
async function policyFile(dir: string, write: string[], read: string[] = []): Promise<string> {
  const path = `${dir}/policy.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({ version: 1, exec: ["/usr/bin", "/bin"], fs: { read, write } }),
  );
  return path;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false; // Absent: what a refused run leaves.
  }
}

/** The forging program: rewrites the audit log it finds and plants a marker, both in `artifacts`. */
function forger(artifacts: string, marker: string): string[] {
  return [
    "sh",
    "-c",
    `touch "${marker}"; echo '{"forged":true}' > "${artifacts}/audit.ndjson"; echo done`,
  ];
}

/** Runs `exec` with `policy` and `artifacts`; the run must be refused with E_POLICY_ARTIFACTS_EXPOSED. */
async function assertRefused(
  policy: string,
  artifacts: string,
  marker: string,
  env: Record<string, string> = {},
): Promise<void> {
  const args = ["exec", "--policy", policy, "--ack-unsafe-write"];
  if (!("XDG_STATE_HOME" in env)) args.push("--artifacts", artifacts);
  const { code, stderr } = await runCli([...args, "--", ...forger(artifacts, marker)], "", env);
  assert.equal(code, 2, stderr);
  assert.match(stderr, /E_POLICY_ARTIFACTS_EXPOSED/, stderr);
  assert.match(stderr, /artifacts directory/, stderr);
  assert.equal(await exists(marker), false, "the program ran");
}

sessionTest(
  "a write grant that contains the artifacts directory is refused before the program starts",
  async () => {
    await withHostDir(async (dir) => {
      await sharedDir(`${dir}/ws`);
      const policy = await policyFile(dir, [`${dir}/ws`]);
      await assertRefused(policy, `${dir}/ws/run/art`, `${dir}/ws/marker`);
      // The refused run's own audit log (written outside the sandbox) still verifies.
      const verify = await runCli(["audit", "verify", `${dir}/ws/run/art`]);
      assert.equal(verify.code, 0, verify.stderr);
    });
  },
);

sessionTest("artifacts named through a symlink or `..` into a write grant are refused", async () => {
  await withHostDir(async (dir) => {
    await sharedDir(`${dir}/ws`);
    await Deno.mkdir(`${dir}/other`);
    await Deno.symlink(`${dir}/ws`, `${dir}/alias`);
    const policy = await policyFile(dir, [`${dir}/ws`]);
    // Through a link: refused before the guard is even asked, since the audit log is never written
    // through a link a sandbox could have made (this one could be the program's, in an earlier run).
    const args = ["exec", "--policy", policy, "--ack-unsafe-write", "--artifacts", `${dir}/alias/art`, "--"];
    const { code, stderr } = await runCli([...args, ...forger(`${dir}/alias/art`, `${dir}/ws/marker`)]);
    assert.equal(code, 125, stderr);
    assert.match(stderr, /E_AUDIT: .*passes through the symlink/, stderr);
    assert.equal(await exists(`${dir}/ws/marker`), false, "the program ran");
    assert.equal(await exists(`${dir}/ws/art`), false, "the audit log was made through the link");
    await assertRefused(policy, `${dir}/other/../ws/art2`, `${dir}/ws/marker`);
  });
});

sessionTest("the default artifacts directory ($XDG_STATE_HOME) inside a write grant is refused", async () => {
  await withHostDir(async (dir) => {
    await sharedDir(`${dir}/ws`);
    const policy = await policyFile(dir, [`${dir}/ws`]);
    await assertRefused(policy, `${dir}/ws/state/specter/runs/x`, `${dir}/ws/marker`, {
      XDG_STATE_HOME: `${dir}/ws/state`,
    });
  });
});

sessionTest("a write grant inside the artifacts directory, or the directory itself, is refused", async () => {
  await withHostDir(async (dir) => {
    await Deno.mkdir(`${dir}/art/workspace`, { recursive: true });
    await assertRefused(await policyFile(dir, [`${dir}/art/workspace`]), `${dir}/art`, `${dir}/art/m1`);
    await assertRefused(await policyFile(dir, [`${dir}/art`]), `${dir}/art`, `${dir}/art/m2`);
  });
});

const ROOT_ONLY = { ignore: Deno.uid() !== 0 };

/** Runs `fn` with `source` bind-mounted at `target` (root only), unmounting afterwards. */
async function withBind(source: string, target: string, fn: () => Promise<void>): Promise<void> {
  await Deno.mkdir(target, { recursive: true });
  const mount = await new Deno.Command("mount", { args: ["--bind", source, target] }).output();
  assert.equal(mount.code, 0, new TextDecoder().decode(mount.stderr));
  try {
    await fn();
  } finally {
    await new Deno.Command("umount", { args: [target] }).output();
  }
}

if (!ROOT_ONLY.ignore) {
  sessionTest(
    "artifacts reached through a bind mount of the write grant (or of its parent) are refused",
    async () => {
      await withHostDir(async (dir) => {
        await sharedDir(`${dir}/ws/sub`);
        const policy = await policyFile(dir, [`${dir}/ws`]);
        // The bind mount's own root has the grant's identity: the ancestor walk meets it.
        await withBind(`${dir}/ws`, `${dir}/mnt`, async () => {
          await assertRefused(policy, `${dir}/mnt/sub/art`, `${dir}/ws/marker`);
        });
        // A bind of a directory *below* the grant, mounted outside it: walking up from the artifacts never
        // passes the grant; the mount table shows where the same directory lies inside it.
        const outside = await Deno.makeTempDir({ prefix: "specter-bind-" });
        try {
          await withBind(`${dir}/ws/sub`, `${outside}/m`, async () => {
            await assertRefused(policy, `${outside}/m/art`, `${dir}/ws/marker`);
          });
        } finally {
          await Deno.remove(outside, { recursive: true });
        }
        // And the grant named through a bind mount, the artifacts by their real path.
        await withBind(`${dir}/ws`, `${dir}/mnt2`, async () => {
          await assertRefused(await policyFile(dir, [`${dir}/mnt2`]), `${dir}/ws/art3`, `${dir}/ws/marker`);
        });
      });
    },
  );
}

sessionTest("a read grant that contains the artifacts directory shows it empty and read-only", async () => {
  await withHostDir(async (dir) => {
    await Deno.mkdir(`${dir}/ro`);
    await Deno.writeTextFile(`${dir}/ro/visible`, "seen");
    const policy = await policyFile(dir, [], [`${dir}/ro`]);
    const art = `${dir}/ro/art`;
    const script = `cat "${dir}/ro/visible"; echo; ls -A "${art}" | wc -l;
      cat "${art}/audit.ndjson" && echo READ-AUDIT;
      echo forged > "${art}/audit.ndjson" && echo WROTE-AUDIT;
      mkdir "${art}/x" && echo MKDIR; echo end`;
    const { code, stdout, stderr } = await runCli([
      "exec",
      "--policy",
      policy,
      "--artifacts",
      art,
      "--",
      "sh",
      "-c",
      script,
    ]);
    assert.equal(code, 0, stderr);
    const output = String(JSON.parse(stdout).output);
    assert.match(output, /^seen\n0\n/, output); // The grant works; the artifacts directory is empty.
    assert.doesNotMatch(output, /READ-AUDIT|WROTE-AUDIT|MKDIR/, output);
    assert.match(output, /Read-only file system/, output);
    // The host's log is the run's own, whole and chained.
    const verify = await runCli(["audit", "verify", "--json", art]);
    assert.equal(verify.code, 0, verify.stderr);
    assert.equal(JSON.parse(verify.stdout).records, 3);
    assert.ok(!(await Deno.readTextFile(`${art}/audit.ndjson`)).split("\n").includes("forged"));
  });
});

sessionTest("a read grant at or inside the artifacts directory is refused", async () => {
  await withHostDir(async (dir) => {
    await Deno.mkdir(`${dir}/art/sub`, { recursive: true });
    for (const read of [`${dir}/art`, `${dir}/art/sub`]) {
      const policy = await policyFile(dir, [], [read]);
      const { code, stderr } = await runCli([
        "exec",
        "--policy",
        policy,
        "--artifacts",
        `${dir}/art`,
        "--",
        "true",
      ]);
      assert.equal(code, 2, stderr);
      assert.match(stderr, /E_POLICY_ARTIFACTS_EXPOSED: Field "fs.read"/, stderr);
    }
  });
});

sessionTest("a recording inside a write grant is refused (the program could rewrite it)", async () => {
  await withHostDir(async (dir) => {
    await sharedDir(`${dir}/ws`);
    const policy = await policyFile(dir, [`${dir}/ws`]);
    const { code, stderr } = await runCli([
      "exec",
      "--policy",
      policy,
      "--ack-unsafe-write",
      "--artifacts",
      `${dir}/art`,
      "--record",
      `${dir}/ws/session.cast`,
      "--",
      "true",
    ]);
    assert.equal(code, 2, stderr);
    assert.match(stderr, /E_POLICY_ARTIFACTS_EXPOSED/, stderr);
    assert.equal(await exists(`${dir}/ws/session.cast`), false);
  });
});

sessionTest(
  "specter test: a program cannot reach the snapshots and audit log its run is writing",
  async () => {
    await withHostDir(async (dir) => {
      await Deno.mkdir(`${dir}/ro`);
      const art = `${dir}/ro/art`;
      await Deno.writeTextFile(
        `${dir}/policy.json`,
        JSON.stringify({ version: 1, exec: ["/usr/bin", "/bin"], fs: { read: [`${dir}/ro`] } }),
      );
      // After the snapshot is written, the program tries to read, overwrite and add to the artifacts.
      const script = `echo ready; read go; ls -A "${art}" | wc -l;
      echo forged > "${art}/snapshots/001-first.txt" && echo WROTE-SNAPSHOT;
      echo forged >> "${art}/audit.ndjson" && echo WROTE-AUDIT; echo finished`;
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        [
          "version: 1",
          "name: forger",
          "run:",
          `  argv: [/usr/bin/sh, -c, ${JSON.stringify(script)}]`,
          "  policy: ./policy.json",
          "steps:",
          '  - wait_for: { text: "ready" }',
          "  - snapshot: first",
          "  - press: enter",
          '  - wait_for: { text: "finished" }',
          "  - expect: { exit_code: 0 }",
        ].join("\n") + "\n",
      );
      const { code, stdout, stderr } = await runCli(["test", "--json", "--artifacts", art, `${dir}/s.yaml`]);
      assert.equal(code, 0, stdout + stderr);
      const cast = await Deno.readTextFile(`${art}/session.cast`);
      assert.doesNotMatch(cast, /WROTE-/);
      assert.match(cast, /Read-only file system/);
      assert.match(await Deno.readTextFile(`${art}/snapshots/001-first.txt`), /^# .*\nready/);
      assert.equal((await runCli(["audit", "verify", art])).code, 0);
    });
  },
);
