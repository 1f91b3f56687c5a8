/**
 * Class 3 (network off does not mean no IPC), against real bwrap sandboxes. A host process listens on
 * pathname unix sockets inside directories the policy grants (read-only and read-write; connect() works
 * on a socket inode even through a read-only bind), and plants SysV shared memory, message queues and
 * semaphores, POSIX shared memory and a POSIX message queue. With network off the sandboxed program must
 * reach none of them. The same socket attack with network on succeeds: that control shows the attack is
 * real and it is the network-off filter that stops it.
 */
import assert from "node:assert/strict";
import { sessionTest } from "../_helpers.ts";
import { policyOf, PYTHON, results, runSandboxed, withHostDir } from "./_sandbox.ts";

/** A host unix socket server at `path` (mode 0777) that records every byte any client sends. */
async function hostSocket<T>(path: string, fn: (received: () => string) => Promise<T>): Promise<T> {
  const listener = Deno.listen({ transport: "unix", path });
  await Deno.chmod(path, 0o777);
  let received = "";
  const conns: Deno.Conn[] = [];
  const serving = (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      (async () => {
        const buf = new Uint8Array(256);
        try {
          for (let n = await conn.read(buf); n !== null; n = await conn.read(buf)) {
            received += new TextDecoder().decode(buf.subarray(0, n));
          }
        } catch {
          // The client went away: what it sent is already recorded.
        }
      })();
    }
  })();
  try {
    return await fn(() => received);
  } finally {
    listener.close();
    for (const conn of conns) {
      try {
        conn.close();
      } catch {
        // Already closed by the reader.
      }
    }
    await serving.catch(() => {}); // The listener was closed on purpose.
  }
}

/** Python: every way to reach `path`, printing `RESULT name ok|errno`. */
function connectScript(path: string): string {
  return [
    "import socket, os",
    `path = ${JSON.stringify(path)}`,
    "def attempt(name, kind, how):",
    "    try:",
    "        s = socket.socket(socket.AF_UNIX, kind); how(s); print('RESULT', name, 'ok', flush=True)",
    "    except OSError as e: print('RESULT', name, e.errno, flush=True)",
    "attempt('stream', socket.SOCK_STREAM, lambda s: (s.connect(path), s.sendall(b'PWNED-STREAM')))",
    "attempt('dgram', socket.SOCK_DGRAM, lambda s: s.sendto(b'PWNED-DGRAM', path))",
    "attempt('seqpacket', socket.SOCK_SEQPACKET, lambda s: (s.connect(path), s.send(b'PWNED-SEQ')))",
    // Through another name for the same inode: /proc/self/root, and an fd opened with O_PATH.
    "attempt('procroot', socket.SOCK_STREAM, lambda s: (s.connect('/proc/self/root' + path), s.sendall(b'PWNED-ROOT')))",
    "def by_fd(s):",
    "    fd = os.open(path, os.O_PATH); s.connect('/proc/self/fd/%d' % fd); s.sendall(b'PWNED-FD')",
    "attempt('opath', socket.SOCK_STREAM, by_fd)",
    // A pair is nameless: it must keep working (pipes between the program's own processes).
    "a, b = socket.socketpair(); a.send(b'x'); print('RESULT pair', b.recv(1).decode(), flush=True)",
  ].join("\n");
}

for (const grant of ["read", "write"] as const) {
  sessionTest(`network off: a host socket under an fs.${grant} grant cannot be reached`, async () => {
    await withHostDir(async (dir) => {
      const path = `${dir}/agent.sock`;
      await hostSocket(path, async (received) => {
        const { text } = await runSandboxed(
          [PYTHON, "-c", connectScript(path)],
          policyOf({ fs: { [grant]: [dir] } }),
        );
        const got = results(text);
        for (const name of ["stream", "dgram", "seqpacket", "procroot", "opath"]) {
          assert.equal(got[name], "1", `${name} is refused (EPERM): ${text}`);
        }
        assert.equal(got.pair, "x", text);
        await new Promise((r) => setTimeout(r, 50));
        assert.equal(received(), "", "nothing reached the host socket");
      });
    });
  });
}

