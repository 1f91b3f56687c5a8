/**
 * The reader thread: reads terminals on a Web Worker into shared rings, for sessions whose output rate
 * matters more than ~20 MiB of memory.
 *
 * Why: on the JS thread, every microsecond spent between two `read()`s (framing, writing frames out,
 * parsing them into a screen) is a microsecond in which the program's writes fill the kernel's small PTY
 * buffer and block. The kernel then falls into lockstep with the reader, and throughput halves
 * (`docs/benchmarks.md`). The thread reads as soon as output is there, into a 1 MiB ring per terminal, so the
 * program keeps running while the JS thread works on what was read before.
 *
 * Cost and shape: one Worker for the whole process (about 20 MiB of memory), started on the first
 * {@link ReaderThread.open} and stopped once no terminal is left. The inline {@link Reactor} stays the
 * default for library sessions, so a host holding a thousand idle sessions pays nothing for it. Memory stays
 * bounded: a full ring stops the thread from reading that terminal, and the program then blocks in `write`.
 *
 * If the Worker cannot start or dies, every channel turns {@link ReaderChannel.failed}: the bytes already in
 * its ring can still be taken, and the caller reads the terminal itself from then on. Nothing is lost.
 *
 * @module
 */
import { closeQuietly, libc } from "./_libc.ts";
import {
  CONTROL,
  CONTROL_BYTES,
  HEADER_BYTES,
  type ReaderMessage,
  type ReaderReply,
  SLOT,
} from "./_reader_layout.ts";
import { openWakePipe } from "./pty.ts";

/** Ring size per terminal (a power of two). */
const RING_BYTES = 1 << 20;
/**
 * Output counts as streaming once {@link STREAM_BYTES} were taken within {@link STREAM_WINDOW_MS} (4 MB/s):
 * from then on the JS thread looks at the rings every {@link STREAM_PAUSE_MS} instead of waking for each
 * read (about 11,000 per second at 45 MB/s, 4 KiB each: a terminal never hands out more per read). A burst
 * below that rate, and the first bytes of any output, are taken as soon as they are read.
 */
const STREAM_BYTES = 16 * 1024;
const STREAM_WINDOW_MS = 4;
const STREAM_PAUSE_MS = 4;
/** The longest the JS thread waits for the reader thread before it looks at the rings anyway. */
const LISTEN_BACKSTOP_MS = 100;

/** One terminal read by the thread, as the JS thread sees it. */
export interface ReaderChannel {
  /** The terminal's fd (the caller keeps owning it, and closes it only once {@link ended} is true). */
  readonly fd: number;
  /**
   * False until the thread has started (about 20 ms for the first terminal of a process): until then
   * the caller reads the fd itself, on the JS thread, as if there were no thread. It turns true between two
   * tasks of the JS thread, never in the middle of the caller's reading.
   */
  readonly active: boolean;
  /** Moves up to `into.length` unread bytes into `into` and returns how many (0: none right now). */
  take(into: Uint8Array): number;
  /** Bytes the thread has read and nobody has taken yet (at most the ring's size). */
  readonly unread: number;
  /**
   * True once the thread will never touch the fd again: EOF/EIO, a read error, {@link release}, or a
   * failure.
   */
  readonly ended: boolean;
  /** True when {@link ended} and every byte read was taken. */
  readonly done: boolean;
  /** True when the thread failed: take what is left, then read the fd on the JS thread. */
  readonly failed: boolean;
  /** The errno that ended reading; 0 for EOF, EIO, a release or a failure. */
  readonly errno: number;
  /**
   * Asks the thread to stop reading the fd (before the caller closes it). {@link ended} follows, at once
   * when the channel was not active yet.
   */
  release(): void;
}

interface Instance {
  readonly worker: Worker | null;
  readonly control: Int32Array;
  readonly wakeRead: number;
  readonly wakeWrite: number;
  /** Channels the thread reads. */
  readonly channels: Set<Channel>;
  /** Channels waiting for the thread to start. */
  readonly pending: Set<Channel>;
  ready: boolean;
  stopped: boolean;
  listening: boolean;
  /** Bytes the channels took since the listener last looked (what tells streaming output). */
  taken: number;
}

const WAKE_BYTE = new Uint8Array([1]);

class Channel implements ReaderChannel {
  readonly fd: number;
  readonly buffer: SharedArrayBuffer;
  readonly #header: Int32Array;
  readonly #ring: Uint8Array;
  readonly #instance: Instance;
  readonly #onChange: () => void;
  readonly #onRelease: (channel: Channel) => void;
  #read = 0;
  #active = false;
  #failed = false;
  #releasedEarly = false;

  constructor(fd: number, instance: Instance, onChange: () => void, onRelease: (channel: Channel) => void) {
    this.fd = fd;
    this.buffer = new SharedArrayBuffer(HEADER_BYTES + RING_BYTES);
    this.#header = new Int32Array(this.buffer, 0, HEADER_BYTES / 4);
    this.#ring = new Uint8Array(this.buffer, HEADER_BYTES);
    this.#instance = instance;
    this.#onChange = onChange;
    this.#onRelease = onRelease;
  }

