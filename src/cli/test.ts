/**
 * `specter test SCENARIO… [--artifacts DIR] [--update-goldens] [--json]`: runs scenario files and
 * reports each step. Exits 0 when every scenario passed, 1 when one failed, and with the error's code
 * when one could not run.
 *
 * @module
 */
import { join } from "node:path";
import { defaultArtifactsDir } from "../artifacts/mod.ts";
import { toSpecterError, UsageError } from "../errors.ts";
import type { RunResult, StepResult } from "../protocol/mod.ts";
import { loadScenario, runScenario } from "../scenario/mod.ts";
import { exitCodeForError } from "./exit_codes.ts";
import { parseFlags } from "./flags.ts";
import { type CommandDoc, commandOptions, type FlagTable, HELP_FLAG } from "./flag_table.ts";
import { type Paint, paint } from "./colour.ts";
import { WaitNotice } from "./wait_notice.ts";

const TEST_FLAGS = {
  artifacts: {
    type: "string",
    value: "DIR",
    description: "Where the artifacts go: DIR itself for one scenario, DIR/N-NAME for the Nth of several " +
      "(default: a new $XDG_STATE_HOME/specter/runs/NAME-ID/ per scenario)",
  },
  "update-goldens": {
    type: "boolean",
    description: "Write each snapshot_equals golden from the screen instead of comparing with it",
  },
  json: {
    type: "boolean",
    description: "Print one JSON document at the end, nothing before it: the run result " +
      "(spec/schema/run-result.schema.json) of a single scenario, or an array of them for several; a " +
      'scenario that could not be loaded or run is {scenario, status: "Error", error}',
  },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** `specter test`'s help. */
export const TEST_DOC: CommandDoc = {
  name: "test",
  usage: ["specter test SCENARIO… [--artifacts DIR] [--update-goldens] [--json]"],
  about:
    `Runs each scenario file (YAML or JSON, spec/scenario.md) in turn: its program starts in the sandbox under
the scenario's policy, the steps drive it and the expectations check its screen. Each step is printed as it
ends (✓ passed; ✗ failed, with what was expected and the actual screen; - skipped), then the verdict
(PASSED, FAILED or ERROR) and the artifacts directory: a bundle with run.json, the resolved scenario, the
effective policy, the frames, a recording, snapshots, the audit log and checksums.json, which
specter replay DIR re-runs.
Exits 0 when every scenario passed, 1 when one failed, and otherwise the highest exit status of a scenario
that could not be loaded or run (2 for an invalid scenario file, 125 when Specter itself failed).`,
  groups: [{ title: "Test flags", flags: TEST_FLAGS }],
};

/** What `--json` reports for a scenario that could not be loaded or run at all. */
interface ScenarioError {
  readonly scenario: string;
  readonly status: "Error";
  readonly error: { code: string; message: string; details: unknown };
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60) || "scenario";
}

function stepLine(step: StepResult, colour: Paint): string {
  const mark = step.status === "passed" ? colour.ok("✓") : step.status === "failed" ? colour.bad("✗") : "-";
  const head = `  ${mark} ${String(step.index + 1).padStart(2)} ${step.action}`;
  const line = `${head.padEnd(60)} ${String(step.duration_ms).padStart(6)} ms  (line ${step.line})`;
  if (step.status !== "failed" || !step.diagnostic) return line;
  const screen = step.diagnostic.actual_screen.split("\n").map((l) => `        | ${l}`).join("\n");
  return `${line}\n      ${step.message}\n      expected: ${step.diagnostic.expected}\n      actual screen:\n${screen}`;
}

/**
 * Runs `specter test ARGS`; resolves with the process exit code. With `--json`, stdout holds exactly one
 * JSON document, printed at the end: the RunResult (or error entry) of a single scenario, or an array of
 * them for several.
 */
export async function testCommand(
  args: readonly string[],
  out: (text: string) => void,
  warn: (text: string) => void = () => {},
): Promise<number> {
  const { values, positionals } = parseFlags(args, commandOptions(TEST_DOC));
  if (positionals.length === 0) throw new UsageError("No scenario given (specter test SCENARIO…)");
  const json = values.json === true;
  const colour = paint(json ? false : undefined);
  const results: (RunResult | ScenarioError)[] = [];
  let code = 0;
  const failed = (file: string, error: unknown) => {
    const failure = toSpecterError(error);
    if (json) results.push({ scenario: file, status: "Error", error: failure.toJSON() });
    else out(`${colour.bad("✗")} ${file}: ${failure.code}: ${failure.message}`);
    code = Math.max(code, exitCodeForError(failure.code));
  };
  for (const [i, file] of positionals.entries()) {
    let loaded;
    try {
      loaded = await loadScenario(file);
    } catch (error: unknown) {
      failed(file, error);
      continue;
    }
    const name = loaded.scenario.name;
    const dir = typeof values.artifacts === "string"
      ? (positionals.length === 1 ? values.artifacts : join(values.artifacts, `${i + 1}-${slug(name)}`))
      : defaultArtifactsDir(`${slug(name)}-${crypto.randomUUID().slice(0, 8)}`);
    if (!json) out(`● ${name} (${file})`);
    let result: RunResult;
    // Also under --json (stdout holds one document; the notice goes to stderr).
    const notice = new WaitNotice(loaded.scenario.steps, loaded.stepLines, warn);
    try {
      result = await runScenario(loaded, {
        artifacts: dir,
        updateGoldens: values["update-goldens"] === true,
        onStep: (step: StepResult) => {
          notice.stepEnded(step.index);
          if (!json) out(stepLine(step, colour));
        },
      });
    } catch (error: unknown) {
      // The artifacts directory or its audit log could not even be created (E_ARTIFACTS, E_AUDIT).
      failed(file, error);
      continue;
    } finally {
      notice.stop();
    }
    results.push(result);
    if (!json) {
      const verdict = result.status === "Passed"
        ? colour.ok("PASSED")
        : colour.bad(result.status === "Failed" ? "FAILED" : "ERROR");
      const error = result.error ? `  ${result.error.code}: ${result.error.message}` : "";
      out(
        `${verdict}  ${
          result.steps.filter((s) => s.status === "passed").length
        }/${result.steps.length} steps, ` +
          `${result.duration_ms} ms${error}\n  artifacts: ${result.artifacts}\n`,
      );
    }
    if (result.status === "Failed") code = Math.max(code, 1);
    if (result.status === "Error") {
      code = Math.max(code, exitCodeForError(result.error?.code as never ?? "E_IO"));
    }
  }
  if (json) out(JSON.stringify(positionals.length === 1 ? results[0] : results));
  return code;
}
