import assert from "node:assert/strict";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ToolResult } from "../protocol/mod.ts";
import { mcpTools, statusLine } from "./tools.ts";

const RESULT: ToolResult = {
  session_id: "1",
  output: "hi\n",
  running: false,
  exit_code: 0,
  timed_out: false,
  wall_time_ms: 3,
  truncated: false,
  original_token_count: 1,
  token_mode: "compact",
  returned_on: "exit",
  screen: "normal",
  from_seq: 0,
  to_seq: 2,
};

Deno.test("mcp tools: schemas compile as JSON Schema 2020-12, results match them, the status line says what an agent needs", () => {
  const ajv = new Ajv2020({ strict: false });
  for (const tool of mcpTools()) {
    ajv.compile(tool.inputSchema as object);
    const output = ajv.compile(tool.outputSchema as object);
    if (tool.name !== "list_sessions") {
      assert.ok(output(RESULT), `${tool.name}: ${JSON.stringify(output.errors)}`);
      assert.ok(output({ error: { code: "E_USAGE", message: "x" } }));
      assert.equal(output({ output: 1 }), false);
    }
  }
  assert.equal(statusLine(RESULT), "[session 1 exited with code 0; frames 0-2]");
  const running = statusLine({
    ...RESULT,
    running: true,
    exit_code: undefined,
    truncated: true,
    original_token_count: 9000,
    returned_on: "yield",
  });
  assert.match(running, /session 1 still running \(returned on yield after 0\.0 s\); write_stdin/);
  assert.match(running, /read_output \{"session_id": "1", "from_seq": 0\}/);
});

Deno.test("status line: a call that took no new frames says so, never a range from 14 to 13", () => {
  const none = statusLine({ ...RESULT, from_seq: 14, to_seq: 13 });
  assert.match(none, /; no new frames after 13\]$/);
  assert.doesNotMatch(none, /frames 14-13/);
});
