/**
 * A run's network allow list, from the command line's side: the run's proxy on a unix socket in a fresh
 * private (0700) directory that no sandbox grant reaches, the relay request the launch needs to bridge
 * the sandbox's network namespace to it, and every connection the proxy reports written to the run's
 * audit log (event `net`) and, once the session exists, sent as a `net` frame. `run`, `exec` and the
 * agent tools (`agent`, `mcp`) each start one per sandbox and close it when the session is over.
 *
 * The proxy itself is `src/net/` (`NetProxy`), which listens before `start` returns (its promise only hands
 * over the handle), so a session's start, which is synchronous (the agent tools'), can start its proxy and
 * launch at once.
 *
 * @module
 */
import { join } from "node:path";
import type { AuditLog } from "../artifacts/mod.ts";
import { netAuditFields } from "../protocol/mod.ts";
import { NetProxy } from "../net/mod.ts";
import type { NetRule, Policy } from "../policy/mod.ts";
import type { NetRelay, NetRelayRequest } from "../launch/mod.ts";
import type { Session, SpawnOptions } from "../session/mod.ts";
import { selfProgram, v8FlagsOf } from "./self_command.ts";

/**
 * The policy's allow list; `null` for `"off"` and `"on"`.
 */
export function allowListOf(policy: Pick<Policy, "network"> | null | undefined): readonly NetRule[] | null {
  return typeof policy?.network === "object" ? policy.network.allow : null;
}

/** A run's proxy and what its launch needs: see the module documentation. */
export interface RunNet {
  /** The relay request for `SpawnOptions.netRelay`. */
  readonly relay: NetRelayRequest;
  /** The session the proxy's `net` frames go to (set once it is spawned; events before are audited only). */
  attach(session: Session): void;
  /** Closes the proxy (its open connections are reported) and removes its directory. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the proxy of `options`' policy when it has an allow list (`null` otherwise): its socket in a new
 * 0700 directory under `$XDG_RUNTIME_DIR` (else the system temp directory), events to `audit`.
 */
export function startRunNet(
  options: Omit<SpawnOptions, "argv">,
  audit: AuditLog | null,
): RunNet | null {
  const sandbox = options.sandbox;
  const policy = sandbox !== undefined && "policy" in sandbox ? sandbox.policy : null;
  const rules = allowListOf(policy);
  if (rules === null || policy === null) return null;
  // A short path (a unix socket's is at most 107 bytes), private, and outside every grant: the launch
  // guards this directory as it guards the artifacts directory (SpawnOptions.netRelay).
  const runtime = Deno.env.get("XDG_RUNTIME_DIR");
  const dir = Deno.makeTempDirSync({
    prefix: "specter-net-",
    ...(runtime !== undefined && runtime.startsWith("/") ? { dir: runtime } : {}),
  });
  Deno.chmodSync(dir, 0o700);
  const socketPath = join(dir, "proxy.sock");
  let session: Session | null = null;
  let proxy: Promise<NetProxy>;
  try {
    proxy = NetProxy.start({
      socketPath,
      rules,
      policyName: policy.source,
      onEvent: (event) => {
        const fields = netAuditFields(event);
        audit?.record("net", fields);
        session?.reportNet(fields);
      },
    });
  } catch (error: unknown) {
    removeDir(dir);
    throw error;
  }
  let closing: Promise<void> | null = null;
  let relay: NetRelay | null = null;
  return {
    relay: {
      command: selfProgram("net-relay"),
      socketPath,
      // A relay is a whole runtime per sandbox: the lean heap settings, and a module that loads only the relay
      // (45 MiB resident, not the 73 of the whole CLI: docs/benchmarks.md).
      env: { DENO_V8_FLAGS: v8FlagsOf("net-relay") },
      started: (value) => {
        relay = value;
      },
      // As root the launch makes the listener in the sandbox's namespace itself and the proxy serves it
      // (no relay process). SPECTER_NET_RELAY=process keeps the relay anyway: how a non-root run goes,
      // so that path is tested on a root machine too.
      ...(Deno.env.get("SPECTER_NET_RELAY") === "process" ? {} : {
        adopt: (listener: Deno.Listener) => {
          void proxy.then((handle) => handle.serveListener(listener), () => {
            try {
              listener.close();
            } catch {
              // Closed already.
            }
          });
        },
      }),
    },
    attach: (value) => {
      session = value;
    },
    // The relay first (its sandbox is gone; it would end within its poll anyway), so that a run that
    // returns has left no process behind; then the proxy, which reports its last connections.
    close: () =>
      closing ??= (async () => {
        const started = relay as NetRelay | null;
        started?.close();
        await started?.exited;
        await proxy.then((handle) => handle.close(), () => {
          // It never started (said when the run was refused): nothing to close.
        });
        session = null;
        removeDir(dir);
      })(),
  };
}

function removeDir(dir: string): void {
  try {
    Deno.removeSync(dir, { recursive: true });
  } catch {
    // Best effort: an empty private directory in the runtime or temp directory.
  }
}
