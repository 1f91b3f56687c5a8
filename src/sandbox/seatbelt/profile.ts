/**
 * The Seatbelt profile (SBPL) for a policy: the macOS counterpart of the bubblewrap argv.
 *
 * Deny by default. In SBPL the **last** matching rule wins, which the layout relies on:
 *
 * 1. process rules: fork, and signals and process information only within the sandbox;
 * 2. a named list of readable sysctls and a minimal list of Mach services ({@link SYSCTLS},
 *    {@link MACH_SERVICES});
 * 3. read-only system paths ({@link SYSTEM_READ_PATHS}); `/dev/null`, the terminal and PTYs
 *    ({@link DEVICE_PATHS}, {@link TTY_REGEX}); `stat()` of the directories above every granted path;
 * 4. the policy, ordered like bubblewrap's binds (shallowest first, then exec, read, write, protect), so
 *    a deeper rule overrides a shallower one: the target (`literal`) and the `exec` entries
 *    (`process-exec` and `file-read*`), `fs.read` (`file-read*`), `fs.write` and the private temp dir
 *    (`file-read*` and `file-write*`), and `file-write*` denials for read-only paths inside writable
 *    roots (an `fs.read` or `exec` entry, the target, or a strict-write `protect` path);
 * 5. the network: `(allow network*)` plus DNS and TLS configuration when the policy says `on`, otherwise
 *    an explicit `(deny network*)`;
 * 6. last, `file-write-unlink` denied on every directory above a writable root or a read-only path
 *    inside one: renaming a parent away is how a path-based sandbox is bypassed.
 *
 * **Exec entries are `subpath`s.** The plan is pure and cannot stat, so it cannot tell a program from a
 * directory. A `subpath` matches the path itself and everything under it: for a program it grants
 * exactly what a `literal` would (nothing lies under a file), for a directory it grants its programs, as
 * the policy spec says. The target program, which is always a file, is a `literal`.
 *
 * Every path goes through {@link sbplString}; comments hold constant text only, never a path.
 *
 * @module
 */
import type { Policy } from "../../policy/mod.ts";
import type { LaunchRequest } from "../launch_plan.ts";
import { sbplString } from "./escape.ts";
import { MACH_SERVICES, NETWORK_MACH_SERVICES } from "./mach_services.ts";
import { NET_PROXY_PORT } from "../net_proxy.ts";
import { isWithin } from "../../fsafe/mod.ts";
import { ancestorsOf, assertProfilePath, pathDepth } from "./paths.ts";
import { SYSCTLS } from "./sysctls.ts";
import {
  DEVICE_PATHS,
  NETWORK_READ_PATHS,
  type PathFilterKind,
  SYSTEM_READ_PATHS,
  TTY_REGEX,
} from "./system_paths.ts";

/** What an allow-list policy reads for TLS: the certificates (no resolver configuration). */
const PROXY_READ_PATHS = NETWORK_READ_PATHS.filter((entry) => entry.path === "/private/etc/ssl");

/** The Mach service TLS needs under an allow list: certificate evaluation (no DNS or proxy settings). */
const PROXY_MACH_SERVICES = NETWORK_MACH_SERVICES.filter((entry) => entry.name === "com.apple.trustd.agent");

/** Per-launch options of the Seatbelt profile (the same `protect` as bubblewrap's). */
export interface SeatbeltOptions {
  /**
   * Paths kept read-only inside the writable roots (strict-write; computed by `realizePolicy`). Each
   * gets a `file-write*` denial, and its parents `file-write-unlink` denials. Empty or absent: none.
   */
  readonly protect?: readonly string[];
  /**
   * A private temp directory the spawner created for this run (absolute, resolved through symlinks):
   * readable and writable, and `TMPDIR` in the plan's environment. macOS has no tmpfs to mount, so
   * without it nothing but `fs.write` is writable. Absent: none.
   */
  readonly tmpDir?: string;
  /**
   * Secrets the grants only contain (directories and files; computed by `coverSecrets`): neither
   * readable nor writable, denied after every grant. Empty or absent: none.
   */
  readonly hide?: readonly string[];
  readonly hideFiles?: readonly string[];
}

/** How a path of the policy is used; the order is bubblewrap's bind order at equal depth. */
type Layer = "exec" | "read" | "write" | "protect";
const LAYER_ORDER: Readonly<Record<Layer, number>> = { exec: 0, read: 1, write: 2, protect: 3 };

interface LayerEntry {
  readonly path: string;
  readonly layer: Layer;
  readonly filter: PathFilterKind;
}

/** `(literal "…")` or `(subpath "…")`. */
function pathFilter(filter: PathFilterKind, path: string): string {
  return `(${filter} ${sbplString(path)})`;
}

