import assert from "node:assert/strict";
import { byteString, indexOfHeadEnd, parseProxyHead } from "./proxy_head.ts";
import { forwardedHead } from "./http_forward.ts";

const encoder = new TextEncoder();
const head = (text: string) => encoder.encode(text);

Deno.test("parseProxyHead: CONNECT in authority form, names canonical, IPv6 in brackets", () => {
  const cases: [string, string, string, number][] = [
    ["CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443", "example.com", "name", 443],
    ["CONNECT EXAMPLE.com.:8443 HTTP/1.1", "example.com", "name", 8443],
    ["CONNECT 10.1.2.3:22 HTTP/1.0", "10.1.2.3", "ipv4", 22],
    ["CONNECT [::1]:5432 HTTP/1.1", "::1", "ipv6", 5432],
    ["CONNECT [2001:DB8::0:1]:443 HTTP/1.1", "2001:db8::1", "ipv6", 443],
  ];
  for (const [text, host, hostKind, port] of cases) {
    const parsed = parseProxyHead(head(text));
    assert.ok(parsed.ok, text);
    assert.deepEqual(parsed.request, { kind: "connect", method: "CONNECT", host, hostKind, port }, text);
  }
});

Deno.test("parseProxyHead: absolute-form http:// becomes origin form with the URL's host and port", () => {
  const parsed = parseProxyHead(
    head("GET http://Example.com:8080/a/b?c=d HTTP/1.1\r\nHost: evil.test\r\nX: 1"),
  );
  assert.ok(parsed.ok && parsed.request.kind === "http");
  assert.equal(parsed.request.host, "example.com");
  assert.equal(parsed.request.port, 8080);
  assert.equal(parsed.request.target, "/a/b?c=d");
  assert.deepEqual(parsed.request.headers, [["Host", "evil.test"], ["X", "1"]]);
  assert.equal(parsed.request.bodyLength, 0, "no Content-Length: no body");
  for (
    const [header, length] of [["Content-Length: 12", 12], ["Transfer-Encoding: chunked", null]] as const
  ) {
    const withBody = parseProxyHead(head(`POST http://a.example/ HTTP/1.1\r\n${header}`));
    assert.ok(
      withBody.ok && withBody.request.kind === "http" && withBody.request.bodyLength === length,
      header,
    );
  }
  const bare = parseProxyHead(head("POST HTTP://10.0.0.1?q HTTP/1.0"));
  assert.ok(bare.ok && bare.request.kind === "http");
  assert.equal(bare.request.port, 80);
  assert.equal(bare.request.target, "/?q");
  assert.equal(bare.request.version, "HTTP/1.0");
  const root = parseProxyHead(head("GET http://[::1]:81 HTTP/1.1"));
  assert.ok(
    root.ok && root.request.kind === "http" && root.request.target === "/" && root.request.host === "::1",
  );
});

