/**
 * `specter daemon` and `specter keeper`, and what every daemon client command shares: where the daemon
 * is (`--socket`, `--state-dir`), starting it on first use (`--no-autostart` to refuse), and this
 * program's own command line (the keeper and an autostarted daemon are the same binary).
 *
 * @module
 */
import { startRunNet } from "./net_run.ts";
import { DaemonError, SpecterError, toSpecterError, UsageError } from "../errors.ts";
import { CommandLog, defaultCommandLogPath } from "../history/mod.ts";
import { Daemon, defaultPersistRoot, type SyncPolicy } from "../daemon/mod.ts";
import type { ListenConfig } from "../protocol/mod.ts";
import { printable } from "../terminal/mod.ts";
import { absolute, WHERE_FLAGS, whereOf } from "./daemon_client.ts";
import { startDetached } from "./self_command.ts";
import { type FlagValues, parseCommandLine } from "./flags.ts";
import {
  listenConfigOf,
  listenControl,
  listenOf,
  loadListenConfig,
  rememberListener,
} from "./daemon_listen.ts";
import {
  DAEMON_CONTROL_FLAGS,
  DAEMON_SUBCOMMANDS,
  daemonSessionOptions,
  REMOTE_FLAGS,
} from "./daemon_control_doc.ts";
import type { CommandDoc, FlagTable } from "./flag_table.ts";
import { HELP_FLAG } from "./flag_table.ts";
import { parseDuration } from "./units.ts";
import { startRunAudit } from "./audit_run.ts";
import { runAsMain, writeLine } from "./standalone.ts";
import { defaultArtifactsDir } from "../artifacts/mod.ts";

/** The command log's place (`daemon` writes it, `history` reads it). */
export const HISTORY_FLAG = {
  history: {
    type: "string",
    value: "FILE",
    description: "The command log (default: $XDG_DATA_HOME/specter/log.sqlite)",
  },
} as const satisfies FlagTable;

