/**
 * Realizing a policy against the filesystem, just before a launch: every path a launch binds (exec
 * allowlist, program, `fs.read`, `fs.write`, `fs.sockets`, strict-write protections) is opened once, by
 * descriptor, and what bwrap mounts is that descriptor (`--bind-fd`, `--ro-bind-fd`). Nothing is
 * looked up by name twice, so a sandboxed program that swaps a path component for a symlink between the
 * check and the mount (say, in a write root another run shares) changes nothing.
 *
 * A path may pass only through symlinks root made (`/bin -> usr/bin`, Debian's alternatives); any
 * other symlink is refused (`E_POLICY_SYMLINK`): the policy author resolves it by naming the real path.
 * Resolved paths are checked again where they land (`fs.write` through a root-made link to `/` is
 * `E_POLICY_BROAD_ROOT`).
 *
 * @module
 */
import { FileError, PolicyError, type PolicyProblem } from "../errors.ts";
import {
  closeFd,
  type FdInfo,
  fdInfo,
  isWithin,
  openBeneath,
  openNoSymlinks,
  openTrusted,
  reopenFd,
} from "../fsafe/mod.ts";
import { pathSafetyReason, type PathUse, type Policy } from "../policy/mod.ts";
import { type FoundName, ProtectedWatch, walkProtected } from "./protected_walk.ts";

/**
 * Names kept read-only inside every writable root in strict-write mode (`--strict-write`): files that
 * run code later (git hooks and config, shell start-up files, direnv) or hold credentials.
 */
export const STRICT_WRITE_PROTECTED = [
  ".git",
  ".gitconfig",
  ".gitmodules",
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".profile",
  ".zshrc",
  ".zprofile",
  ".zshenv",
  ".envrc",
  ".ssh",
  ".gnupg",
  ".netrc",
  ".npmrc",
] as const;

/**
 * Shell start-up files of a persistent home (`--persist`), bound read-only inside: a program could
 * otherwise leave code that the next shell of the session runs before its first prompt, and that code,
 * running in the shell, holds its marks' nonce. Missing ones are made empty first (a name the program may
 * not make). They are the user's to edit, from the host.
 */
export const PERSIST_STARTUP_FILES = [
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".bash_aliases",
  ".profile",
  ".inputrc",
  ".zshenv",
  ".zprofile",
  ".zshrc",
  ".zlogin",
  ".zlogout",
] as const;

/** One path opened for a launch. */
export interface OpenedPath {
  /** An `O_PATH` descriptor of the inode that will be mounted (close-on-exec; owned by the realization). */
  readonly fd: number;
  /** Where it really is (trusted links resolved). */
  readonly path: string;
  /** Its inode facts, `identity` among them (checked again in the sandbox's mount table). */
  readonly info: FdInfo;
}

/** A policy bound to the filesystem for one launch. */
export interface RealizedPolicy {
  /** The policy with every path replaced by its resolved location (missing read/exec entries stay as written). */
  readonly policy: Policy;
  /** Paths to keep read-only inside writable roots (strict-write); empty otherwise. */
  readonly protect: readonly string[];
  /** The persistent layer's start-up files ({@link PERSIST_STARTUP_FILES}), host paths; empty without one. */
  readonly persistProtect: readonly string[];
  /** Strict-write: the protected names of each write root before the run, to walk again after it. */
  readonly watch: ProtectedWatch | null;
  /** The working directory, resolved. */
  readonly cwd: string;
  /**
   * Every opened path, by the name the launch plan uses for it: the resolved path for policy entries and
   * protections, the requested path for `programs`. Missing read/exec entries have none (nothing to bind).
   */
  readonly opened: ReadonlyMap<string, OpenedPath>;
  /** Closes every descriptor (after the spawn has passed them on, or when the launch is abandoned). */
  close(): void;
}

