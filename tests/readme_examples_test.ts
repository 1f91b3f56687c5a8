/**
 * Every code block of the README is accounted for: run here as written (with the `specter` command
 * `./scripts/dev install` puts on PATH, in a fresh home), run as written by another test that reads the
 * README, or not a command line (with the reason). A new block without an entry fails the first test.
 *
 * Output shown in the README is checked loosely: its lines must appear in order in what the command printed,
 * with numbers (ids, times, sizes) and the width of blank runs not compared, a line with `…` matched up to it,
 * a `…` line skipping anything; JSON lines are compared by their `type` or `event` (a run of one type as one).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { installSpecter, keepDenoDir, ROOT, withTempDir } from "./_helpers.ts";

interface Block {
  /** Line of the opening fence (1-based). */
  readonly line: number;
  readonly lang: string;
  readonly body: string;
}

function readmeBlocks(): Block[] {
  const lines = Deno.readTextFileSync(`${ROOT}/README.md`).split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i]!.match(/^```(\w*)$/);
    if (open === null) continue;
    const end = lines.findIndex((line, j) => j > i && line.startsWith("```"));
    blocks.push({ line: i + 1, lang: open[1] ?? "", body: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return blocks;
}

/** Each block by its first line: "here", the test that runs it as written, or why it is not a command. */
const COVERAGE: Record<string, string> = {
  "./scripts/dev demo": "not run as written by a test: .ci/run runs `./scripts/dev ok` on a fresh clone, " +
    "tests/demo_test.ts and tests/install_test.ts what `./scripts/dev demo` does (the demo, the launcher)",
  "specter run  [flags]": "here",
  "$ printf '%s\\n'": "here",
  "claude mcp add specter": "tests/mcp_setup_test.ts",
  '{ "servers": { "specter"': "tests/mcp_setup_test.ts",
  '{ "mcpServers": { "specter"': "tests/mcp_setup_test.ts",
  "[mcp_servers.specter]": "tests/mcp_setup_test.ts",
  '$ echo \'{"jsonrpc"': "tests/agent_readme_test.ts",
  "// deno run -A example.ts": "tests/serial/clients_test.ts",
  "// node example.mjs": "tests/serial/clients_test.ts",
  "# python3 example.py": "tests/serial/clients_test.ts",
  "// node langchain.mjs": "tests/serial/clients_test.ts",
  "$ specter new build": "here",
  "$ specter daemon --bind": "tests/remote_readme_test.ts",
  "specter run -- bash": "here",
  "$ specter policy check": "here",
  "$ specter exec --policy basic": "here",
  "$ specter test fixtures/scenarios/menu.yaml": "here",
  'import { spawn, Transcript } from "./src/mod.ts";': "here",
  "main.ts            thin CLI entry": "not a command: the source tree's layout",
};

function coverageOf(block: Block): string | undefined {
  const first = block.body.split("\n")[0]!;
  const key = Object.keys(COVERAGE).find((prefix) => first.startsWith(prefix));
  return key === undefined ? undefined : COVERAGE[key];
}

Deno.test("README: every code block is run as written by a test, or says why it is not a command", async () => {
  const blocks = readmeBlocks();
  assert.ok(blocks.length >= 20, `${blocks.length} blocks`);
  for (const block of blocks) {
    const coverage = coverageOf(block);
    assert.ok(
      coverage !== undefined,
      `README.md:${block.line}: no test runs this block (add it to COVERAGE)`,
    );
    const test = coverage.match(/^tests\/\S+\.ts/)?.[0];
    if (test !== undefined) {
      assert.match(
        await Deno.readTextFile(join(ROOT, test)),
        /README\.md/,
        `${test} does not read the README`,
      );
    }
  }
  // Every entry still names a block (a removed example takes its entry with it).
  for (const prefix of Object.keys(COVERAGE)) {
    assert.ok(blocks.some((b) => b.body.startsWith(prefix)), `COVERAGE names no block: ${prefix}`);
  }
});

function blockStarting(prefix: string): Block {
  const block = readmeBlocks().find((b) => b.body.startsWith(prefix));
  assert.ok(block !== undefined, prefix);
  return block;
}

/** A console block's commands (`$ ` lines, with `\` continuations) and the output shown after each. */
function consoleCommands(block: Block): { command: string; shown: string[] }[] {
  const out: { command: string; shown: string[] }[] = [];
  const lines = block.body.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.startsWith("$ ")) {
      out.at(-1)?.shown.push(line);
      continue;
    }
    let command = line.slice(2);
    while (command.endsWith("\\")) command = `${command}\n${lines[++i]!}`;
    out.push({ command, shown: [] });
  }
  return out;
}

