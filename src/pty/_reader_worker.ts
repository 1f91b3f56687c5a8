/**
 * The reader thread (a Web Worker): reads terminals into shared rings, so that reading never waits for the
 * JS thread. A program writing fast keeps running while the JS thread frames, parses or writes out what
 * was read before (see `reader_thread.ts` for why and when).
 *
 * The loop blocks in a synchronous `poll()` over its terminals and a wake-up pipe, then reads each ready
 * terminal until `EAGAIN` or a full ring. Messages (new terminals) are only handled between polls, so the
 * JS thread counts what it posts (`CONTROL.posted`) and the loop yields to the event loop until it has
 * seen all of it.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import { libc } from "./_libc.ts";
import { CONTROL, HEADER_BYTES, type ReaderMessage, type ReaderReply, SLOT } from "./_reader_layout.ts";

/** Bytes asked per `read()`: large tty reads measured slower end to end (see session.ts). */
const READ_CHUNK = 4096;
/** Most bytes one read of a terminal returns on Linux (`N_TTY_BUF_SIZE - 1`). */
const TTY_READ_MAX = 4095;
/** Pause after a failed poll() other than EINTR, as the reactor does. */
const POLL_RETRY_MS = 10;

interface Terminal {
  readonly fd: number;
  readonly header: Int32Array;
  readonly ring: Uint8Array;
  write: number;
  dropped: boolean;
}

const terminals: Terminal[] = [];
let control: Int32Array | undefined;
let wakeFd = -1;
let received = 0;

self.onmessage = (event: MessageEvent<ReaderMessage>) => {
  const message = event.data;
  received++;
  switch (message.type) {
    case "init":
      control = new Int32Array(message.control);
      wakeFd = message.wakeFd;
      self.postMessage({ type: "ready" } satisfies ReaderReply);
      void run(control);
      return;
    case "add": {
      const header = new Int32Array(message.buffer, 0, HEADER_BYTES / 4);
      const ring = new Uint8Array(message.buffer, HEADER_BYTES);
      terminals.push({
        fd: message.fd,
        header,
        ring,
        write: Atomics.load(header, SLOT.write),
        dropped: false,
      });
      return;
    }
    default: {
      const never: never = message;
      throw new Error(`Unknown reader message ${JSON.stringify(never)}`);
    }
  }
};

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Bumps the generation; wakes the JS thread only while it waits for one (`CONTROL.waiting`). Its own
 * order (flag, then a wait on the generation it saw) means a bump it did not see is never slept through.
 * Only the JS thread clears the flag, once awake: were this thread to clear it, a notify meant for an
 * older bump (delayed here) could use up the flag of a newer wait and leave that wait without a wake-up.
 */
function announce(control: Int32Array): void {
  Atomics.add(control, CONTROL.generation, 1);
  if (Atomics.load(control, CONTROL.waiting) === 1) Atomics.notify(control, CONTROL.generation);
}

/** Drops `terminal`: the thread never touches its fd again, so the JS thread may close it. */
function drop(control: Int32Array, terminal: Terminal, errno: number): void {
  if (terminal.dropped) return; // Reading it one last time found its end already.
  terminals.splice(terminals.indexOf(terminal), 1);
  terminal.dropped = true;
  Atomics.store(terminal.header, SLOT.errno, errno);
  Atomics.store(terminal.header, SLOT.ended, 1);
  announce(control);
}

/** Free bytes in the ring; when none, asks for a wake-up (and re-checks, so no wake-up is missed). */
function room(terminal: Terminal): number {
  const size = terminal.ring.length;
  const free = size - ((terminal.write - Atomics.load(terminal.header, SLOT.read)) | 0);
  if (free > 0) return free;
  Atomics.store(terminal.header, SLOT.wantSpace, 1);
  return size - ((terminal.write - Atomics.load(terminal.header, SLOT.read)) | 0);
}

