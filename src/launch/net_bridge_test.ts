import assert from "node:assert/strict";
import { processStartTime } from "../relay/mod.ts";
import { listening, relayArgv } from "./net_bridge.ts";

Deno.test("relayArgv enters only the network namespace as root, and the caller's user namespace otherwise", () => {
  const request = { command: ["/usr/bin/deno", "run", "-A", "/x/main.ts"], socketPath: "/run/s/proxy.sock" };
  assert.deepEqual(relayArgv("/usr/bin/nsenter", request, 42, 0), [
    "/usr/bin/nsenter",
    "--target",
    "42",
    "--net",
    "--",
    "/usr/bin/deno",
    "run",
    "-A",
    "/x/main.ts",
    "net-relay",
    "--to",
    "/run/s/proxy.sock",
    "--pid",
    "42",
  ]); // deno-fmt-ignore
  assert.deepEqual(relayArgv("/usr/bin/nsenter", request, 42, 1000).slice(0, 7), [
    "/usr/bin/nsenter", "--target", "42", "--net", "--user", "--preserve-credentials", "--",
  ]); // deno-fmt-ignore
});

Deno.test("listening reads a LISTEN socket on 127.0.0.1 from a process's own network table", () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (listener.addr as Deno.NetAddr).port;
    assert.equal(listening(Deno.pid, port), true);
    listener.close();
    assert.equal(listening(Deno.pid, port), false);
  } finally {
    try {
      listener.close();
    } catch {
      // Closed above.
    }
  }
  assert.equal(listening(2 ** 22 + 17), false); // No such process.
  assert.equal(processStartTime(2 ** 22 + 17), null);
  assert.notEqual(processStartTime(Deno.pid), null);
});
