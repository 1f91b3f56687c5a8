/**
 * The bridge from a sandbox's network namespace to the run's proxy: while bwrap holds the program at its
 * gate (`--block-fd`), the relay (`specter net-relay`, see `relay/net_relay.ts`) is started in the sandbox's
 * network namespace with util-linux `nsenter --target PID --net`, and the program is released only once
 * the relay listens there. A relay that does not start is `E_SANDBOX_NETWORK` and the program never runs,
 * so a session is never started half-networked.
 *
 * When this process may enter the sandbox's network namespace itself (root), there is no relay process:
 * the listener is made there by this process (`listenInNetworkOf`) and handed to the proxy
 * ({@link NetRelayRequest.adopt}): one copy of each byte fewer, no runtime started per sandbox.
 *
 * The launch path is synchronous (bwrap's gate is passed by blocking reads), so readiness is read where
 * it is true rather than from the relay's `ready` line: the sandbox's own TCP table
 * (`/proc/PID/net/tcp`, which lists the sockets of PID's network namespace) shows the listener on
 * `127.0.0.1:3128`. Nothing else can listen there before the program runs: the program is still held.
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import { listenInNetworkOf, sleepMs } from "../pty/mod.ts";
import type { LaunchPlan } from "../sandbox/mod.ts";
import { processStartTime, RELAY_PORT } from "../relay/mod.ts";

/** How long the relay may take to listen (a Deno start on a loaded machine). */
export const RELAY_READY_MS = 15_000;
const POLL_MS = 10;
/** Where util-linux's nsenter is looked for: root-owned system directories only, never PATH. */
const NSENTER_PATHS = ["/usr/bin/nsenter", "/bin/nsenter", "/usr/sbin/nsenter", "/sbin/nsenter"];

/** What a launch needs to bridge its sandbox's network to a proxy. */
export interface NetRelayRequest {
  /** The program that runs Specter again (`selfProgram("net-relay")` of the CLI): the relay is `… net-relay`. */
  readonly command: readonly string[];
  /** The unix socket the run's proxy listens on (in a 0700 directory no grant reaches). */
  readonly socketPath: string;
  /** Default {@link RELAY_READY_MS}. */
  readonly readyMs?: number;
  /** Variables added to the relay's environment (V8 flags that keep an idle relay small). */
  readonly env?: Readonly<Record<string, string>>;
  /** Told the relay once it listens (its owner may then wait for it to end: {@link NetRelay.exited}). */
  readonly started?: (relay: NetRelay) => void;
  /**
   * Takes a listener made in the sandbox's network namespace by this process itself, when it may enter
   * that namespace (root): the proxy serves it directly and no relay process runs. Absent: always a relay.
   */
  readonly adopt?: (listener: Deno.Listener) => void;
}

/** A started relay; {@link close} ends it (it also ends by itself when its sandbox is gone). */
export interface NetRelay {
  /** The relay's pid (nsenter execs it: the same process). */
  readonly pid: number;
  /** Resolves once the relay process has exited and been reaped. */
  readonly exited: Promise<void>;
  /** Closes its stdin (it ends on EOF) and kills it if it has not ended a moment later. Idempotent. */
  close(): void;
}

/** The plan has a network allow list (its `netProxy`, set by the policy's compilation): its launch needs a relay. */
export function planWantsProxy(plan: LaunchPlan): boolean {
  return plan.netProxy !== undefined && plan.netProxy !== null;
}

/** The argv that starts the relay for the sandbox whose first process is `sandboxPid`. */
export function relayArgv(
  nsenter: string,
  request: NetRelayRequest,
  sandboxPid: number,
  uid: number,
): string[] {
  return [
    nsenter,
    "--target",
    String(sandboxPid),
    "--net",
    // Not root: bwrap's network namespace belongs to the user namespace it made for the caller, and
    // only there does the caller hold CAP_SYS_ADMIN over it; keep the caller's own uid and groups.
    ...(uid === 0 ? [] : ["--user", "--preserve-credentials"]),
    "--",
    ...request.command,
    "net-relay",
    "--to",
    request.socketPath,
    "--pid",
    String(sandboxPid),
  ];
}

