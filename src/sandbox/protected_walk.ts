/**
 * Strict-write protection at any depth: a bounded walk, by descriptor, of a write grant for protected
 * names (`.git`, `.envrc`, … anywhere below it: nested repositories, `sub/.envrc`).
 *
 * The walk lists each directory through its own `O_PATH` descriptor and opens every child beneath it with
 * `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`: a symlink is never followed (a link named `.envrc`
 * is not bound; the file it names is protected only where it is found itself), so a link loop cannot
 * make it loop. Protected directories are not descended into (they are bound read-only whole).
 *
 * The tree is written by sandboxed programs, so it is hostile: the walk is capped in entries, depth,
 * protected names found and time. Hitting a cap, or a directory it cannot list, is an error
 * (`E_POLICY_PROTECT_LIMIT`), never a silently skipped subtree: what was not seen could hold a `.git`.
 *
 * There is no kernel way to forbid *creating* a name, so a second walk after the run
 * ({@link protectedNames}) finds the protected names that are new (reported, not prevented): a path that
 * held no protected name before, or holds another file or directory now. The second case is a program
 * that renamed a protected name's parent (the read-only bind moves with it) and planted its own `.git`
 * or `.envrc` under the old path: the walk compares identities, not only names.
 *
 * @module
 */
import { FileError, PolicyError } from "../errors.ts";
import { closeFd, fdInfo, fdProcPath, openBeneath } from "../fsafe/mod.ts";

/** The caps of one walk. */
export interface WalkLimits {
  /** Directory entries looked at, over the whole walk. */
  readonly entries: number;
  /** Directory levels below the root. */
  readonly depth: number;
  /** Protected names found (each becomes one read-only bind). */
  readonly found: number;
  /** Wall-clock time, in ms. */
  readonly ms: number;
}

/** The caps used unless a caller passes its own. */
export const PROTECT_WALK_LIMITS: WalkLimits = Object.freeze({
  entries: 200_000,
  depth: 64,
  found: 512,
  ms: 5_000,
});

/** A protected name found under a root. */
export interface FoundName {
  /** Path relative to the root (`sub/.envrc`). */
  readonly relative: string;
  /** `O_PATH` descriptor of it (owned by the caller), when the walk was asked to keep them. */
  readonly fd: number | null;
  /** `major:minor:ino` of what was found. */
  readonly identity: string;
}

/** What to walk. */
export interface WalkOptions {
  /** Names that are protected wherever they appear. */
  readonly names: readonly string[];
  /** Keep an `O_PATH` descriptor of each found name (the pre-run walk binds them). */
  readonly keep: boolean;
  /** The policy field of the root, named in errors (`fs.write[0]`). */
  readonly field: string;
  /** The root's path, named in errors. */
  readonly root: string;
  /** Caps (default {@link PROTECT_WALK_LIMITS}). */
  readonly limits?: WalkLimits;
}

function limitError(field: string, root: string, why: string): PolicyError {
  return new PolicyError([{
    code: "E_POLICY_PROTECT_LIMIT",
    field,
    message: `Strict-write cannot check every protected name under "${root}" (field "${field}"): ${why}`,
  }]);
}

/**
 * Walks the directory `rootFd` for `options.names` at any depth. Returns what it found, shallowest first.
 * Throws `PolicyError` `E_POLICY_PROTECT_LIMIT` when a cap is hit or a directory cannot be listed (every
 * descriptor it kept is closed then).
 */
