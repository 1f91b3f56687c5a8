/**
 * Which sandbox a session gets when its options name none: the backend `auto` means on this platform,
 * and the strict preset.
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import { DEFAULT_PRESET, hostHome, loadPolicy } from "../policy/mod.ts";
import type { SandboxOption } from "./options.ts";

/** The backend `auto` means on this platform (throws `E_SANDBOX_UNAVAILABLE` elsewhere). */
export function platformBackend(os: string = Deno.build.os): "bwrap" | "seatbelt" {
  switch (os) {
    case "linux":
      return "bwrap";
    case "darwin":
      return "seatbelt";
    default:
      throw new SandboxError("E_SANDBOX_UNAVAILABLE", `No sandbox backend exists for "${os}"`, {
        details: { os, fix: "Run on Linux (bubblewrap) or macOS (Seatbelt)" },
      });
  }
}

/** The default sandbox: `auto` with the strict preset, for a run in `cwd`. */
export function defaultSandbox(cwd: string): SandboxOption {
  const policy = loadPolicy(DEFAULT_PRESET, {
    workspace: cwd,
    home: hostHome(),
    acks: { unsafeWrite: false, network: false },
  });
  return { mode: "auto", policy };
}
