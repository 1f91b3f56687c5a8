/**
 * `specter daemon` and `specter keeper`, and what every daemon client command shares: where the daemon
 * is (`--socket`, `--state-dir`), starting it on first use (`--no-autostart` to refuse), and this
 * program's own command line (the keeper and an autostarted daemon are the same binary).
 *
 * @module
 */
import { toSpecterError, UsageError } from "../errors.ts";
import { CommandLog, defaultCommandLogPath } from "../history/mod.ts";
import { Daemon, defaultPersistRoot, type SyncPolicy } from "../daemon/mod.ts";
import { absolute, startDetached, WHERE_FLAGS, whereOf } from "./daemon_client.ts";
import { type FlagValues, parseCommandLine, sessionOptions } from "./flags.ts";
import type { CommandDoc, FlagTable } from "./flag_table.ts";
import { HELP_FLAG } from "./flag_table.ts";
import { parseDuration } from "./units.ts";
import { startRunAudit } from "./audit_run.ts";
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
  usage: ["specter daemon [--socket PATH] [--state-dir DIR] [--fsync POLICY]"],
  about: `Runs the per-user daemon in the foreground: named sessions (specter new) that outlive their
clients and the daemon itself. It listens on a unix socket in a private (0700) directory and refuses peers
of another uid (kernel peer credentials). Terminals are held by a keeper process (started on demand), so a
daemon killed with kill -9 loses no session: the next one takes every session back, each from where its
frame log ends. One daemon per state directory and socket (E_DAEMON_LOCKED otherwise). Client commands
start it on first use.`,
  groups: [{ title: "Daemon flags", flags: DAEMON_FLAGS }],
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
export async function daemonCommand(args: readonly string[], warn: (text: string) => void): Promise<number> {
  const { values, command } = parseCommandLine(args, DAEMON_DOC);
  if (command.length > 0) throw new UsageError(`Unexpected argument "${command[0]!.slice(0, 80)}"`);
  const { socketPath, stateDir } = whereOf(values);
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
  const daemon = await Daemon.start({
    commandLog,
    persistRoot: await defaultPersistRoot(stateDir),
    socketPath,
    stateDir,
    sync: syncPolicy(values.fsync),
    resolve: (params) => {
      for (const name of ["record", "record-input", "id", "artifacts", "cwd"]) {
        if (params.flags[name] !== undefined && params.flags[name] !== false) {
          throw new UsageError(`Flag "--${name}" is not taken by a daemon session`);
        }
      }
      // Shells get their OSC 133 marks: each command becomes a `command` frame and a command log row.
      // The inline reactor, as agent sessions have it: a reader thread starts with the first terminal and
      // stops with the last, 30 ms on every spawn of a daemon that runs one session at a time.
      return {
        ...sessionOptions({ ...params.flags, cwd: params.cwd }, params.argv),
        shellIntegration: true,
        readerThread: false,
      };
    },
    startKeeper: () => startDetached(["keeper", "--state-dir", stateDir]),
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
    log: (text) => warn(`specter daemon: ${text}`),
  });
  const stop = () => void daemon.stop();
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
  await daemon.done;
  commandLog?.close();
  Deno.removeSignalListener("SIGTERM", stop);
  Deno.removeSignalListener("SIGINT", stop);
  return 0;
}
