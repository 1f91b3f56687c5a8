/**
 * A TCP listener inside another process's network namespace, made by this process itself: the JS thread
 * enters the namespace (`setns(CLONE_NEWNET)`), `Deno.listen` creates the socket there (a synchronous op on
 * this thread), and the thread goes back to its own namespace before anything else runs. A socket belongs to
 * the namespace it was created in for its whole life, so this process then accepts, in its own namespace,
 * the connections made to that address inside the other one, with no process in between.
 *
 * Only a process with `CAP_SYS_ADMIN` over both namespaces may do this (root, for a sandbox bwrap made):
 * anyone else gets `null` (EPERM) and uses a relay process instead. Only the calling thread moves, and only
 * for the span of one `Deno.listen`: JS runs nothing else meanwhile, and the runtime's other threads never
 * leave this process's namespace.
 *
 * @module
 */
import { SpawnError } from "../errors.ts";
import { closeQuietly, cString, libc } from "./_libc.ts";

const CLONE_NEWNET = 0x40000000;
const O_RDONLY_CLOEXEC = 0o2000000;
const EPERM = 1;

/**
 * Listens on `hostname:port` in the network namespace of `pid`, or returns null when this process may not
 * enter it (not privileged: EPERM; no setns: not Linux). Throws `E_SPAWN` for any other failure, and never
 * returns with the thread outside its own namespace.
 */
export function listenInNetworkOf(pid: number, hostname: string, port: number): Deno.Listener | null {
  const lib = libc();
  const setns = lib.sym.setns;
  if (Deno.build.os !== "linux" || setns === null || setns === undefined) return null;
  const own = lib.sym.open(cString("/proc/thread-self/ns/net"), O_RDONLY_CLOEXEC, 0);
  if (own < 0) {
    throw new SpawnError("E_SPAWN", `Could not open this thread's network namespace (errno ${lib.errno()})`);
  }
  const target = lib.sym.open(cString(`/proc/${pid}/ns/net`), O_RDONLY_CLOEXEC, 0);
  if (target < 0) {
    const errno = lib.errno();
    closeQuietly(own);
    throw new SpawnError("E_SPAWN", `Could not open the network namespace of pid ${pid} (errno ${errno})`);
  }
  try {
    if (setns(target, CLONE_NEWNET) !== 0) {
      const errno = lib.errno();
      if (errno === EPERM) return null;
      throw new SpawnError("E_SPAWN", `Could not enter the network namespace of pid ${pid} (errno ${errno})`);
    }
    try {
      return Deno.listen({ hostname, port, transport: "tcp" });
    } finally {
      if (setns(own, CLONE_NEWNET) !== 0) {
        // The JS thread would make every later socket in the sandbox's namespace: never go on like that.
        console.error(`specter: could not return to its own network namespace (errno ${lib.errno()})`);
        Deno.exit(125);
      }
    }
  } finally {
    closeQuietly(target);
    closeQuietly(own);
  }
}
