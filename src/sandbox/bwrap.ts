/**
 * The Linux backend: a bubblewrap argv (plus a seccomp filter on fd 3) for a policy.
 *
 * Layout inside the sandbox, deny by default:
 * - an empty tmpfs root; read-only binds of the libraries and data programs need (`/usr/lib*`,
 *   `/usr/share`) and of a minimal `/etc`, but **no** binary directory unless `exec` lists it;
 * - the target program, and each `exec` entry, bound read-only at its own path (the exec allowlist:
 *   nothing else is there to execute);
 * - `fs.read` entries read-only, `fs.write` entries read-write; `/proc`, a minimal `/dev`, tmpfs `/tmp`;
 *   then the root is remounted read-only, so only `/tmp`, `/dev` and `fs.write` can be written;
 * - the request's data files (shell integration) read-only beneath `/run/specter`, from pipes;
 * - every namespace unshared (network only when the policy allows it), `--die-with-parent`,
 *   `--cap-drop ALL`, uid/gid 65534 inside (mapped to the caller's; as root, to a uid of its own, with
 *   idmapped grants: see `HostFacts.rootLauncher`), a cleared environment with only the program's env.
 *
 * No `--new-session`: it would leave the program without a controlling terminal, and job control with it.
 * TIOCSTI is stopped by seccomp instead, and the sandbox only ever sees its own fresh PTY. On a terminal the
 * program is started through `setsid --ctty` (`LaunchRequest.ownSession`): it leads the terminal's session,
 * and bwrap, outside it, never gets the terminal's signals (a ctrl-c that killed bwrap ended the sandbox).
 *
 * @module
 */
import { isWithin } from "../fsafe/mod.ts";
import { pathFault, type Policy } from "../policy/mod.ts";
import {
  DATA_ROOT,
  type DataFile,
  type HostFacts,
  launcherArgs,
  type LaunchPlan,
  type LaunchRequest,
  type OpenedFacts,
  PERSIST_HOME,
  type PlanCopy,
  type PlanDescriptor,
  type PlanOptions,
  programCommand,
  programLaunchers,
} from "./launch_plan.ts";
import { maskArgs } from "./masks.ts";
import { scratchArgs } from "./scratch.ts";
import { seccompOptionsOf } from "./host_sockets.ts";
import { netProxyOf, withProxyEnv } from "./net_proxy.ts";
import { SandboxError } from "../errors.ts";

/**
 * The uid and gid the program runs as inside the sandbox (`nobody` on most systems). Its user namespace maps
 * it to the caller's uid and gid on the host, or, started by root, to a uid of its own whose writes
 * idmapped grants store as root's: either way what it writes through a grant is the caller's.
 */
export const SANDBOX_ID = 65534;

/** The fd bwrap reads the seccomp filter from. */
export const SECCOMP_FD = 3;

/** Read-only system binds every sandbox gets (missing ones are skipped). No binary directories. */
export const SYSTEM_BINDS = ["/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32", "/usr/share"] as const;

/** Top-level directories that are symlinks into `/usr` on a merged-usr host. */
export const MERGED_USR_LINKS = [
  ["usr/lib", "/lib"],
  ["usr/lib64", "/lib64"],
  ["usr/bin", "/bin"],
  ["usr/sbin", "/sbin"],
] as const;

/**
 * The minimal `/etc` (read-only, each skipped when missing): user and group names, the loader's cache,
 * the time zone, Debian's alternatives symlinks and bash's system start-up file. Each bind costs two
 * mount calls at every start, so files only tools like ldconfig read (`ld.so.conf*`) are left out;
 * terminfo lives in `/usr/share`.
 */
export const ETC_BINDS = [
  "/etc/passwd",
  "/etc/group",
  "/etc/nsswitch.conf",
  "/etc/ld.so.cache",
  "/etc/localtime",
  "/etc/alternatives",
  "/etc/bash.bashrc",
] as const;

/**
 * Extra `/etc` files bound only when the policy allows network (DNS and TLS need them). Of `/etc/ssl` only
 * the public parts: `/etc/ssl/private` holds the host's TLS keys (root-only, and root's sandbox is root).
 */
export const ETC_NETWORK_BINDS = [
  "/etc/hosts",
  "/etc/resolv.conf",
  "/etc/host.conf",
  "/etc/gai.conf",
  "/etc/services",
  "/etc/protocols",
  "/etc/ssl/certs",
  "/etc/ssl/openssl.cnf",
  "/etc/ca-certificates",
] as const;

