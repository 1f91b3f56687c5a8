import assert from "node:assert/strict";
import { allowedHosts, guardRequest, isLoopback } from "./guard.ts";

function headers(fields: Record<string, string>): Headers {
  return new Headers(fields);
}

Deno.test("guard: a loopback listener answers to 127.0.0.1, localhost and [::1] at its port only", () => {
  const hosts = allowedHosts("127.0.0.1", 7681);
  assert.deepEqual([...hosts].sort(), ["127.0.0.1:7681", "[::1]:7681", "localhost:7681"]);
  assert.equal(guardRequest(headers({ host: "localhost:7681" }), hosts), null);
  assert.equal(guardRequest(headers({ host: "LOCALHOST:7681" }), hosts), null);
  assert.equal(guardRequest(headers({ host: "evil.example:7681" }), hosts), "E_REMOTE_HOST");
  assert.equal(guardRequest(headers({ host: "127.0.0.1:80" }), hosts), "E_REMOTE_HOST");
  assert.equal(guardRequest(headers({}), hosts), "E_REMOTE_HOST");
});

Deno.test("guard: Origin must be this site; none (a CLI) is fine; null and other schemes are not", () => {
  const hosts = allowedHosts("127.0.0.1", 7681, ["viewer.lan"]);
  const host = "127.0.0.1:7681";
  assert.equal(guardRequest(headers({ host }), hosts), null);
  assert.equal(guardRequest(headers({ host, origin: "http://127.0.0.1:7681" }), hosts), null);
  assert.equal(guardRequest(headers({ host, origin: "http://localhost:7681" }), hosts), "E_REMOTE_ORIGIN");
  assert.equal(guardRequest(headers({ host, origin: "https://evil.example" }), hosts), "E_REMOTE_ORIGIN");
  assert.equal(guardRequest(headers({ host, origin: "null" }), hosts), "E_REMOTE_ORIGIN");
  assert.equal(guardRequest(headers({ host, origin: "file://127.0.0.1:7681" }), hosts), "E_REMOTE_ORIGIN");
  assert.equal(
    guardRequest(headers({ host: "viewer.lan:7681", origin: "http://viewer.lan:7681" }), hosts),
    null,
  );
});

Deno.test("guard: loopback names", () => {
  for (const name of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"]) {
    assert.ok(isLoopback(name), name);
  }
  for (const name of ["0.0.0.0", "10.0.0.1", "::", "example.com", "128.0.0.1"]) {
    assert.ok(!isLoopback(name), name);
  }
});

Deno.test("guard: HTTP/2 carries no Host header: the request's authority is held against the list", () => {
  const hosts = allowedHosts("127.0.0.1", 7681);
  assert.equal(guardRequest(headers({}), hosts, "127.0.0.1:7681"), null);
  assert.equal(guardRequest(headers({}), hosts, "evil.example:7681"), "E_REMOTE_HOST");
  assert.equal(
    guardRequest(headers({ host: "evil.example:7681" }), hosts, "127.0.0.1:7681"),
    "E_REMOTE_HOST",
  );
});
