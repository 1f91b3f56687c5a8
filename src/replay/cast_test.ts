import assert from "node:assert/strict";
import { castTranscript } from "./cast.ts";

Deno.test("castTranscript: output events as plain text; input and resize events ignored", () => {
  const cast = [
    JSON.stringify({ version: 2, width: 80, height: 24 }),
    JSON.stringify([0.1, "o", "\x1b[32mhello\x1b[0m\r\n"]),
    JSON.stringify([0.2, "i", "typed"]),
    JSON.stringify([0.3, "r", "100x30"]),
    JSON.stringify([0.4, "o", "50%\r100%\r\n"]),
  ].join("\n") + "\n";
  assert.deepEqual(castTranscript(cast), { text: "hello\n100%\n" });
});

Deno.test("castTranscript: a bad header or event is a problem naming the line", () => {
  assert.deepEqual(castTranscript("garbage\n"), { problem: "does not start with an asciicast v2 header" });
  assert.deepEqual(castTranscript('{"version":1}\n'), {
    problem: "does not start with an asciicast v2 header",
  });
  assert.deepEqual(castTranscript('{"version":2}\n[1,"o","a"]\n[1,"o"]\n'), {
    problem: "line 3 is not an asciicast event",
  });
  assert.deepEqual(castTranscript('{"version":2}\nnot json\n'), {
    problem: "line 2 is not an asciicast event",
  });
});