/**
 * The `/etc` files bound for an allow-list policy: only what TLS needs (certificates and OpenSSL's
 * configuration), so HTTPS through the proxy's CONNECT verifies. No resolver configuration (`resolv.conf`,
 * `hosts`, `gai.conf`): names are the proxy's to resolve, and nothing inside can reach a DNS server.
 */
export const ETC_PROXY_BINDS = ["/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ca-certificates"] as const;

/** Per-launch options of the bwrap plan (it reads `protect`, `opened`, `hide` and `hideFiles`). */
export type BwrapOptions = PlanOptions;

/** Facts of a path in a plan made without a realization (never spawned: it has no descriptors). */
const UNOPENED: OpenedFacts = { info: { identity: "unopened", kind: "unknown" } };

/** The fd bwrap blocks on before it runs the program: Specter checks the mounts, then writes a byte. */
export const BLOCK_FD = 4;
/** The fd bwrap writes `{"child-pid": …}` to once the sandbox's first process exists. */
export const INFO_FD = 5;
/** Data files, then the descriptors of bound paths, are passed from this fd on. */
export const FIRST_BIND_FD = 6;

/** Throws unless `dest` is normalised (no "..", ".", "//", NUL) and strictly beneath `DATA_ROOT`. */
function checkDataDest(dest: string): void {
  if (pathFault(dest) !== null || dest === DATA_ROOT || !isWithin(dest, DATA_ROOT)) {
    throw new SandboxError(
      "E_SANDBOX_START",
      `A data file may only go beneath "${DATA_ROOT}", not "${dest}"`,
    );
  }
}

/**
 * The args that place `files` (each read from its own fd, from `FIRST_BIND_FD` on) and the exec-only copy
 * of the program (`copy`, read from the next fd), with the plan's files and copies. Each lands read-only
 * beneath `DATA_ROOT`, made on the sandbox's own root before any grant is bound, so a grant can at most
 * cover it, never receive it; a destination elsewhere is refused.
 */
function dataArgs(
  files: readonly DataFile[],
  copy: { path: string; dest: string } | null,
): { args: string[]; files: LaunchPlan["files"]; copies: PlanCopy[] } {
  const args: string[] = [];
  const planFiles: LaunchPlan["files"][number][] = [];
  for (const [i, { dest, content }] of files.entries()) {
    checkDataDest(dest);
    const target = FIRST_BIND_FD + i;
    args.push("--perms", "0444", "--ro-bind-data", String(target), dest);
    planFiles.push({ target, purpose: `data file ${dest}`, content });
  }
  const copies: PlanCopy[] = [];
  if (copy !== null) {
    checkDataDest(copy.dest);
    const target = FIRST_BIND_FD + files.length;
    // Executable, not readable: the kernel makes a process that cannot read its program non-dumpable.
    args.push("--perms", "0111", "--ro-bind-data", String(target), copy.dest);
    copies.push({ target, ...copy });
  }
  return { args, files: planFiles, copies };
}

/** How a path is bound; binds are applied shallowest first so deeper ones win. */
type BindKind = "exec" | "read" | "socket" | "write" | "protect";
const BIND_ORDER: Readonly<Record<BindKind, number>> = { exec: 0, read: 1, socket: 2, write: 3, protect: 4 };

/** One bind: the host path, its kind, and where it lands inside the sandbox. */
interface Bind {
  readonly path: string;
  readonly kind: BindKind;
  readonly dest: string;
}

/** True when a read-only bind strictly above `target` exposes it and no writable bind contains it. */
function covered(target: string, binds: readonly Bind[]): boolean {
  const above = (root: string) => root !== target && isWithin(target, root);
  const visible = binds.some((b) => (b.kind === "exec" || b.kind === "read") && above(b.dest));
  return visible && !binds.some((b) => b.kind === "write" && isWithin(target, b.dest));
}

/**
 * Where `path` lands inside the sandbox. On a merged-usr host `/bin`, `/sbin`, `/lib` and `/lib64` are
 * symlinks there too, so a bind at `/bin/sh` would have to be created through a dangling link (bwrap:
 * "Can't create file"); it goes to `/usr/bin/sh`, which the `/bin` link then reaches.
 */
export function sandboxPath(path: string, mergedUsr: boolean): string {
  if (!mergedUsr) return path;
  for (const [target, link] of MERGED_USR_LINKS) {
    if (path === link || path.startsWith(`${link}/`)) return `/${target}${path.slice(link.length)}`;
  }
  return path;
}

/**
 * Builds the bwrap plan. Pure: the same policy, request and host facts always give the same plan.
 * The program starts in `request.cwd` when a policy path makes it visible, otherwise in `/tmp` (the
 * plan's `programCwd` says which).
 */
