/**
 * When a keeper nobody can reach any more ends on its own. A keeper ends once it holds no session and its
 * daemon went (see `keeper.ts`); besides that, while no daemon is connected, it ends when
 *
 * - its **state directory is gone** (removed, or replaced by another directory of the same name): its
 *   socket, lock and the sessions' logs went with it, so no daemon can ever connect to it or take its
 *   sessions back. Programs still running are killed (sandboxed ones would die with the keeper anyway).
 * - it has held **no session** and had **no daemon** for {@link KEEPER_IDLE_GRACE_MS} (a keeper started
 *   for a daemon that died before it connected).
 *
 * It never ends for idleness while it holds a session, even one whose program ended: the next daemon takes
 * back its held output and exit status (sessions outlive a `kill -9` of the daemon).
 *
 * @module
 */

/**
 * How long a keeper that holds no session waits for a daemon before it ends: 30 s. A daemon connects as
 * soon as the keeper it started listens (it waits 5 s for that), so this only ends keepers whose daemon is
 * gone. {@link KEEPER_IDLE_ENV} overrides it.
 */
export const KEEPER_IDLE_GRACE_MS = 30_000;
/** The environment variable that overrides {@link KEEPER_IDLE_GRACE_MS} (milliseconds; tests shorten it). */
export const KEEPER_IDLE_ENV = "SPECTER_KEEPER_IDLE_MS";

/** Why a keeper ends on its own. */
export type OrphanReason = "state-gone" | "idle";

/** The keeper's idle grace: {@link KEEPER_IDLE_ENV} when it is a whole number of milliseconds, else the default. */
export function keeperIdleGrace(env: (name: string) => string | undefined = Deno.env.get): number {
  const value = env(KEEPER_IDLE_ENV);
  // Anything else (empty, negative, garbage) is ignored: the keeper runs detached, with nowhere to report.
  return value !== undefined && /^\d{1,9}$/.test(value) ? Number(value) : KEEPER_IDLE_GRACE_MS;
}

/** Where a directory is: its device and inode (null when it is not there). */
export interface DirIdentity {
  readonly dev: number;
  readonly ino: number;
}

/** The identity of the directory at `path`; null when nothing is there; throws on any other failure. */
export function dirIdentity(path: string): DirIdentity | null {
  try {
    const info = Deno.statSync(path);
    return info.isDirectory ? { dev: info.dev, ino: info.ino ?? 0 } : null;
  } catch (error: unknown) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) return null;
    throw error;
  }
}

/** How an {@link OrphanWatch} looks at the world (replaced in unit tests). */
export interface OrphanWatchOptions {
  /** Milliseconds with no session and no daemon before the keeper ends. */
  readonly graceMs: number;
  /** The clock (ms). */
  readonly now?: () => number;
  /** Looks up the state directory's identity (see {@link dirIdentity}). */
  readonly identity?: (path: string) => DirIdentity | null;
}

/** Decides, on each of the keeper's ticks, whether it should end on its own. */
export class OrphanWatch {
  readonly #stateDir: string;
  readonly #graceMs: number;
  readonly #now: () => number;
  readonly #identity: (path: string) => DirIdentity | null;
  /** The state directory as the keeper found it when it started. */
  readonly #start: DirIdentity | null;
  /** Since when no daemon is connected (the keeper's start, or the last daemon's going). */
  #since: number;

  /** Watches `stateDir` (which exists: the keeper made it). */
  constructor(stateDir: string, options: OrphanWatchOptions) {
    this.#stateDir = stateDir;
    this.#graceMs = options.graceMs;
    this.#now = options.now ?? Date.now;
    this.#identity = options.identity ?? dirIdentity;
    this.#start = this.#lookUp();
    this.#since = this.#now();
  }

  /** A daemon connected or went: the idle time counts from now. */
  daemonSeen(): void {
    this.#since = this.#now();
  }

  /** Why the keeper should end now (null: it goes on). Never while a daemon is connected. */
  check(daemonConnected: boolean, sessions: number): OrphanReason | null {
    if (daemonConnected) return null;
    if (this.#stateGone()) return "state-gone";
    if (sessions === 0 && this.#now() - this.#since >= this.#graceMs) return "idle";
    return null;
  }

  #stateGone(): boolean {
    // Not known at the start (it could not be looked at): never taken for gone.
    if (this.#start === null) return false;
    let now: DirIdentity | null;
    try {
      now = this.#identity(this.#stateDir);
    } catch {
      return false; // Cannot be looked at (a transient error): only a directory surely gone ends the keeper.
    }
    return now === null || now.dev !== this.#start.dev || now.ino !== this.#start.ino;
  }

  #lookUp(): DirIdentity | null {
    try {
      return this.#identity(this.#stateDir);
    } catch {
      return null; // See #stateGone: the directory is then never taken for gone.
    }
  }
}
