/**
 * `deno task bench`: runs every benchmark in turn, even when an earlier one misses its target, then
 * prints one JSON line with each benchmark's pass/fail. Exits non-zero if any failed.
 *
 * @module
 */
import { DENO, ROOT } from "./_common.ts";

const BENCHMARKS = [
  "throughput",
  "spawn",
  "sessions",
  "sandbox",
  "terminal",
  "cpu",
  "stall",
  "tokens",
  "agent",
  "flood",
  "net",
] as const;
const results: Record<string, { exit_code: number; pass: boolean }> = {};
for (const name of BENCHMARKS) {
  const { code } = await new Deno.Command(DENO, {
    args: ["run", "-A", `${ROOT}/scripts/bench/${name}.ts`, ...Deno.args],
    cwd: ROOT,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  results[name] = { exit_code: code, pass: code === 0 };
}
const pass = Object.values(results).every((r) => r.pass);
console.log(JSON.stringify({ benchmark: "all", pass, results }));
Deno.exit(pass ? 0 : 1);
