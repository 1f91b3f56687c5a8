/**
 * The layering of `src/`, enforced: every relative import (static, `export … from`, dynamic `import()`
 * and worker URLs) of every non-test module is read, and
 *
 * - no module imports from a folder above its own in {@link LAYERS} (imports run down the layers);
 * - a module in another folder is reached only through that folder's `mod.ts` (its only door), and a
 *   `_private` module never from outside its folder;
 * - there is no import cycle between modules;
 * - no module is over {@link MAX_LINES} lines (one concept per file: a larger one is split into rooms).
 *
 * A failure lists every offending import with the rule it breaks, and every file over the limit with its
 * line count.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";

/**
 * The declared layers, lowest first. A folder may import from folders earlier in this list, never from
 * a later one. `src/errors.ts`, `src/version.ts`, `src/clock.ts` and `src/suggest.ts` are the base; `src/mod.ts` (the public API) is last.
 */
export const LAYERS = [
  "errors.ts",
  "version.ts",
  "clock.ts",
  "suggest.ts",
  "protocol",
  "fsafe",
  "pty",
  "relay",
  "keeper",
  "terminal",
  "frames",
  "history",
  "views",
  "policy",
  "sandbox",
  "ceilings",
  "launch",
  "recording",
  "artifacts",
  "net",
  "session",
  "agent",
  "mcp",
  "sdk",
  "remote",
  "daemon",
  "scenario",
  "replay",
  "cli",
  "mod.ts",
] as const;

const SRC = new URL("../src/", import.meta.url).pathname;

/** The most lines a non-test module under `src/` may have. */
export const MAX_LINES = 500;

/**
 * Generated modules under `src/`, exempt from {@link MAX_LINES}, each with what writes it. Every other
 * `.ts` file under `src/` is written by hand (the JSON Schemas, docs and clients generated from
 * `src/protocol/` live outside `src/`, and the web viewer's bundle `src/remote/_assets/viewer.js` is not a
 * `.ts` module). A generated module goes here, by path relative to `src/`, never a hand-written one.
 */
const GENERATED: ReadonlyMap<string, string> = new Map<string, string>([
  [
    "keeper/_request_check.ts",
    "ajv's standalone code for spec/schema/keeper-request.schema.json, written by `deno task schema`",
  ],
]);

/** Every non-test `.ts` module under `src/`, as paths relative to `src/`. */
function modules(dir = SRC): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...modules(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) out.push(relative(SRC, path));
  }
  return out.sort();
}

const IMPORT_PATTERNS = [
  /\b(?:import|export)\s[^;]*?\bfrom\s*["'](\.{1,2}\/[^"']+)["']/g,
  /\bimport\s*["'](\.{1,2}\/[^"']+)["']/g,
  /\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g,
  /\bnew URL\(\s*["'](\.{1,2}\/[^"']+\.ts)["']\s*,\s*import\.meta\.url\s*\)/g,
];

/** Lines of `text`, counted as `wc -l` counts them (plus a last line without its newline). */
export function lineCount(text: string): number {
  if (text === "") return 0;
  const newlines = text.split("\n").length - 1;
  return text.endsWith("\n") ? newlines : newlines + 1;
}

