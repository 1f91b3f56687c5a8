import assert from "node:assert/strict";
import { SpawnError } from "../errors.ts";
import { closeQuietly, libc } from "./_libc.ts";
import {
  controlFds,
  LINUX_SOCKET,
  MAX_FDS_PER_MESSAGE,
  peerCredentials,
  receiveFds,
  sendFds,
  seqpacketPair,
} from "./fd_passing.ts";

const encode = (text: string) => new TextEncoder().encode(text);

function pipe(): [number, number] {
  const pair = new Int32Array(2);
  assert.equal(libc().sym.pipe(new Uint8Array(pair.buffer)), 0);
  return [pair[0]!, pair[1]!];
}

function write(fd: number, text: string): void {
  const bytes = encode(text);
  assert.equal(Number(libc().sym.write(fd, bytes, BigInt(bytes.length))), bytes.length);
}

function read(fd: number): string {
  const buffer = new Uint8Array(256);
  const n = Number(libc().sym.read(fd, buffer, BigInt(buffer.length)));
  return new TextDecoder().decode(buffer.subarray(0, Math.max(0, n)));
}

function isCode(code: string) {
  return (error: unknown) => error instanceof SpawnError && error.code === code;
}

Deno.test("the Linux socket constants match the C headers", async () => {
  const names = Object.keys(LINUX_SOCKET);
  const script = `import json, socket; print(json.dumps({n: getattr(socket, n) for n in ${
    JSON.stringify(names)
  }}))`;
  const { stdout, success } = await new Deno.Command("python3", { args: ["-c", script], stdout: "piped" })
    .output();
  assert.ok(success);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(stdout)), { ...LINUX_SOCKET });
});

Deno.test("a descriptor sent over the pair arrives as a working, close-on-exec copy, with the payload", () => {
  const [a, b] = seqpacketPair();
  const [readEnd, writeEnd] = pipe();
  try {
    sendFds(a, [readEnd], encode("pipe"));
    const got = receiveFds(b);
    assert.ok(got !== null && got !== "again");
    assert.equal(new TextDecoder().decode(got.payload), "pipe");
    assert.equal(got.fds.length, 1);
    const copy = got.fds[0]!;
    assert.notEqual(copy, readEnd);
    const lib = libc();
    assert.equal(lib.fcntl(copy, lib.table.fcntl.F_GETFD, 0) & lib.table.fcntl.FD_CLOEXEC, 1);
    closeQuietly(readEnd); // The copy keeps the pipe open on its own.
    write(writeEnd, "through the copy");
    assert.equal(read(copy), "through the copy");
    closeQuietly(copy);
  } finally {
    for (const fd of [a, b, writeEnd]) closeQuietly(fd);
  }
});

Deno.test("253 descriptors go in one message; 254 are refused before sending", () => {
  const [a, b] = seqpacketPair();
  const [readEnd, writeEnd] = pipe();
  try {
    assert.throws(
      () => sendFds(a, Array(MAX_FDS_PER_MESSAGE + 1).fill(readEnd), encode("x")),
      isCode("E_FD_PASSING"),
    );
    sendFds(a, Array(MAX_FDS_PER_MESSAGE).fill(readEnd), encode("many"));
    const got = receiveFds(b);
    assert.ok(got !== null && got !== "again");
    assert.equal(got.fds.length, MAX_FDS_PER_MESSAGE);
    assert.equal(new Set(got.fds).size, MAX_FDS_PER_MESSAGE, "each a descriptor of its own");
    for (const fd of got.fds) closeQuietly(fd);
  } finally {
    for (const fd of [a, b, readEnd, writeEnd]) closeQuietly(fd);
  }
});

