/**
 * The SDKs under the runtimes they claim, each against a real `specter agent` (this checkout's `main.ts`,
 * through `$SPECTER_COMMAND`) running sandboxed programs: the TypeScript client under Node (`node --test`)
 * and Deno, its LangChain.js tools under Node, the Python client under the system Python, and the npm
 * package installed into a fresh directory and imported from plain Node ESM. Serial: each test starts several
 * agents, and beside the parallel suite that load made its timing-sensitive tests miss their deadlines.
 */
import assert from "node:assert/strict";
import { DENO, ROOT, withTempDir } from "../_helpers.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };
const TS = `${ROOT}/clients/ts`;
const ENV = { SPECTER_COMMAND: `${DENO} run -A ${ROOT}/main.ts agent`, NO_COLOR: "1" };

/** The README's examples of "Use it from an agent": the command in each first line, and what it prints. */
async function readmeExamples(): Promise<{ runner: string; file: string; code: string; prints: string }[]> {
  const readme = await Deno.readTextFile(`${ROOT}/README.md`);
  const section = readme.slice(readme.indexOf("## Use it from an agent"));
  const body = section.slice(0, section.indexOf("\n## ", 5));
  const examples = [];
  for (const [, code] of body.matchAll(/```(?:ts|js|python)\n([\s\S]*?)```/g)) {
    const head = /^(?:\/\/|#) (deno run -A|node|python3) (\S+)\n/.exec(code!);
    const prints = /prints: (.+)$/m.exec(code!);
    assert.ok(head !== null && prints !== null, `an example without its command or output:\n${code}`);
    examples.push({ runner: head[1]!, file: head[2]!, code: code!, prints: prints[1]! });
  }
  return examples;
}

async function run(argv: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const { code, stdout, stderr } = await new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    cwd: options.cwd ?? ROOT,
    env: { ...ENV, ...options.env },
  }).output();
  const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  return { code, text };
}

/** The client's dev dependencies (the pinned @langchain/core the LangChain test imports). */
async function installed(): Promise<void> {
  try {
    await Deno.stat(`${TS}/node_modules/@langchain/core/package.json`);
  } catch {
    const { code, text } = await run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: TS,
    });
    assert.equal(code, 0, text);
  }
}

Deno.test({
  name: "clients: the TypeScript client and its LangChain.js tools under Node",
  ...sanitize,
  async fn() {
    await installed();
    const { code, text } = await run(["node", "--test", "clients/ts/test/"]);
    assert.equal(code, 0, text);
    assert.match(text, /# pass 14\n/);
  },
});

Deno.test({
  name: "clients: the TypeScript client under Deno",
  ...sanitize,
  async fn() {
    const { code, text } = await run([DENO, "test", "-A", "--no-check", "clients/ts/test/client_test.mjs"]);
    assert.equal(code, 0, text);
    assert.match(text, /ok \| 13 passed \| 0 failed/);
  },
});

Deno.test({
  name: "clients: the Python client under the system Python",
  ...sanitize,
  async fn() {
    const { code, text } = await run(
      ["python3", "-m", "unittest", "discover", "-s", "clients/python/tests", "-v"],
      { env: { PYTHONPATH: `${ROOT}/clients/python` } },
    );
    assert.equal(code, 0, text);
    assert.match(text, /Ran 13 tests/);
  },
});

Deno.test({
  name: "clients: @specter/client installs into a fresh directory and imports in plain Node ESM",
  ...sanitize,
  async fn() {
    await withTempDir(async (dir) => {
      await Deno.writeTextFile(`${dir}/package.json`, JSON.stringify({ name: "fresh", private: true }));
      // The package as npm publishes it (`npm pack`), installed by its path like any tarball.
      const pack = await run(["npm", "pack", "--silent", "--pack-destination", dir], { cwd: TS });
      assert.equal(pack.code, 0, pack.text);
      const tarball = `${dir}/${pack.text.trim().split("\n").at(-1)}`;
      const install = await run(
        ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", tarball, "@langchain/core@1.4.0"],
        { cwd: dir },
      );
      assert.equal(install.code, 0, install.text);
      await Deno.writeTextFile(
        `${dir}/main.mjs`,
        `import { Client } from "@specter/client";
import { specterTools } from "@specter/client/langchain";
const client = new Client();
const tools = specterTools(client);
const result = JSON.parse(await tools[0].invoke({ cmd: ["python3", "-c", "print(6 * 7)"] }));
console.log(tools.map((t) => t.name).join(","), result.exit_code, result.output.trim());
await client.close();
`,
      );
      const { code, text } = await run(["node", "main.mjs"], { cwd: dir });
      assert.equal(code, 0, text);
      assert.equal(text.trim(), "exec_command,write_stdin,read_output,close_session,list_sessions 0 42");
      // The README's Node and LangChain.js examples, as written, in the same fresh directory.
      const examples = (await readmeExamples()).filter((e) => e.runner === "node");
      assert.equal(examples.length, 2);
      for (const example of examples) {
        await Deno.writeTextFile(`${dir}/${example.file}`, example.code);
        const ran = await run(["node", example.file], { cwd: dir });
        assert.equal(ran.code, 0, ran.text);
        assert.equal(ran.text.trim(), example.prints, example.file);
      }
    });
  },
});

Deno.test({
  name: "clients: the README's Deno and Python examples run as written",
  ...sanitize,
  async fn() {
    const examples = (await readmeExamples()).filter((e) => e.runner !== "node");
    assert.deepEqual(examples.map((e) => e.runner), ["deno run -A", "python3"]);
    for (const example of examples) {
      if (example.runner === "python3") {
        await withTempDir(async (dir) => {
          await Deno.writeTextFile(`${dir}/${example.file}`, example.code);
          const ran = await run(["python3", example.file], {
            cwd: dir,
            env: { PYTHONPATH: `${ROOT}/clients/python` },
          });
          assert.equal(ran.code, 0, ran.text);
          assert.equal(ran.text.trim(), example.prints);
        });
        continue;
      }
      // From a checkout: the example imports ./src/sdk/mod.ts, so it runs at the repository's root.
      const file = `${ROOT}/_readme_example_${crypto.randomUUID().slice(0, 8)}.ts`;
      try {
        await Deno.writeTextFile(file, example.code);
        const ran = await run([DENO, "run", "-A", file]);
        assert.equal(ran.code, 0, ran.text);
        assert.equal(ran.text.trim(), example.prints);
      } finally {
        await Deno.remove(file);
      }
    }
  },
});
