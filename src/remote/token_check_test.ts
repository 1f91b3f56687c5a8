import assert from "node:assert/strict";
import type { RemoteRefusal } from "../protocol/mod.ts";
import type { RequestHead } from "./http_head.ts";
import { FailureLimiter } from "./limiter.ts";
import { checkToken } from "./token_check.ts";
import { TokenSet } from "./tokens.ts";

function head(authorization: string | null, method = "GET"): RequestHead {
  const headers = new Headers();
  if (authorization !== null) headers.set("authorization", authorization);
  return { method, path: "/v1/token", headers, repeated: new Set() };
}

Deno.test("GET /v1/token: 204 for a valid token, 401 for a wrong one (a failed attempt), none is not one", () => {
  const { set, viewer, control } = TokenSet.generate();
  const limiter = new FailureLimiter();
  const refused: [RemoteRefusal, boolean][] = [];
  const check = (h: RequestHead) =>
    checkToken(h, "10.0.0.1", limiter, set, (code, none) => refused.push([code, none]));
  for (const token of [viewer, control]) {
    const reply = check(head(`Bearer ${token}`));
    assert.equal(reply.status, 204);
    assert.equal(reply.body, "");
  }
  assert.deepEqual(refused, []);
  const wrong = check(head(`Bearer ${"x".repeat(43)}`));
  assert.equal(wrong.status, 401);
  assert.match(wrong.headers["www-authenticate"] ?? "", /^Bearer/);
  assert.ok(!wrong.body.includes("x".repeat(43)), "the token is never echoed");
  assert.deepEqual(refused, [["E_REMOTE_AUTH", false]]);
  assert.equal(check(head(null)).status, 401);
  assert.deepEqual(refused.at(-1), ["E_REMOTE_AUTH", true]);
  assert.equal(check(head(`Bearer ${viewer}`, "POST")).status, 405);
});

Deno.test("GET /v1/token: wrong tokens lock the address out like the WebSocket's (429), then even a valid one waits", () => {
  const { set, viewer } = TokenSet.generate();
  const limiter = new FailureLimiter(() => 0); // A clock that stands still: the lock never runs out.
  let status = 0;
  for (let i = 0; i < 1000 && status !== 429; i++) {
    status =
      checkToken(head(`Bearer wrong-${i}-${"y".repeat(40)}`), "10.0.0.2", limiter, set, () => {}).status;
  }
  assert.equal(status, 429, "locked out after repeated failures");
  const locked = checkToken(head(`Bearer ${viewer}`), "10.0.0.2", limiter, set, () => {});
  assert.equal(locked.status, 429);
  assert.ok(Number(locked.headers["retry-after"]) > 0);
  assert.equal(
    checkToken(head(`Bearer ${viewer}`), "10.0.0.3", limiter, set, () => {}).status,
    204,
    "per address",
  );
});
