/**
 * Makes the recordings `bench:tokens` measures: real programs on a real terminal, driven like a person
 * would, recorded as asciicast v2. Two sets: **tuned** (`fixtures/workloads/NAME.cast`), the recordings the
 * views were developed against, and **held-out** (`fixtures/workloads/held-out/NAME.cast`), recorded for
 * issue 24 before the views changed, and measured (no rule looks at their text). The committed recordings are the benchmark's
 * input; this script says how each was made (re-running it makes new ones, which differ in times, versions
 * and numbers).
 *
 *   deno run -A scripts/record_workloads.ts [NAME…]
 *
 * Needs: npm (and the npm registry), apt (and Debian's mirrors, as root), pytest, top, git, less, vim, curl,
 * gcc and make, cargo.
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
  /** Which set it belongs to (see the module documentation). Default: tuned. */
  readonly set?: "tuned" | "held-out";
  /** Record what was typed too (`i` events: the parsed view reports the screen input leads to). */
  readonly input?: boolean;
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

/** A scratch copy of `fixtures/workloads/src/NAME` (builds write into their directory). */
function copyOf(name: string): string {
  const dir = scratch();
  new Deno.Command("cp", { args: ["-r", join(OUT, "src", name), dir] }).outputSync();
  return join(dir, name);
}

