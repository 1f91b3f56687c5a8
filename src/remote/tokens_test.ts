import assert from "node:assert/strict";
import { join } from "node:path";
import { readTokenFile, TokenSet } from "./tokens.ts";
import { RemoteError } from "./errors.ts";

const TOKEN = "t0k3n-" + "q".repeat(30);

async function withFile(
  content: string,
  mode: number,
  fn: (path: string, dir: string) => void,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "tokens");
    Deno.writeTextFileSync(path, content, { mode });
    Deno.chmodSync(path, mode);
    fn(path, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function refusedWith(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof RemoteError);
    assert.equal(error.code, "E_REMOTE_TOKEN_FILE");
    assert.match(error.message, pattern);
    assert.ok(!error.message.includes(TOKEN), "the message never holds a token");
    return true;
  });
}

Deno.test("TokenSet: a presented token grants its scope, sessions and label; others grant nothing", () => {
  const set = TokenSet.of({
    tokens: [
      { token: TOKEN, scope: "viewer", sessions: ["a"], label: "alice" },
      { token: "c".repeat(30), scope: "control" },
    ],
  });
  assert.deepEqual(set.check(TOKEN), { scope: "viewer", sessions: new Set(["a"]), label: "alice" });
  assert.equal(set.check("c".repeat(30))?.scope, "control");
  assert.equal(set.check("c".repeat(30))?.label, "control token #2");
  assert.equal(set.check(TOKEN + "x"), null);
  assert.equal(set.check(""), null);
  const made = TokenSet.generate();
  assert.notEqual(made.viewer, made.control);
  assert.equal(made.set.check(made.viewer)?.scope, "viewer");
  assert.equal(made.set.check(made.control)?.scope, "control");
  assert.match(made.viewer, /^[A-Za-z0-9_-]{43}$/);
});

Deno.test("readTokenFile: one bare token is a control token; a JSON list is validated", async () => {
  await withFile(`${TOKEN}\n`, 0o600, (path) => {
    assert.deepEqual(readTokenFile(path).tokens.map((t) => t.scope), ["control"]);
  });
  await withFile(JSON.stringify({ tokens: [{ token: TOKEN, scope: "viewer" }] }), 0o400, (path) => {
    assert.equal(readTokenFile(path).tokens[0]!.scope, "viewer");
  });
  await withFile(JSON.stringify({ tokens: [{ token: TOKEN, scope: "admin" }] }), 0o600, (path) => {
    refusedWith(() => readTokenFile(path), /not a valid token list \(tokens\.0\.scope/);
  });
  await withFile(JSON.stringify({ tokens: [{ token: "short", scope: "viewer" }] }), 0o600, (path) => {
    refusedWith(() => readTokenFile(path), /not a valid token list/);
  });
  await withFile(
    `${TOKEN}\n${TOKEN}\n`,
    0o600,
    (path) => refusedWith(() => readTokenFile(path), /holds neither/),
  );
  await withFile("{ not json", 0o600, (path) => refusedWith(() => readTokenFile(path), /not valid JSON/));
});

Deno.test("readTokenFile: readable by others, a link, a FIFO, too large, missing: refused, never a hang", async () => {
  await withFile(TOKEN, 0o644, (path) => refusedWith(() => readTokenFile(path), /mode 644.*chmod 600/));
  await withFile(TOKEN, 0o640, (path) => refusedWith(() => readTokenFile(path), /mode 640/));
  await withFile(TOKEN, 0o600, (path, dir) => {
    const link = join(dir, "link");
    Deno.symlinkSync(path, link);
    refusedWith(() => readTokenFile(link), /not a regular file/);
    const fifo = join(dir, "fifo");
    const made = new Deno.Command("mkfifo", { args: ["-m", "600", fifo] }).outputSync();
    assert.equal(made.code, 0);
    refusedWith(() => readTokenFile(fifo), /not a regular file/);
    refusedWith(() => readTokenFile(join(dir, "missing")), /cannot be read/);
  });
  await withFile(
    "x".repeat(70 * 1024),
    0o600,
    (path) => refusedWith(() => readTokenFile(path), /larger than/),
  );
});

Deno.test("readTokenFile: a refusal names no unknown field (a token written where a field name goes)", async () => {
  for (
    const content of [
      JSON.stringify({ tokens: [{ [TOKEN]: "control" }] }),
      JSON.stringify({ tokens: [{ token: "v".repeat(30), scope: "viewer", [TOKEN]: 1 }] }),
      JSON.stringify({ [TOKEN]: { scope: "viewer" } }),
    ]
  ) {
    await withFile(content, 0o600, (path) => {
      // refusedWith also checks that the message does not hold the token.
      refusedWith(() => readTokenFile(path), /is not a valid token list \(/);
    });
  }
});