  get active(): boolean {
    return this.#active;
  }

  get unread(): number {
    return (Atomics.load(this.#header, SLOT.write) - this.#read) | 0;
  }

  take(into: Uint8Array): number {
    const size = this.#ring.length;
    const available = (Atomics.load(this.#header, SLOT.write) - this.#read) | 0;
    const n = Math.min(available, into.length);
    if (n === 0) return 0;
    const at = this.#read & (size - 1);
    const first = Math.min(n, size - at);
    into.set(this.#ring.subarray(at, at + first));
    if (n > first) into.set(this.#ring.subarray(0, n - first), first);
    this.#read = (this.#read + n) | 0;
    this.#instance.taken += n;
    Atomics.store(this.#header, SLOT.read, this.#read);
    if (Atomics.load(this.#header, SLOT.wantSpace) === 1) {
      Atomics.store(this.#header, SLOT.wantSpace, 0);
      wake(this.#instance);
    }
    return n;
  }

  get ended(): boolean {
    return this.#failed || this.#releasedEarly || Atomics.load(this.#header, SLOT.ended) === 1;
  }

  get done(): boolean {
    // `ended` is read before `write`: the thread stores its last `write` before it sets `ended`.
    return this.ended && ((Atomics.load(this.#header, SLOT.write) - this.#read) | 0) === 0;
  }

  get failed(): boolean {
    return this.#failed;
  }

  get errno(): number {
    return Atomics.load(this.#header, SLOT.errno);
  }

  release(): void {
    if (this.ended) return;
    if (!this.#active) {
      this.#releasedEarly = true; // The thread never had it.
      this.#onRelease(this);
      return;
    }
    Atomics.store(this.#header, SLOT.release, 1);
    wake(this.#instance);
  }

  /** @internal The thread reads the fd from now on. */
  activate(): void {
    this.#active = true;
  }

  /** @internal Marks the channel failed (the thread is gone). */
  fail(): void {
    this.#failed = true;
  }

  /** @internal Tells the owner that something changed. */
  notify(): void {
    try {
      this.#onChange();
    } catch (error: unknown) {
      // A throwing owner is a bug: surface it as uncaught, but never let it end the loop serving the others.
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}

function wake(instance: Instance): void {
  if (!instance.stopped) libc().sym.write(instance.wakeWrite, WAKE_BYTE, 1n);
}

/** The worker module (`scripts/compile` includes it in the binary). */
const WORKER_URL = new URL("./_reader_worker.ts", import.meta.url).href;

/** Starts the Worker; `null` when it cannot even be constructed (its channels then start failed). */
function startWorker(url: string): Worker | null {
  try {
    return new Worker(url, { type: "module" });
  } catch {
    return null; // E.g. a build without the worker module: callers fall back to reading inline.
  }
}

/** Runs terminals' reads on one shared Worker (see the module documentation). */
export class ReaderThread {
  readonly #workerUrl: string;
  #instance: Instance | null = null;

  /** `workerUrl` replaces the worker module (tests use one that fails); the default is Specter's. */
  constructor(workerUrl: string = WORKER_URL) {
    this.#workerUrl = workerUrl;
  }

  /** True while the Worker runs (for tests and diagnostics). */
  get running(): boolean {
    return this.#instance !== null && this.#instance.worker !== null && !this.#instance.stopped;
  }

  /**
   * Hands `fd` (non-blocking, owned by the caller) to the thread. The caller reads it itself until the
   * channel is {@link ReaderChannel.active}. `onChange` runs on the JS thread whenever bytes may be
   * available or the channel ended or failed; it may be called spuriously.
   */
  open(fd: number, onChange: () => void): ReaderChannel {
    const instance = this.#instance ?? this.#start();
    const channel = new Channel(
      fd,
      instance,
      onChange,
      (released) => this.#releasedEarly(instance, released),
    );
    if (instance.worker === null) {
      channel.fail();
      queueMicrotask(() => channel.notify());
    } else if (instance.ready) {
      this.#activate(instance, channel);
    } else {
      instance.pending.add(channel);
    }
    return channel;
  }

  #start(): Instance {
    let pipe: [number, number];
    try {
      pipe = openWakePipe();
    } catch {
      pipe = [-1, -1]; // Out of fds (EMFILE): no thread this time; the caller reads on the JS thread.
    }
    const [wakeRead, wakeWrite] = pipe;
    const worker = wakeRead < 0 ? null : startWorker(this.#workerUrl);
    const instance: Instance = {
      worker,
      control: new Int32Array(new SharedArrayBuffer(CONTROL_BYTES)),
      wakeRead,
      wakeWrite,
      channels: new Set(),
      pending: new Set(),
      ready: false,
      stopped: worker === null,
      listening: false,
      taken: 0,
    };
    if (worker === null) {
      closeQuietly(wakeRead);
      closeQuietly(wakeWrite);
      return instance; // Not kept: the next open() tries again.
    }
    worker.onmessage = (event: MessageEvent<ReaderReply>) => this.#onReply(instance, event.data);
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault(); // Handled: the channels fall back to reading on the JS thread.
      this.#fail(instance);
    };
    this.#instance = instance;
    post(instance, { type: "init", control: instance.control.buffer as SharedArrayBuffer, wakeFd: wakeRead });
    return instance;
  }

  #onReply(instance: Instance, reply: ReaderReply): void {
    switch (reply.type) {
      case "ready": {
        if (instance.stopped) return;
        instance.ready = true;
        const pending = [...instance.pending];
        instance.pending.clear();
        for (const channel of pending) this.#activate(instance, channel);
        if (instance.channels.size === 0) this.#stop(instance);
        return;
      }
      case "stopped":
        // The thread's last poll() has returned: the pipe can go, and nobody else can get its numbers early.
        closeQuietly(instance.wakeRead);
        closeQuietly(instance.wakeWrite);
        instance.worker?.terminate();
        return;
      default: {
        const never: never = reply;
        throw new Error(`Unknown reader reply ${JSON.stringify(never)}`);
      }
    }
  }

  #activate(instance: Instance, channel: Channel): void {
    channel.activate();
    instance.channels.add(channel);
    post(instance, { type: "add", fd: channel.fd, buffer: channel.buffer });
    wake(instance);
    if (!instance.listening) {
      instance.listening = true;
      void this.#listen(instance);
    }
  }

  /** A channel released before the thread started: stop the thread when it was the last one. */
  #releasedEarly(instance: Instance, channel: Channel): void {
    instance.pending.delete(channel);
    if (!instance.ready && instance.pending.size === 0 && instance.channels.size === 0) this.#stop(instance);
  }

  /** Tells each channel about new bytes and ended reads; stops the thread once no channel is left. */
  async #listen(instance: Instance): Promise<void> {
    const { control } = instance;
    let generation = Atomics.load(control, CONTROL.generation);
    let streaming = false;
    let burstStart = 0;
    let burstBytes = 0;
    while (!instance.stopped) {
      if (streaming) {
        // Output streams: look again after a short pause rather than wake for every read of the thread.
        // The ring (1 MiB) holds the output meanwhile, so the program is not slowed down, and each look
        // takes a large batch: fewer frames, writes and wake-ups per megabyte.
        await new Promise((resolve) => setTimeout(resolve, STREAM_PAUSE_MS));
      } else {
        // Every read and every dropped fd bumps the generation; a bump since the last look returns at
        // once. The flag asks the thread to notify (it skips the futex wake-up while nobody waits).
        Atomics.store(control, CONTROL.waiting, 1);
        // The timeout is a backstop only: no bump is ever slept through (see `announce` in the worker).
        const waiting = Atomics.waitAsync(control, CONTROL.generation, generation, LISTEN_BACKSTOP_MS);
        if (waiting.async) await waiting.value;
        Atomics.store(control, CONTROL.waiting, 0);
      }
      if (instance.stopped) return;
      generation = Atomics.load(control, CONTROL.generation);
      instance.taken = 0;
      for (const channel of instance.channels) {
        if (channel.ended) instance.channels.delete(channel);
        channel.notify();
      }
      if (streaming) {
        streaming = instance.taken > 0; // Quiet for a whole pause: wait for the thread's wake-up again.
      } else {
        const now = performance.now();
        if (now - burstStart > STREAM_WINDOW_MS) {
          burstStart = now;
          burstBytes = 0;
        }
        burstBytes += instance.taken;
        streaming = burstBytes >= STREAM_BYTES;
      }
      if (!instance.stopped && instance.channels.size === 0 && instance.pending.size === 0) {
        this.#stop(instance);
      }
    }
  }

  #stop(instance: Instance): void {
    if (this.#instance === instance) this.#instance = null;
    Atomics.store(instance.control, CONTROL.stop, 1);
    wake(instance);
    instance.stopped = true; // After the wake-up: from now on, only the thread's reply closes the pipe.
  }

  #fail(instance: Instance): void {
    if (this.#instance === instance) this.#instance = null;
    instance.stopped = true;
    // The Worker is gone, so nothing polls the pipe any more.
    closeQuietly(instance.wakeRead);
    closeQuietly(instance.wakeWrite);
    instance.worker?.terminate();
    const channels = [...instance.channels, ...instance.pending];
    instance.channels.clear();
    instance.pending.clear();
    for (const channel of channels) {
      channel.fail();
      channel.notify();
    }
    // Let a pending wait in #listen return, so that it sees `stopped`.
    Atomics.add(instance.control, CONTROL.generation, 1);
    Atomics.notify(instance.control, CONTROL.generation);
  }
}

function post(instance: Instance, message: ReaderMessage): void {
  Atomics.add(instance.control, CONTROL.posted, 1);
  instance.worker?.postMessage(message);
}

let shared: ReaderThread | undefined;

/** The process-wide reader thread. */
export function readerThread(): ReaderThread {
  return shared ??= new ReaderThread();
}

/**
 * Replaces the process-wide reader thread for sessions spawned from now on (tests use one that cannot
 * start); `undefined` restores the default. Returns the one it replaced.
 */
export function replaceReaderThread(thread: ReaderThread | undefined): ReaderThread | undefined {
  const previous = shared;
  shared = thread;
  return previous;
}
