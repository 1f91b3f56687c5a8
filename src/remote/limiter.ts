/**
 * Failed attempts per peer: a peer (an IP address) that presented a wrong or no token more than
 * {@link FREE_FAILURES} times within {@link WINDOW_MS} is refused for a while, without its token being
 * looked at, the pause doubling with each further failure up to {@link MAX_LOCK_MS}. Memory is bounded:
 * at most {@link MAX_PEERS} peers are remembered (the oldest forgotten first).
 *
 * @module
 */

/** Failures within the window before a peer is locked out. */
export const FREE_FAILURES = 5;
/** How long failures are remembered. */
export const WINDOW_MS = 60_000;
/** The first lockout; each further failure doubles it. */
export const FIRST_LOCK_MS = 1_000;
/** The longest lockout. */
export const MAX_LOCK_MS = 5 * 60_000;
/** Peers remembered at most. */
export const MAX_PEERS = 4096;

interface PeerState {
  failures: number;
  firstAt: number;
  lockedUntil: number;
}

/** Counts failed attempts per peer. */
export class FailureLimiter {
  readonly #peers = new Map<string, PeerState>();
  readonly #now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Peers remembered now. */
  get size(): number {
    return this.#peers.size;
  }

  /** Milliseconds `peer` is still locked out for (0: it may try). */
  lockedFor(peer: string): number {
    const state = this.#peers.get(peer);
    if (state === undefined) return 0;
    return Math.max(0, state.lockedUntil - this.#now());
  }

  /** Records a failed attempt; returns how long the peer is now locked out for (0: not yet). */
  fail(peer: string): number {
    const now = this.#now();
    let state = this.#peers.get(peer);
    if (state === undefined || now - state.firstAt > WINDOW_MS && state.lockedUntil <= now) {
      state = { failures: 0, firstAt: now, lockedUntil: 0 };
    }
    this.#peers.delete(peer); // Re-inserted last: the map's order is the order to forget in.
    this.#peers.set(peer, state);
    state.failures++;
    if (state.failures > FREE_FAILURES) {
      const lock = Math.min(
        MAX_LOCK_MS,
        FIRST_LOCK_MS * 2 ** Math.min(20, state.failures - FREE_FAILURES - 1),
      );
      state.lockedUntil = now + lock;
      state.firstAt = now; // Remembered for the window after the lock too.
    }
    while (this.#peers.size > MAX_PEERS) this.#peers.delete(this.#peers.keys().next().value!);
    return this.lockedFor(peer);
  }

  /** A successful attempt: the peer's failures are forgotten. */
  succeed(peer: string): void {
    this.#peers.delete(peer);
  }
}
