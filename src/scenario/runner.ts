/**
 * Running a scenario: start the program in its sandbox with a screen model, execute each step, wait
 * by polling the screen (never a fixed sleep), and write the artifact bundle (also when the run fails).
 *
 * What the steps share is in `_step_run.ts`; a step runs in `_run_step.ts`, an `expect` step is checked in
 * `_expect_step.ts`.
 *
 * @module
 */
import { isAbsolute, join, resolve } from "node:path";
import { ArtifactBundle, AuditLog } from "../artifacts/mod.ts";
import { SpecterError, toSpecterError } from "../errors.ts";
import {
  encodeResolvedScenario,
  encodeRunResult,
  type ExitFrame,
  type Frame,
  type RunResult,
  type StepResult,
} from "../protocol/mod.ts";
import { hostHome, isPresetName, loadPolicy } from "../policy/mod.ts";
import { type Session, spawn } from "../session/mod.ts";
import type { LoadedScenario } from "./load.ts";
import { archiveWorkspace, createWorkspace } from "./_workspace.ts";
import { GOLDENS_DIR } from "./_files.ts";
import { RegexClock } from "./regex_clock.ts";
import type { RunScenarioOptions } from "./run_options.ts";
import { describe, normalizer, type RunWatch, StepFailure, stepRun } from "./_step_run.ts";
import { runStep } from "./_run_step.ts";

export { GOLDENS_DIR };
export type { RunScenarioOptions };
export { DEFAULT_STEP_TIMEOUT_MS, POLL_MS, REGEX_BUDGET_MS } from "./_step_run.ts";

/** The redactions' budget for the screen shown in a failed step's diagnostic. */
const DIAGNOSTIC_REGEX_BUDGET_MS = 250;