sessionTest(
  "control: with network on the same attack reaches the host socket (so the test can fail)",
  async () => {
    await withHostDir(async (dir) => {
      const path = `${dir}/agent.sock`;
      await hostSocket(path, async (received) => {
        const policy = policyOf({ fs: { read: [dir] }, network: "on" }, { unsafeWrite: true, network: true });
        const { text } = await runSandboxed([PYTHON, "-c", connectScript(path)], policy);
        assert.equal(results(text).stream, "ok", text);
        for (let i = 0; i < 50 && !received().includes("PWNED-STREAM"); i++) {
          await new Promise((r) => setTimeout(r, 20));
        }
        assert.match(received(), /PWNED-STREAM/);
      });
    });
  },
);

/** Host-side python: creates SysV and POSIX IPC objects holding a secret and prints their ids. */
const PLANT = `
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
key = int(sys.argv[1]); name = sys.argv[2]
shmid = libc.shmget(key, 4096, 0o1666)
libc.shmat.restype = ctypes.c_void_p
addr = libc.shmat(shmid, None, 0); ctypes.memmove(addr, b"IPC-SECRET", 10); libc.shmdt(ctypes.c_void_p(addr))
msqid = libc.msgget(key, 0o1666)
semid = libc.semget(key, 1, 0o1666)
fd = os.open("/dev/shm/" + name, os.O_CREAT | os.O_RDWR, 0o666); os.write(fd, b"IPC-SECRET"); os.close(fd)
mq = rt.mq_open(("/" + name).encode(), os.O_CREAT | os.O_RDWR, 0o666, None)
print(json.dumps({"shmid": shmid, "msqid": msqid, "semid": semid, "mq": mq}))
`;

const REMOVE = `
import ctypes, os, sys
libc = ctypes.CDLL(None); rt = ctypes.CDLL("librt.so.1")
key = int(sys.argv[1]); name = sys.argv[2]
libc.shmctl(libc.shmget(key, 0, 0), 0, None); libc.msgctl(libc.msgget(key, 0), 0, None)
libc.semctl(libc.semget(key, 0, 0), 0, 0); rt.mq_unlink(("/" + name).encode())
try: os.unlink("/dev/shm/" + name)
except OSError: pass  # Never created.
`;

