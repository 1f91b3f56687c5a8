/**
 * The shared-memory layout between the reader thread (`_reader_worker.ts`) and the JS thread
 * (`reader_thread.ts`). Private to `src/pty/`.
 *
 * Every terminal the thread reads has one `SharedArrayBuffer`: a header of `Int32` slots, then a ring of
 * bytes. Positions are byte counts that wrap at 2^32 (stored as `Int32`); `(write - read) | 0` is the number
 * of unread bytes, which never exceeds the ring's size.
 *
 * @module
 */

/** Slots of a terminal's header (`Int32Array` indices). */
export const SLOT = {
  /** Bytes written into the ring so far (only the thread writes it). */
  write: 0,
  /** Bytes taken out of the ring so far (only the JS thread writes it). */
  read: 1,
  /** 1 once the thread dropped the fd: EOF/EIO, a read error, or a release request. */
  ended: 2,
  /** 1 when the ring was full and the thread wants a wake-up once there is room again. */
  wantSpace: 3,
  /** 1 when the JS thread asks the thread to stop reading the fd (before closing it). */
  release: 4,
  /** The errno that ended reading (0 for EOF, EIO and releases). */
  errno: 5,
} as const;

/** Bytes before the ring (room for 16 `Int32` slots). */
export const HEADER_BYTES = 64;

/** Slots of the thread's control block (`Int32Array` indices). */
export const CONTROL = {
  /** Bumped (and notified) by the thread after every read and every dropped fd. */
  generation: 0,
  /** Messages posted to the thread so far. */
  posted: 1,
  /** 1 asks the thread to exit. */
  stop: 2,
  /**
   * 1 while the JS thread waits on `generation` (set and cleared by the JS thread only): a bump while
   * nobody waits costs no futex wake-up.
   */
  waiting: 3,
} as const;

/** Control block size in bytes. */
export const CONTROL_BYTES = 16;

/** Messages to the reader thread. */
export type ReaderMessage =
  | { readonly type: "init"; readonly control: SharedArrayBuffer; readonly wakeFd: number }
  | { readonly type: "add"; readonly fd: number; readonly buffer: SharedArrayBuffer };

/** Messages from the reader thread: it took `init` and polls (`ready`), or it left its loop (`stopped`). */
export type ReaderReply = { readonly type: "ready" } | { readonly type: "stopped" };