const DAEMON_FLAGS = {
  ...WHERE_FLAGS,
  ...HISTORY_FLAG,
  fsync: {
    type: "string",
    value: "POLICY",
    description: "When logged frames reach the disk: a duration (fdatasync that often; default 50ms), " +
      "always (one fdatasync per frame) or never (the OS decides; a kill -9 still loses nothing)",
  },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** `specter daemon`'s help. */
export const DAEMON_DOC: CommandDoc = {
  name: "daemon",
  usage: [
    "specter daemon [--socket PATH] [--state-dir DIR] [--fsync POLICY]",
    "specter daemon --bind HOST:PORT [--tls-cert FILE --tls-key FILE] [--token-file FILE] [--compress zstd]",
    ...Object.values(DAEMON_SUBCOMMANDS),
  ],
  about: `Runs the per-user daemon in the foreground: named sessions (specter new) that outlive their
clients and the daemon itself. It listens on a unix socket in a private (0700) directory and refuses peers
of another uid (kernel peer credentials). Terminals are held by a keeper process (started on demand), so a
daemon killed with kill -9 loses no session: the next one takes every session back, each from where its
frame log ends. One daemon per state directory and socket (E_DAEMON_LOCKED otherwise). Client commands
start it on first use. With --bind it also listens on TCP (loopback unless told otherwise): a web viewer
for people and the same JSON-RPC on a WebSocket for programs, both for holders of a token (specter url
prints the viewer's address with one). The listener and its tokens are remembered in the state directory
(listen.json, mode 0600) and the next daemon listens there again.
A running daemon: status prints its pid, uptime, socket, state directory, listener, sessions and keeper (exit 3 when none runs);
stop ends it (its sessions go on in the keeper and the next daemon takes them back, unless
--kill-sessions); listen gives it a TCP listener, or another one (the next daemon keeps it; off: none);
revoke makes new tokens (a --token-file is read again) and refuses the old ones at once.`,
  groups: [
    { title: "Daemon flags", flags: DAEMON_FLAGS },
    { title: "Remote access (also of daemon listen)", flags: REMOTE_FLAGS },
    { title: "Subcommand flags", flags: DAEMON_CONTROL_FLAGS },
  ],
};

function syncPolicy(value: FlagValues[string]): SyncPolicy {
  if (value === undefined) return { everyMs: 50 };
  if (value === "always" || value === "never") return value;
  if (typeof value !== "string") throw new UsageError('Flag "--fsync" needs a value');
  const everyMs = parseDuration(value, "fsync");
  if (everyMs <= 0) throw new UsageError('Flag "--fsync" must be a positive duration, always or never');
  return { everyMs };
}

/** The agent's options come from `specter agent`'s module, loaded with the first agent. */
async function agentBaseOf(flags: Record<string, string | boolean | string[]>, cwd: string) {
  return (await import("./agent.ts")).agentBase({ ...flags, cwd });
}

/** Runs `specter daemon` until it is stopped (SIGTERM, SIGINT or `daemon.stop`). */
export async function daemonCommand(
  args: readonly string[],
  warn: (text: string) => void,
  out: (text: string) => void = warn,
): Promise<number> {
  const sub = args[0];
  if (sub !== undefined && Object.hasOwn(DAEMON_SUBCOMMANDS, sub)) {
    return await (await import("./daemon_control.ts")).daemonControlCommand(
      sub as keyof typeof DAEMON_SUBCOMMANDS,
      args.slice(1),
      out,
    );
  }
  const { values, command } = parseCommandLine(args, DAEMON_DOC);
  if (command.length > 0) {
    throw new UsageError(
      `Unexpected argument "${command[0]!.slice(0, 80)}" (specter daemon ${
        Object.keys(DAEMON_SUBCOMMANDS).join("|")
      })`,
    );
  }
  for (const name of Object.keys(DAEMON_CONTROL_FLAGS)) {
    if (values[name] !== undefined) {
      throw new UsageError(`Flag "--${name}" is taken by a subcommand (see specter help daemon)`);
    }
  }
  const { socketPath, stateDir } = whereOf(values);
  // The listener: --bind's (tokens remembered from the last one unless --token-file), else the one the
  // last daemon was given (listen.json), else none.
  let remembered: ListenConfig | null = null;
  try {
    remembered = loadListenConfig(stateDir);
  } catch (error: unknown) {
    if (values.bind === undefined) {
      warn(
        `specter daemon: ${toSpecterError(error).code}: ${toSpecterError(error).message}; no TCP listener`,
      );
    }
  }
  const given = listenConfigOf(values, remembered);
  const config = given ?? remembered;
  const historyPath = typeof values.history === "string"
    ? absolute(values.history, "history")
    : defaultCommandLogPath();
  let commandLog: CommandLog | null = null;
  try {
    commandLog = CommandLog.open(historyPath);
  } catch (error: unknown) {
    // Sessions still run and are logged frame by frame; only `specter history` misses their commands.
    warn(
      `specter daemon: ${toSpecterError(error).code}: ${
        toSpecterError(error).message
      }; commands are not recorded`,
    );
  }
  let daemon: Daemon;
  try {
    daemon = await Daemon.start({
      commandLog,
      persistRoot: defaultPersistRoot(stateDir),
      socketPath,
      stateDir,
      sync: syncPolicy(values.fsync),
      resolve: (params) => daemonSessionOptions(params),
      startKeeper: () => startDetached("keeper", ["--state-dir", stateDir]),
      agentBase: agentBaseOf,
      // As `run` audits: the start with the flags (values only where they hold no secret), then the launch,
      // breaches and the end, in `$XDG_STATE_HOME/specter/runs/RUN_ID/audit.ndjson`.
      audit: (session) =>
        startRunAudit(
          { ...session.flags, cwd: session.cwd, id: undefined, artifacts: undefined },
          session.argv,
          "daemon",
          { session: session.name, author_kind: session.author_kind },
        ),
      auditDir: (runId) => defaultArtifactsDir(runId),
      // A network allow list: a proxy per session, its connections in the session's audit log.
      net: (options, audit) => startRunNet(options, audit?.log ?? null),
      // Lines may quote what sessions and clients sent (names, paths, errors): escaped for the terminal.
      log: (text) => warn(`specter daemon: ${printable(text)}`),
      control: listenControl(stateDir),
      // An explicit --bind that cannot listen stops the start; a remembered one is tried after it.
      ...(given === null ? {} : { remote: listenOf(given) }),
    });
  } catch (error: unknown) {
    if (error instanceof SpecterError && error.code === "E_DAEMON_LOCKED" && given !== null) {
      throw new DaemonError(
        "E_DAEMON_LOCKED",
        `${error.message}: a daemon runs already; give it the listener with specter daemon listen ${given.bind}`,
        { details: error.details },
      );
    }
    throw error;
  }
  if (given === null && config !== null) {
    try {
      await daemon.relisten(listenOf(config));
    } catch (error: unknown) {
      warn(
        `specter daemon: the remembered listener ${config.bind} cannot start (${
          toSpecterError(error).code
        }: ${toSpecterError(error).message}); none listens (specter daemon listen HOST:PORT)`,
      );
    }
  }
  if (config !== null && daemon.remoteUrl !== null) {
    // For `specter url` (this user only), and for the next daemon: where the viewer is, and its tokens.
    rememberListener(stateDir, config, daemon.remoteUrl);
    warn(`specter daemon: the web viewer is at ${daemon.remoteUrl} (specter url prints it with a token)`);
  }
  const stop = () => void daemon.stop();
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
  await daemon.done;
  commandLog?.close();
  Deno.removeSignalListener("SIGTERM", stop);
  Deno.removeSignalListener("SIGINT", stop);
  return 0;
}

// Run as the main module: how a client starts the daemon under `deno run` (`self_command.ts`).
if (import.meta.main) {
  Deno.exit(
    await runAsMain(
      "daemon",
      Deno.args,
      (rest) =>
        daemonCommand(rest, (text) => writeLine(Deno.stderr, text), (text) => writeLine(Deno.stdout, text)),
    ),
  );
}
