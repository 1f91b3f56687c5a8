/**
 * Makes the recordings `bench:tokens` measures: real programs on a real terminal, driven like a person
 * would, recorded as asciicast v2 under `fixtures/workloads/NAME.cast`. The committed recordings are the
 * benchmark's input; this script says how each was made (re-running it makes new ones, which differ in
 * times, versions and numbers).
 *
 *   deno run -A scripts/record_workloads.ts [NAME…]
 *
 * Needs: npm (and the npm registry), apt (and Debian's mirrors, as root), pytest, top, git, less.
 * Recorded without a sandbox (`--unsafe-no-sandbox` in library form): installing packages is the point.
 *
 * @module
 */
import { join } from "node:path";
import { spawn, Transcript } from "../src/mod.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const OUT = join(ROOT, "fixtures/workloads");

interface Step {
  /** Wait for this in the output (since the previous wait), up to `timeoutMs`. */
  readonly wait?: RegExp;
  /** Then type this. */
  readonly type?: string;
  /** Or sleep this long. */
  readonly sleepMs?: number;
}

interface Workload {
  readonly argv: readonly string[];
  readonly cwd?: string;
  readonly env?: Record<string, string>;
  readonly cols: number;
  readonly rows: number;
  readonly steps: readonly Step[];
  readonly timeoutMs: number;
}

/** less's prompt: a `:` on a line of its own, then erase-to-end-of-line. */
const LESS_PROMPT = new RegExp("\\n:(\u001b\\[K)?$");

function scratch(): string {
  return Deno.makeTempDirSync({ prefix: "specter-workload-" });
}

const WORKLOADS: Record<string, () => Workload> = {
  // A package install with a spinner and progress (npm draws them on a terminal).
  "npm-install": () => ({
    argv: [
      "npm",
      "install",
      "--no-audit",
      "--no-fund",
      "--no-update-notifier",
      "eslint@8.57.0",
      "request@2.88.2",
    ],
    cwd: scratch(),
    cols: 100,
    rows: 30,
    steps: [],
    timeoutMs: 300_000,
  }),
  // apt's fancy progress: a status row kept at the bottom with a scroll region.
  "apt-install": () => ({
    argv: ["apt", "install", "--reinstall", "-y", "cowsay", "sl"],
    env: { DEBIAN_FRONTEND: "readline" },
    cols: 100,
    rows: 30,
    steps: [],
    timeoutMs: 300_000,
  }),
  // pytest -vv with failures and colour.
  "pytest": () => ({
    argv: ["pytest", "-vv", "--color=yes", "-p", "no:cacheprovider", "test_inventory.py"],
    cwd: join(OUT, "src"),
    cols: 100,
    rows: 30,
    steps: [],
    timeoutMs: 120_000,
  }),
  // A network-device style CLI paging a long configuration through --More--.
  "netcli-more": () => ({
    argv: ["python3", join(ROOT, "fixtures/tuis/netcli.py")],
    cols: 80,
    rows: 24,
    steps: [
      { wait: /#$/, type: "show running-config\r" },
      // A reader pauses on each page before the next one.
      ...Array.from({ length: 7 }, () => ({ wait: /--More-- $/, sleepMs: 400, type: " " })),
      { wait: /edge-rtr-01#$/, sleepMs: 400, type: "exit\r" },
    ],
    timeoutMs: 60_000,
  }),
  // top, full screen, refreshing every half second for a few seconds.
  "top": () => ({
    argv: ["top", "-d", "0.5"],
    cols: 100,
    rows: 30,
    steps: [{ wait: /PID/, sleepMs: 3000 }, { type: "q" }],
    timeoutMs: 60_000,
  }),
  // git log in its pager (less, with git's LESS=FRX), paged three times, then quit.
  "git-log": () => ({
    argv: ["git", "log", "--stat", "-n", "60", "b6ee6424cdc1"],
    cwd: ROOT,
    env: { GIT_PAGER: "less", LESS: "FRX", LESSHISTFILE: "-" },
    cols: 100,
    rows: 30,
    steps: [
      { wait: LESS_PROMPT, sleepMs: 400, type: " " },
      { wait: LESS_PROMPT, sleepMs: 400, type: " " },
      { wait: LESS_PROMPT, sleepMs: 400, type: " " },
      { wait: LESS_PROMPT, sleepMs: 400, type: "q" },
    ],
    timeoutMs: 60_000,
  }),
};

async function record(name: string, workload: Workload): Promise<void> {
  const path = join(OUT, `${name}.cast`);
  const session = spawn({
    argv: workload.argv,
    cwd: workload.cwd,
    env: workload.env,
    cols: workload.cols,
    rows: workload.rows,
    sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" },
    record: { path },
    timeoutMs: workload.timeoutMs,
  });
  const transcript = new Transcript(session);
  let since = 0;
  for (const step of workload.steps) {
    if (step.wait) {
      await transcript.output(step.wait, 30_000, since);
      since = transcript.text.length;
    }
    if (step.sleepMs) await new Promise((resolve) => setTimeout(resolve, step.sleepMs));
    if (step.type !== undefined) session.write(step.type);
  }
  const exit = await transcript.exit(workload.timeoutMs);
  console.log(`${name}: exit ${exit.code ?? exit.signal}, ${exit.output_bytes} bytes -> ${path}`);
}

if (import.meta.main) {
  const names = Deno.args.length > 0 ? Deno.args : Object.keys(WORKLOADS);
  for (const name of names) {
    const make = WORKLOADS[name];
    if (make === undefined) throw new Error(`Unknown workload "${name}"`);
    await record(name, make());
  }
}
