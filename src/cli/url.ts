/**
 * `specter url`: the web viewer's address with a token in its fragment (`#token=…`), which a browser
 * never sends to any server, read from the daemon's `remote.json` (mode 0600, this user's, in a private
 * state directory; and the daemon it names must run as this user: `E_DAEMON_UNTRUSTED` otherwise).
 *
 * @module
 */
import { join } from "node:path";
import { SpecterError, UsageError } from "../errors.ts";
import { ownProcessProblem, readOwnFile } from "../daemon/mod.ts";
import { type RemoteInfo, RemoteInfoSchema, SessionNameSchema } from "../protocol/mod.ts";
import { readTokenFile, RemoteError } from "../remote/mod.ts";
import { CLIENT_FLAGS, connectDaemon, whereOf } from "./daemon_client.ts";
import { loadListenConfig } from "./daemon_listen.ts";
import { type FlagValues, parseFlags } from "./flags.ts";
import { type CommandDoc, commandOptions, type FlagTable, HELP_FLAG } from "./flag_table.ts";

const FLAGS = {
  ...CLIENT_FLAGS,
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
  about: `Prints the web viewer's address (of a daemon given a listener: --bind, specter daemon listen),
with a viewer token (or --control's) after "#", where a browser keeps it to itself: open it in a browser.
With NAME, the page of that session. The tokens are those the daemon made when it was given its listener
(or the first of the scope in its --token-file); they hold across restarts of the daemon until specter
daemon revoke. When no daemon runs but one was given a listener, starts it (as client commands do).`,
  groups: [{ title: "Flags", flags: FLAGS }],
};

function noListener(stateDir: string, path: string, cause?: unknown): RemoteError {
  return new RemoteError(
    "E_REMOTE_NONE",
    `The daemon of "${stateDir}" has no listener, so no web viewer (give it one: specter daemon listen 127.0.0.1:PORT)`,
    { ...(cause === undefined ? {} : { cause }), details: { path } },
  );
}

/**
 * The running daemon's `remote.json`, or null when there is none (no listener, or its daemon is gone).
 * Damaged is `E_REMOTE_BIND`; another user's (file, directory or daemon) is `E_DAEMON_UNTRUSTED`.
 */
function readRemoteInfo(stateDir: string, path: string): RemoteInfo | null {
  // The state directory and remote.json must be this user's own (E_DAEMON_UNTRUSTED otherwise): another
  // user's would send the browser, with a real token from the token file, to an address of theirs.
  let bytes: Uint8Array | null;
  try {
    bytes = readOwnFile(stateDir, "remote.json", 64 * 1024, "remote access file");
  } catch (error: unknown) {
    if (error instanceof SpecterError && error.code === "E_DAEMON_UNTRUSTED") throw error;
    throw noListener(stateDir, path, error);
  }
  if (bytes === null) return null;
  let info;
  try {
    info = RemoteInfoSchema.parse(JSON.parse(new TextDecoder().decode(bytes)));
  } catch (error: unknown) {
    throw new RemoteError("E_REMOTE_BIND", `The daemon's "${path}" is damaged; start the daemon again`, {
      cause: error,
      details: { path },
    });
  }
  let problem;
  try {
    problem = ownProcessProblem(info.pid, path);
  } catch {
    // The daemon that wrote it is gone (killed: a stopped daemon removes the file).
    return null;
  }
  if (problem !== null) throw problem;
  return info;
}

/**
 * Prints the address from the running daemon's `remote.json`: 0; or null when no daemon listens (no file,
 * or the daemon that wrote it is gone). Synchronous, without starting anything (the `remote_json` fuzz
 * target calls it).
 */
export function urlFromState(args: readonly string[], out: (text: string) => void): number | null {
  return printUrl(urlArgs(args), out);
}

interface UrlArgs {
  readonly values: FlagValues;
  readonly name?: string;
  readonly stateDir: string;
  readonly path: string;
}

function printUrl({ values, name, stateDir, path }: UrlArgs, out: (text: string) => void): number | null {
  const info = readRemoteInfo(stateDir, path);
  if (info === null) return null;
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

function urlArgs(args: readonly string[]): UrlArgs {
  const { values, positionals } = parseFlags(args, commandOptions(URL_DOC));
  if (positionals.length > 1) throw new UsageError(`Unexpected argument "${positionals[1]!.slice(0, 80)}"`);
  const name = positionals[0];
  if (name !== undefined && !SessionNameSchema.safeParse(name).success) {
    throw new UsageError(`"${name.slice(0, 80)}" is not a session name`);
  }
  const { stateDir } = whereOf(values);
  return { values, ...(name === undefined ? {} : { name }), stateDir, path: join(stateDir, "remote.json") };
}

/**
 * Runs `specter url`. When no daemon runs but a listener is remembered (listen.json), starts the daemon
 * as every client command does (unless `--no-autostart`) and waits for it to listen: `specter url` after
 * a reboot opens the viewer, as `specter ls` lists the sessions.
 */
export async function urlCommand(args: readonly string[], out: (text: string) => void): Promise<number> {
  const parsed = urlArgs(args);
  const done = printUrl(parsed, out);
  if (done !== null) return done;
  const { values, stateDir, path } = parsed;
  if (values["no-autostart"] === true || loadListenConfig(stateDir) === null) {
    throw noListener(stateDir, path);
  }
  (await connectDaemon(values)).close();
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const printed = printUrl(parsed, out);
    if (printed !== null) return printed;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw noListener(stateDir, path);
}
