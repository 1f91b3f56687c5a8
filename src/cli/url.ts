/**
 * `specter url`: the web viewer's address with a token in its fragment (`#token=…`), which a browser
 * never sends to any server, read from the daemon's `remote.json` (mode 0600, this user's).
 *
 * @module
 */
import { join } from "node:path";
import { UsageError } from "../errors.ts";
import { readRegularFile } from "../fsafe/mod.ts";
import { RemoteInfoSchema, SessionNameSchema } from "../protocol/mod.ts";
import { readTokenFile, RemoteError } from "../remote/mod.ts";
import { WHERE_FLAGS, whereOf } from "./daemon_client.ts";
import { parseFlags } from "./flags.ts";
import { type CommandDoc, commandOptions, type FlagTable, HELP_FLAG } from "./flag_table.ts";

const FLAGS = {
  ...WHERE_FLAGS,
  control: {
    type: "boolean",
    description: "A control token (type, resize) instead of a viewer token (watch only)",
  },
  replay: { type: "boolean", description: "The replay page of the session (a time slider over its log)" },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** `specter url`'s help. */
export const URL_DOC: CommandDoc = {
  name: "url",
  usage: ["specter url [--control] [--replay] [NAME]"],
  about: `Prints the web viewer's address (of a daemon started with --bind), with a viewer token (or
--control's) after "#", where a browser keeps it to itself: open it in a browser. With NAME, the page of
that session. The tokens are those the daemon made at its start (or the first of the scope in its
--token-file); they stop working when it stops.`,
  groups: [{ title: "Flags", flags: FLAGS }],
};

/** Runs `specter url`. */
export function urlCommand(args: readonly string[], out: (text: string) => void): number {
  const { values, positionals } = parseFlags(args, commandOptions(URL_DOC));
  if (positionals.length > 1) throw new UsageError(`Unexpected argument "${positionals[1]!.slice(0, 80)}"`);
  const name = positionals[0];
  if (name !== undefined && !SessionNameSchema.safeParse(name).success) {
    throw new UsageError(`"${name.slice(0, 80)}" is not a session name`);
  }
  const { stateDir } = whereOf(values);
  const path = join(stateDir, "remote.json");
  let text: string;
  try {
    text = new TextDecoder().decode(
      readRegularFile(path, { maxBytes: 64 * 1024, what: "remote access file", noFollow: true }),
    );
  } catch (error: unknown) {
    throw new RemoteError(
      "E_REMOTE_BIND",
      `No daemon listens on TCP for "${stateDir}" (start one with specter daemon --bind HOST:PORT)`,
      { cause: error, details: { path } },
    );
  }
  let info;
  try {
    info = RemoteInfoSchema.parse(JSON.parse(text));
  } catch (error: unknown) {
    throw new RemoteError("E_REMOTE_BIND", `The daemon's "${path}" is damaged; start the daemon again`, {
      cause: error,
      details: { path },
    });
  }
  let alive = true;
  try {
    Deno.statSync(`/proc/${info.pid}`);
  } catch {
    alive = false;
  }
  if (!alive) {
    throw new RemoteError(
      "E_REMOTE_BIND",
      `The daemon that listened on ${info.url} (pid ${info.pid}) is gone`,
      {
        details: { path },
      },
    );
  }
  const scope = values.control === true ? "control" : "viewer";
  let token = scope === "control" ? info.control_token : info.viewer_token;
  if (info.token_file !== null) {
    const entry = readTokenFile(info.token_file).tokens.find((t) =>
      t.scope === scope && (name === undefined || t.sessions === undefined || t.sessions.includes(name))
    );
    token = entry?.token ?? null;
  }
  if (token === null) {
    throw new RemoteError("E_REMOTE_TOKEN_FILE", `The token file has no ${scope} token for this`, {
      details: { path: info.token_file ?? path },
    });
  }
  const page = values.replay === true ? "replay" : "";
  const session = name === undefined ? "" : `session=${encodeURIComponent(name)}&`;
  out(`${info.url}${page}#${session}token=${token}`);
  return 0;
}
