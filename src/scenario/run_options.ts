/**
 * `RunScenarioOptions`: what a caller of `runScenario` decides beyond the scenario itself.
 *
 * @module
 */
import type { StepResult } from "../protocol/mod.ts";
import type { Policy } from "../policy/mod.ts";

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
