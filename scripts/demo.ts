/**
 * The quick-start demo, in the default sandbox backend (bubblewrap on Linux):
 *
 * 1. two scenarios (`fixtures/scenarios/menu.yaml`, `fullscreen.yaml`) drive fixture TUIs, wait on the
 *    screen model, assert on what is shown and write artifact bundles with snapshots; each bundle is
 *    then replayed (checksums verified, a fresh run compared after normalization);
 * 2. an interactive bash (`basic` preset: system programs may run; no host writes, no network) with a
 *    python3 REPL inside it, job control and a resize.
 *
 * It prints a readable summary and where every artifact is.
 *
 *   deno task demo [--out DIR]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { join, resolve } from "node:path";
import { type Frame, plainText, spawn, Transcript } from "../src/mod.ts";
import { loadPolicy } from "../src/policy/mod.ts";
import { loadScenario } from "../src/scenario/load.ts";
import { replayBundle } from "../src/replay/mod.ts";
import { runScenario } from "../src/scenario/runner.ts";

const { values } = parseArgs({ options: { out: { type: "string" } } });
const runId = new Date().toISOString().replace(/[:.]/g, "-");
const out = resolve(values.out ?? join("demo-out", runId));
await Deno.mkdir(out, { recursive: true });

const encoder = new TextEncoder();
const events = await Deno.open(join(out, "events.ndjson"), { write: true, create: true, truncate: true });
const print = (line: string) => Deno.stdout.writeSync(encoder.encode(line + "\n"));

print("Specter demo, part 1: scenarios drive fixture TUIs and check what their screens show\n");
let scenariosPassed = true;
for (const name of ["menu", "fullscreen"]) {
  const loaded = await loadScenario(new URL(`../fixtures/scenarios/${name}.yaml`, import.meta.url).pathname);
  print(`  ● ${loaded.scenario.name}`);
  const result = await runScenario(loaded, {
    artifacts: join(out, `scenario-${name}`),
    onStep: (step) =>
      print(
        `    ${step.status === "passed" ? "✓" : "✗"} ${step.action.padEnd(44)} ${
          String(step.duration_ms).padStart(5)
        } ms`,
      ),
  });
  scenariosPassed &&= result.status === "Passed";
  print(`    ${result.status} in ${result.duration_ms} ms, snapshots in ${result.artifacts}/snapshots/`);
  // Replay the bundle just written: checksums verified first, then a fresh run compared after normalization.
  // Checksums and events are verified by default; the fixture policies grant no writes to acknowledge.
  const { report } = await replayBundle(result.artifacts);
  scenariosPassed &&= report.status === "Match";
  print(
    `    replay: ${report.status} (checksums verified; ${report.compared.snapshots} snapshots, transcript ` +
      `and result compared)\n`,
  );
}

const policy = loadPolicy("basic", {
  workspace: Deno.cwd(),
  home: Deno.env.get("HOME") ?? "/",
  acks: { unsafeWrite: false, network: false },
});
print("Specter demo, part 2: driving an interactive bash on a real pseudo-terminal, inside the sandbox\n");

const session = spawn({
  argv: ["bash", "--norc", "--noprofile", "-i"],
  env: { PS1: "demo$ " },
  promptRegex: ["demo\\$ $"],
  cols: 80,
  rows: 24,
  title: "specter demo",
  parentAgent: "demo",
  sandbox: { mode: "auto", policy },
  timeoutMs: 60_000,
  record: { path: join(out, "session.cast"), input: true },
});
const t = new Transcript(
  session,
  (frame: Frame) => events.writeSync(encoder.encode(JSON.stringify(frame) + "\n")),
);

const prompt = async (since: number) => {
  await t.until((f) => f.type === "prompt" && t.text.length > since, 10_000, "the shell prompt");
};
async function step(title: string, run: () => Promise<string>): Promise<void> {
  const started = performance.now();
  const detail = await run();
  const ms = (performance.now() - started).toFixed(0).padStart(5);
  print(`  ✓ ${title.padEnd(46)} ${ms} ms  ${detail}`);
}
/** The command's output: plain text between the echoed command line and the next prompt. */
const commandOutput = (raw: string) => plainText(raw).split("\n").slice(1, -1).join(" ").trim();

let exitCode: number | null = null;
try {
  await step("start bash, wait for its prompt", async () => {
    await prompt(-1);
    return `pid ${session.pid}`;
  });
  await step("run a command and read its output", async () => {
    const mark = t.text.length;
    session.write('echo "hello from $(tty)"\r');
    await prompt(mark);
    return commandOutput(t.textSince(mark));
  });
  await step("python3 REPL inside the shell", async () => {
    let mark = t.text.length;
    session.write("PYTHON_BASIC_REPL=1 python3 -q\r");
    await t.output(">>> ", 10_000, mark);
    mark = t.text.length;
    session.write("sum(n * n for n in range(10))\r");
    await t.output(/\r\n285\r\n>>> $/, 10_000, mark);
    mark = t.text.length;
    session.press("ctrl-d");
    await prompt(mark);
    return "sum of squares below 10 = 285";
  });
  await step("job control: ctrl-z, fg, ctrl-c", async () => {
    let mark = t.text.length;
    session.write("sleep 30\r");
    await t.output("sleep 30\r\n", 5_000, mark);
    await new Promise((r) => setTimeout(r, 300));
    mark = t.text.length;
    session.press("ctrl-z");
    await t.output(/Stopped/, 5_000, mark);
    await prompt(mark);
    mark = t.text.length;
    session.write("fg\r");
    await t.output("sleep 30\r\n", 5_000, mark);
    await new Promise((r) => setTimeout(r, 200));
    mark = t.text.length;
    session.press("ctrl-c");
    await prompt(mark);
    return "stopped, resumed, interrupted";
  });
  await step("resize the terminal (the child sees SIGWINCH)", async () => {
    session.resize(100, 30);
    const mark = t.text.length;
    session.write("stty size\r");
    await prompt(mark);
    return `stty size → ${commandOutput(t.textSince(mark))}`;
  });
  await step("exit the shell", async () => {
    session.write("exit 0\r");
    const exit = await t.exit();
    exitCode = exit.code;
    return `exit code ${exit.code}`;
  });
} catch (error: unknown) {
  print(`  ✗ ${(error as Error).message}`);
  await session.terminate(500);
  await t.exit().catch(() => undefined);
} finally {
  events.close();
}

const start = t.frames[0];
const counts = new Map<string, number>();
for (const frame of t.frames) counts.set(frame.type, (counts.get(frame.type) ?? 0) + 1);
const summary = {
  run_id: runId,
  session: session.info,
  exit_code: exitCode,
  frames: Object.fromEntries(counts),
  output_bytes: session.outputBytes,
  sandbox: start?.type === "start" ? `${start.sandbox} (${start.policy})` : null,
  artifacts: { events: "events.ndjson", recording: "session.cast", summary: "summary.json" },
};
await Deno.writeTextFile(join(out, "summary.json"), JSON.stringify(summary, null, 2) + "\n");

print(`\n  sandbox: ${summary.sandbox} (exec: system programs; writes: private /tmp only; no network)`);
print(`  frames: ${[...counts].map(([type, n]) => `${type} ${n}`).join(", ")}`);
print(`  artifacts: ${out}/`);
print("    events.ndjson   every frame, one JSON object per line");
print("    session.cast    asciicast v2 recording (asciinema play)");
print("    summary.json    this summary");
Deno.exit(exitCode === 0 && scenariosPassed ? 0 : 1);
