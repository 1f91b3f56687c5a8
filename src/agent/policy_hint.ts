/**
 * The policy hint: one line that tells an agent a command failed on something the sandbox forbids, not
 * on a bug of its own: "command not found" for a program the policy does not show, "Read-only file
 * system", "Permission denied" or "No such file or directory" for a path the policy hides (or covers:
 * a secret), and a network error when the policy has no network. Without it, an agent reads `ls: command not found` as a broken machine and tries to install
 * things.
 *
 * The last lines of a failed command's output are scanned for those messages (bash, dash, zsh, coreutils,
 * Python); each path they name is checked against the policy, and against the host, so that a file
 * that does not exist anywhere gets no hint. The output is the program's, hence hostile: the hint only
 * ever names a path the output named and the policy's own name, and says nothing the host's `lstat`
 * would not.
 *
 * @module
 */
import { resolve } from "node:path";
import { isWithin } from "../fsafe/mod.ts";
import type { Policy } from "../policy/mod.ts";
import { ETC_BINDS, SECRET_PATHS, secretHomes, secretMasks, SYSTEM_BINDS } from "../sandbox/mod.ts";

/** How many of the output's last lines are scanned. */
export const HINT_LINES = 20;

/** Longest path (and program name) a hint names: a longer one is not a path a message would print. */
const MAX_PATH = 1024;

/** Where a path stands under a policy. */
export type Visibility = "writable" | "read_only" | "scratch" | "hidden" | "secret";

/** What the hint needs to know besides the output. */
export interface HintContext {
  /** The session's policy (resolved paths). */
  readonly policy: Policy;
  /** The session's working directory (relative paths in messages resolve against it). */
  readonly cwd: string;
  /** The caller's home (`${home}`). */
  readonly home: string;
  /** The `PATH` inside the sandbox. */
  readonly sandboxPath: string;
  /** True when the path exists on the host (default: `lstat`). */
  readonly exists?: (path: string) => boolean;
  /** The first line of a file on the host, or null (default: reads at most 256 bytes). */
  readonly firstLine?: (path: string) => string | null;
}

/** Trees every sandbox has on its own (not the host's): writable scratch. */
const SCRATCH = ["/tmp", "/dev/shm"];

/** Where `path` (absolute, normalized) stands under `ctx.policy`. */
export function visibility(path: string, ctx: HintContext): Visibility {
  const { policy } = ctx;
  const roots = [...policy.exec, ...policy.fs.read, ...policy.fs.write, ...(policy.fs.sockets ?? [])];
  const homes = secretHomes(ctx.home);
  const masks = secretMasks(roots, homes);
  if ([...masks.dirs, ...masks.files].some((mask) => isWithin(path, mask))) return "secret";
  if (policy.fs.write.some((root) => isWithin(path, root))) return "writable";
  // Grants are bound on top of the scratch /tmp: a workspace in /tmp is read-only there.
  if (roots.some((root) => isWithin(path, root))) return "read_only";
  // The sandbox's own /tmp: writable, and not the host's (a host path there is hidden).
  if (SCRATCH.some((tree) => isWithin(path, tree))) return "scratch";
  const system = [...SYSTEM_BINDS, ...ETC_BINDS, "/lib", "/lib64", "/proc", "/dev"];
  if (system.some((root) => isWithin(path, root))) return "read_only";
  const secret = SECRET_PATHS.some(({ path: entry }) =>
    entry.startsWith("~/")
      ? homes.some((home) => isWithin(path, `${home}${entry.slice(1)}`))
      : isWithin(path, entry)
  );
  return secret ? "secret" : "hidden";
}

function lexists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false; // Absent or unreachable: no hint about it.
  }
}

function readFirstLine(path: string): string | null {
  let file: Deno.FsFile | undefined;
  try {
    file = Deno.openSync(path, { read: true });
    const buffer = new Uint8Array(256);
    const n = file.readSync(buffer) ?? 0;
    return new TextDecoder().decode(buffer.subarray(0, n)).split("\n")[0]!;
  } catch {
    return null; // Unreadable: no interpreter to name.
  } finally {
    file?.close();
  }
}

/** The preset's or file's name as a person writes it after --policy. */
function policyName(policy: Policy): string {
  return policy.source.replace(/^preset:/, "").replace(/^file:/, "");
}

/** Messages that name a path, and the words that follow it. */
const PATH_ERRORS = /(No such file or directory|Permission denied|Read-only file system|bad interpreter)/;
const NOT_FOUND = [
  /(?:^|: )([^\s:]+): command not found$/, // bash
  /command not found: (\S+)$/, // zsh
  /^\S*sh: \d+: ([^\s:]+): not found$/, // dash
  /^(?:\/usr)?\/bin\/env: ['‘]([^'’/]+)['’]: No such file or directory$/, // a script's "#!/usr/bin/env NAME"
];
const EXECVP = /^bwrap: execvp (.+): No such file or directory$/;
/** What programs print when there is no network at all (no interface but a loopback, no resolver). */
const NO_NETWORK =
  /Network is unreachable|Temporary failure in name resolution|Could not resolve host|Name or service not known|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|No address associated with hostname/;