/** util-linux's nsenter, or `E_SANDBOX_NETWORK` saying how to get it. */
export function findNsenter(): string {
  for (const path of NSENTER_PATHS) {
    try {
      const info = Deno.statSync(path);
      if (info.isFile && info.uid === 0) return path;
    } catch {
      // Not there: try the next place.
    }
  }
  throw new SandboxError(
    "E_SANDBOX_NETWORK",
    "A network allow list needs util-linux's nsenter, which is missing",
    {
      details: { looked_in: NSENTER_PATHS, fix: "Install util-linux (apt-get install util-linux)" },
    },
  );
}

/**
 * Starts the relay in the network namespace of `sandboxPid` (held at bwrap's gate) and waits until it
 * listens there. Throws `E_SANDBOX_NETWORK` (and leaves no relay running) when it cannot.
 */
export function startNetRelay(request: NetRelayRequest, sandboxPid: number): NetRelay {
  if (request.adopt !== undefined) {
    const listener = listenInNetworkOf(sandboxPid, "127.0.0.1", RELAY_PORT);
    if (listener !== null) {
      request.adopt(listener);
      let closed = false;
      const inProcess: NetRelay = {
        pid: Deno.pid,
        exited: Promise.resolve(),
        close: () => {
          if (closed) return;
          closed = true;
          try {
            listener.close();
          } catch {
            // The proxy closed it already (it closes every listener it serves).
          }
        },
      };
      request.started?.(inProcess);
      return inProcess;
    }
  }
  const argv = relayArgv(findNsenter(), request, sandboxPid, Deno.uid() ?? 0);
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      ...(request.env === undefined ? {} : { env: { ...request.env } }),
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
  } catch (cause) {
    throw new SandboxError(
      "E_SANDBOX_NETWORK",
      "Could not start the network relay, so the program was not run",
      {
        cause,
        details: { argv },
      },
    );
  }
  const exited = child.status.then(() => {}, () => {});
  // The `ready` line (and anything after it) is drained, so the relay never blocks on a full pipe.
  void child.stdout.pipeTo(new WritableStream()).catch(() => {
    // The relay ended: nothing more to drain.
  });
  const writer = child.stdin.getWriter();
  let closed = false;
  const relay: NetRelay = {
    pid: child.pid,
    exited,
    close: () => {
      if (closed) return;
      closed = true;
      void writer.close().catch(() => {
        // Its stdin is gone already (it exited).
      });
      const timer = setTimeout(() => killQuietly(child), 2000);
      void exited.then(() => clearTimeout(timer));
    },
  };
  const deadline = performance.now() + (request.readyMs ?? RELAY_READY_MS);
  for (;;) {
    if (listening(sandboxPid)) {
      request.started?.(relay);
      return relay;
    }
    const gone = processStartTime(child.pid) === null || processState(child.pid) === "Z";
    if (gone || performance.now() > deadline) {
      killQuietly(child);
      relay.close();
      throw new SandboxError(
        "E_SANDBOX_NETWORK",
        gone
          ? "The network relay exited before it listened, so the program was not run"
          : `The network relay did not listen within ${
            request.readyMs ?? RELAY_READY_MS
          } ms, so the program was not run`,
        { details: { argv, sandbox_pid: sandboxPid } },
      );
    }
    sleepMs(POLL_MS);
  }
}

/** `127.0.0.1:3128` in LISTEN state in the TCP table of `pid`'s network namespace. */
export function listening(pid: number, port = RELAY_PORT): boolean {
  let table: string;
  try {
    table = Deno.readTextFileSync(`/proc/${pid}/net/tcp`);
  } catch {
    return false; // The sandbox is gone: the caller's deadline or its gate reports it.
  }
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  return table.split("\n").some((line) => {
    const fields = line.trim().split(/\s+/);
    return fields[1] === local && fields[3] === "0A";
  });
}

function processState(pid: number): string | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return null; // Gone.
  }
}

function killQuietly(child: Deno.ChildProcess): void {
  try {
    child.kill("SIGKILL");
  } catch {
    // It has exited already.
  }
}
