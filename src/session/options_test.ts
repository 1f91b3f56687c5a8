import assert from "node:assert/strict";
import { resolveOptions, type SpawnOptions } from "./options.ts";
import { UsageError } from "../errors.ts";

Deno.test("resolveOptions: a cwd with a trailing slash is taken; one with .. or // inside is not", () => {
  assert.equal(resolveOptions({ argv: ["true"], cwd: "/tmp/" }).cwd, "/tmp/");
  for (const cwd of ["/tmp/../etc", "/tmp//x", "/tmp/./x", "tmp"]) {
    assert.throws(() => resolveOptions({ argv: ["true"], cwd }), UsageError, cwd);
  }
});

Deno.test("resolveOptions: durations up to what a timer waits (2^31 - 1 ms); longer ones are E_USAGE", () => {
  const names = [
    "idleMs",
    "promptSettleMs",
    "timeoutMs",
    "overflowTimeoutMs",
    "terminateGraceMs",
    "heartbeatMs",
  ] as const;
  for (const name of names) {
    assert.equal(resolveOptions({ argv: ["true"], cwd: "/", [name]: 2 ** 31 - 1 })[name], 2 ** 31 - 1);
    for (const value of [2 ** 31, 2 ** 32 + 3000, 1e300, Infinity, -1]) {
      assert.throws(
        () => resolveOptions({ argv: ["true"], cwd: "/", [name]: value }),
        (error: unknown) => error instanceof UsageError && error.message.includes(`"${name}"`),
        `${name} ${value}`,
      );
    }
  }
});

Deno.test("resolveOptions: sizes and counts below 2^53; larger ones are E_USAGE", () => {
  const max = Number.MAX_SAFE_INTEGER;
  assert.equal(resolveOptions({ argv: ["true"], cwd: "/", maxOutputBytes: max }).maxOutputBytes, max);
  assert.equal(
    resolveOptions({ argv: ["true"], cwd: "/", limits: { memoryBytes: 1.5 } }).limits.memoryBytes,
    1,
  );
  for (
    const options of [
      { maxOutputBytes: 2 ** 60 },
      { bufferBytes: 1e300 },
      { limits: { memoryBytes: 2 ** 53 } },
      { limits: { fileSizeBytes: Infinity } },
      { limits: { cpuSeconds: 2 ** 64 } },
      { limits: { processes: 2 ** 70 } },
    ]
  ) {
    assert.throws(() => resolveOptions({ argv: ["true"], cwd: "/", ...options }), UsageError);
  }
});

Deno.test("resolveOptions: a run without the sandbox must be acknowledged, whatever the types let through", () => {
  const refused = (sandbox: unknown, message: RegExp) =>
    assert.throws(() => resolveOptions({ argv: ["true"], sandbox } as unknown as SpawnOptions), (error) => {
      assert.ok(error instanceof UsageError);
      assert.equal(error.code, "E_USAGE");
      assert.match(error.message, message);
      return true;
    });
  refused(
    { mode: "none" },
    /"none" must be acknowledged with acknowledge: "unsafe-no-sandbox", got undefined/,
  );
  refused({ mode: "none", acknowledge: "external-sandbox" }, /got "external-sandbox"/);
  refused({ mode: "external", acknowledge: true }, /"external-sandbox", got true/);
  refused({ mode: "off" }, /Unknown sandbox mode "off"/);
  refused({}, /Unknown sandbox mode undefined/);
  refused({ mode: "bwrap" }, /"bwrap" needs a policy/);
  refused({ mode: "auto", policy: null }, /"auto" needs a policy/);
  for (
    const sandbox of [{ mode: "none", acknowledge: "unsafe-no-sandbox" }, {
      mode: "external",
      acknowledge: "external-sandbox",
    }] as const
  ) {
    assert.deepEqual(resolveOptions({ argv: ["true"], sandbox }).sandbox, sandbox);
  }
});
