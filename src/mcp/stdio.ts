/**
 * MCP over stdio (`specter mcp`): newline-delimited JSON-RPC, one message per line, nothing else ever
 * written (logs go to stderr). Messages are handled concurrently: `ping` and `notifications/cancelled` are
 * served while calls run. When the input ends, calls in flight are dropped and every session ends.
 *
 * @module
 */
import { within } from "../clock.ts";
import { DriverLineSplitter } from "../frames/mod.ts";
import type { AgentTools, RpcIo } from "../agent/mod.ts";
import { requestIdOf } from "../protocol/mod.ts";
import { McpServer, type McpServerOptions, parseErrorMessage, tooLongMessage } from "./server.ts";

/** Longest message taken (bytes); a longer one is skipped and answered with -32600 (its id when its line shows it). */
export const MCP_MAX_MESSAGE_BYTES = 1024 * 1024;
/** Requests in progress, and bytes not yet written, above which no more input is read until they drop. */
const MAX_PENDING = 256;
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;
/** How long the sessions get to end once the input ended. */
const END_WAIT_MS = 10_000;

const encoder = new TextEncoder();

/** Serves MCP over `io` until its input ends; then ends every session of `tools`. */
export async function serveMcpStdio(
  tools: AgentTools,
  io: RpcIo,
  options: McpServerOptions = {},
): Promise<void> {
  const server = new McpServer(tools, options);
  let queue = Promise.resolve();
  let unsent = 0;
  const send = (message: Record<string, unknown>): void => {
    // One line each: JSON.stringify never writes a raw newline (one in a string is escaped).
    const line = encoder.encode(JSON.stringify(message) + "\n");
    unsent += line.length;
    queue = queue.then(() => io.write(line)).catch(() => {
      // The client is gone: nothing more can be told; the input's end closes the tools.
    }).finally(() => void (unsent -= line.length));
  };
  const out = { send };
  const pending = new Set<Promise<void>>();
  // An over-long line is answered at its end, with its id: a client that put the id last (the MCP SDK
  // does) would otherwise wait for an answer forever.
  const splitter = new DriverLineSplitter(MCP_MAX_MESSAGE_BYTES, { errorAtLineEnd: true });
  const reader = io.input.getReader();
  try {
    for (;;) {
      // A client that sends without reading slows itself down instead of growing the server's memory.
      while (pending.size >= MAX_PENDING || unsent >= MAX_UNSENT_BYTES) {
        await Promise.race([queue, ...pending]);
      }
      const { value, done } = await reader.read();
      if (done) break;
      for (const result of splitter.push(value)) {
        if ("error" in result) {
          send(tooLongMessage(MCP_MAX_MESSAGE_BYTES, requestIdOf(result.head, result.tail)));
          continue;
        }
        if (result.line.trim() === "") continue;
        let message: unknown;
        try {
          message = JSON.parse(result.line);
        } catch {
          send(parseErrorMessage());
          continue;
        }
        const task = server.handle(message, out).catch((error: unknown) => {
          // handle answers every failure itself; this is a bug, reported where logs go.
          console.error(`specter mcp: ${error instanceof Error ? error.message : String(error)}`);
        });
        pending.add(task);
        void task.finally(() => pending.delete(task));
      }
    }
  } finally {
    reader.releaseLock();
    // Nobody reads answers any more: drop what is owed, end pure waits, end every session (which ends
    // the calls that wait on them), then let the last lines go out.
    server.close();
    tools.cancelWaits();
    await tools.close();
    await within(Promise.all(pending), END_WAIT_MS);
    await queue;
  }
}
