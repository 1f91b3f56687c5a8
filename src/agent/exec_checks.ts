/**
 * What `exec_command` (and `start`) refuse before anything starts, as `E_USAGE`: environment names that
 * are no names or that change how programs are loaded, and arguments the kernel's exec would refuse.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import type { StartParams } from "../protocol/mod.ts";

/**
 * Environment names a tool call may not set: they change how the dynamic loader or libc behave in every
 * program of the session, including the launchers that run before it inside the sandbox (the one that
 * applies the resource limits). glibc's list of variables it ignores for setuid programs, and more.
 */
export const DENIED_ENV: readonly RegExp[] = [
  /^LD_/,
  /^GLIBC_TUNABLES$/,
  /^GCONV_PATH$/,
  /^GETCONF_DIR$/,
  /^HOSTALIASES$/,
  /^LOCALDOMAIN$/,
  /^LOCPATH$/,
  /^MALLOC_/,
  /^NIS_PATH$/,
  /^NLSPATH$/,
  /^RESOLV_HOST_CONF$/,
  /^RES_OPTIONS$/,
  /^TZDIR$/,
  /^BASH_ENV$/,
  /^ENV$/,
  /^BASH_FUNC_/,
  /^SHELLOPTS$/,
  /^BASHOPTS$/,
  /^PS4$/,
];

/** Checks a call's `env` and `cmd` (see the module documentation). */
export function checkExecRequest(params: Pick<StartParams, "cmd" | "env">): void {
  for (const name of Object.keys(params.env ?? {})) {
    if (name === "" || name.includes("=") || name.includes("\0")) {
      throw new UsageError(
        `exec_command "env" names ${JSON.stringify(name.slice(0, 80))}: a variable's name is not empty and ` +
          'has no "=" and no NUL character',
      );
    }
    if (DENIED_ENV.some((re) => re.test(name))) {
      throw new UsageError(
        `exec_command "env" may not set "${name.slice(0, 80)}": it changes how programs are loaded`,
      );
    }
  }
  checkArgumentSizes(typeof params.cmd === "string" ? [params.cmd] : params.cmd);
}

/** The kernel's limit on one argument of exec (MAX_ARG_STRLEN: 32 pages, its NUL included). */
const MAX_ARGUMENT_BYTES = 32 * 4096 - 1;

/**
 * `E_USAGE` for an argument exec would refuse (E2BIG, which would otherwise come back as an errno from
 * the sandbox's launcher), saying what to do instead.
 */
function checkArgumentSizes(args: readonly string[]): void {
  const encoder = new TextEncoder();
  for (const arg of args) {
    // Characters first: a string under the limit in UTF-16 units may still be over it in UTF-8 bytes.
    if (arg.length * 3 <= MAX_ARGUMENT_BYTES) continue;
    const bytes = encoder.encode(arg).length;
    if (bytes <= MAX_ARGUMENT_BYTES) continue;
    throw new UsageError(
      `exec_command "cmd" has an argument of ${bytes} bytes; the kernel takes at most ${MAX_ARGUMENT_BYTES} ` +
        "in one: write long text through write_stdin (with tty false and close_stdin, or into a file " +
        "with a heredoc typed into a shell) instead",
      { details: { bytes, limit: MAX_ARGUMENT_BYTES } },
    );
  }
}
