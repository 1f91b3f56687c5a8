/**
 * Class 1 of issue 11: grants checked, then mounted by name. Here the attacker is a sandboxed program of
 * another run that shares a write root with the victim and swaps the victim's grant paths for symlinks
 * (to `/`, to `/usr`) in a tight loop while the victim starts again and again. Every victim launch must
 * either be refused with a typed code or run with exactly the checked directories, mounted as planned.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type Session, Transcript } from "../../src/mod.ts";
import { spawn } from "../../src/session/spawn_session.ts";
import { sessionTest } from "../_helpers.ts";
import { policyOf, withHostDir } from "./_sandbox.ts";

const SH = "/usr/bin/sh";
const RUNS = 60;

/**
 * Shell (builtins only) printing `MOUNT <options>` for each mount strictly below `root` in the sandbox.
 * (A mount point's name follows its directory: the attacker renaming `data` to `d2` renames it too.)
 */
const MOUNTS = (root: string) =>
  `while read -r _ _ _ _ at opts _; do case "$at" in '${root}'/*) echo "MOUNT $opts";; esac; done < /proc/self/mountinfo`;

/** Starts the attacker: a sandboxed shell that loops `script` in `dir` (its write root). */
function attacker(dir: string, script: string): Session {
  return spawn({
    argv: [SH, "-c", `cd '${dir}' || exit 9; echo ATTACKING; while :; do ${script}; done`],
    idleMs: 0,
    timeoutMs: 120_000,
    sandbox: { mode: "bwrap", policy: policyOf({ exec: ["/usr/bin"], fs: { write: [dir] } }) },
  });
}

/** One victim launch: its transcript, or the typed code that refused it. */
async function victim(argv: string[], doc: Record<string, unknown>): Promise<{ code: string; text: string }> {
  let session: Session;
  try {
    session = spawn({
      argv,
      idleMs: 0,
      timeoutMs: 10_000,
      sandbox: { mode: "bwrap", policy: policyOf(doc) },
    });
  } catch (error: unknown) {
    const e = error as { code?: string; problems?: { code: string }[] };
    return { code: e.problems?.[0]?.code ?? e.code ?? String(error), text: "" };
  }
  const t = new Transcript(session);
  await t.exit(15_000);
  return { code: "ran", text: t.text };
}

async function stop(session: Session): Promise<void> {
  const t = new Transcript(session);
  await session.terminate(0);
  await t.exit(5_000);
}

async function waitForAttack(dir: string, decoy: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      await Deno.lstat(`${dir}/${decoy}`);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  throw new Error("The attacker never started");
}

sessionTest(
  "a write grant swapped for a symlink to / by a sandbox sharing the root is never mounted as /",
  async () => {
    await withHostDir(async (dir) => {
      await Deno.mkdir(`${dir}/work`);
      const probe = `/specter-race-probe-${crypto.randomUUID()}`;
      const attack = attacker(dir, "mv work w2; ln -s / work; rm work; mv w2 work");
      try {
        await waitForAttack(dir, "w2");
        const outcomes = new Map<string, number>();
        for (let i = 0; i < RUNS; i++) {
          const { code, text } = await victim(
            [
              SH,
              "-c",
              `echo PWNED > '${dir}/work${probe}' 2>/dev/null; test -e '${dir}/work/etc/passwd' && echo HOSTROOT; echo END`,
            ],
            { exec: [], fs: { write: [`${dir}/work`] } },
          );
          outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
          assert.ok(!text.includes("HOSTROOT"), `run ${i}: the host root was mounted\n${text}`);
          assert.ok(
            ["ran", "E_POLICY_SYMLINK", "E_POLICY_PATH_MISSING", "E_SANDBOX_START"].includes(code),
            `run ${i}: unexpected outcome ${code}`,
          );
        }
        await assert.rejects(Deno.lstat(probe), Deno.errors.NotFound, "nothing was written to the host root");
        // The race was live: some launches met the link or the gap (and were refused).
        const refused = (outcomes.get("E_POLICY_SYMLINK") ?? 0) +
          (outcomes.get("E_POLICY_PATH_MISSING") ?? 0);
        console.log(`outcomes: ${JSON.stringify([...outcomes])}`);
        assert.ok(refused > 0, `outcomes: ${JSON.stringify([...outcomes])}`);
      } finally {
        await stop(attack);
      }
    });
  },
);

