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