Deno.test("more descriptors than room is E_FD_PASSING, and none of them stays open", () => {
  const [a, b] = seqpacketPair();
  const [readEnd, writeEnd] = pipe();
  // Descriptors of this pipe's read end: counted by what they point at, not all of this process's (other
  // tests in the process open and close descriptors meanwhile).
  const pipeName = Deno.readLinkSync(`/proc/self/fd/${readEnd}`);
  const copies = () =>
    [...Deno.readDirSync("/proc/self/fd")].filter((entry) => {
      try {
        return Deno.readLinkSync(`/proc/self/fd/${entry.name}`) === pipeName;
      } catch {
        return false; // Closed meanwhile.
      }
    }).length;
  try {
    sendFds(a, [readEnd, readEnd, readEnd, readEnd], encode("four"));
    const before = copies(); // Both ends of the pipe.
    assert.throws(() => receiveFds(b, { maxFds: 1 }), isCode("E_FD_PASSING"));
    assert.equal(copies(), before, "no descriptor leaked");
  } finally {
    for (const fd of [a, b, readEnd, writeEnd]) closeQuietly(fd);
  }
});

Deno.test("an empty non-blocking read is 'again'; a closed peer is the end; the peer's credentials are ours", () => {
  const [a, b] = seqpacketPair();
  try {
    assert.equal(receiveFds(b, { dontWait: true }), "again");
    assert.deepEqual(peerCredentials(b), { pid: Deno.pid, uid: Deno.uid(), gid: Deno.gid() });
    assert.throws(() => sendFds(a, [], new Uint8Array()), isCode("E_FD_PASSING"));
    sendFds(a, [], encode("no fds"));
    const got = receiveFds(b);
    assert.ok(got !== null && got !== "again");
    assert.deepEqual(got.fds, []);
    closeQuietly(a);
    assert.equal(receiveFds(b), null);
    assert.throws(() => sendFds(b, [], encode("x")), isCode("E_FD_PASSING")); // EPIPE, no SIGPIPE.
  } finally {
    closeQuietly(b);
  }
});

/** A control buffer of `bytes` bytes with `cmsghdr`s of (cmsg_len, level, type, descriptors) from offset 0. */
function control(bytes: number, messages: readonly [bigint, number, number, number[]][]): Uint8Array {
  const buffer = new Uint8Array(bytes);
  const view = new DataView(buffer.buffer);
  let at = 0;
  for (const [length, level, type, fds] of messages) {
    view.setBigUint64(at, length, true);
    view.setInt32(at + 8, level, true);
    view.setInt32(at + 12, type, true);
    fds.forEach((fd, i) => view.setInt32(at + 16 + 4 * i, fd, true));
    at += 16 + ((4 * fds.length + 7) & ~7);
  }
  return buffer;
}

Deno.test("controlFds: the descriptors of whole SCM_RIGHTS messages within the control length, whatever the bytes say", () => {
  const { SOL_SOCKET, SCM_RIGHTS } = LINUX_SOCKET;
  // As the kernel fills it: two messages, the second not of descriptors.
  assert.deepEqual(
    controlFds(control(48, [[24n, SOL_SOCKET, SCM_RIGHTS, [7, 8]], [20n, SOL_SOCKET, 2, [9]]]), 44),
    [7, 8],
  );
  // A cmsg_len of 2^32 once made the walk stand still (its 8-byte alignment wrapped to 0): a hang.
  assert.deepEqual(controlFds(control(48, [[2n ** 32n, SOL_SOCKET, 2, []]]), 48), []);
  assert.deepEqual(controlFds(control(48, [[2n ** 32n, SOL_SOCKET, SCM_RIGHTS, [5]]]), 48), []);
  // A cmsg_len past the control data was read past the buffer (a RangeError), or past what the kernel filled.
  assert.deepEqual(controlFds(control(48, [[2n ** 32n + 16n, SOL_SOCKET, SCM_RIGHTS, [5]]]), 48), []);
  assert.deepEqual(controlFds(control(48, [[40n, SOL_SOCKET, SCM_RIGHTS, [5, 6]]]), 24), []);
  // A length that is no whole number of descriptors: only the whole ones (the last was read half outside).
  assert.deepEqual(controlFds(control(48, [[26n, SOL_SOCKET, SCM_RIGHTS, [5, 6, 7]]]), 26), [5, 6]);
  // A control length past the buffer reads the buffer only; too short for a header, nothing.
  assert.deepEqual(controlFds(control(24, [[20n, SOL_SOCKET, SCM_RIGHTS, [5]]]), 2 ** 31), [5]);
  assert.deepEqual(controlFds(control(24, [[20n, SOL_SOCKET, SCM_RIGHTS, [5]]]), 15), []);
});