/**
 * Reads until EAGAIN (or, unless `untilEmpty`, a short read) or a full ring; drops the terminal at EOF/EIO
 * or on an error.
 */
function readTerminal(control: Int32Array, terminal: Terminal, untilEmpty = false): number {
  const lib = libc();
  const { EAGAIN, EINTR, EIO } = lib.table.errno;
  const size = terminal.ring.length;
  let total = 0;
  for (;;) {
    const free = room(terminal);
    if (free === 0) return total;
    const at = terminal.write & (size - 1);
    const ask = Math.min(READ_CHUNK, free, size - at);
    const n = Number(lib.sym.read(terminal.fd, terminal.ring.subarray(at, at + ask), BigInt(ask)));
    if (n > 0) {
      terminal.write = (terminal.write + n) | 0;
      total += n;
      Atomics.store(terminal.header, SLOT.write, terminal.write);
      announce(control);
      // A short read emptied the terminal: poll() says when more comes, without a read that fails with
      // EAGAIN first. A terminal hands out at most 4095 bytes per read (its line discipline's buffer), so
      // a read that size may have left more behind. EOF still shows as readable.
      if (!untilEmpty && n < Math.min(ask, TTY_READ_MAX)) return total;
      continue;
    }
    const errno = n === 0 ? 0 : lib.errno();
    if (errno === EINTR) continue;
    if (errno === EAGAIN) return total;
    drop(control, terminal, errno === EIO ? 0 : errno); // EIO: every holder of the slave side closed it.
    return total;
  }
}

async function run(control: Int32Array): Promise<void> {
  const lib = libc();
  const { POLLIN } = lib.table.poll;
  const scratch = new Uint8Array(64);
  let fds = new Int32Array(8);
  while (Atomics.load(control, CONTROL.stop) === 0) {
    if (Atomics.load(control, CONTROL.posted) !== received) {
      await yieldToEventLoop(); // A message is on its way: let onmessage see it before polling again.
      continue;
    }
    for (const terminal of [...terminals]) {
      if (Atomics.load(terminal.header, SLOT.release) !== 1) continue;
      // What the kernel holds now is still owed to the session (as its own last read would take it).
      readTerminal(control, terminal, true);
      drop(control, terminal, 0);
    }
    const count = terminals.length + 1;
    if (fds.length < count * 2) fds = new Int32Array(count * 4);
    const events = new Int16Array(fds.buffer);
    fds[0] = wakeFd;
    events[2] = POLLIN;
    events[3] = 0;
    terminals.forEach((terminal, i) => {
      // A full ring is skipped (fd -1) until the JS thread takes bytes and writes the wake-up pipe.
      fds[(i + 1) * 2] = room(terminal) > 0 ? terminal.fd : -1;
      events[(i + 1) * 4 + 2] = POLLIN;
      events[(i + 1) * 4 + 3] = 0;
    });
    const polled = [...terminals];
    if (lib.sym.poll_now(new Uint8Array(fds.buffer, 0, count * 8), BigInt(count), -1) < 0) {
      // EINTR: poll again. Anything else (ENOMEM) may persist: back off instead of spinning a core.
      if (lib.errno() !== lib.table.errno.EINTR) Atomics.wait(control, CONTROL.stop, 0, POLL_RETRY_MS);
      continue;
    }
    if (events[3] !== 0) {
      while (Number(lib.sym.read(wakeFd, scratch, BigInt(scratch.length))) > 0) {
        // Drained bytes carry no meaning: the loop re-reads every flag anyway.
      }
    }
    polled.forEach((terminal, i) => {
      if (events[(i + 1) * 4 + 3] !== 0 && !terminal.dropped) readTerminal(control, terminal);
    });
  }
  // The JS thread closes the wake-up pipe once it has this reply: never before the last poll() returned.
  self.postMessage({ type: "stopped" } satisfies ReaderReply);
  self.close();
}
