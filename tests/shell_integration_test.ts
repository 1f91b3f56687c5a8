/**
 * Shell integration on real shells: bash through `--init-file`, zsh through `ZDOTDIR`. The user's own
 * startup files still run, commands return on their OSC 133 marks with their exit codes, in and out of the
 * sandbox; inside it the integration's file is read-only; without it its directory is removed after the run.
 */
import assert from "node:assert/strict";
import { AgentTools } from "../src/agent/mod.ts";
import { NO_SANDBOX, ROOT } from "./_helpers.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };

async function withTools(
  fn: (tools: AgentTools) => Promise<void>,
  base: { sandboxed: boolean; env?: Record<string, string> },
): Promise<void> {
  const tools = new AgentTools({
    base: {
      cwd: ROOT,
      ...(base.sandboxed ? {} : { sandbox: NO_SANDBOX }),
      ...(base.env === undefined ? {} : { env: base.env }),
    },
  });
  try {
    await fn(tools);
  } finally {
    await tools.close();
  }
}

/** Types `line` into session `id` and expects it to return on its command mark. */
async function run(tools: AgentTools, id: string, line: string) {
  const result = await tools.writeStdin({ session_id: id, chars: `${line}\r`, yield_time_ms: 20_000 });
  assert.equal(result.returned_on, "command", JSON.stringify(result));
  return result;
}

Deno.test({
  name: "shell integration: bash runs the user's ~/.bashrc (alias, PROMPT_COMMAND) and still marks commands",
  ...sanitize,
  async fn() {
    const home = await Deno.makeTempDir();
    await Deno.writeTextFile(
      `${home}/.bashrc`,
      "alias hello='echo hello-from-rc'\nPROMPT_COMMAND='__rc_prompts=$((__rc_prompts+1))'\n",
    );
    try {
      await withTools(async (tools) => {
        const shell = await tools.execCommand({ cmd: ["bash"] });
        assert.equal(shell.returned_on, "prompt");
        const id = shell.session_id!;
        const failed = await run(tools, id, "hello; sleep 0.2; false");
        assert.equal(failed.command?.exit_code, 1);
        assert.match(failed.output, /^hello-from-rc$/m);
        assert.ok(failed.command!.duration_ms >= 150, `${failed.command!.duration_ms}`);
        const counted = await run(tools, id, "echo prompts=$__rc_prompts");
        assert.match(counted.output, /^prompts=[1-9]/m, "the rc's PROMPT_COMMAND runs beside the marks");
        // The init file is a private temp file, removed once the session ends.
        const cmdline = await run(tools, id, "tr '\\0' ' ' < /proc/$$/cmdline; echo");
        const init = /--init-file (\S+)/.exec(cmdline.output)?.[1];
        assert.ok(init !== undefined && init.endsWith("/bash_init"), cmdline.output);
        assert.ok((await Deno.stat(init)).isFile);
        await tools.closeSession({ session_id: id });
        const dir = init.slice(0, -"/bash_init".length);
        for (let i = 0; i < 50 && await exists(dir); i++) await new Promise((r) => setTimeout(r, 20));
        assert.equal(await exists(dir), false, `${dir} is removed after the run`);
      }, { sandboxed: false, env: { HOME: home } });
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error: unknown) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

Deno.test({
  name: "shell integration: bash in the sandbox reads its init file, bound read-only, and marks commands",
  ...sanitize,
  fn: () =>
    withTools(async (tools) => {
      const shell = await tools.execCommand({ cmd: ["bash"] });
      assert.equal(shell.returned_on, "prompt", JSON.stringify(shell));
      const id = shell.session_id!;
      const read = await run(tools, id, 'read -r first < /run/specter/shell/bash_init; echo "[$first]"');
      assert.match(read.output, /^\[# Specter's shell integration/m);
      assert.equal(read.command?.exit_code, 0);
      const write = await run(
        tools,
        id,
        'echo x >> /run/specter/shell/bash_init; mapfile -t l < /run/specter/shell/bash_init; echo "last=[${l[-1]}]"',
      );
      assert.match(write.output, /bash_init: (?:Read-only file system|Permission denied)/);
      assert.match(write.output, /^last=\[PS0=/m, "the file is unchanged");
      const status = await run(tools, id, "(exit 7)");
      assert.equal(status.command?.exit_code, 7);
    }, { sandboxed: true }),
});

Deno.test({
  name: "shell integration: zsh runs the user's ZDOTDIR files, gets its ZDOTDIR back, and marks commands",
  ...sanitize,
  async fn() {
    const zdotdir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${zdotdir}/.zshenv`, "export FROM_ZSHENV=yes\n");
    await Deno.writeTextFile(`${zdotdir}/.zshrc`, "alias hello='echo hello-from-zshrc'\nPS1='z> '\n");
    try {
      await withTools(async (tools) => {
        const shell = await tools.execCommand({ cmd: ["zsh"] });
        assert.equal(shell.returned_on, "prompt", JSON.stringify(shell));
        const id = shell.session_id!;
        const failed = await run(tools, id, "hello; sleep 0.2; false");
        assert.equal(failed.command?.exit_code, 1);
        assert.match(failed.output, /^hello-from-zshrc$/m);
        assert.ok(failed.command!.duration_ms >= 150, `${failed.command!.duration_ms}`);
        const env = await run(
          tools,
          id,
          'echo "zdotdir=$ZDOTDIR env=$FROM_ZSHENV user=${SPECTER_USER_ZDOTDIR-unset}"',
        );
        assert.match(env.output, new RegExp(`^zdotdir=${zdotdir} env=yes user=unset$`, "m"));
        assert.equal(env.command?.exit_code, 0);
      }, { sandboxed: false, env: { ZDOTDIR: zdotdir } });
    } finally {
      await Deno.remove(zdotdir, { recursive: true });
    }
  },
});

Deno.test({
  name: "shell integration: zsh in the sandbox marks commands with their exit codes",
  ...sanitize,
  fn: () =>
    withTools(async (tools) => {
      const shell = await tools.execCommand({ cmd: ["zsh"] });
      assert.equal(shell.returned_on, "prompt", JSON.stringify(shell));
      const id = shell.session_id!;
      const status = await run(tools, id, "(exit 5)");
      assert.equal(status.command?.exit_code, 5);
      const ok = await run(tools, id, "echo ok");
      assert.equal(ok.command?.exit_code, 0);
      assert.match(ok.output, /^ok$/m);
    }, { sandboxed: true }),
});

Deno.test({
  name:
    "shell integration: a shell that prints marks without the nonce (as output could) does not end a command",
  ...sanitize,
  fn: () =>
    withTools(async (tools) => {
      const shell = await tools.execCommand({ cmd: ["bash"] });
      const id = shell.session_id!;
      const forged = await tools.writeStdin({
        session_id: id,
        chars: "printf '\\033]133;D;0\\007'; sleep 0.6; echo real-end; (exit 4)\r",
        yield_time_ms: 20_000,
      });
      assert.equal(forged.returned_on, "command");
      assert.equal(forged.command?.exit_code, 4);
      assert.match(forged.output, /^real-end$/m);
    }, { sandboxed: false }),
});