const norm = (line: string) => line.trimEnd().replace(/[0-9a-f]*\d[0-9a-f]*/g, "#").replace(/\s+/g, " ");
const kindOf = (line: string) => line.match(/"(?:type|event)":"(\w+)"/)?.[1];

/** The README's shown lines appear in order in `actual` (see the module documentation). */
function assertShown(shown: readonly string[], actual: string, what: string): void {
  const lines = actual.split("\n");
  let at = 0;
  let lastKind: string | undefined;
  for (const want of shown) {
    if (want.trim() === "…" || want.trim() === "") continue;
    const kind = want.startsWith("{") ? kindOf(want) : undefined;
    // How output is batched into frames varies: a run of frames of one type is one step.
    if (kind !== undefined && kind === lastKind) continue;
    lastKind = kind;
    const prefix = norm(want.split("…")[0]!);
    const found = lines.findIndex((line, i) =>
      i >= at &&
      (kind !== undefined
        ? kindOf(line) === kind
        : want.includes("…")
        ? norm(line).startsWith(prefix)
        : norm(line) === norm(want))
    );
    assert.ok(found >= 0, `${what}: the README shows ${JSON.stringify(want)}, not printed:\n${actual}`);
    at = found + 1;
  }
}

/** A fresh user: a home of its own, `specter` installed on PATH. */
async function withUser(fn: (env: Record<string, string>, home: string) => Promise<void>): Promise<void> {
  await withTempDir(async (home) => {
    const env = {
      HOME: home,
      XDG_RUNTIME_DIR: join(home, "run"),
      PATH: await installSpecter(join(home, "bin")),
      NO_COLOR: "1",
      ...keepDenoDir({ HOME: home }),
    };
    Deno.mkdirSync(env.XDG_RUNTIME_DIR, { mode: 0o700 });
    try {
      await fn(env, home);
    } finally {
      killProcessesOf(home);
    }
  });
}

/** Kills what a test's commands left running (a daemon and its keeper name their state directory). */
function killProcessesOf(home: string): void {
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const environ = Deno.readTextFileSync(`/proc/${entry.name}/environ`);
      if (environ.split("\0").includes(`HOME=${home}`)) Deno.kill(Number(entry.name), "SIGKILL");
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
}

async function sh(
  command: string,
  env: Record<string, string>,
  cwd: string,
  stdin = "",
): Promise<{ code: number; out: string }> {
  const child = new Deno.Command("bash", {
    args: ["-c", command],
    env,
    clearEnv: true,
    cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code, out: decode(stdout) + decode(stderr) };
}

/** A policy file and a Makefile, for the examples that name `./my-policy.toml` and `make test`. */
async function workspace(home: string): Promise<string> {
  const dir = join(home, "project");
  await Deno.mkdir(dir);
  await Deno.writeTextFile(
    join(dir, "my-policy.toml"),
    'version = 1\nexec = ["/usr/bin", "/bin"]\nenv = ["LANG", "TERM"]\n\n[fs]\nread = ["${workspace}"]\n',
  );
  await Deno.writeTextFile(join(dir, "Makefile"), "test:\n\t@echo make-test-ran\n");
  return dir;
}

const EXIT = '{"v":1,"type":"input","data":"exit\\r"}\n';

Deno.test("README: the command line's synopsis names commands that exist", async () => {
  await withUser(async (env, home) => {
    const body = blockStarting("specter run  [flags]").body;
    for (const name of ["run", "exec"]) assert.match(body, new RegExp(`^specter ${name} `, "m"));
    for (const command of ["specter help run", "specter help exec", "specter --version"]) {
      const { code, out } = await sh(command, env, home);
      assert.equal(code, 0, `${command}: ${out}`);
    }
  });
});

Deno.test("README: the python3 driver example prints the frames shown", async () => {
  await withUser(async (env, home) => {
    const [{ command, shown }] = consoleCommands(blockStarting("$ printf '%s\\n'")) as [
      { command: string; shown: string[] },
    ];
    const { code, out } = await sh(command, env, home);
    assert.equal(code, 0, out);
    assertShown(shown, out, "run python3");
    assert.match(out, /"type":"stdout","data":"[^"]*42/);
  });
});

Deno.test("README: the exec example exits 3 with its output", async () => {
  await withUser(async (env, home) => {
    const block = readmeBlocks().find((b) => b.body.includes("$ specter exec --timeout 5s"))!;
    const { command, shown } = consoleCommands(block).find((c) => c.command.includes("exit 3"))!;
    const { code, out } = await sh(command, env, home);
    assert.equal(code, 3, out);
    assertShown(shown, out, "exec");
  });
});

