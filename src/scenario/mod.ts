/**
 * Scenarios: a run configuration and steps that drive a program and check what it shows.
 *
 * @module
 */
export { type LoadedScenario, loadScenario, parseScenario } from "./load.ts";
export {
  type RunConfig,
  RunConfigSchema,
  type Scenario,
  SCENARIO_VERSION,
  ScenarioSchema,
  type Step,
  StepSchema,
} from "./schema.ts";
export { WORKSPACE_DIR } from "./_workspace.ts";
export { RegexClock, TIMED_OUT } from "./regex_clock.ts";
export { GOLDENS_DIR, runScenario, type RunScenarioOptions } from "./runner.ts";
