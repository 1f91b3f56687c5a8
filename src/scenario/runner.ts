/**
 * Running a scenario: start the program in its sandbox with a screen model, execute each step, wait
 * by polling the screen (never a fixed sleep), and write the artifact bundle (also when the run fails).
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
import { hostHome, isPresetName, loadPolicy, type Policy } from "../policy/mod.ts";
import { type Session, spawn } from "../session/mod.ts";
import { snapshotText } from "../terminal/mod.ts";
import type { LoadedScenario } from "./load.ts";
import type { Step } from "./schema.ts";
import { archiveWorkspace, createWorkspace } from "./_workspace.ts";
import { GOLDENS_DIR, readGolden, readRunFile, writeGolden } from "./_files.ts";

export { GOLDENS_DIR };
import { TIMED_OUT, within } from "../clock.ts";
import { RegexClock, type RegexRule } from "./regex_clock.ts";

/** How often waits look at the screen again. */
export const POLL_MS = 50;
/** Default step timeout. */
export const DEFAULT_STEP_TIMEOUT_MS = 10_000;

/**
 * Longest a scenario regex (`screen_matches`, a `run.normalize` redaction outside a wait) may run over
 * one text before the step fails; inside a wait, the wait's remaining time is the budget.
 */
export const REGEX_BUDGET_MS = 2_000;

/** The redactions' budget for the screen shown in a failed step's diagnostic. */
const DIAGNOSTIC_REGEX_BUDGET_MS = 250;

/** Options of {@link runScenario}. */
export interface RunScenarioOptions {
  /** The artifacts directory of this run. */
  readonly artifacts: string;
  /** Rewrite golden files instead of comparing with them. */
  readonly updateGoldens?: boolean;
  /** Called after each step (for progress lines). */
  readonly onStep?: (result: StepResult) => void;
  /**
   * The validated policy to enforce instead of loading `run.policy`, given the run's working directory
   * (a replay enforces the recorded effective policy, moved to its fresh workspace). Absent: `run.policy`
   * is loaded (default `strict`).
   */
  readonly policy?: (cwd: string) => Policy;
  /**
   * Set by a replay, whose scenario comes from an untrusted bundle. `goldens`: the golden texts by
   * `snapshot_equals` path, read from the bundle before the run (null: none recorded); no golden is read
   * from disk and none is written. An `expect: {file}` step reads only when the working directory is the
   * run's fresh workspace or lies inside one of the policy's (acknowledged) write grants: a recorded cwd
   * is a host path the bundle chose, and the step's failure message shows what it read.
   */
  readonly replay?: { readonly goldens: ReadonlyMap<string, string | null> };
}

/** A step failed: carries the diagnostic. */
class StepFailure extends Error {
  constructor(message: string, readonly expected: string) {
    super(message);
  }
}

function describe(step: Step): string {
  const [key, value] = Object.entries(step)[0]!;
  return `${key} ${typeof value === "string" ? value : JSON.stringify(value)}`;
}

/** Applies the scenario's redactions on the regex worker (see regex_clock.ts): the clock always wins. */
function normalizer(
  clock: RegexClock,
  rules: readonly RegexRule[],
): (text: string, budgetMs?: number) => Promise<string> {
  return async (text, budgetMs = REGEX_BUDGET_MS) => {
    const out = await clock.replace(rules, text, budgetMs);
    if (out === TIMED_OUT) {
      throw new StepFailure(
        `The run.normalize redactions did not finish within ${Math.round(budgetMs)} ms`,
        "redactions that finish",
      );
    }
    return out;
  };
}

/** Whether `source` matches `text` within `budgetMs` (over budget: `null`, so a wait polls on). */
async function matches(
  clock: RegexClock,
  source: string,
  flags: string,
  text: string,
  budgetMs: number,
): Promise<boolean | null> {
  const verdict = await clock.test(source, flags, text, budgetMs);
  return verdict === TIMED_OUT ? null : verdict;
}