sessionTest(
  "a read-only grant nested in a shared write root cannot be redirected to become writable",
  async () => {
    await withHostDir(async (dir) => {
      await Deno.mkdir(`${dir}/data`);
      await Deno.writeTextFile(`${dir}/data/marker`, "REAL-DATA");
      const attack = attacker(
        dir,
        // A short pause with the directory in place lets some victims start on a loaded machine too.
        "mv data d2; ln -s /usr data; rm data; mv d2 data; sleep 0.05",
      );
      try {
        await waitForAttack(dir, "d2");
        const outcomes = new Map<string, number>();
        for (let i = 0; i < RUNS; i++) {
          const { code, text } = await victim(
            [
              SH,
              "-c",
              `echo VICTIM > '${dir}/data/probe' 2>/dev/null && echo WROTE; ${MOUNTS(dir)}; echo END`,
            ],
            { exec: [], fs: { read: [`${dir}/data`], write: [dir] } },
          );
          outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
          assert.ok(
            ["ran", "E_POLICY_SYMLINK", "E_POLICY_PATH_MISSING", "E_SANDBOX_MOUNTS", "E_SANDBOX_START"]
              .includes(code),
            `run ${i}: unexpected outcome ${code}`,
          );
          if (code === "ran") {
            assert.ok(!text.includes("WROTE"), `run ${i}: the read-only grant was writable\n${text}`);
            // The attacker keeps renaming names in the shared root while the victim runs, so what a name
            // shows changes; the mount itself is the checked one, read-only, where it was planned.
            assert.match(text, /MOUNT ro,/, `run ${i}: the read-only bind is not in place\n${text}`);
            assert.doesNotMatch(text, /MOUNT rw,/, `run ${i}\n${text}`);
          }
        }
        await assert.rejects(Deno.lstat(`${dir}/data/probe`), Deno.errors.NotFound);
        await assert.rejects(Deno.lstat(`${dir}/d2/probe`), Deno.errors.NotFound);
        console.log(`outcomes: ${JSON.stringify([...outcomes])}`);
        // Every outcome is typed and safe; how many victims got to run depends on the machine's load.
      } finally {
        await stop(attack);
      }
    });
  },
);

sessionTest("concurrent sandboxes sharing a write root each get their own checked grants", async () => {
  await withHostDir(async (dir) => {
    for (const name of ["a", "b", "c", "d"]) {
      await Deno.mkdir(`${dir}/${name}`);
    }
    // Each run writes its own name into its own grant; one more run plants links in the shared root.
    const attack = attacker(dir, "for n in a b c d; do mv $n $n.x; ln -s / $n; rm $n; mv $n.x $n; done");
    try {
      await waitForAttack(dir, "a.x");
      const runs = await Promise.all(
        ["a", "b", "c", "d"].flatMap((name) =>
          Array.from({ length: 5 }, (_, i) =>
            victim(
              [
                SH,
                "-c",
                `echo ${name}${i} >> '${dir}/${name}/log'; test -e '${dir}/${name}/etc/passwd' && echo HOSTROOT; echo END`,
              ],
              { exec: [], fs: { write: [`${dir}/${name}`] } },
            ).then((result) => ({ name, i, ...result })))
        ),
      );
      for (const run of runs) {
        assert.ok(!run.text.includes("HOSTROOT"), `${run.name}${run.i}: ${run.text}`);
        assert.ok(
          ["ran", "E_POLICY_SYMLINK", "E_POLICY_PATH_MISSING", "E_SANDBOX_START"].includes(run.code),
          run.code,
        );
      }
      await stop(attack);
      for (const name of ["a", "b", "c", "d"]) {
        const log = await Deno.readTextFile(`${dir}/${name}/log`).catch(() => "");
        // Whatever ran wrote into its own directory only.
        for (const entry of log.split("\n").filter((l) => l !== "")) assert.ok(entry.startsWith(name), entry);
        const ran = runs.filter((r) => r.name === name && r.code === "ran").length;
        assert.ok(log.split("\n").filter((l) => l !== "").length <= ran);
      }
    } finally {
      await stop(attack).catch(() => {/* already stopped */});
    }
  });
});