/** What to realize besides the policy. */
export interface RealizeOptions {
  readonly cwd: string;
  readonly home: string;
  readonly strictWrite: boolean;
  /** Executables the launch runs (the program, the rlimit launcher): opened like exec entries, required. */
  readonly programs?: readonly string[];
  /**
   * A session's persistent layer (`--persist`): a directory Specter made, opened by descriptor without
   * following any link, and bound writable as the program's home (`PlanOptions.persist`).
   */
  readonly persist?: string;
}

/**
 * Opens and checks every path of `policy` for a launch. Throws `PolicyError` with `E_POLICY_SYMLINK` (a
 * path passes through a symlink root did not make), `E_POLICY_BROAD_ROOT` (a path resolves somewhere its
 * use forbids), `E_POLICY_PATH_MISSING` (a write grant, socket, program, or read/exec entry inside a write grant that does
 * not exist), naming the
 * field and both paths; `FileError` when a path cannot be opened at all. Owns the descriptors it returns.
 */
export function realizePolicy(policy: Policy, options: RealizeOptions): RealizedPolicy {
  const problems: PolicyProblem[] = [];
  const opened = new Map<string, OpenedPath>();
  const all: number[] = [];
  const close = () => {
    for (const fd of all) closeFd(fd);
    all.length = 0;
  };

  /** Opens `path`; returns where it really is, or null when it is missing (and may be). */
  const open = (path: string, field: string, use: PathUse | null, required: boolean): OpenedPath | null => {
    let fd: number;
    let real: string;
    try {
      const result = openTrusted(path);
      fd = result.fd;
      real = result.path;
    } catch (error: unknown) {
      if (!(error instanceof FileError)) throw error;
      if (error.code === "E_PATH_SYMLINK") {
        problems.push({
          code: "E_POLICY_SYMLINK",
          field,
          message: `Field "${field}" is "${path}": ${lowerFirst(error.message)}; name the real path instead`,
        });
        return null;
      }
      if (error.code === "E_PATH_NOT_FOUND") {
        if (required) {
          problems.push({
            code: "E_POLICY_PATH_MISSING",
            field,
            message: `Field "${field}" is "${path}", which does not exist`,
          });
        }
        return null;
      }
      throw error;
    }
    all.push(fd);
    const reason = real === path || use === null ? null : pathSafetyReason(real, use, options.home);
    if (reason !== null) {
      problems.push({
        code: "E_POLICY_BROAD_ROOT",
        field,
        message: `Field "${field}" is "${path}", which resolves through symlinks to "${real}" and ${reason}`,
      });
    }
    return { fd, path: real, info: fdInfo(fd) };
  };

  // Different entries may resolve to one place (/bin -> /usr/bin): each place is bound once.
  const resolve = (
    paths: readonly string[],
    field: string,
    use: PathUse,
    required: boolean,
    optional: readonly string[] = [],
  ): string[] => {
    const out: string[] = [];
    paths.forEach((path, i) => {
      const got = open(path, `${field}[${i}]`, use, required || !optional.includes(path));
      const real = got?.path ?? path;
      if (got !== null && !opened.has(real)) opened.set(real, got);
      if (!out.includes(real)) out.push(real);
    });
    return out;
  };

  try {
    // A missing read/exec entry binds nothing, except inside a write grant: there a sandboxed program
    // (this one earlier, or another run) could have moved it away for this launch and back afterwards,
    // getting write access to what was to be read-only. There it must exist.
    const inWrite = (path: string) => policy.fs.write.some((root) => isWithin(path, root));
    const maybe = (paths: readonly string[]) => paths.filter((path) => !inWrite(path));
    const write = resolve(policy.fs.write, "fs.write", "write", true);
    const exec = resolve(policy.exec, "exec", "exec", false, maybe(policy.exec));
    const read = resolve(policy.fs.read, "fs.read", "read", false, maybe(policy.fs.read));
    const sockets = policy.fs.sockets === undefined
      ? undefined
      : resolve(policy.fs.sockets, "fs.sockets", "read", true);
    for (const program of options.programs ?? []) {
      if (opened.has(program)) continue;
      const got = open(program, "(program)", null, true);
      if (got !== null) opened.set(program, got);
    }
    if (problems.length > 0) throw new PolicyError(problems);
    const persistProtect: string[] = [];
    if (options.persist !== undefined) {
      const fd = openNoSymlinks(options.persist);
      all.push(fd);
      const info = fdInfo(fd);
      if (info.kind !== "dir") {
        throw new FileError("E_FILE_TYPE", `The persistent layer "${options.persist}" is not a directory`, {
          details: { path: options.persist },
        });
      }
      opened.set(options.persist, { fd, path: options.persist, info });
      for (const name of PERSIST_STARTUP_FILES) {
        const path = `${options.persist}/${name}`;
        persistProtect.push(path);
        opened.set(path, openStartupFile(fd, name, path, all));
      }
    }

    const protect: string[] = [];
    let watch: ProtectedWatch | null = null;
    if (options.strictWrite) {
      // Protected names at any depth (bounded walk by descriptor, links never followed: protected_walk.ts).
      const roots: { fd: number; path: string; field: string; before: FoundName[] }[] = [];
      try {
        write.forEach((root, i) => {
          const rootFd = opened.get(root)?.fd;
          if (rootFd === undefined || opened.get(root)!.info.kind !== "dir") return;
          const field = `fs.write[${i}]`;
          const found = walkProtected(rootFd, { names: STRICT_WRITE_PROTECTED, keep: true, field, root });
          for (const { relative, fd } of found) {
            all.push(fd!);
            const path = `${root}/${relative}`;
            if (protect.includes(path)) continue; // Nested write roots find it twice.
            opened.set(path, { fd: fd!, path, info: fdInfo(fd!) });
            protect.push(path);
          }
          roots.push({ fd: reopenFd(rootFd), path: root, field, before: found });
        });
      } catch (error: unknown) {
        for (const root of roots) closeFd(root.fd);
        throw error;
      }
      watch = new ProtectedWatch(roots, STRICT_WRITE_PROTECTED);
    }
    const fs: Policy["fs"] = Object.freeze({
      ...policy.fs,
      read: Object.freeze(read),
      write: Object.freeze(write),
      ...(sockets === undefined ? {} : { sockets: Object.freeze(sockets) }),
    });
    const realized: Policy = Object.freeze({ ...policy, exec: Object.freeze(exec), fs });
    return { policy: realized, protect, persistProtect, watch, cwd: realCwd(options.cwd), opened, close };
  } catch (error: unknown) {
    close();
    throw error;
  }
}

