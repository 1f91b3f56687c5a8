/**
 * Handing bytes to a child as a file descriptor (e.g. a seccomp filter for `bwrap --seccomp 3`).
 *
 * @module
 */
import { SpawnError } from "../errors.ts";
import { closeQuietly, libc } from "./_libc.ts";
import { setCloseOnExec } from "./pty.ts";

/** The most a pipe holds without a reader on Linux (the default pipe size). */
export const MAX_CONTENT_BYTES = 64 * 1024;

/**
 * Returns the read end of a pipe that holds `content` followed by EOF. The fd is close-on-exec (pass it
 * with spawn's `inheritFds`, which dup2s it) and must be closed by the caller after spawning.
 * Throws `E_SPAWN` when the content does not fit in a pipe or a call fails.
 */
export function contentFd(content: Uint8Array): number {
  if (content.length > MAX_CONTENT_BYTES) {
    throw new SpawnError("E_SPAWN", `Content of ${content.length} bytes does not fit in a pipe`);
  }
  const lib = libc();
  const pair = new Int32Array(2);
  if (lib.sym.pipe(pair) !== 0) {
    throw new SpawnError("E_SPAWN", `pipe() failed with errno ${lib.errno()}`);
  }
  const [read, write] = [pair[0]!, pair[1]!];
  try {
    setCloseOnExec(read);
    setCloseOnExec(write);
    // A fresh blocking pipe takes up to 64 KiB without a reader, so this write cannot block.
    for (let offset = 0; offset < content.length;) {
      const n = Number(lib.sym.write(write, content.subarray(offset), BigInt(content.length - offset)));
      if (n <= 0) throw new SpawnError("E_SPAWN", `Writing to a pipe failed with errno ${lib.errno()}`);
      offset += n;
    }
    return read;
  } catch (error: unknown) {
    closeQuietly(read);
    throw error;
  } finally {
    closeQuietly(write);
  }
}
