/**
 * Another local user for trust tests: a python3 process running as uid 65534 (`setpriv`) that listens on
 * a unix socket where a victim's client might connect, answers whatever it is sent (so that a client which
 * trusted it would go on and send its next call), and counts every connection and byte it gets.
 *
 * @module
 */

/** The attacker's uid and gid (nobody). */
export const ATTACKER_UID = 65534;

/** `setpriv` to the attacker, for any program (Debian's python3: the pyenv shim is root's). */
export const AS_ATTACKER = [
  "setpriv",
  `--reuid=${ATTACKER_UID}`,
  `--regid=${ATTACKER_UID}`,
  "--clear-groups",
];

/**
 * The attacker's listener. Arguments: `stream|seqpacket`, then steps done in order: `mkdir:DIR` (0700),
 * `link:LINK:TARGET`, `write:PATH:TEXT` (0600), `bind:PATH` or `fd:N` (a socket bound by someone else),
 * `hello` (a keeper's hello on each connection, seqpacket). It prints `ready`, `conn` per connection,
 * `bytes N` per read, and on SIGTERM reads what is still queued and prints `summary conns=N bytes=M`.
 */
export const ATTACKER_PY = String.raw`
import json, os, select, signal, socket, sys
kind = socket.SOCK_STREAM if sys.argv[1] == "stream" else socket.SOCK_SEQPACKET
listener = None
hello = False
for step in sys.argv[2:]:
    op, _, rest = step.partition(":")
    if op == "mkdir":
        os.mkdir(rest, 0o700)
    elif op == "link":
        link, target = rest.split(":", 1)
        os.symlink(target, link)
    elif op == "write":
        path, text = rest.split(":", 1)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, text.encode())
        os.close(fd)
    elif op == "bind":
        listener = socket.socket(socket.AF_UNIX, kind)
        listener.bind(rest)
        os.chmod(rest, 0o777)
    elif op == "fd":
        listener = socket.socket(socket.AF_UNIX, kind, fileno=int(rest))
    elif op == "hello":
        hello = True
conns, count, total = [], 0, 0
def note(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
def took(c, data):
    global total
    total += len(data)
    note("bytes %d" % len(data))
    if kind != socket.SOCK_STREAM:
        return
    for line in data.split(b"\n"):
        try:
            call = json.loads(line)
        except ValueError:
            continue
        if isinstance(call, dict) and "id" in call:
            answer = {"jsonrpc": "2.0", "id": call["id"], "result": {"protocol": 1, "sessions": [], "control": True}}
            c.sendall((json.dumps(answer) + "\n").encode())
def accept():
    global count
    c, _ = listener.accept()
    count += 1
    conns.append(c)
    note("conn")
    if hello:
        try:
            c.send(json.dumps({"op": "hello", "pid": os.getpid(), "count": 0}).encode())
        except OSError:
            pass  # The client checked us and left before the hello: what matters is what it sent.
def finish(*_):
    if listener is not None:
        listener.setblocking(False)
    while listener is not None:
        try:
            accept()
        except (BlockingIOError, OSError):
            break
    for c in conns:
        c.setblocking(False)
        while True:
            try:
                data = c.recv(65536)
            except (BlockingIOError, OSError):
                break
            if not data:
                break
            took(c, data)
    note("summary conns=%d bytes=%d" % (count, total))
    os._exit(0)
signal.signal(signal.SIGTERM, finish)
if listener is not None:
    listener.listen(16)
note("ready")
while True:
    ready, _, _ = select.select(([listener] if listener is not None else []) + conns, [], [])
    for s in ready:
        if s is listener:
            accept()
            continue
        try:
            data = s.recv(65536)
        except OSError:
            data = b""
        if not data:
            conns.remove(s)
            s.close()
            continue
        took(s, data)
`;

/**
 * Binds `PATH` as root (the socket file is root's, in root's directory), then becomes the attacker, who
 * calls listen(): `SO_PEERCRED` names the process that listened, so a client sees uid 65534 behind a file
 * that looks its own. Arguments: `stream|seqpacket PATH [hello]`.
 */
export const BIND_THEN_DROP_PY = String.raw`
import os, socket, sys
kind = socket.SOCK_STREAM if sys.argv[1] == "stream" else socket.SOCK_SEQPACKET
s = socket.socket(socket.AF_UNIX, kind)
s.bind(sys.argv[2])
os.chmod(sys.argv[2], 0o600)
s.set_inheritable(True)
setpriv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
os.execvp("setpriv", setpriv + ["/usr/bin/python3", "-c", os.environ["ATTACKER_PY"], sys.argv[1], "fd:%d" % s.fileno()] + sys.argv[3:])
`;

/** What the attacker saw. */
export interface Seen {
  readonly conns: number;
  readonly bytes: number;
}

/** A running attacker. */
export class Attacker {
  readonly #child: Deno.ChildProcess;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  #text = "";

  private constructor(child: Deno.ChildProcess) {
    this.#child = child;
    this.#reader = child.stdout.getReader();
  }

  /** Starts `python3 ATTACKER_PY ARGS` as the attacker (or BIND_THEN_DROP_PY as root when `bindAsRoot`). */
  static async start(args: string[], bindAsRoot = false): Promise<Attacker> {
    const argv = bindAsRoot
      ? ["/usr/bin/python3", "-c", BIND_THEN_DROP_PY, ...args]
      : [...AS_ATTACKER, "/usr/bin/python3", "-c", ATTACKER_PY, ...args];
    const child = new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      env: { ATTACKER_PY },
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const attacker = new Attacker(child);
    await attacker.#until(/^ready$/m);
    return attacker;
  }

  /** The attacker's pid (that of python3 once setpriv exec'd it). */
  get pid(): number {
    return this.#child.pid;
  }

  async #until(pattern: RegExp): Promise<RegExpExecArray> {
    const decoder = new TextDecoder();
    for (;;) {
      const match = pattern.exec(this.#text);
      if (match !== null) return match;
      const { value, done } = await this.#reader.read();
      if (done) throw new Error(`The attacker ended before ${pattern}: ${this.#text}`);
      this.#text += decoder.decode(value, { stream: true });
    }
  }

  /** Stops it (after it read whatever was still queued for it) and says what it got. */
  async finish(): Promise<Seen> {
    try {
      this.#child.kill("SIGTERM");
    } catch {
      // It ended by itself (a refused client closed, and it printed its summary): read that.
    }
    const match = await this.#until(/^summary conns=(\d+) bytes=(\d+)$/m);
    await this.#reader.cancel();
    await this.#child.status;
    return { conns: Number(match[1]), bytes: Number(match[2]) };
  }
}