/** The text of `file` without comments (examples in JSDoc show imports; they import nothing). */
function codeOf(file: string): string {
  return Deno.readTextFileSync(join(SRC, file)).replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

/** The modules `file` imports, relative to `src/` (imports leaving `src/` are skipped). */
function importsOf(file: string): string[] {
  const text = codeOf(file);
  const out = new Set<string>();
  for (const pattern of IMPORT_PATTERNS) {
    for (const match of text.matchAll(pattern)) {
      const target = normalize(join(dirname(file), match[1]!));
      if (!target.startsWith("..")) out.add(target);
    }
  }
  return [...out].sort();
}

/** The layer unit of a module: its top folder, or the file itself for `src/*.ts`. */
function unitOf(file: string): string {
  return file.includes("/") ? file.slice(0, file.indexOf("/")) : file;
}

/** The folder a module is in (`""` for `src/*.ts`). */
function folderOf(file: string): string {
  return dirname(file) === "." ? "" : dirname(file);
}

/** The layer rules broken by the import of `target` from `file` (empty when none). */
export function violations(file: string, target: string): string[] {
  const out: string[] = [];
  const from = unitOf(file);
  const to = unitOf(target);
  const rank = (unit: string) => (LAYERS as readonly string[]).indexOf(unit);
  if (rank(from) < 0) out.push(`"${from}" is not in LAYERS`);
  else if (rank(to) < 0) out.push(`"${to}" is not in LAYERS`);
  else if (from !== to && rank(to) > rank(from)) out.push(`runs up the layers (${from} → ${to})`);
  if (from !== to && to.endsWith(".ts") === false && target !== `${to}/mod.ts`) {
    out.push(`bypasses ${to}/mod.ts`);
  }
  const name = target.slice(target.lastIndexOf("/") + 1);
  const inside = folderOf(file) === folderOf(target) || folderOf(file).startsWith(`${folderOf(target)}/`);
  if (name.startsWith("_") && !inside) out.push(`imports the private ${target} from another folder`);
  return out;
}

/** Import cycles between modules, each as the list of modules around it. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  // Iterative depth-first search: a stack of (module, index of the next edge).
  for (const start of graph.keys()) {
    if (state.has(start)) continue;
    const stack: [string, number][] = [[start, 0]];
    state.set(start, "open");
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const edges = graph.get(top[0]) ?? [];
      if (top[1] >= edges.length) {
        state.set(top[0], "done");
        stack.pop();
        continue;
      }
      const next = edges[top[1]++]!;
      if (state.get(next) === "open") {
        const at = stack.findIndex(([m]) => m === next);
        found.push([...stack.slice(at).map(([m]) => m), next]);
      } else if (!state.has(next) && graph.has(next)) {
        state.set(next, "open");
        stack.push([next, 0]);
      }
    }
  }
  return found;
}

Deno.test("the layer rules catch what they are meant to", () => {
  assert.deepEqual(violations("session/session.ts", "pty/mod.ts"), []);
  assert.deepEqual(violations("artifacts/audit.ts", "session/mod.ts"), [
    "runs up the layers (artifacts → session)",
  ]);
  assert.deepEqual(violations("session/session.ts", "pty/spawn.ts"), ["bypasses pty/mod.ts"]);
  assert.deepEqual(violations("session/session.ts", "pty/_reader.ts"), [
    "bypasses pty/mod.ts",
    "imports the private pty/_reader.ts from another folder",
  ]);
  assert.deepEqual(violations("sandbox/seatbelt/profile.ts", "sandbox/_x.ts"), []);
  assert.deepEqual(violations("session/session.ts", "errors.ts"), []);
  assert.deepEqual(violations("errors.ts", "session/mod.ts"), ["runs up the layers (errors.ts → session)"]);
  assert.deepEqual(violations("nowhere/x.ts", "errors.ts"), ['"nowhere" is not in LAYERS']);
  assert.deepEqual(cycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]])), [[
    "a",
    "b",
    "c",
    "a",
  ]]);
  assert.deepEqual(cycles(new Map([["a", ["b"]], ["b", []]])), []);
});

Deno.test("src/ imports run down the layers, through each folder's mod.ts, without cycles", () => {
  const graph = new Map<string, string[]>();
  const broken: string[] = [];
  for (const file of modules()) {
    const targets = importsOf(file);
    graph.set(file, targets);
    for (const target of targets) {
      for (const rule of violations(file, target)) broken.push(`src/${file} → src/${target}: ${rule}`);
    }
  }
  for (const cycle of cycles(graph)) broken.push(`cycle: ${cycle.map((m) => `src/${m}`).join(" → ")}`);
  assert.ok(graph.size > 100, `found only ${graph.size} modules under src/`);
  assert.deepEqual(broken, [], `${broken.length} layer violations:\n${broken.join("\n")}`);
});

Deno.test("the line rule counts as wc -l does", () => {
  assert.equal(lineCount(""), 0);
  assert.equal(lineCount("a"), 1);
  assert.equal(lineCount("a\n"), 1);
  assert.equal(lineCount("a\nb"), 2);
  assert.equal(lineCount("a\n\nb\n"), 3);
});

Deno.test(`no module under src/ is over ${MAX_LINES} lines (tests and generated modules aside)`, () => {
  const files = modules();
  assert.ok(files.length > 100, `found only ${files.length} modules under src/`);
  for (const file of GENERATED.keys()) {
    assert.ok(files.includes(file), `GENERATED names a missing src/${file}`);
  }
  const over = files
    .filter((file) => !GENERATED.has(file))
    .map((file) => ({ file, lines: lineCount(Deno.readTextFileSync(join(SRC, file))) }))
    .filter(({ lines }) => lines > MAX_LINES)
    .map(({ file, lines }) => `src/${file}: ${lines} lines`);
  assert.deepEqual(
    over,
    [],
    `${over.length} modules over ${MAX_LINES} lines (split each into rooms):\n${over.join("\n")}`,
  );
});

/** The hand-written TypeScript of the clients (SDKs and the web page): no test, no build output. */
function clientSources(dir = new URL("../clients/", import.meta.url).pathname): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) {
      if (!["node_modules", "dist", "test"].includes(entry.name)) out.push(...clientSources(path));
    } else if (entry.name.endsWith(".ts") && !/[._]test\.ts$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

Deno.test(`no client source is over ${MAX_LINES} lines (files marked generated aside)`, () => {
  const root = new URL("../", import.meta.url).pathname;
  const files = clientSources();
  assert.ok(files.some((f) => f.endsWith("clients/web/src/viewer.ts")), "the web viewer's entry is found");
  const over = files
    .map((file) => ({ file, text: Deno.readTextFileSync(file) }))
    // Written by `deno task build:clients` and checked by `clients:check`: never edited by hand.
    .filter(({ text }) => !/^\/\/ Generated by /.test(text))
    .map(({ file, text }) => ({ file, lines: lineCount(text) }))
    .filter(({ lines }) => lines > MAX_LINES)
    .map(({ file, lines }) => `${relative(root, file)}: ${lines} lines`);
  assert.deepEqual(over, [], `${over.length} client sources over ${MAX_LINES} lines:\n${over.join("\n")}`);
});

Deno.test("src/protocol/ uses no Deno or Node API (a browser page and an SDK import it)", () => {
  const files = modules().filter((f) => f.startsWith("protocol/"));
  assert.ok(files.length >= 4, `found only ${files.join(", ")}`);
  const broken: string[] = [];
  for (const file of [...files, "errors.ts", "suggest.ts"]) {
    const text = codeOf(file);
    for (const match of text.matchAll(/\b(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
      const spec = match[1]!;
      const target = normalize(join(dirname(file), spec));
      const local = spec.startsWith("./") || spec.startsWith("../");
      const allowed = spec === "zod" ||
        (local && (["errors.ts", "suggest.ts"].includes(target) || target.startsWith("protocol/")));
      if (!allowed) broken.push(`src/${file} imports "${spec}"`);
    }
    for (const match of text.matchAll(/\b(Deno|process|Buffer|require)\s*[.(]/g)) {
      broken.push(`src/${file} uses ${match[1]}`);
    }
  }
  assert.deepEqual(broken, []);
});
