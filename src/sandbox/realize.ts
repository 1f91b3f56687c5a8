/**
 * Realizing a policy against the filesystem, just before a launch: policy checks are lexical, but
 * bubblewrap follows symlinks. So every path is resolved to where it really is and checked again there,
 * and the resolved paths are what gets bound. `fs.write: ["/work/link"]` with `link -> /` is refused,
 * not turned into a writable host root.
 *
 * @module
 */
import { PolicyError, type PolicyProblem } from "../errors.ts";
import { pathSafetyReason, type PathUse } from "../policy/path_safety.ts";
import type { Policy } from "../policy/types.ts";

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

/** The filesystem questions realization asks; real by default, replaceable in tests. */
export interface RealizeFs {
  /** The resolved path, or `null` when `path` does not exist. */
  realPath(path: string): string | null;
  /** True when `path` exists and is itself a symlink (not followed). */
  isSymlink(path: string): boolean;
  /** True when `path` exists (following symlinks). */
  exists(path: string): boolean;
}

/** The real filesystem. */
export const REAL_FS: RealizeFs = {
  realPath(path) {
    try {
      return Deno.realPathSync(path);
    } catch {
      return null; // Missing: nothing to bind, nothing to resolve.
    }
  },
  isSymlink(path) {
    try {
      return Deno.lstatSync(path).isSymlink;
    } catch {
      return false; // Missing.
    }
  },
  exists(path) {
    try {
      Deno.statSync(path);
      return true;
    } catch {
      return false; // Missing or a dangling link.
    }
  },
};

/** A policy bound to the filesystem for one launch. */
export interface RealizedPolicy {
  /** The policy with every existing path replaced by its resolved location. */
  readonly policy: Policy;
  /** Paths to keep read-only inside writable roots (strict-write); empty otherwise. */
  readonly protect: readonly string[];
  /** The working directory, resolved. */
  readonly cwd: string;
}

function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root === "/" ? "/" : `${root}/`);
}

/**
 * Resolves `policy` for a launch in `cwd`. Throws `PolicyError` (`E_POLICY_BROAD_ROOT`) when a path
 * resolves somewhere its use forbids, naming the field and both paths.
 */
export function realizePolicy(
  policy: Policy,
  options: { readonly cwd: string; readonly home: string; readonly strictWrite: boolean },
  fs: RealizeFs = REAL_FS,
): RealizedPolicy {
  const problems: PolicyProblem[] = [];
  // Different entries may resolve to one place (/bin -> /usr/bin): each place is bound once.
  const resolve = (paths: readonly string[], field: string, use: PathUse): string[] => [
    ...new Set(paths.map((path, i) => {
      const real = fs.realPath(path);
      if (real === null || real === path) return path;
      const reason = pathSafetyReason(real, use, options.home);
      if (reason !== null) {
        problems.push({
          code: "E_POLICY_BROAD_ROOT",
          field: `${field}[${i}]`,
          message:
            `Field "${field}[${i}]" is "${path}", which resolves through symlinks to "${real}" and ${reason}`,
        });
      }
      return real;
    })),
  ];
  const exec = resolve(policy.exec, "exec", "exec");
  const read = resolve(policy.fs.read, "fs.read", "read");
  const write = resolve(policy.fs.write, "fs.write", "write");
  if (problems.length > 0) throw new PolicyError(problems);

  const protect: string[] = [];
  if (options.strictWrite) {
    for (const root of write) {
      for (const name of STRICT_WRITE_PROTECTED) {
        const path = `${root}/${name}`;
        if (!fs.isSymlink(path)) {
          if (fs.exists(path)) protect.push(path);
          continue;
        }
        // A link (perhaps planted by an earlier run) is never bound through: bwrap would follow it on
        // both sides. What it points at needs protecting only if that is writable here.
        const target = fs.realPath(path);
        if (target !== null && write.some((w) => within(target, w))) protect.push(target);
      }
    }
  }
  const realized: Policy = Object.freeze({
    ...policy,
    exec: Object.freeze(exec),
    fs: Object.freeze({ read: Object.freeze(read), write: Object.freeze(write) }),
  });
  return { policy: realized, protect, cwd: fs.realPath(options.cwd) ?? options.cwd };
}
