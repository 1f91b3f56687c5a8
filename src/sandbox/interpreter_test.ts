import assert from "node:assert/strict";
import { checkInterpreter, interpreterOf } from "./interpreter.ts";
import type { Policy } from "../policy/mod.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function policy(exec: string[], read: string[] = []): Policy {
  return { source: "preset:strict", exec, fs: { read, write: [] } } as unknown as Policy;
}

Deno.test("interpreterOf: the absolute path of a #! line, null otherwise", () => {
  assert.equal(interpreterOf(bytes("#!/bin/sh\necho\n")), "/bin/sh");
  assert.equal(interpreterOf(bytes("#! /usr/bin/env python3 -u\n")), "/usr/bin/env");
  assert.equal(interpreterOf(bytes("#!sh\n")), null);
  assert.equal(interpreterOf(bytes("\x7fELF")), null);
  assert.equal(interpreterOf(bytes("")), null);
});

Deno.test("checkInterpreter: a script whose interpreter the policy hides fails with a clear, typed error", () => {
  const script = () => bytes("#!/bin/sh\n");
  assert.throws(() => checkInterpreter("/work/s.sh", policy([]), script, true), (error: Error) => {
    assert.equal((error as { code?: string }).code, "E_SPAWN_NOT_EXECUTABLE");
    assert.match(error.message, /script for "\/bin\/sh", which policy "strict" does not show/);
    return true;
  });
  // /bin is /usr/bin on a merged-usr host: either entry shows it.
  checkInterpreter("/work/s.sh", policy(["/usr/bin"]), script, true);
  checkInterpreter("/work/s.sh", policy(["/bin"]), script, true);
  assert.throws(() => checkInterpreter("/work/s.sh", policy(["/usr/bin"]), script, false));
  // Under a read grant, or the system libraries every sandbox gets.
  checkInterpreter("/work/s.sh", policy([], ["/opt/tool"]), () => bytes("#!/opt/tool/bin/run\n"), true);
  checkInterpreter("/work/s", policy([]), () => bytes("#!/usr/lib/git-core/git\n"), true);
  // Not a script: the kernel decides.
  checkInterpreter("/work/a.out", policy([]), () => bytes("\x7fELF"), true);
});
