/**
 * Host IPC and the policy: which seccomp filter a policy needs (the binds of named host sockets,
 * `fs.sockets`, are descriptor binds in `bwrap.ts`).
 *
 * With network off and no socket granted, the filter refuses `socket(AF_UNIX, …)`: connect() on a
 * pathname socket works through a read-only bind and the sandbox uid maps to a host uid, so refusing
 * the socket itself is the only sure way. A grant binds each named socket (read-only: connect still
 * works) and switches to the filter that allows AF_UNIX; seccomp cannot see connect()'s address, so
 * every other host socket visible through `fs.read`/`fs.write` becomes reachable as well (a documented
 * limit, stated by `policy explain`). Abstract sockets stay isolated by the network namespace, SysV and
 * POSIX IPC by the IPC namespace and the private `/dev/shm`.
 *
 * @module
 */
import type { Policy } from "../policy/mod.ts";
import type { SeccompOptions } from "./seccomp/mod.ts";

/** The seccomp options for `policy` (they choose which filter a plan carries). */
export function seccompOptionsOf(policy: Pick<Policy, "network" | "fs">): SeccompOptions {
  return { network: policy.network === "on", hostSockets: (policy.fs.sockets ?? []).length > 0 };
}
