/**
 * The MCP set-up snippets of spec/agent.md ("Setting up a host": Claude Code, VS Code, Cursor, Codex CLI)
 * parse as their files do, name `specter mcp`, and the command each launches (with `specter` on PATH as a
 * wrapper of this checkout's `main.ts`) starts and answers `initialize`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { DENO, ROOT, withTempDir } from "./_helpers.ts";

interface Launch {
  readonly host: string;
  readonly command: string;
  readonly args: string[];
}

/** The fenced blocks of `file` after `heading` (up to the first `console` block or the next `## `), with their language. */
function blocks(file: string, heading: string): { lang: string; text: string }[] {
  const text = Deno.readTextFileSync(join(ROOT, file));
  const at = text.indexOf(heading);
  assert.ok(at >= 0, `${file} has no "${heading}"`);
  const rest = text.slice(at + heading.length);
  const end = rest.search(/\n## |```console/);
  return [...rest.slice(0, end < 0 ? undefined : end).matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({
    lang: m[1]!,
    text: m[2]!,
  }));
}

/** The set-up snippets of spec/agent.md ("Setting up a host"), which the README repeats word for word. */
function snippets(): { lang: string; text: string }[] {
  const spec = blocks("spec/agent.md", "### Setting up a host");
  assert.deepEqual(blocks("README.md", "## Use it from an agent"), spec, "README and spec/agent.md differ");
  return spec;
}

function launches(): Launch[] {
  const out: Launch[] = [];
  for (const { lang, text } of snippets()) {
    if (lang === "sh") {
      const words = text.trim().split(/\s+/);
      assert.deepEqual(words.slice(0, 3), ["claude", "mcp", "add"]);
      const dashes = words.indexOf("--");
      out.push({ host: "Claude Code", command: words[dashes + 1]!, args: words.slice(dashes + 2) });
    } else if (lang === "json") {
      const value = JSON.parse(text);
      if ("servers" in value) {
        const entry = value.servers.specter;
        assert.equal(entry.type, "stdio"); // VS Code needs the type.
        out.push({ host: "VS Code", command: entry.command, args: entry.args });
      } else {
        const entry = value.mcpServers.specter;
        out.push({ host: "Cursor", command: entry.command, args: entry.args });
      }
    } else if (lang === "toml") {
      const entry = (parseToml(text) as { mcp_servers: { specter: { command: string; args: string[] } } })
        .mcp_servers.specter;
      out.push({ host: "Codex CLI", command: entry.command, args: entry.args });
    } else {
      assert.fail(`Unexpected snippet language "${lang}"`);
    }
  }
  return out;
}

Deno.test({
  name:
    "mcp setup: the Claude Code, VS Code, Cursor and Codex snippets parse and launch a specter mcp that " +
    "answers initialize",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const all = launches();
    assert.deepEqual(all.map((l) => l.host), ["Claude Code", "VS Code", "Cursor", "Codex CLI"]);
    await withTempDir(async (dir) => {
      const wrapper = join(dir, "specter");
      Deno.writeTextFileSync(wrapper, `#!/bin/sh\nexec "${DENO}" run --quiet -A "${ROOT}/main.ts" "$@"\n`);
      Deno.chmodSync(wrapper, 0o755);
      for (const launch of all) {
        assert.equal(launch.command, "specter", launch.host);
        assert.equal(launch.args[0], "mcp", launch.host);
        const child = new Deno.Command(launch.command, {
          args: launch.args,
          env: { PATH: `${dir}:${Deno.env.get("PATH")}` },
          stdin: "piped",
          stdout: "piped",
          stderr: "piped",
        }).spawn();
        const writer = child.stdin.getWriter();
        await writer.write(new TextEncoder().encode(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: {
              protocolVersion: "2025-11-25",
              capabilities: {},
              clientInfo: { name: launch.host, version: "0" },
            },
          }) + "\n",
        ));
        const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
        let text = "";
        while (!text.includes("\n")) {
          const { value, done } = await reader.read();
          if (done) break;
          text += value;
        }
        await writer.close();
        while (!(await reader.read()).done) { /* drain stdout to its end */ }
        const stderr = await new Response(child.stderr).bytes();
        const { code } = await child.status;
        const answer = JSON.parse(text.split("\n")[0]!);
        assert.equal(
          answer.result?.serverInfo?.name,
          "specter",
          `${launch.host}: ${new TextDecoder().decode(stderr)}`,
        );
        assert.equal(code, 0, launch.host);
      }
    });
  },
});