async function python(script: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(PYTHON, { args: ["-c", script, ...args], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout);
}

sessionTest(
  "host SysV shm/msg/sem, POSIX shm and mqueues are out of reach (by key, by id, by name)",
  async () => {
    const key = 0x5ec7000 + Math.floor(Math.random() * 0xfff);
    const name = `specter-ipc-${crypto.randomUUID().slice(0, 8)}`;
    try {
      const ids = JSON.parse(await python(PLANT, [String(key), name]));
      assert.ok(ids.shmid >= 0 && ids.msqid >= 0 && ids.semid >= 0 && ids.mq >= 0, JSON.stringify(ids));
      const script = [
        "import ctypes, os",
        "libc = ctypes.CDLL(None, use_errno=True); rt = ctypes.CDLL('librt.so.1', use_errno=True)",
        "libc.shmat.restype = ctypes.c_void_p",
        "def attempt(name, fn):",
        "    ctypes.set_errno(0); r = fn(); e = ctypes.get_errno()",
        "    print('RESULT', name, 'ok' if r is not None and r not in (-1, 2**64 - 1) else e, flush=True)",
        `attempt('shmget', lambda: libc.shmget(${key}, 0, 0))`,
        `attempt('shmat', lambda: libc.shmat(${ids.shmid}, None, 0))`,
        `attempt('msgget', lambda: libc.msgget(${key}, 0))`,
        `attempt('msgsnd', lambda: libc.msgsnd(${ids.msqid}, b'\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00x', 1, 0o4000))`,
        `attempt('semget', lambda: libc.semget(${key}, 0, 0))`,
        `attempt('semctl', lambda: libc.semctl(${ids.semid}, 0, 12))`, // GETVAL
        `attempt('mq_open', lambda: rt.mq_open(b'/${name}', os.O_RDWR))`,
        "def shm():",
        "    try: return len(open('/dev/shm/" + name + "', 'rb').read())",
        "    except OSError as e: ctypes.set_errno(e.errno); return -1",
        "attempt('posix_shm', shm)",
      ].join("\n");
      const { text } = await runSandboxed([PYTHON, "-c", script], policyOf({}));
      const got = results(text);
      assert.equal(got.shmget, "2", text); // ENOENT: the key does not exist in the sandbox's IPC namespace
      assert.equal(got.shmat, "22", text); // EINVAL: nor does the id
      assert.equal(got.msgget, "2", text);
      assert.equal(got.msgsnd, "22", text);
      assert.equal(got.semget, "2", text);
      assert.equal(got.semctl, "22", text);
      assert.equal(got.mq_open, "2", text); // its own mqueue namespace
      assert.equal(got.posix_shm, "2", text); // its own /dev/shm
      assert.ok(!text.includes("IPC-SECRET"));
    } finally {
      await python(REMOVE, [String(key), name]);
    }
  },
);

Deno.test({
  name: "fs.sockets grants exactly the named socket a bind; the documented limit holds as stated",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await withHostDir(async (dir) => {
      await Deno.mkdir(`${dir}/granted`);
      await Deno.mkdir(`${dir}/visible`);
      const granted = `${dir}/granted/bus.sock`;
      const visible = `${dir}/visible/other.sock`;
      await hostSocket(granted, async (grantedGot) => {
        await hostSocket(visible, async (visibleGot) => {
          const policy = policyOf(
            { fs: { read: [`${dir}/visible`], sockets: [granted] } },
            { unsafeWrite: true, network: false, hostSockets: true },
          );
          const script = [
            "import socket",
            "for name, path in [('granted', " + JSON.stringify(granted) + "), ('visible', " +
            JSON.stringify(visible) + ")]:",
            "    try:",
            "        s = socket.socket(socket.AF_UNIX); s.connect(path); s.sendall(b'HELLO-' + name.encode())",
            "        print('RESULT', name, 'ok', flush=True)",
            "    except OSError as e: print('RESULT', name, e.errno, flush=True)",
            "import os; print('RESULT dir', sorted(os.listdir(" + JSON.stringify(`${dir}/granted`) +
            ")), flush=True)",
          ].join("\n");
          const { text } = await runSandboxed([PYTHON, "-c", script], policy);
          const got = results(text);
          assert.equal(got.granted, "ok", text);
          for (let i = 0; i < 50 && !grantedGot().includes("HELLO-granted"); i++) {
            await new Promise((r) => setTimeout(r, 20));
          }
          assert.match(grantedGot(), /HELLO-granted/);
          // Only the socket itself is bound, not its directory's other entries.
          assert.match(text, /RESULT dir \['bus\.sock'\]/, text);
          // The limit: AF_UNIX is open, so a socket visible through fs.read is reachable too.
          assert.equal(got.visible, "ok", text);
          for (let i = 0; i < 50 && !visibleGot().includes("HELLO-visible"); i++) {
            await new Promise((r) => setTimeout(r, 20));
          }
          assert.match(visibleGot(), /HELLO-visible/);
        });
      });
    });
  },
});

sessionTest(
  "fs.sockets needs --ack-host-sockets (E_POLICY_SOCKET_ACK); /proc, /sys, /dev stay forbidden",
  () => {
    assert.throws(() => policyOf({ fs: { sockets: ["/run/user/1000/bus"] } }), /E_POLICY_SOCKET_ACK/);
    for (const bad of ["/proc/1/root/run/x.sock", "/sys/x", "/dev/log", "relative.sock", "/run"]) {
      assert.throws(
        () => policyOf({ fs: { sockets: [bad] } }, { unsafeWrite: true, network: false, hostSockets: true }),
        /E_POLICY_(BROAD_ROOT|PATH_RELATIVE)/,
        bad,
      );
    }
    const ok = policyOf({ fs: { sockets: ["/run/user/1000/bus"] } }, {
      unsafeWrite: false,
      network: false,
      hostSockets: true,
    });
    assert.deepEqual(ok.fs.sockets, ["/run/user/1000/bus"]);
    assert.equal(policyOf({}).fs.sockets, undefined);
    return Promise.resolve();
  },
);
