/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned) against the daemon's
 * `/mcp`, run under Deno (its CLI needs Node ≥ 22 APIs, which Deno has). The scenarios that apply to a
 * server whose tools are Specter's own:
 *
 * - `server-initialize`, `ping`, `tools-list`, `logging-set-level`, `dns-rebinding-protection`,
 *   `server-sse-multiple-streams` (several POST streams at once; its GET part is informational).
 *
 * The others do not apply: `tools-call-*` call the reference server's `test_*` tools by name (Specter adds no
 * fake tools to please them), `resources-*`, `prompts-*` and `completion-complete` need capabilities Specter
 * does not offer, `json-schema-2020-12` needs a tool named `json_schema_2020_12_tool`, `server-sse-polling`
 * a `test_reconnection` tool, `elicitation-*` and `tools-call-sampling` server-to-client requests.
 *
 * The suite's CLI cannot send a header of its own, and the daemon takes no request without its control
 * token: a test-only reverse proxy (`_auth_proxy.ts`) adds it, mapping only its own address in Host and
 * Origin to the daemon's (any other goes through as sent, so the DNS rebinding scenario meets the daemon's
 * own checks).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DENO, withTempDir } from "./_helpers.ts";
import { withRemoteDaemon } from "./_remote.ts";
import { startAuthProxy } from "./_auth_proxy.ts";

/** The suite's version (latest stable on npm). */
const CONFORMANCE = "npm:@modelcontextprotocol/conformance@0.1.16";
const SCENARIOS = [
  "server-initialize",
  "ping",
  "tools-list",
  "logging-set-level",
  "dns-rebinding-protection",
  "server-sse-multiple-streams",
];

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

Deno.test({
  name: `mcp conformance: ${SCENARIOS.join(", ")} pass against the daemon's /mcp`,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await withTempDir((dir) =>
      withRemoteDaemon(join(dir, "d"), [], async (daemon) => {
        const proxy = startAuthProxy(daemon.host, daemon.info.control_token!);
        try {
          const results = await Promise.all(SCENARIOS.map(async (scenario) => {
            const out = join(dir, `results-${scenario}`);
            const run = await new Deno.Command(DENO, {
              args: [
                "run",
                "-A",
                "--quiet",
                CONFORMANCE,
                "server",
                "--url",
                `${proxy.origin}/mcp`,
                "--scenario",
                scenario,
                "-o",
                out,
              ],
              env: { NO_COLOR: "1" },
              stdout: "piped",
              stderr: "piped",
            }).output();
            const text = new TextDecoder().decode(run.stdout) + new TextDecoder().decode(run.stderr);
            const checks: Check[] = [];
            for (const entry of Deno.readDirSync(out)) {
              const file = join(out, entry.name, "checks.json");
              checks.push(...JSON.parse(Deno.readTextFileSync(file)) as Check[]);
            }
            return { scenario, code: run.code, text, checks };
          }));
          for (const { scenario, code, text, checks } of results) {
            const failed = checks.filter((c) => c.status === "FAILURE");
            assert.deepEqual(failed.map((c) => `${c.id}: ${c.errorMessage}`), [], `${scenario}:\n${text}`);
            assert.ok(checks.some((c) => c.status === "SUCCESS"), `${scenario}: no check passed:\n${text}`);
            assert.equal(code, 0, `${scenario}:\n${text}`);
          }
        } finally {
          proxy.close();
        }
      })
    );
  },
});