Deno.test("README: the sandbox examples run as written (programs given input end them)", async () => {
  await withUser(async (env, home) => {
    const dir = await workspace(home);
    const lines = blockStarting("specter run -- bash").body.split("\n");
    assert.equal(lines.length, 8);
    for (const line of lines) {
      const command = line.replace(/\s+#.*$/, "");
      // An interactive `run` reads driver messages: a person types them; this test asks bash to exit.
      const { code, out } = await sh(command, env, dir, command.endsWith("-- bash") ? EXIT : "");
      assert.equal(code, 0, `${command}: ${out}`);
      if (command.includes("make test")) assert.match(out, /make-test-ran/);
      if (command.includes("--allow-net")) {
        assert.match(out, /network policy \\"preset:agent\\" does not allow \\"example\.org:80\\"/, out);
      }
      if (command.endsWith("-- bash")) assert.match(out, /"type":"exit","code":0/, `${command}: ${out}`);
    }
  });
});

Deno.test("README: the auditing examples print what is shown", async () => {
  await withUser(async (env, home) => {
    const dir = await workspace(home);
    for (const { command, shown } of consoleCommands(blockStarting("$ specter policy check"))) {
      const { code, out } = await sh(command, env, dir);
      assert.equal(code, 0, `${command}: ${out}`);
      assertShown(shown, out, command);
    }
    const [exec, cat] = consoleCommands(blockStarting("$ specter exec --policy basic"));
    const ran = await sh(exec!.command, env, dir);
    assert.equal(ran.code, 124, ran.out); // --timeout 1s of `sleep 5`: timed out.
    const { code, out } = await sh(cat!.command, env, dir);
    assert.equal(code, 0, `${out}\n${(await sh("find ~ -maxdepth 5", env, dir)).out}`);
    assertShown(cat!.shown, out, "the audit log");
  });
});

Deno.test("README: specter test of the menu scenario passes as shown", async () => {
  await withUser(async (env) => {
    const [{ command, shown }] = consoleCommands(
      blockStarting("$ specter test fixtures/scenarios/menu.yaml"),
    ) as [
      { command: string; shown: string[] },
    ];
    const { code, out } = await sh(command, env, ROOT);
    assert.equal(code, 0, out);
    // The README writes the artifacts' directory under `~`.
    assertShown(shown, out.replaceAll(env.HOME!, "~"), "specter test");
  });
});

Deno.test("README: the library example runs from a checkout", async () => {
  await withUser(async (env) => {
    const body = blockStarting('import { spawn, Transcript } from "./src/mod.ts";').body;
    // From a checkout: the import is relative to its root, so the file goes there for the run.
    const file = join(ROOT, `.readme-example-${Deno.pid}.ts`);
    await Deno.writeTextFile(file, body);
    try {
      // It prints nothing: `t.output("42")` and `t.exit()` throw when 42 or the exit does not come.
      const { code, out } = await sh(`'${Deno.execPath()}' run -A --quiet '${file}'`, env, ROOT);
      assert.equal(code, 0, out);
    } finally {
      await Deno.remove(file);
    }
  });
});

Deno.test({
  name: "README: new, attach (detached with Ctrl-] under tmux) and ls run as written",
  ignore: !Deno.statSync("/usr/bin/tmux").isFile,
  async fn() {
    await withUser(async (env, home) => {
      const commands = consoleCommands(blockStarting("$ specter new build")).map((c) =>
        c.command.replace(/\s+#.*$/, "")
      );
      assert.deepEqual(commands.map((c) => c.split(" ")[1]), ["new", "attach", "ls"]);
      const started = await sh(commands[0]!, env, home);
      assert.equal(started.code, 0, started.out);
      // attach needs a terminal: a tmux pane, left open when its command ends so its status can be read.
      const socket = `readme-${Deno.pid}`;
      const tmux = (...args: string[]) =>
        sh(["tmux", "-L", socket, ...args].map((a) => `'${a}'`).join(" "), env, home);
      try {
        const attached = await tmux(
          "new-session",
          "-d",
          "-x",
          "100",
          "-y",
          "30",
          `${commands[1]!}; echo ATTACH-EXIT=$?; sleep 30`,
        );
        assert.equal(attached.code, 0, attached.out);
        const screen = async () => (await tmux("capture-pane", "-p")).out;
        // bash's prompt (capture-pane drops trailing blanks).
        for (let i = 0; i < 100 && !/\$$/m.test(await screen()); i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        await tmux("send-keys", "C-]");
        let text = "";
        for (let i = 0; i < 100 && !text.includes("ATTACH-EXIT="); i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          text = await screen();
        }
        assert.match(text, /ATTACH-EXIT=0/, text);
      } finally {
        await tmux("kill-server");
      }
      const listed = await sh(commands[2]!, env, home);
      assert.equal(listed.code, 0, listed.out);
      assert.match(listed.out, /build/);
    });
  },
});
