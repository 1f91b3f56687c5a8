import assert from "node:assert/strict";
import { cpuUsage } from "node:process";
import { encodeResponse, MAX_HEAD_BYTES, parseHead, readHead } from "./http_head.ts";

Deno.test("parseHead: a request line and headers; repeated ones noted; garbage refused", () => {
  const head = parseHead("GET /v1/ws?x=1 HTTP/1.1\r\nHost: a:1\r\nX-Y:  z \r\nhost: b:2");
  assert.ok(head !== null);
  assert.equal(head.method, "GET");
  assert.equal(head.path, "/v1/ws");
  assert.equal(head.headers.get("x-y"), "z");
  assert.ok(head.repeated.has("host"));
  for (
    const bad of [
      "GET /x HTTP/2.0",
      "get /x HTTP/1.1",
      "GET x HTTP/1.1",
      "GET http://evil/x HTTP/1.1",
      "GET /x HTTP/1.1\r\nno colon",
      "GET /x HTTP/1.1\r\nbad name: v",
      "GET /x HTTP/1.1\r\n: v",
    ]
  ) {
    assert.equal(parseHead(bad), null, JSON.stringify(bad));
  }
});

Deno.test("encodeResponse: status line, headers, length, connection close; 101 keeps the connection", () => {
  const text = new TextDecoder().decode(encodeResponse(404, { "content-type": "text/plain" }, "no"));
  assert.equal(
    text,
    "HTTP/1.1 404 Not Found\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: close\r\n\r\nno",
  );
  const head = new TextDecoder().decode(encodeResponse(200, {}, "body", true));
  assert.ok(head.endsWith("content-length: 4\r\nconnection: close\r\n\r\n"), head);
  const upgrade = new TextDecoder().decode(encodeResponse(101, { upgrade: "websocket" }));
  assert.equal(upgrade, "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n");
});

Deno.test("readHead: a head sent byte by byte costs time linear in its length, not quadratic", async () => {
  const head = new TextEncoder().encode(
    `GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1:1\r\nX-Pad: ${"p".repeat(MAX_HEAD_BYTES - 80)}\r\n\r\nrest`,
  );
  let at = 0;
  const conn = {
    read(buffer: Uint8Array): Promise<number | null> {
      if (at >= head.length) return Promise.resolve(null);
      buffer[0] = head[at++]!;
      return Promise.resolve(1);
    },
  } as unknown as Deno.Conn;
  // CPU time, not the wall clock: another process's turn on the core is no failure. Scanning the whole
  // head again with each byte took about 0.25 s of CPU for 16 KiB; one pass takes about 15 ms.
  const before = cpuUsage();
  const got = await readHead(conn);
  const used = cpuUsage(before);
  assert.equal(got?.head.headers.get("x-pad")?.length, MAX_HEAD_BYTES - 80);
  assert.equal(new TextDecoder().decode(got?.rest), "");
  assert.ok((used.user + used.system) / 1000 < 120, `${(used.user + used.system) / 1000} ms of CPU`);
});
