/**
 * Class 3 again, from an angle the host IPC suite does not try (found by an attack review of 0.6.0):
 * with network off the filter refused `socket(AF_UNIX, …)` but allowed every `socketpair`, and a
 * datagram socket from a pair can still name a destination: `sendto(path)` and a re-`connect(path)`
 * both reached a host pathname datagram socket that a grant makes visible. A host process listens on
 * such a socket inside a read grant; nothing the sandboxed program sends may arrive. Datagram pairs are
 * refused now (EPERM); stream pairs, which stay connected to each other, keep working.
 */
import assert from "node:assert/strict";
import { sessionTest } from "../_helpers.ts";
import { policyOf, PYTHON, results, runSandboxed, withHostDir } from "./_sandbox.ts";

/** Host side: binds a datagram socket at argv[1] (mode 0777), prints READY, then every datagram. */
const SERVER = `
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777)
print("READY", flush=True)
s.settimeout(float(sys.argv[2]))
try:
    while True: print("HOST-GOT", s.recv(256).decode(), flush=True)
except socket.timeout:
    pass
`;

/** The attack: a nameless pair, then sendto() a path and connect() a path. */
function attack(path: string): string {
  return [
    "import socket",
    `path = ${JSON.stringify(path)}`,
    "def attempt(name, fn):",
    "    try: fn(); print('RESULT', name, 'ok', flush=True)",
    "    except OSError as e: print('RESULT', name, e.errno, flush=True)",
    "DGRAM = socket.SOCK_DGRAM",
    "attempt('pair_sendto', lambda: socket.socketpair(socket.AF_UNIX, DGRAM)[0].sendto(b'PWNED-SENDTO', path))",
    "def connect_send():",
    "    c, d = socket.socketpair(socket.AF_UNIX, DGRAM | socket.SOCK_CLOEXEC)",
    "    c.connect(path); c.send(b'PWNED-CONNECT')",
    "attempt('pair_connect', connect_send)",
    // A stream pair keeps working between the program's own processes.
    "e, f = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM); e.send(b'y')",
    "print('RESULT pair', f.recv(1).decode(), flush=True)",
  ].join("\n");
}

sessionTest(
  "network off: a socketpair datagram socket cannot sendto() or connect() a host datagram socket",
  async () => {
    await withHostDir(async (dir) => {
      const path = `${dir}/notify.sock`;
      const server = new Deno.Command(PYTHON, {
        args: ["-c", SERVER, path, "3"],
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
      const reader = server.stdout.getReader();
      let hostOut = "";
      while (!hostOut.includes("READY")) {
        const { value, done } = await reader.read();
        if (done) break;
        hostOut += new TextDecoder().decode(value);
      }
      assert.match(hostOut, /READY/);
      const { text } = await runSandboxed([PYTHON, "-c", attack(path)], policyOf({ fs: { read: [dir] } }));
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        hostOut += new TextDecoder().decode(value);
      }
      await server.status;
      const got = results(text);
      assert.equal(got.pair, "y", text);
      assert.doesNotMatch(hostOut, /HOST-GOT/, `datagrams reached the host socket:\n${hostOut}\n${text}`);
      assert.equal(got.pair_sendto, "1", text); // EPERM: the datagram pair is not created.
      assert.equal(got.pair_connect, "1", text);
    });
  },
);
