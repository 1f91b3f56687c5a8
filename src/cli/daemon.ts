/**
 * `specter daemon` and `specter keeper`, and what every daemon client command shares: where the daemon
 * is (`--socket`, `--state-dir`), starting it on first use (`--no-autostart` to refuse), and this
 * program's own command line (the keeper and an autostarted daemon are the same binary).
 *
 * @module
 */
import { toSpecterError, UsageError } from "../errors.ts";
import { CommandLog, defaultCommandLogPath } from "../history/mod.ts";
import { Daemon, defaultPersistRoot, type RemoteListen, type SyncPolicy } from "../daemon/mod.ts";
import { DEFAULT_MAX_CLIENTS, readTokenFile, RemoteError, TokenSet } from "../remote/mod.ts";
import { type RemoteInfo, RemoteInfoSchema } from "../protocol/mod.ts";
import { writeFileWhole } from "../fsafe/mod.ts";
import { printable } from "../terminal/mod.ts";
import { join } from "node:path";
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

/** The TCP listener's flags. */
export const REMOTE_FLAGS = {
  bind: {
    type: "string",
    value: "HOST:PORT",
    description: "Also listen on TCP: the web viewer at / and the JSON-RPC on a WebSocket at /v1/ws, for " +
      "token holders (HOST defaults to 127.0.0.1; port 0 picks a free one; see specter url)",
  },
  "tls-cert": { type: "string", value: "FILE", description: "PEM certificate chain: serve HTTPS and WSS" },
  "tls-key": { type: "string", value: "FILE", description: "PEM private key of --tls-cert" },
  "insecure-bind": {
    type: "boolean",
    description:
      "Allow a non-loopback --bind without TLS (tokens and terminals in clear text; logged loudly)",
  },
  "token-file": {
    type: "string",
    value: "FILE",
    description: "Tokens to accept (mode 0600): one bare token (control), or JSON " +
      '{"tokens":[{"token","scope":"viewer|control","sessions"?,"label"?}]}; default: a viewer and a ' +
      "control token made at each start",
  },
  "allow-host": {
    type: "string",
    value: "NAME[:PORT]",
    multiple: true,
    description:
      "Another Host the listener answers to (behind a proxy; repeatable); others are refused (DNS rebinding)",
  },
  "max-clients": {
    type: "string",
    value: "N",
    description: `Remote clients at once (default ${DEFAULT_MAX_CLIENTS}); more are refused (HTTP 503)`,
  },
  compress: {
    type: "string",
    value: "zstd|none",
    description: "Offer zstd-compressed messages to WebSocket clients that ask (default none)",
  },
} as const satisfies FlagTable;