/** One rule; several filters go one per line, so each path sits on its own line. */
function rule(
  action: "allow" | "deny",
  operations: readonly string[],
  filters: readonly string[] = [],
): string {
  const head = `(${action} ${operations.join(" ")}`;
  if (filters.length === 0) return `${head})`;
  if (filters.length === 1) return `${head} ${filters[0]})`;
  return `${head}\n${filters.map((filter) => `  ${filter}`).join("\n")})`;
}

/** Checks every path of the launch, naming the field of the first bad one. */
function checkPaths(policy: Policy, request: LaunchRequest, options: SeatbeltOptions): void {
  assertProfilePath(request.program, "program");
  policy.exec.forEach((path, i) => assertProfilePath(path, `exec[${i}]`));
  policy.fs.read.forEach((path, i) => assertProfilePath(path, `fs.read[${i}]`));
  policy.fs.write.forEach((path, i) => assertProfilePath(path, `fs.write[${i}]`));
  (options.protect ?? []).forEach((path, i) => assertProfilePath(path, `protect[${i}]`));
  [...(options.hide ?? []), ...(options.hideFiles ?? [])].forEach((path, i) =>
    assertProfilePath(path, `hide[${i}]`)
  );
  if (options.tmpDir !== undefined) assertProfilePath(options.tmpDir, "tmpDir");
}

/** The policy's paths in bubblewrap's bind order: shallowest first, then exec, read, write, protect. */
function layers(policy: Policy, request: LaunchRequest, options: SeatbeltOptions): LayerEntry[] {
  const entries: LayerEntry[] = [
    { path: request.program, layer: "exec", filter: "literal" },
    ...policy.exec.filter((path) => path !== request.program).map((path) => ({
      path,
      layer: "exec" as const,
      filter: "subpath" as const,
    })),
    ...policy.fs.read.map((path) => ({ path, layer: "read" as const, filter: "subpath" as const })),
    ...policy.fs.write.map((path) => ({ path, layer: "write" as const, filter: "subpath" as const })),
    ...(options.tmpDir === undefined
      ? []
      : [{ path: options.tmpDir, layer: "write" as const, filter: "subpath" as const }]),
    ...(options.protect ?? []).map((path) => ({
      path,
      layer: "protect" as const,
      filter: "subpath" as const,
    })),
  ];
  // Array.prototype.sort is stable: entries of equal depth and layer keep the policy's order.
  return entries.sort((a, b) =>
    pathDepth(a.path) - pathDepth(b.path) || LAYER_ORDER[a.layer] - LAYER_ORDER[b.layer]
  );
}

/** Sorted, without duplicates (code-unit order, so the output never depends on the locale). */
function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The rules every profile starts with (no input changes them), written once per process. */
let head: readonly string[] | undefined;
function staticHead(): readonly string[] {
  head ??= [
    "; Specter Seatbelt profile, generated from the policy for one launch. Do not edit.",
    "; Deny by default. When several rules match, the last one wins: later denials override grants.",
    "(version 1)",
    "(deny default)",
    "",
    "; Processes: fork; signals and process information only within this sandbox, never the supervisor.",
    rule("allow", ["process-fork"]),
    rule("allow", ["signal"], ["(target same-sandbox)"]),
    rule("allow", ["process-info*"], ["(target same-sandbox)"]),
    "",
    "; System facts programs ask for (uname, CPU count, page size). Not the process table, whose",
    "; kern.procargs2 would show other processes' arguments and environment.",
    rule("allow", ["sysctl-read"], SYSCTLS.map((entry) => `(${entry.filter} ${sbplString(entry.name)})`)),
    "",
    "; Mach services: user and group lookups, and libc's change notifications.",
    rule("allow", ["mach-lookup"], MACH_SERVICES.map((entry) => `(global-name ${sbplString(entry.name)})`)),
    "",
    "; Read-only system files: libraries, frameworks, shared data, a minimal /private/etc.",
    rule("allow", ["file-read*"], SYSTEM_READ_PATHS.map((entry) => pathFilter(entry.filter, entry.path))),
    "",
    "; Devices: /dev/null, the controlling terminal and pseudo-terminals (read, write, ioctl).",
    rule("allow", ["pseudo-tty"]),
    rule("allow", ["file-read*", "file-write*", "file-ioctl"], [
      ...DEVICE_PATHS.map((entry) => pathFilter(entry.filter, entry.path)),
      `(regex #"${TTY_REGEX}")`,
    ]),
  ];
  return head;
}

/**
 * The SBPL profile for running `request.program` under `policy`. Pure and deterministic: the same
 * inputs always give the same text. Only `request.program` is used from the request (the working
 * directory and environment are the spawner's). Throws `E_SANDBOX_START` for a path that cannot be
 * written safely (relative, not normalized, NUL, lone surrogate, longer than macOS's `PATH_MAX`).
 */
