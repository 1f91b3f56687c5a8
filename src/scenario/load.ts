/**
 * Loading scenario files (YAML or JSON) with the source line of every step, for diagnostics that point
 * at the step that failed.
 *
 * @module
 */
import { dirname, isAbsolute, resolve } from "node:path";
import { LineCounter, parseDocument, type YAMLSeq } from "yaml";
import { SpecterError } from "../errors.ts";
import { readRegularFile } from "../fsafe/mod.ts";
import { type Scenario, ScenarioSchema } from "./schema.ts";
import { MAX_SCENARIO_DEPTH, type ShapeProblem, yamlShapeProblem } from "./_yaml_shape.ts";

export { MAX_SCENARIO_DEPTH };

/**
 * Largest scenario file read, in bytes. Real scenarios are a few KiB (workspace files included); a file
 * over the cap is `E_FILE_TOO_LARGE` before any of it is parsed.
 */
export const MAX_SCENARIO_FILE_BYTES = 4 * 1024 * 1024;

/**
 * Most alias dereferences a scenario may make (YAML `*name`). Each alias can stand for a whole tree, so
 * a few lines of nested aliases ("billion laughs") expand to billions of nodes; real scenarios use a
 * handful of aliases, if any.
 */
export const MAX_SCENARIO_ALIASES = 100;

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
  let doc;
  let value: unknown;
  let shape: ShapeProblem | null = null;
  try {
    // logLevel "error": the library's warnings (e.g. a key that is a collection) would print text from
    // the untrusted file to Specter's stderr, escape sequences included.
    // uniqueKeys false: the library's check is quadratic in a map's keys; the shape check does it.
    doc = parseDocument(text, { lineCounter: counter, uniqueKeys: false, logLevel: "error" });
    // Only a document without errors and of a scenario's shape is expanded: toJS() is where aliases are
    // dereferenced and collection keys printed (super-linear in their nesting).
    if (doc.errors.length === 0) shape = yamlShapeProblem(doc);
    if (doc.errors.length === 0 && shape === null) value = doc.toJS({ maxAliasCount: MAX_SCENARIO_ALIASES });
  } catch (error: unknown) {
    throw tooComplex(path, error);
  }
  if (shape !== null) {
    const line = shape.offset === null ? null : counter.linePos(shape.offset).line;
    const message = shape.kind === "syntax"
      ? `Scenario "${path}" is not valid YAML: ${shape.message}`
      : `Scenario "${path}" is not accepted: ${shape.message}`;
    throw new SpecterError("E_SCENARIO_PARSE", message, { details: { path, line, reason: shape.kind } });
  }
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
  const parsed = ScenarioSchema.safeParse(value);
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

/** The YAML library gave up on the document (alias bomb, nesting deeper than the stack): typed, not E_IO. */
function tooComplex(path: string, error: unknown): SpecterError {
  const message = error instanceof Error ? error.message : String(error);
  const reason = error instanceof RangeError ? "nesting" : /alias/i.test(message) ? "aliases" : "other";
  const why = reason === "nesting"
    ? "it is nested too deeply"
    : reason === "aliases"
    ? `it dereferences more than ${MAX_SCENARIO_ALIASES} aliases`
    : message.split("\n")[0];
  return new SpecterError("E_SCENARIO_PARSE", `Scenario "${path}" is not accepted: ${why}`, {
    cause: error,
    details: { path, reason },
  });
}

/**
 * Reads and parses a scenario file the user named (a symlink there is the user's choice). Read through
 * one descriptor opened non-blocking: a FIFO, device or directory is `E_FILE_TYPE` at once, a file over
 * {@link MAX_SCENARIO_FILE_BYTES} `E_FILE_TOO_LARGE`, a missing one `E_PATH_NOT_FOUND`; invalid UTF-8 is
 * `E_SCENARIO_PARSE`.
 */
export function loadScenario(file: string): Promise<LoadedScenario> {
  return new Promise((done) => {
    const path = isAbsolute(file) ? file : resolve(Deno.cwd(), file);
    const bytes = readRegularFile(path, { maxBytes: MAX_SCENARIO_FILE_BYTES, what: "scenario" });
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch (error: unknown) {
      throw new SpecterError("E_SCENARIO_PARSE", `Scenario "${path}" is not valid UTF-8`, {
        cause: error,
        details: { path },
      });
    }
    done(parseScenario(text, path));
  });
}
