/**
 * Finding out whether a sandbox backend can run here, and the host facts a plan needs. A backend that
 * does not work is reported with the exact fix; Specter never falls back to a weaker one.
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import { compileSeccomp, seccompArchFor } from "./seccomp/mod.ts";
import type { HostFacts } from "./plan.ts";

/** The outcome of probing bubblewrap. */
export type BwrapProbe =
  | { readonly ok: true; readonly path: string; readonly version: string }
  | { readonly ok: false; readonly reason: string; readonly fix: string };

/** Where bwrap is looked for when `SPECTER_BWRAP` does not name it. */
export const BWRAP_CANDIDATES = ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"] as const;

const FIX_INSTALL =
  "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)";
const FIX_USERNS =
  "Allow user namespaces: sysctl -w kernel.unprivileged_userns_clone=1 (Debian); on Ubuntu 24.04+ " +
  "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap; inside Docker " +
  "run the container with --security-opt seccomp=unconfined --cap-add SYS_ADMIN, or run Specter with " +
  "--sandbox external --ack-external-sandbox if the container itself is your sandbox";

/**
 * Locates bwrap (`SPECTER_BWRAP`, else the usual paths) and runs a tiny sandbox with the same
 * namespaces Specter uses, to catch a kernel or AppArmor that forbids them.
 */
export function probeBwrap(env: { get(name: string): string | undefined } = Deno.env): BwrapProbe {
  const override = env.get("SPECTER_BWRAP");
  const candidates = override !== undefined ? [override] : BWRAP_CANDIDATES;
  const path = candidates.find((candidate) => {
    try {
      const info = Deno.statSync(candidate);
      return info.isFile && info.mode !== null && (info.mode & 0o111) !== 0;
    } catch {
      return false; // Not there: try the next place.
    }
  });
  if (path === undefined) {
    return {
      ok: false,
      reason: `bubblewrap was not found (looked at ${candidates.join(", ")})`,
      fix: FIX_INSTALL,
    };
  }
  let output: Deno.CommandOutput;
  try {
    output = new Deno.Command(path, {
      args: [
        "--unshare-all",
        "--unshare-user",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--",
        "/bin/true",
      ],
      stdout: "null",
      stderr: "piped",
      stdin: "null",
      clearEnv: true,
    }).outputSync();
  } catch (error: unknown) {
    return {
      ok: false,
      reason: `bubblewrap at "${path}" could not be run: ${(error as Error).message}`,
      fix: FIX_INSTALL,
    };
  }
  if (!output.success) {
    const stderr = new TextDecoder().decode(output.stderr).trim();
    return { ok: false, reason: `bubblewrap cannot create its namespaces here: ${stderr}`, fix: FIX_USERNS };
  }
  const version = new Deno.Command(path, { args: ["--version"], stdout: "piped", stderr: "null" })
    .outputSync();
  return { ok: true, path, version: new TextDecoder().decode(version.stdout).trim() };
}

const cachedFacts = new Map<boolean, HostFacts>();

/**
 * Host facts for the bwrap backend, with the seccomp filter for a policy with or without network
 * (probed once per process). Throws `E_SANDBOX_UNAVAILABLE` with the fix when bwrap is missing or cannot
 * run, or the architecture has no seccomp table.
 */
export function hostFacts(network: boolean): HostFacts {
  const cached = cachedFacts.get(network);
  if (cached) return cached;
  const probe = probeBwrap();
  if (!probe.ok) {
    throw new SandboxError("E_SANDBOX_UNAVAILABLE", `${probe.reason}. Fix: ${probe.fix}`, {
      details: { backend: "bwrap", reason: probe.reason, fix: probe.fix },
    });
  }
  let mergedUsr = false;
  try {
    mergedUsr = Deno.lstatSync("/bin").isSymlink;
  } catch {
    mergedUsr = false; // No /bin at all: bind what exists.
  }
  const facts = {
    bwrap: probe.path,
    mergedUsr,
    seccompFilter: compileSeccomp(seccompArchFor(Deno.build.arch), { network }),
  };
  cachedFacts.set(network, facts);
  return facts;
}