export function seatbeltProfile(
  policy: Policy,
  request: LaunchRequest,
  options: SeatbeltOptions = {},
): string {
  checkPaths(policy, request, options);
  const entries = layers(policy, request, options);
  const writeRoots = entries.filter((entry) => entry.layer === "write").map((entry) => entry.path);
  const network = policy.network === "on";
  const allowList = typeof policy.network === "object";

  const out: string[] = [...staticHead()];

  // stat() of every directory above a granted path: realpath(3), getcwd(3) and shells walk them.
  // Metadata only: no file contents and no directory listings.
  const granted = [
    ...entries.map((entry) => entry.path),
    ...SYSTEM_READ_PATHS.map((entry) => entry.path),
    ...DEVICE_PATHS.map((entry) => entry.path),
    ...(network ? NETWORK_READ_PATHS.map((entry) => entry.path) : []),
    ...(allowList ? PROXY_READ_PATHS.map((entry) => entry.path) : []),
  ];
  out.push(
    "",
    "; stat() of the directories above every granted path (realpath, getcwd): no contents, no listings.",
    rule(
      "allow",
      ["file-read-metadata"],
      sortedUnique(granted.flatMap(ancestorsOf)).map((path) => pathFilter("literal", path)),
    ),
    "",
    "; The policy, shallowest path first so deeper rules win: the target (literal) and exec entries",
    "; (subpath: a program or a directory of programs), fs.read, fs.write and the private temp dir.",
    "; Read-only paths inside a writable root get a write denial, as under bubblewrap.",
  );
  if (options.tmpDir === undefined) {
    out.push("; No private temp dir was given: nothing but fs.write and the devices above is writable.");
  }

  const islands: string[] = [];
  for (const entry of entries) {
    const filter = pathFilter(entry.filter, entry.path);
    const insideWritable = writeRoots.some((root) => root !== entry.path && isWithin(entry.path, root));
    switch (entry.layer) {
      case "exec":
        out.push(rule("allow", ["process-exec", "file-read*"], [filter]));
        break;
      case "read":
        out.push(rule("allow", ["file-read*"], [filter]));
        break;
      case "write":
        out.push(rule("allow", ["file-read*", "file-write*"], [filter]));
        break;
      case "protect":
        break; // Nothing to grant: a protect path only gets the write denial below.
    }
    if (entry.layer === "protect" || (entry.layer !== "write" && insideWritable)) {
      out.push(rule("deny", ["file-write*"], [filter]));
      islands.push(entry.path);
    }
  }

  out.push("");
  if (network) {
    out.push(
      "; Network: allowed by the policy, with the resolver, proxy and certificate configuration.",
      rule("allow", ["network*"]),
      rule(
        "allow",
        ["mach-lookup"],
        NETWORK_MACH_SERVICES.map((entry) => `(global-name ${sbplString(entry.name)})`),
      ),
      rule("allow", ["file-read*"], NETWORK_READ_PATHS.map((entry) => pathFilter(entry.filter, entry.path))),
    );
  } else if (allowList) {
    out.push(
      "; Network: an allow list, enforced by Specter's proxy; here only the way to it is opened (at the",
      "; end of the profile). TLS certificates, no resolver: names are the proxy's to resolve.",
      rule("deny", ["network*"]),
      rule(
        "allow",
        ["mach-lookup"],
        PROXY_MACH_SERVICES.map((entry) => `(global-name ${sbplString(entry.name)})`),
      ),
      rule("allow", ["file-read*"], PROXY_READ_PATHS.map((entry) => pathFilter(entry.filter, entry.path))),
    );
  } else {
    out.push("; Network: none (also denied by default; stated for auditors).", rule("deny", ["network*"]));
  }

  // Last, so that no grant above can override them.
  const unlinkDenied = sortedUnique([...writeRoots, ...islands].flatMap(ancestorsOf));
  if (unlinkDenied.length > 0) {
    out.push(
      "",
      "; The directories above writable roots and read-only paths cannot be renamed or removed: moving a",
      "; parent away would carry the path out from under its rules.",
      rule("deny", ["file-write-unlink"], unlinkDenied.map((path) => pathFilter("literal", path))),
    );
  }
  const hidden = sortedUnique([...(options.hide ?? []), ...(options.hideFiles ?? [])]);
  if (hidden.length > 0) {
    out.push(
      "",
      "; Secrets the grants above only contain (src/sandbox/secrets.ts): last, so no grant overrides it.",
      rule("deny", ["file-read*", "file-write*"], hidden.map((path) => pathFilter("subpath", path))),
    );
  }
  if (allowList) {
    // Last, so nothing above overrides it: outbound TCP to the proxy's loopback port only (Seatbelt
    // accepts only "localhost" or "*" as the host of an ip filter); no inbound, no other port.
    out.push(
      "",
      "; The network proxy (allow list): outbound to its loopback port only.",
      rule("allow", ["network-outbound"], [`(remote ip ${sbplString(`localhost:${NET_PROXY_PORT}`)})`]),
    );
  }
  return `${out.join("\n")}\n`;
}
