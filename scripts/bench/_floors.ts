/**
 * The floors under `bench:daemon`'s idle figure, measured in the same run: what a Deno process costs before
 * any of the daemon's or the keeper's own code runs. A bare process (`floor/bare.ts`); one with Specter's libc
 * binding, which every process holding a terminal has, the keeper and the daemon alike (`floor/terminal.ts`);
 * and that plus zod, with which the daemon checks requests against the protocol's schemas
 * (`floor/validating.ts`). Each runs from this checkout (its `deno.json`, as the daemon and keeper do) with
 * the V8 flags of the process it stands for.
 *
 * @module
 */
import { DENO, procStatus, ROOT, sleep } from "./_common.ts";

/** A floor process: its script under `scripts/bench/floor/`. */
export type Floor = "bare" | "terminal" | "validating";

/** The RSS (KiB) of floor process `floor` run with `v8Flags`, `settleMs` after its start. */
export async function floorRssKib(floor: Floor, v8Flags: string, settleMs: number): Promise<number> {
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", `${ROOT}/scripts/bench/floor/${floor}.ts`],
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "inherit",
    env: { DENO_V8_FLAGS: v8Flags },
  }).spawn();
  let ended = false;
  const status = child.status.then((value) => {
    ended = true;
    return value;
  });
  try {
    await sleep(settleMs);
    if (ended) throw new Error(`The ${floor} floor process ended before it was measured`);
    return procStatus("VmRSS", child.pid);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // It ended on its own meanwhile (reported above when it ended before it was measured).
    }
    await status;
  }
}