/** The cwd comes from this process (`getcwd`, already free of links) or the user's command line. */
function realCwd(cwd: string): string {
  try {
    return Deno.realPathSync(cwd);
  } catch {
    return cwd; // Missing: the spawn reports E_SPAWN_CWD.
  }
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/**
 * The start-up file `name` of the persistent layer open on `layer`, made empty (0644) when missing, opened
 * without following a link; anything but a regular file there (a link, a directory, a FIFO an earlier run
 * left) refuses the launch (`E_FILE_TYPE`). Its descriptor joins `all`.
 */
function openStartupFile(layer: number, name: string, path: string, all: number[]): OpenedPath {
  try {
    // Through the layer's descriptor; O_EXCL: an existing name (a link included) is never followed.
    Deno.writeFileSync(`/proc/self/fd/${layer}/${name}`, new Uint8Array(), { createNew: true, mode: 0o644 });
  } catch (error: unknown) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
  const fd = openBeneath(layer, name);
  all.push(fd);
  const info = fdInfo(fd);
  if (info.kind !== "file" || info.links > 1) {
    const what = info.kind !== "file"
      ? `a ${info.kind}, not a regular file`
      : `a file with ${info.links} hard links`;
    throw new FileError(
      "E_FILE_TYPE",
      `The persistent home's start-up file "${path}" is ${what}: remove it`,
      { details: { path, kind: info.kind, links: info.links } },
    );
  }
  return { fd, path, info };
}
