import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { checkExecRequest, DENIED_ENV } from "./exec_checks.ts";

/** A name each entry of {@link DENIED_ENV} matches, in order. */
const DENIED_EXAMPLES = [
  "LD_PRELOAD",
  "GLIBC_TUNABLES",
  "GCONV_PATH",
  "GETCONF_DIR",
  "HOSTALIASES",
  "LOCALDOMAIN",
  "LOCPATH",
  "MALLOC_ARENA_MAX",
  "NIS_PATH",
  "NLSPATH",
  "RESOLV_HOST_CONF",
  "RES_OPTIONS",
  "TZDIR",
  "BASH_ENV",
  "ENV",
  "BASH_FUNC_x%%",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
];

function refused(params: Parameters<typeof checkExecRequest>[0], message: RegExp): void {
  assert.throws(
    () => checkExecRequest(params),
    (e: unknown) => e instanceof UsageError && message.test(e.message),
  );
}

Deno.test("exec checks: each denied environment name is refused, as loading programs differently", () => {
  assert.equal(DENIED_ENV.length, DENIED_EXAMPLES.length, "an example per entry");
  for (const [i, re] of DENIED_ENV.entries()) {
    const name = DENIED_EXAMPLES[i]!;
    assert.ok(re.test(name), `${re} matches ${name}`);
    refused({ cmd: "true", env: { [name]: "x" } }, /it changes how programs are loaded/);
  }
  checkExecRequest({ cmd: "true", env: { FOO: "1", LANG: "C.UTF-8" } });
});

Deno.test("exec checks: an empty name or one with '=' is no name, and said so", () => {
  refused({ cmd: "true", env: { "": "c" } }, /a variable's name is not empty and has no "="/);
  refused({ cmd: "true", env: { "A=B": "c" } }, /a variable's name is not empty and has no "="/);
  refused({ cmd: "true", env: { "A\u0000B": "c" } }, /no NUL character/);
});

Deno.test("exec checks: an argument over the kernel's 128 KiB is refused with what to do instead", () => {
  checkExecRequest({ cmd: "x".repeat(131_071) });
  checkExecRequest({ cmd: ["/bin/echo", "é".repeat(65_535)] }); // 131,070 bytes.
  refused({ cmd: "x".repeat(131_072) }, /an argument of 131072 bytes; .* write_stdin/);
  refused({ cmd: ["/bin/echo", "é".repeat(65_536)] }, /an argument of 131072 bytes/);
  refused({ cmd: `cat > f <<'EOF'\n${"line\n".repeat(44_000)}EOF` }, /write long text through write_stdin/);
});