export function walkProtected(rootFd: number, options: WalkOptions): FoundName[] {
  const limits = options.limits ?? PROTECT_WALK_LIMITS;
  const names = new Set(options.names);
  const deadline = performance.now() + limits.ms;
  const found: FoundName[] = [];
  let entries = 0;
  // Breadth first: `queue` holds directories still to list, each with its own descriptor.
  const queue: { fd: number; relative: string; depth: number; owned: boolean }[] = [
    { fd: rootFd, relative: "", depth: 0, owned: false },
  ];
  let head = 0;
  const fail = (why: string): never => {
    for (const item of queue.slice(head)) if (item.owned) closeFd(item.fd);
    for (const item of found) if (item.fd !== null) closeFd(item.fd);
    throw limitError(options.field, options.root, why);
  };
  while (head < queue.length) {
    const dir = queue[head++]!;
    let listing: Deno.DirEntry[];
    try {
      // The magic link names the descriptor's own directory: no path is looked up again.
      listing = [...Deno.readDirSync(fdProcPath(dir.fd))];
    } catch (error: unknown) {
      if (dir.owned) closeFd(dir.fd);
      fail(`directory "${dir.relative || "."}" cannot be listed (${(error as Error).message})`);
    }
    for (const entry of listing!) {
      if (++entries > limits.entries) {
        if (dir.owned) closeFd(dir.fd);
        fail(`more than ${limits.entries} entries`);
      }
      if (performance.now() > deadline) {
        if (dir.owned) closeFd(dir.fd);
        fail(`the walk took longer than ${limits.ms} ms`);
      }
      const relative = dir.relative === "" ? entry.name : `${dir.relative}/${entry.name}`;
      // d_type is not trusted for what is bound (the descriptor is checked below); it only saves opens.
      if (entry.isSymlink) continue;
      const isProtected = names.has(entry.name);
      if (!isProtected && !entry.isDirectory) continue;
      let fd: number;
      try {
        fd = openBeneath(dir.fd, entry.name);
      } catch (error: unknown) {
        // Gone since the listing, or swapped for a symlink (by a concurrent run): nothing to bind there.
        if (error instanceof FileError && /^E_PATH_(NOT_FOUND|SYMLINK)$/.test(error.code)) continue;
        if (dir.owned) closeFd(dir.fd);
        fail(`"${relative}" cannot be opened (${(error as Error).message})`);
      }
      if (isProtected) {
        if (found.length >= limits.found) {
          closeFd(fd!);
          if (dir.owned) closeFd(dir.fd);
          fail(`more than ${limits.found} protected names`);
        }
        const identity = fdInfo(fd!).identity;
        if (options.keep) {
          found.push({ relative, fd: fd!, identity });
        } else {
          closeFd(fd!);
          found.push({ relative, fd: null, identity });
        }
        continue;
      }
      if (fdInfo(fd!).kind !== "dir") {
        closeFd(fd!);
        continue;
      }
      if (dir.depth + 1 > limits.depth) {
        closeFd(fd!);
        if (dir.owned) closeFd(dir.fd);
        fail(`deeper than ${limits.depth} levels at "${relative}"`);
      }
      queue.push({ fd: fd!, relative, depth: dir.depth + 1, owned: true });
    }
    if (dir.owned) closeFd(dir.fd);
  }
  return found;
}

/**
 * The protected names under `rootFd` now, with their identities (for the check after a run). A cap hit
 * is returned as `limit` (the run is over: there is nothing left to refuse, only to report).
 */
export function protectedNames(
  rootFd: number,
  options: Omit<WalkOptions, "keep">,
): { names: FoundName[]; limit: string | null } {
  try {
    return { names: walkProtected(rootFd, { ...options, keep: false }), limit: null };
  } catch (error: unknown) {
    if (error instanceof PolicyError && error.code === "E_POLICY_PROTECT_LIMIT") {
      return { names: [], limit: error.message };
    }
    throw error;
  }
}

/** Protected names created under the write roots during a run (a second walk after it). */
export interface ProtectedReport {
  /**
   * Host paths of protected names that are new since the run started, sorted: not there before, or
   * another file or directory than before (the original was moved away and this one planted).
   */
  readonly created: string[];
  /** Why a root could not be walked after the run (a cap), one message per root; empty when none. */
  readonly limits: string[];
}

/**
 * Remembers the protected names of each write root before a run, with its own descriptor of each root
 * (the realization's are closed once the sandbox is set up), and walks them again after it.
 */
export class ProtectedWatch {
  readonly #roots: { fd: number; path: string; field: string; before: ReadonlyMap<string, string> }[];
  readonly #names: readonly string[];
  readonly #limits: WalkLimits | undefined;

  /** Takes ownership of each root's `fd`; `before` is what the walk before the run found. */
  constructor(
    roots: readonly { fd: number; path: string; field: string; before: readonly FoundName[] }[],
    names: readonly string[],
    limits?: WalkLimits,
  ) {
    this.#roots = roots.map((r) => ({
      ...r,
      before: new Map(r.before.map((f) => [f.relative, f.identity])),
    }));
    this.#names = names;
    this.#limits = limits;
  }

  /** Walks every root again and closes the descriptors (call once, after the run). */
  finish(): ProtectedReport {
    const created: string[] = [];
    const limits: string[] = [];
    try {
      for (const root of this.#roots) {
        const now = protectedNames(root.fd, {
          names: this.#names,
          field: root.field,
          root: root.path,
          ...(this.#limits === undefined ? {} : { limits: this.#limits }),
        });
        if (now.limit !== null) limits.push(now.limit);
        for (const { relative, identity } of now.names) {
          if (root.before.get(relative) !== identity) created.push(`${root.path}/${relative}`);
        }
      }
    } finally {
      this.close();
    }
    return { created: created.sort(), limits };
  }

  /** Closes the descriptors without walking (the run never started). */
  close(): void {
    for (const root of this.#roots) closeFd(root.fd);
    this.#roots.length = 0;
  }
}