/** What is left of `budgetMs` that began at `started` (at least 1 ms: a regex gets one try). */
function left(budgetMs: number, started: number): number {
  return Math.max(1, budgetMs - (performance.now() - started));
}

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
  let lastOutput = performance.now();
  let terminalError: SpecterError | null = null;

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
        lastOutput = performance.now();
        if (frame.binary && run.allow_binary !== true && terminalError === null) {
          terminalError = new SpecterError(
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

  /** The screen; with a budget, as far as the terminal model got within it (then `partial`). */
  const screen = (budgetMs?: number) => live.screen(budgetMs === undefined ? {} : { waitMs: budgetMs });
  /** The screen's normalized text; the budget covers the wait for the model and the redactions. */
  const screenText = async (budgetMs?: number) => {
    const started = performance.now();
    const text = snapshotText(await screen(budgetMs));
    return await normalize(text, budgetMs === undefined ? undefined : left(budgetMs, started));
  };
  /** Polls `test` (given the time left, its regex budget) until it holds or the deadline passes. */
  const waitUntil = async (test: (budgetMs: number) => Promise<boolean>, timeoutMs: number, what: string) => {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (terminalError) throw terminalError;
      let held = false;
      try {
        held = await test(Math.max(1, deadline - performance.now()));
      } catch (failure: unknown) {
        // A redaction that ran out of the wait's time: the wait times out, on time.
        if (!(failure instanceof StepFailure)) throw failure;
      }
      if (held) return;
      if (performance.now() >= deadline) {
        throw new StepFailure(`Timed out after ${timeoutMs} ms waiting for ${what}`, what);
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  };
  const exited = async (timeoutMs: number): Promise<ExitFrame> => {
    const result = await within(live.exited, timeoutMs);
    if (result === TIMED_OUT) {
      throw new StepFailure(`The program did not exit within ${timeoutMs} ms`, "exit");
    }
    return result;
  };

  let snapshotIndex = 0;
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
      await runStep(step);
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
      const actual = await screenText(DIAGNOSTIC_REGEX_BUDGET_MS).catch(() => "(no screen)");
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

  async function runStep(step: Step): Promise<void> {
    if ("type" in step) return live.write(step.type);
    if ("press" in step) {
      for (const key of Array.isArray(step.press) ? step.press : [step.press]) live.press(key);
      return;
    }
    if ("resize" in step) return live.resize(step.resize.cols, step.resize.rows);
    if ("signal" in step) return live.signal(step.signal);
    if ("terminate" in step) {
      await live.terminate(step.terminate.grace_ms);
      return;
    }
    if ("snapshot" in step) {
      const snap = await screen();
      const path = ArtifactBundle.snapshotPath(++snapshotIndex, step.snapshot);
      bundle.writeText(`${path}.txt`, await normalize(snapshotText(snap)));
      bundle.writeJson(`${path}.json`, snap);
      return;
    }
    if ("wait_for" in step) {
      const timeout = step.timeout_ms ?? DEFAULT_STEP_TIMEOUT_MS;
      const attempts = 1 + (step.retries ?? 0);
      for (let attempt = 1;; attempt++) {
        try {
          return await waitFor(step.wait_for, timeout);
        } catch (failure: unknown) {
          if (attempt >= attempts || !(failure instanceof StepFailure)) throw failure;
        }
      }
    }
    if ("expect" in step) return await expect(step.expect);
    throw new StepFailure(`Unknown step ${JSON.stringify(step)}`, "a known step");
  }

  async function waitFor(
    condition: Extract<Step, { wait_for: unknown }>["wait_for"],
    timeout: number,
  ): Promise<void> {
    if ("text" in condition) {
      return await waitUntil(
        async (budget) => (await screenText(budget)).includes(condition.text),
        timeout,
        `text "${condition.text}"`,
      );
    }
    if ("regex" in condition) {
      const source = condition.regex;
      return await waitUntil(
        async (budget) => {
          const started = performance.now();
          const text = await screenText(budget);
          return await matches(clock, source, "m", text, left(budget, started)) === true;
        },
        timeout,
        `regex /${condition.regex}/`,
      );
    }
    if ("prompt" in condition) {
      const source = condition.prompt;
      return await waitUntil(
        async (budget) => {
          const started = performance.now();
          const s = await screen(budget);
          return await matches(clock, source, "", s.lines[s.cursor.y] ?? "", left(budget, started)) === true;
        },
        timeout,
        `a prompt matching /${condition.prompt}/ on the cursor line`,
      );
    }
    if ("screen_stable" in condition) {
      let last = await screenText(timeout);
      let since = performance.now();
      return await waitUntil(
        async (budget) => {
          const now = await screenText(budget);
          if (now !== last) {
            last = now;
            since = performance.now();
          }
          return performance.now() - since >= condition.screen_stable;
        },
        timeout,
        `the screen to stay unchanged for ${condition.screen_stable} ms`,
      );
    }
    if ("idle" in condition) {
      return await waitUntil(
        () => Promise.resolve(performance.now() - lastOutput >= condition.idle),
        timeout,
        `${condition.idle} ms without output`,
      );
    }
    await exited(timeout);
  }

  async function expect(what: Extract<Step, { expect: unknown }>["expect"]): Promise<void> {
    if ("exit_code" in what) {
      const frame = await exited(DEFAULT_STEP_TIMEOUT_MS);
      if (frame.code !== what.exit_code) {
        throw new StepFailure(
          `Exit code was ${frame.code ?? `signal ${frame.signal}`}`,
          `exit code ${what.exit_code}`,
        );
      }
      return;
    }
    if ("file" in what) {
      const expected = "equals" in what
        ? JSON.stringify(what.equals)
        : `containing ${JSON.stringify(what.contains)}`;
      const readable = options.replay === undefined || cwd === workspace ||
        (enforced?.fs.write ?? []).some((root) => cwd === root || cwd.startsWith(`${root}/`));
      const read: { text: string } | { problem: string } = readable ? readRunFile(cwd, what.file) : {
        problem:
          "is not read in a replay: the working directory is neither a fresh workspace nor inside a write grant",
      };
      if ("problem" in read) {
        throw new StepFailure(`File "${what.file}" ${read.problem}`, `file "${what.file}" ${expected}`);
      }
      if ("equals" in what ? read.text !== what.equals : !read.text.includes(what.contains)) {
        throw new StepFailure(
          `File "${what.file}" is ${JSON.stringify(read.text)}`,
          `file "${what.file}" ${expected}`,
        );
      }
      return;
    }
    const snap = await screen();
    const text = await normalize(snapshotText(snap));
    if ("screen_contains" in what) {
      if (!text.includes(what.screen_contains)) {
        throw new StepFailure(
          `The screen does not contain "${what.screen_contains}"`,
          `screen containing "${what.screen_contains}"`,
        );
      }
    } else if ("screen_matches" in what) {
      const verdict = await matches(clock, what.screen_matches, "m", text, REGEX_BUDGET_MS);
      if (verdict === null) {
        throw new StepFailure(
          `The regex /${what.screen_matches}/ did not finish within ${REGEX_BUDGET_MS} ms`,
          `screen matching /${what.screen_matches}/`,
        );
      }
      if (!verdict) {
        throw new StepFailure(
          `The screen does not match /${what.screen_matches}/`,
          `screen matching /${what.screen_matches}/`,
        );
      }
    } else if ("line" in what) {
      const actual = await normalize(snap.lines[what.line] ?? "");
      if (actual !== what.equals) {
        throw new StepFailure(`Line ${what.line} is "${actual}"`, `line ${what.line} = "${what.equals}"`);
      }
    } else if ("cursor" in what) {
      const { x, y } = snap.cursor;
      if (x !== what.cursor.x || y !== what.cursor.y) {
        throw new StepFailure(`The cursor is at ${x},${y}`, `cursor at ${what.cursor.x},${what.cursor.y}`);
      }
    } else if ("alt_screen" in what) {
      if (snap.alt_screen !== what.alt_screen) {
        throw new StepFailure(`alt_screen is ${snap.alt_screen}`, `alt_screen ${what.alt_screen}`);
      }
    } else if ("snapshot_equals" in what) {
      const golden = what.snapshot_equals;
      if (options.updateGoldens && options.replay === undefined) {
        const problem = writeGolden(loaded.dir, golden, text);
        if (problem !== null) {
          throw new StepFailure(`Golden "${golden}" ${problem}`, "a golden that can be written");
        }
        return;
      }
      const read = options.replay !== undefined
        ? { text: options.replay.goldens.get(golden) ?? null }
        : readGolden(loaded.dir, golden);
      if ("problem" in read) {
        throw new StepFailure(`Golden "${golden}" ${read.problem}`, "a golden that is a regular UTF-8 file");
      }
      const expected = read.text;
      if (expected === null) {
        throw new StepFailure(`Golden "${golden}" does not exist (run with --update-goldens)`, text);
      }
      // The bundle keeps what was compared, so a replay compares with the same text (never a host path).
      // (Its folders are made beneath the bundle's descriptor, never through a link.)
      if (options.replay === undefined) bundle.writeText(`${GOLDENS_DIR}/${golden}`, expected);
      if (expected !== text) throw new StepFailure(`The screen differs from golden "${golden}"`, expected);
    }
  }

  // The program must not outlive its scenario.
  if (!live.finished) await live.terminate(500);
  await pump;
  if (terminalError !== null) {
    error = { code: (terminalError as SpecterError).code, message: (terminalError as SpecterError).message };
    return finish("Error");
  }
  return finish(failed ? "Failed" : "Passed");
}

function resolvePath(dir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(dir, path);
}
