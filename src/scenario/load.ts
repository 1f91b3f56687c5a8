/**
 * Loading scenario files (YAML or JSON) with the source line of every step, for diagnostics that point
 * at the step that failed.
 *
 * @module
 */
import { dirname, isAbsolute, resolve } from "node:path";
import { LineCounter, parseDocument, type YAMLSeq } from "yaml";
import { SpecterError } from "../errors.ts";
import { type Scenario, ScenarioSchema } from "./schema.ts";

/** A validated scenario, where it came from, and each step's 1-based source line. */
export interface LoadedScenario {
  /** The scenario. */
  readonly scenario: Scenario;
  /** Absolute path of the file (`"<inline>"` for text). */
  readonly path: string;
  /** Directory relative paths in the scenario resolve against. */
  readonly dir: string;
  /** Source line of `steps[i]`. */
  readonly stepLines: readonly number[];
}

/** Parses and validates scenario text (YAML is a superset of JSON). Throws `E_SCENARIO_PARSE`/`_SCHEMA`. */
export function parseScenario(text: string, path = "<inline>"): LoadedScenario {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    throw new SpecterError(
      "E_SCENARIO_PARSE",
      `Scenario "${path}" is not valid YAML: ${first.message.split("\n")[0]}`,
      {
        details: { path, line: first.linePos?.[0]?.line ?? null },
      },
    );
  }
  const parsed = ScenarioSchema.safeParse(doc.toJS());
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join(".") || "(scenario)";
    throw new SpecterError("E_SCENARIO_SCHEMA", `Scenario "${path}": field "${field}": ${issue.message}`, {
      details: { path, field },
    });
  }
  const steps = doc.get("steps", true) as YAMLSeq | undefined;
  const stepLines = (steps?.items ?? []).map((item) => {
    const offset = (item as { range?: [number, number, number] }).range?.[0];
    return offset === undefined ? 0 : counter.linePos(offset).line;
  });
  const dir = path === "<inline>" ? Deno.cwd() : dirname(path);
  return { scenario: parsed.data, path, dir, stepLines };
}

/** Reads and parses a scenario file. */
export async function loadScenario(file: string): Promise<LoadedScenario> {
  const path = isAbsolute(file) ? file : resolve(Deno.cwd(), file);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error: unknown) {
    throw new SpecterError(
      "E_SCENARIO_PARSE",
      `Cannot read scenario "${path}": ${(error as Error).message}`,
      {
        cause: error,
        details: { path },
      },
    );
  }
  return parseScenario(text, path);
}
