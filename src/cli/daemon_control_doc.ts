/**
 * What `specter daemon` shares with its subcommands (`stop`, `status`, `listen`, `revoke`): their flags and
 * help lines, and how the daemon turns a client's `session.create` into spawn options.
 *
 * @module
 */
import { isAbsolute, resolve } from "node:path";
import { UsageError } from "../errors.ts";
import type { CreateParams } from "../daemon/mod.ts";
import type { SpawnOptions } from "../session/mod.ts";
import { sessionOptions } from "./flags.ts";
import type { FlagTable } from "./flag_table.ts";
import { DEFAULT_MAX_CLIENTS } from "../remote/mod.ts";

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
      "control token made when the listener is first given, kept across restarts until specter daemon revoke",
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

/** The subcommands and what each does (help lists them). */
export const DAEMON_SUBCOMMANDS = {
  status: "specter daemon status [--json]",
  stop: "specter daemon stop [--kill-sessions]",
  listen: "specter daemon listen HOST:PORT [--tls-cert FILE --tls-key FILE] [--token-file FILE] | off",
  revoke: "specter daemon revoke",
} as const;

/** The subcommands' own flags. */
export const DAEMON_CONTROL_FLAGS = {
  json: { type: "boolean", description: "status: one JSON object (spec/schema/daemon-status.schema.json)" },
  "kill-sessions": {
    type: "boolean",
    description: "stop: end every session too (without it they go on in the keeper, and the next daemon " +
      "takes them back)",
  },
} as const satisfies FlagTable;

/**
 * Spawn options of a daemon session from `session.create`'s flags (run's): a recording (`--record`, a
 * path relative to the client's directory) is written by the daemon as the session runs, into a new file
 * (mode 0600, `O_EXCL`: an existing file, or a link, is refused), outside the session's write grants
 * (`E_POLICY_ARTIFACTS_EXPOSED` otherwise, as for run). `--id` and `--artifacts` are refused: a daemon
 * session's name is its id, and its logs are in the state directory.
 */
export function daemonSessionOptions(params: CreateParams): SpawnOptions {
  for (const name of ["id", "artifacts", "cwd"]) {
    if (params.flags[name] !== undefined && params.flags[name] !== false) {
      throw new UsageError(`Flag "--${name}" is not taken by a daemon session`);
    }
  }
  if (params.flags["record-input"] === true && typeof params.flags.record !== "string") {
    throw new UsageError('Flag "--record-input" needs --record');
  }
  const options = sessionOptions({ ...params.flags, cwd: params.cwd }, params.argv);
  // Shells get their OSC 133 marks: each command becomes a `command` frame and a command log row.
  // The inline reactor, as agent sessions have it: a reader thread starts with the first terminal and
  // stops with the last, 30 ms on every spawn of a daemon that runs one session at a time.
  return {
    ...options,
    ...(options.record === undefined ? {} : {
      record: {
        ...options.record,
        path: isAbsolute(options.record.path)
          ? options.record.path
          : resolve(params.cwd, options.record.path),
        exclusive: true,
      },
    }),
    shellIntegration: true,
    readerThread: false,
  };
}