/** Path-like parts of a message line, nearest the error last. */
function pathsIn(line: string): string[] {
  const found: string[] = [];
  for (const match of line.matchAll(/['"‘`]([^'"’`]+)['"’`]/g)) found.push(match[1]!);
  for (const part of line.split(": ")) {
    const bare = part.trim();
    if (/^(?:\/|\.\.?\/|~\/)?[^\s]+$/.test(bare) && (bare.includes("/") || bare.includes("."))) {
      found.push(bare);
    }
  }
  return found.filter((path) => path.length <= MAX_PATH && !path.includes("\0"));
}

/**
 * The hint for `output` (a failed command's), or undefined when nothing in its last lines is the
 * policy's doing.
 */
export function policyHint(output: string, ctx: HintContext): string | undefined {
  const exists = ctx.exists ?? lexists;
  const name = policyName(ctx.policy);
  const lines = output.split(/\r?\n/).map((line) => line.trimEnd()).filter((l) => l !== "").slice(
    -HINT_LINES,
  );
  for (const line of lines.reverse()) {
    if (ctx.policy.network === "off" && NO_NETWORK.test(line)) {
      return `[specter: there is no network under policy "${name}"; a --policy FILE with network "on" ` +
        `(and --ack-network) allows it]`;
    }
    if (typeof ctx.policy.network === "object" && NO_NETWORK.test(line)) {
      // Through the proxy a client never resolves a name itself: this one went around it.
      return `[specter: under policy "${name}" only the allow list's hosts are reachable, and only through ` +
        "the proxy that HTTPS_PROXY and HTTP_PROXY name (no DNS, no direct connection): this program did " +
        "not use it]";
    }
    const execvp = EXECVP.exec(line);
    if (execvp !== null) {
      const hint = interpreterHint(execvp[1]!, ctx, name);
      if (hint !== undefined) return hint;
    }
    for (const pattern of NOT_FOUND) {
      const match = pattern.exec(line);
      if (match === null) continue;
      const hint = match[1]!.includes("/")
        ? pathHint(match[1]!, "missing", ctx, name, exists)
        : programHint(match[1]!, ctx, name, exists);
      if (hint !== undefined) return hint;
    }
    const error = PATH_ERRORS.exec(line);
    if (error === null) continue;
    const kind = error[1] === "Read-only file system" ? "read_only" : "missing";
    for (const path of pathsIn(line).reverse()) {
      const hint = pathHint(path, kind, ctx, name, exists);
      if (hint !== undefined) return hint;
    }
  }
  return undefined;
}

function absolute(path: string, ctx: HintContext): string {
  if (path.startsWith("~/")) return resolve(ctx.home, path.slice(2));
  return resolve(ctx.cwd, path);
}

function pathHint(
  written: string,
  kind: "read_only" | "missing",
  ctx: HintContext,
  name: string,
  exists: (path: string) => boolean,
): string | undefined {
  const path = absolute(written, ctx);
  const seen = visibility(path, ctx);
  if (kind === "read_only") {
    if (seen === "writable" || seen === "scratch") return undefined;
    const inWorkspace = ctx.policy.fs.read.some((root) => isWithin(path, root) && isWithin(ctx.cwd, root));
    const how = inWorkspace
      ? "--policy workspace --ack-unsafe-write makes the working directory writable"
      : "--policy FILE with fs.write (and --ack-unsafe-write) makes a host path writable";
    return `[specter: "${path}" is read-only under policy "${name}"; writes go to /tmp (private to the session); ${how}]`;
  }
  if (seen === "writable" || seen === "read_only" || !exists(path)) return undefined;
  if (seen === "secret") {
    return `[specter: "${path}" holds secrets and is hidden by policy "${name}"; only a --policy FILE whose ` +
      `fs.read names it shows it]`;
  }
  const scratch = seen === "scratch" ? " (the sandbox's /tmp is its own)" : "";
  return `[specter: "${path}" is hidden by policy "${name}"${scratch}; --policy FILE with fs.read ` +
    `${JSON.stringify([path])} would show it]`;
}

function programHint(
  program: string,
  ctx: HintContext,
  name: string,
  exists: (path: string) => boolean,
): string | undefined {
  if (program.length > MAX_PATH) return undefined;
  const hostPath = (Deno.env.get("PATH") ?? "").split(":");
  const dirs = [...new Set([...ctx.sandboxPath.split(":"), ...hostPath])].filter((d) => d.startsWith("/"));
  for (const dir of dirs) {
    const path = `${dir}/${program}`;
    if (!exists(path)) continue;
    const seen = visibility(path, ctx);
    if (seen === "hidden" || seen === "secret") {
      const how = name === "agent"
        ? `--policy FILE with exec ${JSON.stringify([dir])} lets it run`
        : `--policy agent (or a --policy FILE with exec ${JSON.stringify([dir])}) lets it run`;
      return `[specter: "${program}" (${path}) is not visible under policy "${name}"; ${how}]`;
    }
    if (!ctx.sandboxPath.split(":").includes(dir)) {
      return `[specter: "${program}" (${path}) is not on the sandbox's PATH under policy "${name}"; run it ` +
        `as ${path}]`;
    }
    return undefined; // Visible and on PATH: not the policy's doing.
  }
  return undefined;
}

function interpreterHint(program: string, ctx: HintContext, name: string): string | undefined {
  const first = (ctx.firstLine ?? readFirstLine)(program);
  if (first === null || !first.startsWith("#!")) return undefined;
  const interpreter = first.slice(2).trim().split(/\s+/)[0] ?? "";
  if (!interpreter.startsWith("/") || interpreter.length > MAX_PATH) return undefined;
  const seen = visibility(interpreter, ctx);
  if (seen === "read_only" || seen === "writable") return undefined;
  const dir = interpreter.slice(0, interpreter.lastIndexOf("/")) || "/";
  const how = name === "agent"
    ? `--policy FILE with exec ${JSON.stringify([interpreter])} lets it run`
    : `--policy agent (or a --policy FILE with exec ${JSON.stringify([dir])}) lets it run`;
  return `[specter: "${program}" is a script for "${interpreter}", which is not visible under policy ` +
    `"${name}"; ${how}]`;
}
