/**
 * Passing descriptors between processes over a unix socket (`SCM_RIGHTS`), and asking the kernel who is at
 * the other end (`SO_PEERCRED`): what lets a terminal's master outlive the process that opened it (a keeper
 * holds it and hands it to a restarted daemon). Deno exposes neither (`Deno.UnixConn` has no descriptor),
 * so both go through libc. Linux only (the `msghdr`/`cmsghdr` layouts below are glibc's on 64-bit Linux);
 * elsewhere every call throws `E_PLATFORM_UNSUPPORTED`.
 *
 * Received descriptors are close-on-exec (`MSG_CMSG_CLOEXEC`), so no child inherits them by accident. A
 * descriptor shares its open file description with the sender's copy: flags such as `O_NONBLOCK` are shared.
 *
 * @module
 */
import { SpawnError } from "../errors.ts";
import { closeQuietly, libc } from "./_libc.ts";
import { unixSocketPair } from "./pty.ts";

/** Linux's constants (<sys/socket.h>, <bits/socket.h>); each is checked against the C headers in a test. */
export const LINUX_SOCKET = {
  SOL_SOCKET: 1,
  SCM_RIGHTS: 1,
  SO_PEERCRED: 17,
  MSG_NOSIGNAL: 0x4000,
  MSG_CTRUNC: 0x8,
  MSG_TRUNC: 0x20,
  MSG_DONTWAIT: 0x40,
  MSG_CMSG_CLOEXEC: 0x40000000,
} as const;

/** The kernel's limit on descriptors in one message (`SCM_MAX_FD`); one more is `EINVAL`. */
export const MAX_FDS_PER_MESSAGE = 253;

// glibc, 64-bit: struct msghdr is 56 bytes, struct iovec 16, struct cmsghdr a 16-byte header.
const MSGHDR_BYTES = 56;
const CMSG_HEADER = 16;

function linuxOnly(what: string): void {
  if (Deno.build.os !== "linux") {
    throw new SpawnError("E_PLATFORM_UNSUPPORTED", `${what} is implemented for Linux only`);
  }
}

function align8(n: number): number {
  return (n + 7) & ~7;
}

function address(buffer: Uint8Array): bigint {
  return BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(buffer as Uint8Array<ArrayBuffer>)));
}

/** A `struct msghdr` with one `iovec` over `payload` and `control` (the buffers must outlive the call). */
function messageHeader(payload: Uint8Array, control: Uint8Array): { msg: Uint8Array; iov: Uint8Array } {
  const iov = new Uint8Array(16);
  const iovView = new DataView(iov.buffer);
  iovView.setBigUint64(0, payload.length === 0 ? 0n : address(payload), true);
  iovView.setBigUint64(8, BigInt(payload.length), true);
  const msg = new Uint8Array(MSGHDR_BYTES);
  const view = new DataView(msg.buffer);
  view.setBigUint64(16, address(iov), true); // msg_iov
  view.setBigUint64(24, 1n, true); // msg_iovlen
  view.setBigUint64(32, control.length === 0 ? 0n : address(control), true); // msg_control
  view.setBigUint64(40, BigInt(control.length), true); // msg_controllen
  return { msg, iov };
}

/** A unix `SOCK_SEQPACKET` socket pair (message boundaries kept), both ends close-on-exec. */
export function seqpacketPair(): [number, number] {
  linuxOnly("A unix socket pair for descriptors");
  return unixSocketPair("seqpacket", "E_FD_PASSING");
}

/**
 * Sends `payload` (at least one byte: a message of descriptors alone is not seen on a stream socket) with
 * copies of `fds` attached. Throws `E_FD_PASSING` for more than {@link MAX_FDS_PER_MESSAGE} descriptors or
 * when `sendmsg` fails (the peer is gone: `EPIPE`, without SIGPIPE).
 */
export function sendFds(socket: number, fds: readonly number[], payload: Uint8Array): void {
  linuxOnly("Passing descriptors");
  if (fds.length > MAX_FDS_PER_MESSAGE) {
    throw new SpawnError(
      "E_FD_PASSING",
      `At most ${MAX_FDS_PER_MESSAGE} descriptors go in one message, not ${fds.length}`,
    );
  }
  if (payload.length === 0) {
    throw new SpawnError("E_FD_PASSING", "A message needs at least one byte of payload");
  }
  const control = new Uint8Array(fds.length === 0 ? 0 : CMSG_HEADER + align8(4 * fds.length));
  if (fds.length > 0) {
    const view = new DataView(control.buffer);
    view.setBigUint64(0, BigInt(CMSG_HEADER + 4 * fds.length), true); // cmsg_len = CMSG_LEN(4n)
    view.setInt32(8, LINUX_SOCKET.SOL_SOCKET, true);
    view.setInt32(12, LINUX_SOCKET.SCM_RIGHTS, true);
    fds.forEach((fd, i) => view.setInt32(CMSG_HEADER + 4 * i, fd, true));
  }
  const { msg, iov } = messageHeader(payload, control);
  const lib = libc();
  for (;;) {
    const sent = Number(lib.sym.sendmsg(socket, msg, LINUX_SOCKET.MSG_NOSIGNAL));
    if (sent >= 0) break;
    const errno = lib.errno();
    if (errno === lib.table.errno.EINTR) continue;
    throw new SpawnError("E_FD_PASSING", `sendmsg() failed with errno ${errno}`, { details: { errno } });
  }
  void iov; // Referenced until the call returned.
}

