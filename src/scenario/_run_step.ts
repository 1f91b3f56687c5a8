/**
 * Running one step of a scenario: typing, keys, resizes, signals, snapshots and waits (`expect` steps are
 * in `_expect_step.ts`). A step that does not hold throws a {@link StepFailure}.
 *
 * @module
 */
import { ArtifactBundle } from "../artifacts/mod.ts";
import { snapshotText } from "../terminal/mod.ts";
import type { Step } from "./schema.ts";
import { DEFAULT_STEP_TIMEOUT_MS, left, matches, StepFailure, type StepRun } from "./_step_run.ts";
import { expect } from "./_expect_step.ts";

/** Runs `step`; throws when it fails. */
export async function runStep(run: StepRun, step: Step): Promise<void> {
  const { live, bundle, normalize } = run;
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
    const snap = await run.screen();
    const path = ArtifactBundle.snapshotPath(run.nextSnapshot(), step.snapshot);
    bundle.writeText(`${path}.txt`, await normalize(snapshotText(snap)));
    bundle.writeJson(`${path}.json`, snap);
    return;
  }
  if ("wait_for" in step) {
    const timeout = step.timeout_ms ?? DEFAULT_STEP_TIMEOUT_MS;
    const attempts = 1 + (step.retries ?? 0);
    for (let attempt = 1;; attempt++) {
      try {
        return await waitFor(run, step.wait_for, timeout);
      } catch (failure: unknown) {
        if (attempt >= attempts || !(failure instanceof StepFailure)) throw failure;
      }
    }
  }
  if ("expect" in step) return await expect(run, step.expect);
  throw new StepFailure(`Unknown step ${JSON.stringify(step)}`, "a known step");
}

async function waitFor(
  run: StepRun,
  condition: Extract<Step, { wait_for: unknown }>["wait_for"],
  timeout: number,
): Promise<void> {
  const { clock, screen, screenText, waitUntil } = run;
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
      () => Promise.resolve(performance.now() - run.watch.lastOutput >= condition.idle),
      timeout,
      `${condition.idle} ms without output`,
    );
  }
  await run.exited(timeout);
}
