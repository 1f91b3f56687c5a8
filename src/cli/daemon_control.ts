/**
 * `specter daemon status|stop|listen|revoke`: a running daemon, controlled through its unix socket (the
 * same connect path as every client command: the socket must be this user's own, its listener of this uid
 * by `SO_PEERCRED`, before a byte is sent). `status`, `stop` and `revoke` never start a daemon.
 *
 * @module
 */
import { resolve } from "node:path";
import { DaemonError, toSpecterError, UsageError } from "../errors.ts";
import type { DaemonClient } from "../daemon/mod.ts";
import { type DaemonStatus, DaemonStatusSchema } from "../protocol/mod.ts";
import { printable } from "../terminal/mod.ts";
import { connectDaemon, WHERE_FLAGS, whereOf } from "./daemon_client.ts";
import { listenConfigOf } from "./daemon_listen.ts";
import { DAEMON_CONTROL_FLAGS, type DAEMON_SUBCOMMANDS, REMOTE_FLAGS } from "./daemon_control_doc.ts";
import { type FlagValues, parseFlags } from "./flags.ts";
import { type CommandDoc, commandOptions, type FlagTable, HELP_FLAG } from "./flag_table.ts";

/** How long `stop` waits for the daemon's process to be gone. */
const STOP_WAIT_MS = 10_000;

/** A subcommand's flags as a parser table (its help is `specter help daemon`). */
function docOf(name: string, flags: FlagTable): CommandDoc {
  return { name: `daemon ${name}`, usage: [], about: "", groups: [{ title: "Flags", flags }] };
}

const { bind: _bind, ...LISTEN_COMPANIONS } = REMOTE_FLAGS;
const TABLES = {
  status: { ...WHERE_FLAGS, json: DAEMON_CONTROL_FLAGS.json, ...HELP_FLAG },
  stop: { ...WHERE_FLAGS, "kill-sessions": DAEMON_CONTROL_FLAGS["kill-sessions"], ...HELP_FLAG },
  listen: { ...WHERE_FLAGS, ...LISTEN_COMPANIONS, ...HELP_FLAG },
  revoke: { ...WHERE_FLAGS, ...HELP_FLAG },
} as const;

/** Runs `specter daemon SUB ARGS`. */
export async function daemonControlCommand(
  sub: keyof typeof DAEMON_SUBCOMMANDS,
  args: readonly string[],
  out: (text: string) => void,
): Promise<number> {
  const { values, positionals } = parseFlags(args, commandOptions(docOf(sub, TABLES[sub])));
  if (sub !== "listen" && positionals.length > 0) {
    throw new UsageError(`Unexpected argument "${positionals[0]!.slice(0, 80)}"`);
  }
  switch (sub) {
    case "status":
      return await status(values, out);
    case "stop":
      return await stop(values, out);
    case "listen":
      return await listen(values, positionals, out);
    case "revoke":
      return await withDaemon(values, false, async (client) => {
        const { listener } = await client.call("daemon.revoke", {}) as { listener: string | null };
        out(`New tokens: the old ones are refused from now on (pages that used them say so).`);
        out(`The viewer is at ${listener ?? "?"}; specter url prints it with a new token.`);
        return 0;
      });
  }
}

async function withDaemon<T>(
  values: FlagValues,
  autostart: boolean,
  fn: (client: DaemonClient) => Promise<T>,
): Promise<T> {
  const client = await connectDaemon({ ...values, ...(autostart ? {} : { "no-autostart": true }) });
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** `daemon status`'s exit status when no daemon runs. */
export const STATUS_NOT_RUNNING = 3;

async function status(values: FlagValues, out: (text: string) => void): Promise<number> {
  const { socketPath, stateDir } = whereOf(values);
  let found: DaemonStatus;
  try {
    found = await withDaemon(
      values,
      false,
      async (client) => DaemonStatusSchema.parse(await client.call("daemon.status")),
    );
  } catch (error: unknown) {
    const failure = toSpecterError(error);
    if (failure.code !== "E_DAEMON_UNAVAILABLE") throw error;
    const none: DaemonStatus = {
      running: false,
      pid: null,
      version: null,
      started: null,
      uptime_s: null,
      socket: socketPath,
      state_dir: stateDir,
      listener: null,
      sessions: null,
      running_sessions: null,
      keeper_pid: null,
    };
    if (values.json === true) out(JSON.stringify(none));
    else out(`No daemon runs on "${printable(socketPath)}" (client commands start one; or: specter daemon)`);
    // Not running is an answer, not a failure of Specter (125): 3, as `systemctl status` and LSB init
    // scripts say "not running", so `specter daemon status && …` reads naturally.
    return STATUS_NOT_RUNNING;
  }
  if (values.json === true) {
    out(JSON.stringify(found));
    return 0;
  }
  const rows = [
    ["daemon", `running (pid ${found.pid}, specter ${found.version}, up ${duration(found.uptime_s ?? 0)})`],
    ["socket", found.socket],
    ["state dir", found.state_dir],
    [
      "listener",
      found.listener === null
        ? "none (specter daemon listen 127.0.0.1:PORT)"
        : `${found.listener} (specter url prints it with a token)`,
    ],
    ["sessions", `${found.sessions} (${found.running_sessions} running)`],
    ["keeper", found.keeper_pid === null ? "none" : `pid ${found.keeper_pid}`],
  ];
  for (const [key, value] of rows) out(`${key!.padEnd(10)}${printable(value!)}`);
  return 0;
}

/** True while `pid` is a live process (a zombie is gone: it only waits to be reaped). */
function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false; // No such process.
  }
}

