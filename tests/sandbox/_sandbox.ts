/**
 * Helpers for the escape suite: run a program under the real bwrap backend with a given policy.
 *
 * @module
 */
import { checkPolicyDocument, loadPolicy } from "../../src/policy/mod.ts";
import type { Policy } from "../../src/policy/types.ts";
import { type SpawnOptions, Transcript } from "../../src/mod.ts";
import { spawn } from "../../src/session/spawn_session.ts";
import { ROOT } from "../_helpers.ts";

/** A policy from a preset, for a run whose workspace is `workspace`. */
export function preset(
  name: string,
  workspace = "/tmp",
  acks = { unsafeWrite: true, network: false },
): Policy {
  return loadPolicy(name, { workspace, home: Deno.env.get("HOME") ?? "/", acks });
}

/** A policy from a document (as a policy file would hold it); throws when it has problems. */
export function policyOf(
  doc: Record<string, unknown>,
  acks: { unsafeWrite: boolean; network: boolean; hostSockets?: boolean } = {
    unsafeWrite: true,
    network: false,
  },
): Policy {
  const { policy, problems } = checkPolicyDocument(
    { version: 1, ...doc },
    "test",
    { workspace: "/tmp", home: Deno.env.get("HOME") ?? "/", acks },
  );
  if (policy === null) throw new Error(`Bad test policy: ${JSON.stringify(problems)}`);
  return policy;
}

/** Runs `argv` under bwrap with `policy` to completion and returns its transcript and exit frame. */
export async function runSandboxed(
  argv: string[],
  policy: Policy,
  options: Partial<SpawnOptions> = {},
): Promise<{ text: string; code: number | null; t: Transcript }> {
  const t = new Transcript(
    spawn({ argv, idleMs: 0, timeoutMs: 20_000, ...options, sandbox: { mode: "bwrap", policy } }),
  );
  const exit = await t.exit(25_000);
  return { text: t.text, code: exit.code, t };
}

/** Debian's python3 (the pyenv shim on PATH is a script that needs more than one binary). */
export const PYTHON = "/usr/bin/python3";

/**
 * Python that prints `RESULT <name> <errno-or-ok>` for each attempted call. `calls` maps a name to a
 * Python expression returning the raw result of a libc call made with use_errno.
 */
export function pythonAttempts(calls: Record<string, string>, prelude = ""): string {
  const lines = [
    "import ctypes, os, sys",
    prelude,
    "libc = ctypes.CDLL(None, use_errno=True)",
    "libc.syscall.restype = ctypes.c_long",
    "def attempt(name, fn):",
    "    ctypes.set_errno(0)",
    "    try:",
    "        r = fn()",
    "    except OSError as e:",
    "        print('RESULT', name, e.errno, flush=True); return",
    "    e = ctypes.get_errno()",
    "    print('RESULT', name, 'ok' if r is not None and r >= 0 else e, flush=True)",
  ];
  for (const [name, expr] of Object.entries(calls)) {
    lines.push(`attempt(${JSON.stringify(name)}, lambda: ${expr})`);
  }
  return lines.join("\n");
}

/** Parses `RESULT name value` lines. */
export function results(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const match of text.matchAll(/RESULT (\S+) (\S+)/g)) out[match[1]!] = match[2]!;
  return out;
}

/**
 * A fresh host directory outside /tmp (the sandbox's /tmp is its own tmpfs), the caller's (0700, as
 * made: the sandbox runs as the caller, root's too), removed afterwards.
 */
export async function withHostDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ dir: ROOT, prefix: ".specter-sandbox-test-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** errno values (Linux). */
export const ERRNO = {
  EPERM: "1",
  ENOENT: "2",
  ESRCH: "3",
  EACCES: "13",
  EXDEV: "18",
  ENOSYS: "38",
  EROFS: "30",
};
