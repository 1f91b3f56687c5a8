import assert from "node:assert/strict";
import { MAX_PENDING_REQUESTS, MAX_UNSENT_BYTES, serveAgent } from "./server.ts";
import { AgentTools } from "./tools.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };

/** Input of `count` request lines, counting how many the server pulled. */
function requests(count: number, line: string) {
  const state = { pulled: 0 };
  const bytes = new TextEncoder().encode(line + "\n");
  const input = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled === count) return controller.close();
      state.pulled++;
      controller.enqueue(bytes);
    },
  }, { highWaterMark: 0 });
  return { state, input };
}

Deno.test({
  name: "serveAgent: a client that sends without reading is not read further (memory stays bounded)",
  ...sanitize,
  async fn() {
    const tools = new AgentTools({ base: { sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" } } });
    const { state, input } = requests(1_000_000, '{"jsonrpc":"2.0","id":1,"method":"list_sessions"}');
    let written = 0;
    const stalled = new Promise<void>(() => {}); // The client never reads: writes never complete.
    void serveAgent(tools, {
      input,
      write: (bytes) => {
        written += bytes.length;
        return stalled;
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(state.pulled <= MAX_PENDING_REQUESTS + 2, `${state.pulled} requests read`);
    assert.ok(written <= MAX_UNSENT_BYTES, `${written}`);
    await tools.close();
  },
});

Deno.test({
  name: "serveAgent: a client that reads gets an answer to every request",
  ...sanitize,
  async fn() {
    const tools = new AgentTools({ base: { sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" } } });
    const { input } = requests(2000, '{"jsonrpc":"2.0","id":1,"method":"list_sessions"}');
    let lines = 0;
    await serveAgent(tools, {
      input,
      write: (bytes) => {
        lines += bytes.filter((b) => b === 10).length;
        return Promise.resolve();
      },
    });
    assert.equal(lines, 2000);
  },
});

Deno.test({
  name: "serveAgent: a notification is never answered, not even when it fails",
  ...sanitize,
  async fn() {
    const tools = new AgentTools({ base: { sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" } } });
    const lines = [
      '{"jsonrpc":"2.0","method":"no_such_method"}',
      '{"jsonrpc":"2.0","method":"write_stdin","params":{"session_id":"9"}}',
      '{"jsonrpc":"2.0","id":5,"method":"list_sessions"}',
    ].join("\n") + "\n";
    const written: string[] = [];
    await serveAgent(tools, {
      input: ReadableStream.from([new TextEncoder().encode(lines)]),
      write: (bytes) => (written.push(new TextDecoder().decode(bytes)), Promise.resolve()),
    });
    assert.deepEqual(written.map((line) => JSON.parse(line).id), [5]);
  },
});