Deno.test("parseProxyHead: a table of bad heads, each refused with a reason, never a throw", () => {
  const cases: [string, RegExp][] = [
    ["", /malformed request line/],
    ["GET / HTTP/1.1\r\nHost: example.com", /a path, not a proxy request/],
    ["GET https://example.com/ HTTP/1.1", /HTTPS goes through CONNECT/],
    ["GET ftp://example.com/ HTTP/1.1", /"ftp" URL/],
    ["GET http://user:pw@example.com/ HTTP/1.1", /user information/],
    ["GET http://example.com/#frag HTTP/1.1", /fragment/],
    ["GET http://example.com:0/ HTTP/1.1", /port outside/],
    ["GET http://example.com:99999/ HTTP/1.1", /port outside/],
    ["GET http://example.com:/ HTTP/1.1", /not a number/],
    ["GET http://exa_mple.com/ HTTP/1.1", /no valid host/],
    ["GET http:///path HTTP/1.1", /no valid host/],
    ["CONNECT example.com HTTP/1.1", /no port/],
    ["CONNECT example.com:443:1 HTTP/1.1", /IPv6 address not in brackets/],
    ["CONNECT ::1:443 HTTP/1.1", /IPv6 address not in brackets/],
    ["CONNECT [::1:443 HTTP/1.1", /closing bracket/],
    ["CONNECT [::1]x:443 HTTP/1.1", /not ":PORT"/],
    ["CONNECT [fe80::1%25eth0]:443 HTTP/1.1", /no valid host/],
    ["CONNECT 999.1.1.1:443 HTTP/1.1", /no valid host/],
    ["CONNECT 127.1:443 HTTP/1.1", /no valid host/],
    ["CONNECT http://example.com:443 HTTP/1.1", /not a number|no valid host|IPv6/],
    ["connect example.com:443 HTTP/1.1", /malformed request line/],
    ["CONNECT example.com:443 HTTP/2.0", /malformed request line/],
    ["CONNECT  example.com:443 HTTP/1.1", /malformed request line/],
    ["CONNECT example.com:443 HTTP/1.1 ", /malformed request line/],
    ["CONNECT example.com:443\tHTTP/1.1", /malformed request line/],
    ["GET http://é.com/ HTTP/1.1", /malformed request line/],
    ["CONNECT example.com:443 HTTP/1.1\nHost: x", /bare CR or LF/],
    ["CONNECT example.com:443 HTTP/1.1\r\nHost: x\rY: z", /bare CR or LF/],
    ["CONNECT example.com:443 HTTP/1.1\r\n folded", /folded/],
    ["CONNECT example.com:443 HTTP/1.1\r\nNoColon", /without a name/],
    ["CONNECT example.com:443 HTTP/1.1\r\n: value", /without a name/],
    ["CONNECT example.com:443 HTTP/1.1\r\nHost : x", /malformed header name/],
    ["CONNECT example.com:443 HTTP/1.1\r\nX-Nul: a\0b", /control character/],
    ["CONNECT example.com:443 HTTP/1.1\r\nX-Esc: \x1b[31m", /control character/],
    ["POST http://example.com/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2", /more than one/],
    ["POST http://example.com/ HTTP/1.1\r\nContent-Length: -1", /malformed Content-Length/],
    ["POST http://example.com/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked", /both/],
    // Any coding but chunked (or TE on HTTP/1.0, which has none) left the body's end to the server: the
    // proxy passed the client's bytes on until it closed, a second request with another Host included.
    ["GET http://example.com/ HTTP/1.0\r\nTransfer-Encoding: identity", /Transfer-Encoding other than/],
    ["POST http://example.com/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked", /Transfer-Encoding other than/],
    ["POST http://example.com/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: x", /other than/],
    ["POST http://example.com/ HTTP/1.0\r\nTransfer-Encoding: chunked", /Transfer-Encoding other than/],
    [`GET http://example.com/${"a".repeat(8000)} HTTP/1.1`, /request target over/],
    ["ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGH http://example.com/ HTTP/1.1", /malformed request line/],
  ];
  for (const [text, reason] of cases) {
    const parsed = parseProxyHead(head(text));
    assert.ok(!parsed.ok, `${JSON.stringify(text)} was taken`);
    assert.match(parsed.reason, reason, JSON.stringify(text));
  }
  // The method is kept for the event when the request line had one.
  const https = parseProxyHead(head("GET https://example.com/ HTTP/1.1"));
  assert.ok(!https.ok && https.method === "GET");
  // Raw bytes: invalid UTF-8 and every single byte value never throw.
  for (let byte = 0; byte < 256; byte++) {
    parseProxyHead(new Uint8Array([0x47, 0x45, 0x54, 0x20, byte, 0x20, 0x48]));
    parseProxyHead(encoder.encode(`CONNECT a.b:1 HTTP/1.1\r\nX: ${String.fromCharCode(byte)}`));
  }
});

Deno.test("parseProxyHead: obs-text in a header value is kept byte for byte", () => {
  const bytes = new Uint8Array([...head("GET http://a.example/ HTTP/1.1\r\nX: "), 0xe9, 0xff]);
  const parsed = parseProxyHead(bytes);
  assert.ok(parsed.ok && parsed.request.kind === "http");
  assert.equal(parsed.request.headers[0]![1], "\xe9\xff");
  assert.equal(byteString(new Uint8Array([0x80, 0x9f])), "\x80\x9f", "no windows-1252 remapping");
});

Deno.test("forwardedHead: origin form, Host from the checked URL, proxy and hop-by-hop headers dropped", () => {
  const parsed = parseProxyHead(head(
    "POST http://api.example:8080/v1?x=1 HTTP/1.1\r\nHost: evil.test\r\nhost: twice.test\r\n" +
      "Proxy-Authorization: Basic eA==\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive, X-Secret, " +
      "Content-Length\r\nX-Secret: s\r\nKeep-Alive: 5\r\nTE: trailers\r\nUpgrade: h2c\r\nContent-Length: 2\r\n" +
      "User-Agent: curl",
  ));
  assert.ok(parsed.ok && parsed.request.kind === "http");
  assert.equal(
    forwardedHead(parsed.request),
    "POST /v1?x=1 HTTP/1.1\r\nHost: api.example:8080\r\nContent-Length: 2\r\nUser-Agent: curl\r\n" +
      "Connection: close\r\n\r\n",
  );
  const v6 = parseProxyHead(head("GET http://[::1]/ HTTP/1.0"));
  assert.ok(v6.ok && v6.request.kind === "http");
  assert.equal(forwardedHead(v6.request), "GET / HTTP/1.0\r\nHost: [::1]\r\nConnection: close\r\n\r\n");
});

Deno.test("indexOfHeadEnd: finds CR LF CR LF only when its last byte is in range", () => {
  const bytes = head("AB\r\n\r\nCD");
  assert.equal(indexOfHeadEnd(bytes, 0, bytes.length), 2);
  assert.equal(indexOfHeadEnd(bytes, 6, bytes.length), -1);
  assert.equal(indexOfHeadEnd(bytes, 0, 5), -1);
  assert.equal(indexOfHeadEnd(head("\n\n\r\n"), 0, 4), -1);
});
