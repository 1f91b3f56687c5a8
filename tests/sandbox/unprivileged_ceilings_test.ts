/**
 * A process budget holds for an unprivileged caller on a host where root made Specter's cgroup parent
 * (`/sys/fs/cgroup/pids/specter`, root's, 0755): the parent exists but refuses this user's children, so the
 * session gets no pids cgroup and the RLIMIT_NPROC backstop must stay in its plan. It was dropped (the parent
 * counted as usable because it existed): a fork loop under `--max-procs 20` reached hundreds of processes
 * before the sampler's kill. Runs the CLI as uid 65534 (setpriv) in a mount namespace of its own, with the
 * checkout and Deno's cache bound read-only where that user can reach them.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DENO, ROOT, withTempDir } from "../_helpers.ts";

const PARENT = "/sys/fs/cgroup/pids/specter";
const ignore = Deno.uid() !== 0 || Deno.build.os !== "linux" || !isDirectory("/sys/fs/cgroup/pids");

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** Where Deno keeps its cache (the unprivileged run reads the modules from it, offline). */
async function denoDir(): Promise<string> {
  const out = await new Deno.Command(DENO, { args: ["info", "--json"], stdout: "piped", stderr: "null" })
    .output();
  return (JSON.parse(new TextDecoder().decode(out.stdout)) as { denoDir: string }).denoDir;
}

/** Runs `specter ARGS` as uid 65534 in `dir`; returns stdout. */
async function runAsNobody(dir: string, args: readonly string[]): Promise<string> {
  const src = join(dir, "src");
  const cache = join(dir, "deno");
  const work = join(dir, "work");
  for (const d of [src, cache, work]) Deno.mkdirSync(d, { recursive: true });
  Deno.chmodSync(dir, 0o755);
  Deno.chmodSync(work, 0o777);
  const deno = DENO.startsWith(`${ROOT}/`) ? join(src, DENO.slice(ROOT.length + 1)) : DENO;
  const quoted = args.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(" ");
  const script = [
    "set -e",
    `mount --bind '${ROOT}' '${src}'`,
    `mount -o remount,bind,ro '${src}'`,
    `mount --bind '${await denoDir()}' '${cache}'`,
    `mount -o remount,bind,ro '${cache}'`,
    `cd '${work}'`,
    `exec setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin HOME='${work}' ` +
    `DENO_DIR='${cache}' NO_COLOR=1 '${deno}' run -A --cached-only '${join(src, "main.ts")}' ${quoted}`,
  ].join("\n");
  const out = await new Deno.Command("unshare", {
    args: ["-m", "--propagation", "private", "sh", "-c", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert(out.stdout.length > 0, `no output; stderr: ${stderr}`);
  return new TextDecoder().decode(out.stdout);
}

Deno.test({
  name:
    "unprivileged, beside root's cgroup parent: the plan keeps the RLIMIT_NPROC backstop and forks fail at it",
  ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () =>
    withTempDir(async (dir) => {
      Deno.chmodSync(dir, 0o755);
      // What a root run leaves on the host (Specter itself makes it so).
      if (!isDirectory(PARENT)) Deno.mkdirSync(PARENT, { mode: 0o755 });
      assert.equal(Deno.statSync(PARENT).uid, 0);

      const plan = await runAsNobody(join(dir, "render"), [
        "policy",
        "render",
        "basic",
        "--max-procs",
        "20",
        "--",
        "true",
      ]);
      assert.match(plan, /--nproc=\d+/, "the plan has no RLIMIT_NPROC backstop");

      // 100 children in a budget of 20: forking fails at the backstop, so the loop never finishes.
      const line = await runAsNobody(join(dir, "run"), [
        "exec",
        "--policy",
        "basic",
        "--max-procs",
        "20",
        "--artifacts",
        "art",
        "--",
        "sh",
        "-c",
        "for i in $(seq 100); do sleep 3 & done; echo all started; wait",
      ]);
      const result = JSON.parse(line.trim().split("\n").at(-1)!) as { output: string; signal: string | null };
      assert.match(result.output, /Cannot fork/, line);
      assert(!result.output.includes("all started"), line);
    }),
});