/** `specter daemon`'s help. */
export const DAEMON_DOC: CommandDoc = {
  name: "daemon",
  usage: [
    "specter daemon [--socket PATH] [--state-dir DIR] [--fsync POLICY]",
    "specter daemon --bind HOST:PORT [--tls-cert FILE --tls-key FILE] [--token-file FILE] [--compress zstd]",
  ],
  about: `Runs the per-user daemon in the foreground: named sessions (specter new) that outlive their
clients and the daemon itself. It listens on a unix socket in a private (0700) directory and refuses peers
of another uid (kernel peer credentials). Terminals are held by a keeper process (started on demand), so a
daemon killed with kill -9 loses no session: the next one takes every session back, each from where its
frame log ends. One daemon per state directory and socket (E_DAEMON_LOCKED otherwise). Client commands
start it on first use. With --bind it also listens on TCP (loopback unless told otherwise): a web viewer
for people and the same JSON-RPC on a WebSocket for programs, both for holders of a token (specter url
prints the viewer's address with one).`,
  groups: [{ title: "Daemon flags", flags: DAEMON_FLAGS }, { title: "Remote access", flags: REMOTE_FLAGS }],
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

/** `--bind` and its companions, as the daemon takes them (null without `--bind`), and the tokens made. */
export function remoteOf(
  values: FlagValues,
):
  | { listen: RemoteListen; made: { viewer: string; control: string } | null; tokenFile: string | null }
  | null {
  const bind = values.bind;
  for (
    const name of [
      "tls-cert",
      "tls-key",
      "token-file",
      "allow-host",
      "max-clients",
      "compress",
      "insecure-bind",
    ]
  ) {
    if (bind === undefined && values[name] !== undefined) {
      throw new UsageError(`Flag "--${name}" needs --bind`);
    }
  }
  if (bind === undefined) return null;
  if (typeof bind !== "string") throw new UsageError('Flag "--bind" needs a value');
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s]*)):(\d{1,5})$/.exec(bind) ?? /^()()(\d{1,5})$/.exec(bind);
  if (match === null || Number(match[3]) > 65535) {
    throw new UsageError(`Flag "--bind" takes HOST:PORT (or PORT), not "${bind.slice(0, 80)}"`);
  }
  const hostname = match[1] || match[2] || "127.0.0.1";
  const certPath = values["tls-cert"];
  const keyPath = values["tls-key"];
  if ((certPath === undefined) !== (keyPath === undefined)) {
    throw new UsageError('Flags "--tls-cert" and "--tls-key" go together');
  }
  let tls: RemoteListen["tls"] = null;
  if (typeof certPath === "string" && typeof keyPath === "string") {
    try {
      tls = { cert: Deno.readTextFileSync(certPath), key: Deno.readTextFileSync(keyPath) };
    } catch (error: unknown) {
      throw new RemoteError(
        "E_REMOTE_BIND",
        `Cannot read the TLS certificate or key: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }
  const compress = values.compress ?? "none";
  if (compress !== "zstd" && compress !== "none") {
    throw new UsageError(`Flag "--compress" takes zstd or none, not "${String(compress).slice(0, 40)}"`);
  }
  let maxClients = DEFAULT_MAX_CLIENTS;
  if (values["max-clients"] !== undefined) {
    maxClients = Number(values["max-clients"]);
    if (!Number.isInteger(maxClients) || maxClients < 1 || maxClients > 10_000) {
      throw new UsageError('Flag "--max-clients" takes a whole number from 1 to 10000');
    }
  }
  const tokenFile = typeof values["token-file"] === "string"
    ? absolute(values["token-file"], "token-file")
    : null;
  let tokens: TokenSet;
  let made: { viewer: string; control: string } | null = null;
  if (tokenFile !== null) tokens = TokenSet.of(readTokenFile(tokenFile));
  else {
    const generated = TokenSet.generate();
    tokens = generated.set;
    made = { viewer: generated.viewer, control: generated.control };
  }
  const allow = values["allow-host"];
  return {
    listen: {
      hostname,
      port: Number(match[3]),
      tls,
      insecure: values["insecure-bind"] === true,
      tokens,
      allowHosts: (Array.isArray(allow) ? allow : [allow]).filter((name): name is string =>
        typeof name === "string"
      ),
      maxClients,
      compress,
    },
    made,
    tokenFile,
  };
}

/** Runs `specter daemon` until it is stopped (SIGTERM, SIGINT or `daemon.stop`). */
export async function daemonCommand(args: readonly string[], warn: (text: string) => void): Promise<number> {
  const { values, command } = parseCommandLine(args, DAEMON_DOC);
  if (command.length > 0) throw new UsageError(`Unexpected argument "${command[0]!.slice(0, 80)}"`);
  const { socketPath, stateDir } = whereOf(values);
  const remote = remoteOf(values);
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
    persistRoot: defaultPersistRoot(stateDir),
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
    // Lines may quote what sessions and clients sent (names, paths, errors): escaped for the terminal.
    log: (text) => warn(`specter daemon: ${printable(text)}`),
    ...(remote === null ? {} : { remote: remote.listen }),
  });
  if (remote !== null && daemon.remoteUrl !== null) {
    // For `specter url` (this user only): where the viewer is, and the tokens made at this start.
    const info: RemoteInfo = RemoteInfoSchema.parse({
      url: daemon.remoteUrl,
      pid: Deno.pid,
      tls: remote.listen.tls !== null,
      compress: remote.listen.compress,
      token_file: remote.tokenFile,
      viewer_token: remote.made?.viewer ?? null,
      control_token: remote.made?.control ?? null,
    });
    writeFileWhole(join(stateDir, "remote.json"), JSON.stringify(info) + "\n", "remote access file", 0o600);
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
