/** Agent tools for tests: in-process, unsandboxed, with output logs as `specter agent` keeps them. */
import { AgentTools } from "../src/agent/mod.ts";
import { AgentOutputLogs, type OutputLogBudgets } from "../src/daemon/mod.ts";
import { NO_SANDBOX, ROOT } from "./_helpers.ts";

/** Runs `fn` with unsandboxed tools whose sessions keep output logs in a temporary directory. */
export async function withLoggedTools(
  fn: (tools: AgentTools, logs: AgentOutputLogs, root: string) => Promise<void>,
  budgets: OutputLogBudgets = {},
  maxSessions?: number,
): Promise<void> {
  const root = Deno.makeTempDirSync({ prefix: "specter-results-" });
  const logs = new AgentOutputLogs(budgets);
  const tools = new AgentTools({
    base: { sandbox: NO_SANDBOX, cwd: ROOT },
    outputLog: (id) => logs.open(`${root}/${id}`, id),
    ...(maxSessions === undefined ? {} : { maxSessions }),
  });
  try {
    await fn(tools, logs, root);
  } finally {
    await tools.close();
    Deno.removeSync(root, { recursive: true });
  }
}