/**
 * The descriptors of the `SCM_RIGHTS` messages in a received control buffer, whose first `controlLength`
 * bytes (`msg_controllen`) the kernel filled: the `cmsghdr` walk of `CMSG_FIRSTHDR`/`CMSG_NXTHDR`, which
 * stops at a header shorter than itself or one whose `cmsg_len` runs past the control data, and takes the
 * whole descriptors of a message only. Whatever the bytes say, it reads none outside the control data and
 * ends (a `cmsg_len` of 2^32 once made the walk stand still, and a long one read past the buffer).
 */
export function controlFds(control: Uint8Array, controlLength: number): number[] {
  const fds: number[] = [];
  const end = Math.min(controlLength, control.length);
  const controlView = new DataView(control.buffer, control.byteOffset, control.byteLength);
  for (let at = 0; at + CMSG_HEADER <= end;) {
    const length = controlView.getBigUint64(at, true);
    if (length < BigInt(CMSG_HEADER) || length > BigInt(end - at)) break;
    const bytes = Number(length);
    const level = controlView.getInt32(at + 8, true);
    const type = controlView.getInt32(at + 12, true);
    if (level === LINUX_SOCKET.SOL_SOCKET && type === LINUX_SOCKET.SCM_RIGHTS) {
      const count = Math.floor((bytes - CMSG_HEADER) / 4);
      for (let i = 0; i < count; i++) fds.push(controlView.getInt32(at + CMSG_HEADER + 4 * i, true));
    }
    at += Math.ceil(bytes / 8) * 8; // CMSG_ALIGN, in arithmetic that cannot wrap.
  }
  return fds;
}

/** What {@link receiveFds} got. */
export interface ReceivedFds {
  /** The descriptors (close-on-exec, owned by the caller). */
  readonly fds: number[];
  /** The payload. */
  readonly payload: Uint8Array;
}

/**
 * Receives one message: its payload (at most `maxPayload` bytes) and the descriptors attached to it (at most
 * `maxFds`). Returns `null` at the end of the stream (the peer closed its end) and `"again"` when nothing
 * is there on a non-blocking socket (`dontWait`). Throws `E_FD_PASSING` when `recvmsg` fails or descriptors
 * were cut off for lack of room (the kernel closes those; the ones that arrived are closed here too).
 */
export function receiveFds(
  socket: number,
  options: { maxFds?: number; maxPayload?: number; dontWait?: boolean; buffer?: Uint8Array } = {},
): ReceivedFds | null | "again" {
  linuxOnly("Receiving descriptors");
  const maxFds = Math.min(options.maxFds ?? MAX_FDS_PER_MESSAGE, MAX_FDS_PER_MESSAGE);
  // A caller that receives often passes its own buffer (`maxPayload` is then its size): a fresh one per
  // call is garbage the size of the largest message, every time.
  const payload = options.buffer ?? new Uint8Array(options.maxPayload ?? 4096);
  const control = new Uint8Array(CMSG_HEADER + align8(4 * maxFds));
  const { msg, iov } = messageHeader(payload, control);
  const lib = libc();
  const flags = LINUX_SOCKET.MSG_CMSG_CLOEXEC | (options.dontWait ? LINUX_SOCKET.MSG_DONTWAIT : 0);
  let n: number;
  for (;;) {
    n = Number(lib.sym.recvmsg(socket, msg, flags));
    if (n >= 0) break;
    const errno = lib.errno();
    if (errno === lib.table.errno.EINTR) continue;
    if (errno === lib.table.errno.EAGAIN) return "again";
    throw new SpawnError("E_FD_PASSING", `recvmsg() failed with errno ${errno}`, { details: { errno } });
  }
  void iov;
  const view = new DataView(msg.buffer);
  const fds = controlFds(control, Number(view.getBigUint64(40, true)));
  if ((view.getInt32(48, true) & LINUX_SOCKET.MSG_TRUNC) !== 0) {
    // A message longer than the buffer: its end is gone, so none of it is trusted.
    for (const fd of fds) closeQuietly(fd);
    throw new SpawnError(
      "E_FD_PASSING",
      `A message longer than ${payload.length} bytes came; it was dropped`,
      {
        details: { max_bytes: payload.length },
      },
    );
  }
  if ((view.getInt32(48, true) & LINUX_SOCKET.MSG_CTRUNC) !== 0) {
    for (const fd of fds) closeQuietly(fd);
    throw new SpawnError(
      "E_FD_PASSING",
      `More than ${maxFds} descriptors came in one message; none are kept`,
    );
  }
  if (n === 0 && fds.length === 0) return null;
  return { fds, payload: payload.slice(0, n) };
}

/** Who is at the other end of a connected unix socket, as the kernel recorded it when it connected. */
export interface PeerCredentials {
  readonly pid: number;
  readonly uid: number;
  readonly gid: number;
}

/** The peer's pid, uid and gid (`SO_PEERCRED`; throws `E_FD_PASSING` when the socket has none). */
export function peerCredentials(socket: number): PeerCredentials {
  linuxOnly("Peer credentials");
  const lib = libc();
  const cred = new Uint8Array(12); // struct ucred: pid_t pid, uid_t uid, gid_t gid
  const length = new Uint32Array([cred.length]);
  const result = lib.sym.getsockopt(
    socket,
    LINUX_SOCKET.SOL_SOCKET,
    LINUX_SOCKET.SO_PEERCRED,
    cred,
    new Uint8Array(length.buffer),
  );
  if (result !== 0) {
    throw new SpawnError("E_FD_PASSING", `getsockopt(SO_PEERCRED) failed with errno ${lib.errno()}`);
  }
  const view = new DataView(cred.buffer);
  return { pid: view.getInt32(0, true), uid: view.getUint32(4, true), gid: view.getUint32(8, true) };
}
