import assert from "node:assert/strict";
import { join, relative } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;

/** Source files of src/ (tests excluded: they are not compiled into the binary). */
async function* sources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* sources(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) yield path;
  }
}

Deno.test("every module src/ loads by URL at run time (e.g. a Worker) is --include'd by scripts/compile", async () => {
  const script = await Deno.readTextFile(join(ROOT, "scripts/compile"));
  const loaded: string[] = [];
  for await (const file of sources(join(ROOT, "src"))) {
    const text = await Deno.readTextFile(file);
    for (const match of text.matchAll(/new URL\("(\.{1,2}\/[^"]+\.ts)", import\.meta\.url\)/g)) {
      loaded.push(relative(ROOT, join(file, "..", match[1]!)));
    }
  }
  assert.ok(loaded.includes("src/pty/_reader_worker.ts"), `found: ${loaded.join(", ")}`);
  for (const module of loaded) {
    assert.match(script, new RegExp(`--include ${module.replaceAll(".", "\\.")}\\b`));
  }
});