async function stop(values: FlagValues, out: (text: string) => void): Promise<number> {
  const kill = values["kill-sessions"] === true;
  let found: DaemonStatus;
  try {
    found = await withDaemon(values, false, async (client) => {
      const before = DaemonStatusSchema.parse(await client.call("daemon.status"));
      await client.call("daemon.stop", { kill_sessions: kill });
      return before;
    });
  } catch (error: unknown) {
    if (toSpecterError(error).code !== "E_DAEMON_UNAVAILABLE") throw error;
    // Nothing to stop is an answer, as for `status` (3), not a failure of Specter.
    out(`No daemon runs on "${printable(whereOf(values).socketPath)}": nothing to stop`);
    return STATUS_NOT_RUNNING;
  }
  const deadline = Date.now() + STOP_WAIT_MS;
  while (found.pid !== null && alive(found.pid)) {
    if (Date.now() > deadline) {
      throw new DaemonError(
        "E_DAEMON_UNAVAILABLE",
        `The daemon (pid ${found.pid}) was told to stop but still runs`,
        {
          details: { pid: String(found.pid) },
        },
      );
    }
    await new Promise((done) => setTimeout(done, 25));
  }
  const running = found.running_sessions ?? 0;
  const sessions = running === 1 ? "1 running session" : `${running} running sessions`;
  out(
    kill
      ? `The daemon (pid ${found.pid}) stopped; ${
        running === 0 ? "no session was running" : `its ${sessions} ${running === 1 ? "was" : "were"} ended`
      }`
      : running === 0
      ? `The daemon (pid ${found.pid}) stopped; no session was running`
      : `The daemon (pid ${found.pid}) stopped; its ${sessions} ${
        running === 1 ? "goes" : "go"
      } on in the keeper` +
        (found.keeper_pid === null ? "" : ` (pid ${found.keeper_pid})`) + ": the next daemon takes them back",
  );
  return 0;
}

async function listen(
  values: FlagValues,
  positionals: string[],
  out: (text: string) => void,
): Promise<number> {
  if (positionals.length !== 1) throw new UsageError("specter daemon listen takes HOST:PORT (or off)");
  const where = { socket: values.socket, "state-dir": values["state-dir"] };
  if (positionals[0] === "off") {
    for (const name of Object.keys(LISTEN_COMPANIONS)) {
      if (values[name] !== undefined) throw new UsageError(`Flag "--${name}" is not taken by listen off`);
    }
    return await withDaemon(where, false, async (client) => {
      await client.call("daemon.listen", { off: true });
      out("The daemon no longer listens on TCP (and the next one will not either)");
      return 0;
    });
  }
  // Paths as this directory names them: the daemon runs elsewhere.
  const flags: Record<string, string | boolean | string[]> = { bind: positionals[0]! };
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || !Object.hasOwn(LISTEN_COMPANIONS, name)) continue;
    flags[name] = ["tls-cert", "tls-key", "token-file"].includes(name) && typeof value === "string"
      ? resolve(value)
      : value as string | boolean | string[];
  }
  listenConfigOf(flags, null); // Usage errors here, before a daemon is started for nothing.
  return await withDaemon(where, true, async (client) => {
    const answer = await client.call("daemon.listen", { flags }) as { listener: string | null };
    out(
      `The web viewer is at ${answer.listener} (specter url prints it with a token); remembered across restarts`,
    );
    return 0;
  });
}
