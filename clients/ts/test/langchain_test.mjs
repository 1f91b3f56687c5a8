// LangChain.js tools over a real `specter agent`: a fake tool-calling chat model from @langchain/core's own
// testing utilities calls exec_command and write_stdin through specterTools(client), and the tool messages
// carry the real program's output. Run under Node: `node --test clients/ts/test/`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { Client } from "../dist/index.js";
import { specterTools } from "../dist/langchain.js";

/** One scripted model turn that calls `name` with `args`. */
function modelCalling(tools, name, args, id) {
  return new FakeStreamingChatModel({
    chunks: [new AIMessageChunk({ content: "", tool_calls: [{ name, args, id, type: "tool_call" }] })],
  }).bindTools(tools);
}

test("a fake tool-calling model drives a sandboxed python3 through exec_command and write_stdin", async () => {
  const client = new Client();
  try {
    const tools = specterTools(client);
    assert.deepEqual(tools.map((t) => t.name), [
      "exec_command",
      "write_stdin",
      "read_output",
      "close_session",
      "list_sessions",
    ]);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    const messages = [new HumanMessage("What is 6 * 7 in Python?")];

    const first = await modelCalling(tools, "exec_command", { cmd: ["python3", "-q"] }, "call-1").invoke(
      messages,
    );
    assert.equal(first.tool_calls[0].name, "exec_command");
    const started = await byName.exec_command.invoke(first.tool_calls[0]);
    assert.equal(started.tool_call_id, "call-1");
    const result = JSON.parse(started.content);
    assert.equal(result.returned_on, "prompt");
    assert.equal(result.running, true);

    const args = { session_id: result.session_id, chars: "print(6 * 7)\r" };
    const second = await modelCalling(tools, "write_stdin", args, "call-2").invoke([
      ...messages,
      first,
      started,
    ]);
    const typed = await byName.write_stdin.invoke(second.tool_calls[0]);
    assert.equal(typed.tool_call_id, "call-2");
    assert.match(JSON.parse(typed.content).output, /^42$/m, "the real program's output");

    // A refused call comes back as the error's code for the model to read, not as an exception.
    const bad = await byName.write_stdin.invoke({
      name: "write_stdin",
      args: { session_id: "999", chars: "x" },
      id: "call-3",
      type: "tool_call",
    });
    assert.equal(JSON.parse(bad.content).error.code, "E_SESSION_UNKNOWN");
    // Arguments that break the schema are refused before any call.
    await assert.rejects(byName.exec_command.invoke({ cmd: 42 }));
  } finally {
    await client.close();
  }
});