export function bwrapPlan(
  policy: Policy,
  request: LaunchRequest,
  host: HostFacts,
  options: BwrapOptions = {},
): LaunchPlan {
  const args: string[] = [
    "--unshare-all",
    ...(policy.network === "on" ? ["--share-net"] : []),
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    "--unshare-user",
    "--uid",
    String(SANDBOX_ID),
    "--gid",
    String(SANDBOX_ID),
    "--hostname",
    "specter",
  ];
  for (const path of SYSTEM_BINDS) args.push("--ro-bind-try", path, path);
  if (host.mergedUsr) {
    for (const [target, link] of MERGED_USR_LINKS) args.push("--symlink", target, link);
  } else {
    for (const path of ["/lib", "/lib64", "/lib32"]) args.push("--ro-bind-try", path, path);
  }
  for (const path of ETC_BINDS) args.push("--ro-bind-try", path, path);
  if (policy.network === "on") {
    for (const path of ETC_NETWORK_BINDS) {
      args.push("--ro-bind-try", path, path);
    }
  } else if (policy.network !== "off") {
    // An allow list keeps the sandbox's own network namespace (loopback only): the proxy is the way out.
    for (const path of ETC_PROXY_BINDS) args.push("--ro-bind-try", path, path);
  }
  args.push("--proc", "/proc", "--dev", "/dev");
  // Sized scratch tmpfs (/dev/shm, /tmp; /dev read-only), then host-wide /proc files masked.
  args.push(...scratchArgs(policy), ...maskArgs(host.maskedPaths));
  const data = dataArgs(
    request.dataFiles ?? [],
    request.execOnlyCopy === undefined ? null : { path: request.program, dest: request.execOnlyCopy },
  );
  args.push(...data.args);
  const firstBind = FIRST_BIND_FD + data.files.length + data.copies.length;

  // The exec allowlist (only these and the target exist as executables inside) and the fs allowlists.
  // Sorted by depth so that a deeper bind always lands on top of a shallower one: a read-only path
  // inside a writable root stays read-only, and strict-write protection sits on its root.
  const command = programCommand(request);
  const launchers = programLaunchers(request);
  const entries: { path: string; kind: BindKind }[] = [
    { path: request.program, kind: "exec" },
    // The launchers (setsid, prlimit), when there are any, must exist inside too.
    ...launchers.filter((path) => path !== request.program).map((path) => ({ path, kind: "exec" as const })),
    ...policy.exec.filter((path) => path !== request.program).map((path) => ({
      path,
      kind: "exec" as const,
    })),
    ...policy.fs.read.map((path) => ({ path, kind: "read" as const })),
    ...policy.fs.write.map((path) => ({ path, kind: "write" as const })),
    ...(policy.fs.sockets ?? []).map((path) => ({ path, kind: "socket" as const })),
    ...(options.protect ?? []).map((path) => ({ path, kind: "protect" as const })),
  ];
  const binds: Bind[] = entries.map((e) => ({ ...e, dest: sandboxPath(e.path, host.mergedUsr) }));
  const depth = (b: Bind) => b.dest.split("/").length;
  binds.sort((a, b) => depth(a) - depth(b) || BIND_ORDER[a.kind] - BIND_ORDER[b.kind]);
  const opened = options.opened;
  const descriptors: PlanDescriptor[] = [];
  for (const { path, kind, dest } of binds) {
    // An executable already visible read-only through an allowed directory is not bound again: the
    // bind would add nothing, and bwrap cannot bind onto a symlink there (Debian's /usr/bin/vim ->
    // /etc/alternatives/vim: "Can't create file"). Under a writable root it is still bound, read-only.
    if (kind === "exec" && covered(dest, binds)) continue;
    const facts = opened === undefined ? UNOPENED : opened.get(path);
    if (facts === undefined) {
      // A missing read/exec entry binds nothing; the program and its launcher must exist.
      if (path === request.program || launchers.includes(path)) {
        throw new SandboxError("E_SANDBOX_START", `The program "${path}" was not opened for the launch`);
      }
      continue;
    }
    // One fd per bind: bwrap closes each bind's fd once it is mounted.
    const target = firstBind + descriptors.length;
    const writable = kind === "write";
    args.push(writable ? "--bind-fd" : "--ro-bind-fd", String(target), dest);
    descriptors.push({ target, path, dest, purpose: kind, writable, identity: facts.info.identity });
  }

  // A session's persistent layer, writable, on top of everything bound above (it is not a host grant:
  // Specter made the directory and opened it without following links).
  if (options.persist !== undefined) {
    const facts = opened === undefined ? UNOPENED : opened.get(options.persist);
    if (facts === undefined) {
      throw new SandboxError("E_SANDBOX_START", `The persistent layer "${options.persist}" was not opened`);
    }
    const target = firstBind + descriptors.length;
    args.push("--bind-fd", String(target), PERSIST_HOME);
    descriptors.push({
      target,
      path: options.persist,
      dest: PERSIST_HOME,
      purpose: "persist",
      writable: true,
      identity: facts.info.identity,
    });
    // Its shell start-up files, read-only on top (the program cannot plant code its next shell runs).
    for (const path of options.persistProtect ?? []) {
      const file = opened === undefined ? UNOPENED : opened.get(path);
      if (file === undefined) throw new SandboxError("E_SANDBOX_START", `"${path}" was not opened`);
      const at = firstBind + descriptors.length;
      const dest = `${PERSIST_HOME}/${path.slice(options.persist.length + 1)}`;
      args.push("--ro-bind-fd", String(at), dest);
      descriptors.push({
        target: at,
        path,
        dest,
        purpose: "protect",
        writable: false,
        identity: file.info.identity,
      });
    }
  }

  // Artifacts a read grant shows: an empty read-only tmpfs on top of every bind (none is deeper).
  for (const path of options.hide ?? []) {
    const dest = sandboxPath(path, host.mergedUsr);
    args.push("--tmpfs", dest, "--remount-ro", dest);
  }
  // Secret files a grant contains: /dev/null, read-only (bwrap's binds are nodev, so opening it fails).
  for (const path of options.hideFiles ?? []) {
    args.push("--ro-bind", "/dev/null", sandboxPath(path, host.mergedUsr));
  }
  // Everything not mounted writable above (the tmpfs root, /etc, bin dirs) becomes read-only.
  args.push("--remount-ro", "/");

  const visible = [...policy.fs.read, ...policy.fs.write];
  const programCwd = visible.some((root) => isWithin(request.cwd, root)) ? request.cwd : "/tmp";
  args.push("--chdir", programCwd);

  // The program's environment; HOME points at the writable tmpfs unless the real one is visible.
  args.push("--clearenv");
  const netProxy = netProxyOf(policy);
  const env = { ...withProxyEnv(request.env, netProxy) };
  if (env.HOME !== undefined && !visible.some((root) => isWithin(env.HOME!, root))) env.HOME = "/tmp";
  if (options.persist !== undefined) env.HOME = PERSIST_HOME;
  for (const [name, value] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) {
    args.push("--setenv", name, value);
  }
  args.push("--seccomp", String(SECCOMP_FD));
  args.push("--block-fd", String(BLOCK_FD), "--info-fd", String(INFO_FD));
  // The exec-only copy runs in the program's stead (the program itself is still bound, as any exec entry).
  args.push(
    "--",
    ...(request.execOnlyCopy === undefined ? command : programCommand({
      ...request,
      program: request.execOnlyCopy,
    })),
  );
  const passed = request.passFiles ?? [];
  const highest = firstBind + descriptors.length;
  for (const file of passed) {
    // bwrap's own fds and the binds' must stay clear of what the program receives.
    if (file.target < highest) {
      throw new SandboxError(
        "E_SANDBOX_START",
        `Descriptor ${file.target} for the program is taken by the sandbox`,
      );
    }
  }

  const launcher = launcherArgs(host.rootLauncher);
  return {
    backend: "bwrap",
    argv: [...launcher, host.bwrap, ...args],
    argv0: launcher.length === 0 ? "bwrap" : "setpriv",
    // bwrap itself needs no environment; nothing of the caller's leaks through it.
    env: {},
    // bwrap's own cwd on the host is irrelevant to the program (it gets --chdir); "/" always exists.
    cwd: "/",
    programCwd,
    files: [
      { target: SECCOMP_FD, purpose: "seccomp-bpf filter", content: filterFor(policy, host) },
      ...data.files,
      ...passed,
    ],
    descriptors,
    ...(data.copies.length === 0 ? {} : { copies: data.copies }),
    ...(host.rootLauncher === null ? {} : { sandboxUid: host.rootLauncher.uid }),
    gate: { block: BLOCK_FD, info: INFO_FD },
    ...(request.ownSession === undefined ? {} : { programTakesTerminal: true }),
    policy,
    netProxy,
  };
}

/** The filter `policy` needs: with network off, a host socket grant needs the one allowing AF_UNIX. */
function filterFor(policy: Policy, host: HostFacts): Uint8Array {
  const options = seccompOptionsOf(policy);
  if (options.network || !options.hostSockets) return host.seccompFilter;
  if (host.seccompFilterHostSockets === undefined) {
    throw new SandboxError("E_SANDBOX_START", "No seccomp filter for a policy that grants host sockets");
  }
  return host.seccompFilterHostSockets;
}