/** Runs one loaded scenario to completion and returns its result; never throws for a failing program. */
export async function runScenario(loaded: LoadedScenario, options: RunScenarioOptions): Promise<RunResult> {
  const started = performance.now();
  const { scenario } = loaded;
  const run = scenario.run;
  const bundle = new ArtifactBundle(options.artifacts);
  const runId = crypto.randomUUID();
  const audit = AuditLog.open(options.artifacts, runId);
  const clock = new RegexClock();
  const normalize = normalizer(clock, run.normalize ?? []);
  let cwd = run.cwd === undefined ? loaded.dir : resolvePath(loaded.dir, run.cwd);
  let setupError: SpecterError | null = null;
  let workspace: string | null = null;
  if (run.workspace !== undefined) {
    try {
      cwd = workspace = createWorkspace(run.workspace.files ?? {});
    } catch (failure: unknown) {
      setupError = toSpecterError(failure);
    }
  }
  // A workspace is created afresh by every run (a replay gets its own), so it is not pinned as the cwd;
  // `workspace_dir` says where this run's was, for the paths in policy.effective.json.
  bundle.writeText(
    "scenario.resolved.json",
    encodeResolvedScenario({
      ...scenario,
      run: run.workspace === undefined ? { ...run, cwd } : run,
      source: loaded.path,
      ...(workspace === null ? {} : { workspace_dir: workspace }),
    }),
  );
  audit.record("start", { command: "test", scenario: loaded.path, argv: run.argv, cwd });

  const steps: StepResult[] = [];
  const frames: Frame[] = [];
  let session: Session | null = null;
  let error: { code: string; message: string } | null = null;
  let exit: ExitFrame | null = null;
  // The frame pump tells the steps when output last came, and output that fails the run.
  const watch: RunWatch = { lastOutput: performance.now(), terminalError: null };

  const finish = (status: RunResult["status"]): RunResult => {
    let archiveError: string | null = null;
    if (workspace !== null) {
      try {
        archiveWorkspace(workspace, (path, bytes) => bundle.writeFile(path, bytes));
      } catch (failure: unknown) {
        archiveError = (failure as Error).message; // Recorded in the audit log; the result is still written.
      }
    }
    const result: RunResult = {
      version: 1,
      name: scenario.name,
      scenario: loaded.path,
      status,
      error,
      session_id: session?.info.id ?? null,
      steps,
      exit: exit && { code: exit.code, signal: exit.signal, timed_out: exit.timed_out },
      duration_ms: Math.round(performance.now() - started),
      artifacts: options.artifacts,
      ...(exit?.protected_created === undefined ? {} : { protected_created: exit.protected_created }),
    };
    bundle.writeText("run.json", encodeRunResult(result));
    audit.record(status === "Error" ? "error" : "end", {
      status,
      error,
      exit: result.exit,
      ...(result.protected_created === undefined ? {} : { protected_created: result.protected_created }),
      ...(archiveError === null ? {} : { workspace_archive_error: archiveError }),
    });
    audit.close();
    clock.close();
    bundle.finish();
    // A full disk (or a vanished directory) lost part of the record: the result says so, and is still
    // returned for stdout; a pass with an incomplete bundle is not a pass.
    const lost = bundle.failure ?? audit.failure;
    if (lost !== null && status !== "Error") {
      return { ...result, status: "Error", error: { code: lost.code, message: lost.message } };
    }
    return result;
  };

  try {
    if (setupError !== null) throw setupError;
    // A preset by name, otherwise a policy file relative to the scenario.
    const policyFile = run.policy === undefined
      ? "strict"
      : isPresetName(run.policy)
      ? run.policy
      : resolvePath(loaded.dir, run.policy);
    if (options.replay !== undefined && options.policy === undefined) {
      // Never reached through replayBundle; a replay must not fall back to a policy the bundle names.
      throw new SpecterError("E_REPLAY_INCOMPLETE", "A replay needs the recorded policy", {});
    }
    const policy = options.policy?.(cwd) ?? loadPolicy(policyFile, {
      workspace: cwd,
      home: hostHome(),
      acks: { unsafeWrite: run.ack_unsafe_write === true, network: false },
    });
    session = spawn({
      argv: run.argv,
      cwd,
      ...(run.env ? { env: run.env } : {}),
      ...(run.cols ? { cols: run.cols } : {}),
      ...(run.rows ? { rows: run.rows } : {}),
      sandbox: { mode: "auto", policy },
      ...(run.timeout_ms ? { timeoutMs: run.timeout_ms } : {}),
      ...(run.max_output_bytes ? { maxOutputBytes: run.max_output_bytes } : {}),
      limits: {
        ...(run.max_memory_bytes ? { memoryBytes: run.max_memory_bytes } : {}),
        ...(run.max_procs ? { processes: run.max_procs } : {}),
      },
      record: { path: join(options.artifacts, "session.cast"), input: true },
      screen: true,
      idleMs: 0,
      id: runId,
      artifacts: options.artifacts,
    });
  } catch (failure: unknown) {
    const e = toSpecterError(failure);
    error = { code: e.code, message: e.message };
    return finish("Error");
  }
  const live = session;
  const enforced = live.launch.policy;
  bundle.writeJson("policy.effective.json", enforced);
  audit.record("launch", {
    session_id: live.info.id,
    backend: live.launch.backend,
    policy: live.launch.policy,
  });

  // Every frame goes to events.ndjson as it arrives; invalid UTF-8 fails the run unless allowed.
  const pump = (async () => {
    for await (const frame of live.frames()) {
      frames.push(frame);
      if (frames.length > 200) frames.shift();
      bundle.event(frame);
      if (frame.type === "stdout") {
        watch.lastOutput = performance.now();
        if (frame.binary && run.allow_binary !== true && watch.terminalError === null) {
          watch.terminalError = new SpecterError(
            "E_TERMINAL_PARSE",
            "The program wrote output that is not valid UTF-8",
            {
              details: { seq: frame.seq },
            },
          );
          void live.terminate(500);
        }
      }
      if (frame.type === "exit") exit = frame;
    }
  })();

  // What the steps share: the live session, the screen, waits with deadlines.
  const context = stepRun({
    live,
    clock,
    bundle,
    loaded,
    options,
    cwd,
    workspace,
    enforced,
    watch,
    normalize,
  });

  let failed = false;
  for (const [index, step] of scenario.steps.entries()) {
    const line = loaded.stepLines[index] ?? 0;
    const action = describe(step);
    if (failed) {
      steps.push({ index, line, action, status: "skipped", duration_ms: 0 });
      continue;
    }
    const t0 = performance.now();
    try {
      await runStep(context, step);
      const result: StepResult = {
        index,
        line,
        action,
        status: "passed",
        duration_ms: Math.round(performance.now() - t0),
      };
      steps.push(result);
      options.onStep?.(result);
    } catch (failure: unknown) {
      if (failure instanceof SpecterError && failure.code === "E_TERMINAL_PARSE") {
        error = { code: failure.code, message: failure.message };
      }
      failed = true;
      // A short budget: a redaction that already blew a step's time must not delay its report.
      const actual = await context.screenText(DIAGNOSTIC_REGEX_BUDGET_MS).catch(() => "(no screen)");
      const result: StepResult = {
        index,
        line,
        action,
        status: "failed",
        duration_ms: Math.round(performance.now() - t0),
        message: (failure as Error).message,
        diagnostic: {
          expected: failure instanceof StepFailure ? failure.expected : action,
          actual_screen: actual,
          last_frames: frames.slice(-10),
        },
      };
      steps.push(result);
      options.onStep?.(result);
    }
  }

  // The program must not outlive its scenario.
  if (!live.finished) await live.terminate(500);
  await pump;
  const terminalError = watch.terminalError;
  if (terminalError !== null) {
    error = { code: terminalError.code, message: terminalError.message };
    return finish("Error");
  }
  return finish(failed ? "Failed" : "Passed");
}

function resolvePath(dir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(dir, path);
}
