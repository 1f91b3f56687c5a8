/**
 * A script's interpreter must be visible in the sandbox too. The kernel runs a `#!` script by executing
 * its interpreter; when the policy binds the script but not the interpreter (`strict` shows only the
 * program itself), the launch fails inside the sandbox with bwrap's bare "execvp …: No such file or
 * directory", naming the script, which exists. This check says which interpreter is missing and how to
 * allow it, before anything starts.
 *
 * @module
 */
import { SpawnError } from "../errors.ts";
import { isWithin } from "../fsafe/mod.ts";
import type { Policy } from "../policy/mod.ts";
import { sandboxPath, SYSTEM_BINDS } from "./bwrap.ts";

/** The interpreter a `#!` line names (absolute), or null for a file that is not a script. */
export function interpreterOf(firstBytes: Uint8Array): string | null {
  if (firstBytes[0] !== 0x23 || firstBytes[1] !== 0x21) return null; // "#!"
  const line = new TextDecoder().decode(firstBytes.subarray(2)).split("\n")[0]!;
  const interpreter = line.trim().split(/[ \t]+/)[0] ?? "";
  return interpreter.startsWith("/") ? interpreter : null;
}

function firstBytes(path: string): Uint8Array {
  let file: Deno.FsFile | undefined;
  try {
    file = Deno.openSync(path, { read: true });
    const buffer = new Uint8Array(256);
    return buffer.subarray(0, file.readSync(buffer) ?? 0);
  } catch {
    return new Uint8Array(); // Unreadable (execute-only): the kernel decides, as without this check.
  } finally {
    file?.close();
  }
}

function mergedUsr(): boolean {
  try {
    return Deno.lstatSync("/bin").isSymlink;
  } catch {
    return false; // No /bin at all: nothing is merged.
  }
}

/**
 * Throws `E_SPAWN_NOT_EXECUTABLE` when `program` is a `#!` script whose interpreter `policy` does not
 * show (exec, fs.read, fs.write, or the system libraries every sandbox gets). `read` is injectable.
 */
export function checkInterpreter(
  program: string,
  policy: Policy,
  read: (path: string) => Uint8Array = firstBytes,
  merged: boolean = mergedUsr(),
): void {
  const interpreter = interpreterOf(read(program));
  if (interpreter === null || interpreter === program) return;
  const roots = [...policy.exec, ...policy.fs.read, ...policy.fs.write, ...SYSTEM_BINDS, program];
  const dest = sandboxPath(interpreter, merged);
  if (roots.some((root) => isWithin(dest, sandboxPath(root, merged)))) return;
  const name = policy.source.replace(/^preset:/, "");
  throw new SpawnError(
    "E_SPAWN_NOT_EXECUTABLE",
    `Program "${program}" is a script for "${interpreter}", which policy "${name}" does not show: ` +
      `use --policy agent, or a policy file whose exec lists "${interpreter}"`,
    { details: { program, interpreter, policy: policy.source } },
  );
}