/** A scratch directory holding `notes.txt` (a few lines to edit). */
function notes(): string {
  const dir = scratch();
  Deno.writeTextFileSync(
    join(dir, "notes.txt"),
    "# Deploy notes\n\n- build the release image\n- run the migrations\n- switch traffic to blue\n",
  );
  return dir;
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
  // ── Added for issue 24 ──────────────────────────────────────────────────────────────────────────
  // A compiler and make: warnings and an error (tuned).
  "make-gcc": () => ({
    argv: ["make"],
    cwd: copyOf("mathlib"),
    cols: 100,
    rows: 30,
    steps: [],
    timeoutMs: 60_000,
  }),
  // A registry query: a package's metadata (tuned).
  "npm-view": () => ({
    argv: ["npm", "view", "--no-update-notifier", "express@4.19.2"],
    cwd: scratch(),
    cols: 100,
    rows: 30,
    steps: [],
    timeoutMs: 120_000,
  }),
  // Held out: apt installing new packages (dpkg's "Reading database" progress and apt's status row).
  "apt-figlet": () => ({
    set: "held-out",
    argv: ["apt", "install", "-y", "figlet", "toilet"],
    env: { DEBIAN_FRONTEND: "readline" },
    cols: 100,
    rows: 30,
    steps: [],
    timeoutMs: 300_000,
  }),
  // Held out: the router paging `show interfaces`, pages by Space and lines by Enter, quit early with q.
  "netcli-interfaces": () => ({
    set: "held-out",
    input: true,
    argv: ["python3", join(ROOT, "fixtures/tuis/netcli.py")],
    cols: 80,
    rows: 24,
    steps: [
      { wait: /#$/, type: "show interfaces\r" },
      ...Array.from({ length: 5 }, () => ({ wait: /--More-- $/, sleepMs: 400, type: " " })),
      ...Array.from({ length: 2 }, () => ({ wait: /--More-- $/, sleepMs: 400, type: "\r" })),
      { wait: /--More-- $/, sleepMs: 400, type: "q" },
      { wait: /#$/, sleepMs: 300, type: "show version\r" },
      { wait: /#$/, sleepMs: 300, type: "exit\r" },
    ],
    timeoutMs: 60_000,
  }),
  // Held out: top on a bigger terminal, sorted by memory (M) after two seconds, then quit.
  "top-sorted": () => ({
    set: "held-out",
    input: true,
    argv: ["top", "-d", "1"],
    cols: 120,
    rows: 40,
    steps: [{ wait: /PID/, sleepMs: 2000, type: "M" }, { sleepMs: 2500, type: "q" }],
    timeoutMs: 60_000,
  }),
  // Held out: pytest at its default verbosity on another project, with failures.
  "pytest-cart": () => ({
    set: "held-out",
    argv: ["pytest", "--color=yes", "-p", "no:cacheprovider", "test_cart.py"],
    cwd: copyOf("cart"),
    cols: 100,
    rows: 30,
    steps: [],
    timeoutMs: 120_000,
  }),
  // Held out: npm installing other packages.
  "npm-install-express": () => ({
    set: "held-out",
    argv: [
      "npm",
      "install",
      "--no-audit",
      "--no-fund",
      "--no-update-notifier",
      "express@4.19.2",
      "chalk@4.1.2",
      "commander@11.1.0",
    ],
    cwd: scratch(),
    cols: 100,
    rows: 30,
    steps: [],
    timeoutMs: 300_000,
  }),
  // Held out: git log -p in its pager, three pages, then quit.
  "git-log-patch": () => ({
    set: "held-out",
    input: true,
    argv: ["git", "log", "-p", "-n", "4", "b6ee6424cdc1"],
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
  // Held out: cargo building a crate with warnings and type errors.
  "cargo-build": () => ({
    set: "held-out",
    argv: ["cargo", "build", "--color=always"],
    cwd: copyOf("ledger"),
    cols: 100,
    rows: 30,
    steps: [],
    timeoutMs: 300_000,
  }),
  // Held out: a Python traceback with a chained exception.
  "python-traceback": () => ({
    set: "held-out",
    argv: ["python3", join(OUT, "src/traceback.py")],
    cols: 100,
    rows: 30,
    steps: [],
    timeoutMs: 60_000,
  }),
  // Held out: a directory listing.
  "ls-etc": () => ({
    set: "held-out",
    argv: ["ls", "-la", "/etc"],
    cols: 100,
    rows: 30,
    steps: [],
    timeoutMs: 60_000,
  }),
  // Held out: the Python REPL, with a traceback and a function typed over several lines.
  "python-repl": () => ({
    set: "held-out",
    input: true,
    argv: ["python3", "-q"],
    cols: 100,
    rows: 30,
    steps: [
      { wait: />>> $/, type: "import os, sys\r" },
      { wait: />>> $/, type: "sorted(os.listdir('/etc'))[:12]\r" },
      { wait: />>> $/, type: "{k: len(k) for k in ['alpha', 'beta', 'gamma']}\r" },
      { wait: />>> $/, type: "1 / 0\r" },
      { wait: />>> $/, type: "def double(x):\r" },
      { wait: /\.\.\. $/, type: "    return x * 2\r" },
      { wait: /\.\.\. $/, type: "\r" },
      { wait: />>> $/, type: "[double(n) for n in range(8)]\r" },
      { wait: />>> $/, type: "exit()\r" },
    ],
    timeoutMs: 60_000,
  }),
  // Held out: vim editing a file (a full-screen program driven by keys), then :wq.
  "vim-edit": () => ({
    set: "held-out",
    input: true,
    argv: ["vim", "-n", "notes.txt"],
    cwd: notes(),
    env: { HOME: scratch() },
    cols: 100,
    rows: 30,
    steps: [
      { wait: /notes\.txt/, sleepMs: 500, type: "G" },
      { sleepMs: 300, type: "o- announce the release\x1b" },
      { sleepMs: 300, type: "ggdd" },
      { sleepMs: 500, type: ":wq\r" },
    ],
    timeoutMs: 60_000,
  }),
  // Held out: less over a long configuration file, three pages, then quit.
  "less-services": () => ({
    set: "held-out",
    input: true,
    argv: ["less", "/etc/services"],
    env: { LESSHISTFILE: "-" },
    cols: 100,
    rows: 30,
    steps: [
      { sleepMs: 1000, type: " " }, // The first page's prompt is the file's name, not `:`.
      { wait: LESS_PROMPT, sleepMs: 400, type: " " },
      { wait: LESS_PROMPT, sleepMs: 400, type: " " },
      { wait: LESS_PROMPT, sleepMs: 400, type: "q" },
    ],
    timeoutMs: 60_000,
  }),
  // Held out: curl's progress bar, downloading a tarball from the npm registry.
  "curl-progress": () => ({
    set: "held-out",
    argv: [
      "curl",
      "--progress-bar",
      "-o",
      "/dev/null",
      "https://registry.npmjs.org/typescript/-/typescript-5.4.5.tgz",
    ],
    cols: 100,
    rows: 30,
    steps: [],
    timeoutMs: 120_000,
  }),
};

async function record(name: string, workload: Workload): Promise<void> {
  const dir = workload.set === "held-out" ? join(OUT, "held-out") : OUT;
  Deno.mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.cast`);
  const session = spawn({
    argv: workload.argv,
    cwd: workload.cwd,
    env: workload.env,
    cols: workload.cols,
    rows: workload.rows,
    sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" },
    record: { path, input: workload.input ?? false },
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
