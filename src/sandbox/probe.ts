/**
 * Finding out whether a sandbox backend can run here, and the host facts a plan needs. A backend that
 * does not work is reported with the exact fix; Specter never falls back to a weaker one.
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import { compileSeccomp, seccompArchFor } from "./seccomp/mod.ts";
import { presentMasks } from "./masks.ts";
import { type HostFacts, launcherArgs } from "./launch_plan.ts";
import { rootSandboxUid } from "./root_mapping.ts";

/** The outcome of probing bubblewrap. */
export type BwrapProbe =
  | { readonly ok: true; readonly path: string; readonly version: string }
  | { readonly ok: false; readonly reason: string; readonly fix: string };

/** Where util-linux `setpriv` is looked for (needed only when Specter runs as root). */
export const SETPRIV_CANDIDATES = ["/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv"] as const;

const FIX_SETPRIV =
  "Install util-linux's setpriv (Debian/Ubuntu: apt-get install util-linux), or run Specter " +
  "as an unprivileged user";

function findExecutable(candidates: readonly string[]): string | undefined {
  return candidates.find((candidate) => {
    try {
      const info = Deno.statSync(candidate);
      return info.isFile && info.mode !== null && (info.mode & 0o111) !== 0;
    } catch {
      return false; // Not there: try the next place.
    }
  });
}

/**
 * How bwrap must be launched on this host: directly, or, when we are root, through `setpriv --reuid=UID
 * --regid=UID --clear-groups --nnp`, UID being this process's sandbox uid (`root_mapping.ts`): a uid of its
 * own, which no host service shares, with none of root's groups.
 */
export function rootLauncher(
  uid: number | null = Deno.uid(),
): { ok: true; launcher: HostFacts["rootLauncher"] } | { ok: false; reason: string; fix: string } {
  if (uid !== 0) return { ok: true, launcher: null };
  const setpriv = findExecutable(SETPRIV_CANDIDATES);
  if (setpriv === undefined) {
    return {
      ok: false,
      reason: "Specter runs as root, and without setpriv root's supplementary groups would reach the sandbox",
      fix: FIX_SETPRIV,
    };
  }
  return { ok: true, launcher: { setpriv, uid: rootSandboxUid() } };
}

/** Where util-linux `prlimit` is looked for (needed only when resource ceilings are set). */
export const PRLIMIT_CANDIDATES = ["/usr/bin/prlimit", "/bin/prlimit"] as const;

/** The `prlimit` launcher, or throws `E_SANDBOX_UNAVAILABLE`: ceilings are never silently dropped. */
export function findPrlimit(): string {
  const path = findExecutable(PRLIMIT_CANDIDATES);
  if (path === undefined) {
    throw new SandboxError(
      "E_SANDBOX_UNAVAILABLE",
      "Resource ceilings need util-linux prlimit, which was not found",
      {
        details: { fix: "Install util-linux (Debian/Ubuntu: apt-get install util-linux)" },
      },
    );
  }
  return path;
}

/** Where util-linux `setsid` is looked for (a sandboxed program on a terminal starts through it). */
export const SETSID_CANDIDATES = ["/usr/bin/setsid", "/bin/setsid"] as const;

/**
 * The `setsid` launcher, or null: without it a sandboxed program runs in bwrap's session, where a ctrl-c
 * also reaches bwrap (and ends the sandbox). Nothing about the sandbox's confinement depends on it.
 *
 * Only a file named `setsid` (util-linux's) counts: a link to a multi-call binary (busybox on Alpine,
 * toybox) has neither `--ctty` nor `--wait`, and every launch through it would print its usage and exit 1,
 * which would read as the program's own exit.
 */
export function findSetsid(candidates: readonly string[] = SETSID_CANDIDATES): string | null {
  const found = findExecutable(candidates.filter((candidate) => {
    try {
      return Deno.realPathSync(candidate).split("/").pop() === "setsid";
    } catch {
      return false; // Not there (or a dangling link): try the next place.
    }
  }));
  return found ?? null;
}

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
 * The probe's file system, also used by the seccomp tests' own bwrap runs: `/usr` and the top-level links
 * into it (or the directories, where they are directories), enough to run `/bin/true`. Never `/` itself: a
 * recursive bind of `/` copies every mount beneath it, root mode's attachments under `/run/specter` included
 * (in bwrap's copy `/run/specter` is not unbindable: seen in its `/proc/self/mountinfo`), and another launch
 * removing one in the middle of the copy's remount failed the probe (`E_SANDBOX_UNAVAILABLE: … remount
 * "/newroot/run/specter/mounts-…/0": No such file or directory`, seen in CI while agents started at once).
 */
export function probeRoot(): string[] {
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const top of ["/bin", "/sbin", "/lib", "/lib64"]) {
    let link: string | null = null;
    try {
      link = Deno.lstatSync(top).isSymlink ? Deno.readLinkSync(top) : null;
    } catch {
      continue; // Not there: nothing to mirror.
    }
    args.push(...(link === null ? ["--ro-bind", top, top] : ["--symlink", link, top]));
  }
  return args;
}

/**
 * Locates bwrap (`SPECTER_BWRAP`, else the usual paths) and runs a tiny sandbox with the same
 * namespaces Specter uses, to catch a kernel or AppArmor that forbids them.
 */
export function probeBwrap(env: { get(name: string): string | undefined } = Deno.env): BwrapProbe {
  const override = env.get("SPECTER_BWRAP");
  const candidates = override !== undefined ? [override] : BWRAP_CANDIDATES;
  const path = findExecutable(candidates);
  if (path === undefined) {
    return {
      ok: false,
      reason: `bubblewrap was not found (looked at ${candidates.join(", ")})`,
      fix: FIX_INSTALL,
    };
  }
  const root = rootLauncher();
  if (!root.ok) return { ok: false, reason: root.reason, fix: root.fix };
  // Probe exactly the way sessions start: through setpriv when we are root.
  const [program, ...prefix] = [...launcherArgs(root.launcher), path];
  let output: Deno.CommandOutput;
  try {
    output = new Deno.Command(program!, {
      args: [
        ...prefix,
        "--unshare-all",
        "--unshare-user",
        "--die-with-parent",
        ...probeRoot(),
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
  const root = rootLauncher();
  const facts: HostFacts = {
    bwrap: probe.path,
    rootLauncher: root.ok ? root.launcher : null,
    mergedUsr,
    maskedPaths: presentMasks(),
    seccompFilter: compileSeccomp(seccompArchFor(Deno.build.arch), { network }),
    seccompFilterHostSockets: compileSeccomp(seccompArchFor(Deno.build.arch), { network, hostSockets: true }),
  };
  cachedFacts.set(network, facts);
  return facts;
}
