/**
 * The daemon's session commands, as tmux has them: `new` (start detached), `attach` (interactive, with a
 * detach key), `ls`, `send`, `kill`, and `logs` (reads the state directory; no daemon needed).
 *
 * @module
 */
import { SessionError, SpecterError, UsageError } from "../errors.ts";
import { feedView } from "../agent/mod.ts";
import { readLog, sessionDir } from "../daemon/mod.ts";
import { encodeKey } from "../session/mod.ts";
import { payloadText } from "../frames/mod.ts";
import {
  didYouMean,
  DRIVER_SIGNALS,
  type DriverMessage,
  DriverMessageSchema,
  PROTOCOL_VERSION,
  type SessionEntry,
  SessionNameSchema,
} from "../protocol/mod.ts";
import { OuterFilter, OuterModes } from "../terminal/mod.ts";
import { CompactView, ParsedView, renderText } from "../views/mod.ts";
import { type FlagValues, parseCommandLine, parseFlags } from "./flags.ts";
import { type CommandDoc, commandOptions, type FlagTable, HELP_FLAG } from "./flag_table.ts";
import { CLIENT_FLAGS, connectDaemon, WHERE_FLAGS, whereOf } from "./daemon_client.ts";
import { sessionGroupsWithout } from "./session_flags.ts";
import { NO_SESSIONS, sessionTable, sortSessions, startedLine } from "./session_lines.ts";
import { runAttach } from "./attach.ts";
import { DEFAULT_DETACH_KEY, DETACH_KEY_FORMS, parseDetachKey } from "./detach_key.ts";
import { join } from "node:path";

const encoder = new TextEncoder();

function nameOf(value: string | undefined, command: string): string {
  if (value === undefined) throw new UsageError(`specter ${command} needs a session name`);
  if (!SessionNameSchema.safeParse(value).success) {
    throw new UsageError(
      `Session name "${value.slice(0, 80)}" must start with a letter or a digit, then letters, digits, ` +
        "'.', '_' or '-' (at most 64 in all)",
    );
  }
  return value;
}

function definedFlags(
  values: FlagValues,
  skip: readonly string[],
): Record<string, string | boolean | string[]> {
  const out: Record<string, string | boolean | string[]> = {};
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || skip.includes(key)) continue;
    out[key] = Array.isArray(value) ? value.map(String) : value;
  }
  return out;
}

// ── new ─────────────────────────────────────────────────────────────────────────────────────────

const NEW_FLAGS = {
  ...CLIENT_FLAGS,
  persist: {
    type: "boolean",
    description: "Keep what the program writes in its home (HOME) across restarts of the program and of " +
      "the daemon: a per-session directory beside the state directory, bound writable at /home/specter; " +
      "removed by kill --purge",
  },
  json: { type: "boolean", description: "Print the session as one JSON object (for programs)" },
} as const satisfies FlagTable;

/** `specter new`'s help. */
export const NEW_DOC: CommandDoc = {
  name: "new",
  usage: ["specter new NAME [flags] -- CMD ARGS…"],
  about: `Starts CMD as the named session NAME in the daemon, detached (like tmux new -d -s NAME), under
the sandbox and policy the flags give (run's flags). Prints one line (started NAME (pid N); attach with:
specter attach NAME), or with --json the session as JSON. The session runs until
its program ends or specter kill NAME; clients come and go (specter attach, logs, send).
  specter new build --policy basic -- bash
  specter new web --policy workspace --ack-unsafe-write -- npm run dev
The default policy (strict) shows the program little of the system: a shell there finds no ls or cat;
--policy basic runs system programs (the sandbox section of the README says what each policy allows).`,
  // A daemon session has its name for an id, and its frame log and audit log in the state directory.
  groups: [{ title: "Daemon flags", flags: NEW_FLAGS }, ...sessionGroupsWithout(["id", "artifacts"])],
};

/** Runs `specter new`. */
export async function newCommand(args: readonly string[], out: (text: string) => void): Promise<number> {
  const { values, command } = parseCommandLine(args, NEW_DOC);
  const name = nameOf(command[0], "new");
  const argv = command.slice(1);
  if (argv.length === 0) {
    throw new UsageError(
      `No command given after the name "${name}": specter new NAME [flags] -- CMD, e.g. specter new work -- bash`,
    );
  }
  const client = await connectDaemon(values);
  try {
    const entry = await client.call("session.create", {
      name,
      argv,
      cwd: typeof values.cwd === "string" ? values.cwd : Deno.cwd(),
      flags: definedFlags(values, ["socket", "state-dir", "no-autostart", "help", "cwd", "persist", "json"]),
      persist: values.persist === true,
    }) as SessionEntry;
    out(values.json === true ? JSON.stringify(entry) : startedLine(entry));
    return 0;
  } finally {
    client.close();
  }
}

// ── ls ──────────────────────────────────────────────────────────────────────────────────────────

const LS_FLAGS = {
  ...CLIENT_FLAGS,
  json: { type: "boolean", description: "One JSON object per session, one per line" },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** `specter ls`'s help. */
export const LS_DOC: CommandDoc = {
  name: "ls",
  usage: ["specter ls [--json]"],
  about: `Lists the daemon's sessions, oldest first: running ones, and ended ones until killed with --purge or
replaced by a new session of the same name. STATUS is running, exited N, timed out after D, or killed (SIG).
Without sessions it prints "no sessions" (--json prints nothing: no objects).`,
  groups: [{ title: "Flags", flags: LS_FLAGS }],
};

/** Runs `specter ls`. */
export async function lsCommand(args: readonly string[], out: (text: string) => void): Promise<number> {
  const { values, positionals } = parseFlags(args, commandOptions(LS_DOC));
  if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]!.slice(0, 80)}"`);
  const client = await connectDaemon(values);
  try {
    const { sessions } = await client.call("session.list") as { sessions: SessionEntry[] };
    if (values.json === true) {
      for (const entry of sortSessions(sessions)) out(JSON.stringify(entry));
      return 0;
    }
    if (sessions.length === 0) {
      // An empty table reads as a broken command: say so (on stdout, as the table would be).
      out(NO_SESSIONS);
      return 0;
    }
    for (const row of sessionTable(sessions)) out(row);
    return 0;
  } finally {
    client.close();
  }
}

// ── send ────────────────────────────────────────────────────────────────────────────────────────

const SEND_FLAGS = {
  ...CLIENT_FLAGS,
  key: {
    type: "string",
    value: "KEY",
    multiple: true,
    description: "Press a named key after the text (repeatable)",
  },
  enter: { type: "boolean", description: "Press Enter after the text" },
  signal: { type: "string", value: "SIG", description: "Send a signal (INT, TERM, HUP, …) instead" },
  resize: { type: "string", value: "COLSxROWS", description: "Resize the terminal instead" },
  json: { type: "string", value: "MESSAGE", description: "Send one driver message (spec/protocol.md)" },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** `specter send`'s help. */
export const SEND_DOC: CommandDoc = {
  name: "send",
  usage: [
    "specter send NAME [TEXT…] [--key KEY]… [--enter]",
    "specter send NAME --signal SIG | --resize COLSxROWS | --json MESSAGE",
  ],
  about: `Types TEXT (words joined by spaces) and presses keys in session NAME, or sends it a signal, a
resize or any driver message (like tmux send-keys).
  specter send build make test --enter
  specter send build --key ctrl-c`,
  groups: [{ title: "Flags", flags: SEND_FLAGS }],
};

/** Runs `specter send`. */
export async function sendCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, commandOptions(SEND_DOC));
  const name = nameOf(positionals[0], "send");
  const messages: DriverMessage[] = [];
  const v = PROTOCOL_VERSION;
  const text = positionals.slice(1).join(" ");
  const keys = Array.isArray(values.key) ? values.key.map(String) : [];
  const typed = text !== "" || keys.length > 0 || values.enter === true;
  const kinds = ["json", "signal", "resize"].filter((flag) => typeof values[flag] === "string");
  if (kinds.length > 1) {
    throw new UsageError(
      `Flags ${kinds.map((flag) => `"--${flag}"`).join(" and ")} each send a message of their own: give one`,
    );
  }
  if (kinds.length === 1 && typed) {
    // Each send is one kind of message: nothing given is silently left out.
    throw new UsageError(
      `Flag "--${
        kinds[0]
      }" sends only that message: TEXT, --key and --enter go in a "specter send" of their own`,
    );
  }
  if (typeof values.json === "string") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(values.json);
    } catch {
      throw new UsageError('Flag "--json" is not JSON');
    }
    messages.push(checkedMessage(parsed, "--json"));
  } else if (typeof values.signal === "string") {
    const signal = values.signal.toUpperCase().replace(/^SIG/, "");
    messages.push(checkedMessage({ v, type: "signal", signal }, "--signal"));
  } else if (typeof values.resize === "string") {
    const match = /^(\d+)x(\d+)$/.exec(values.resize);
    if (match === null) throw new UsageError(`Flag "--resize" needs COLSxROWS, got "${values.resize}"`);
    messages.push(
      checkedMessage({ v, type: "resize", cols: Number(match[1]), rows: Number(match[2]) }, "--resize"),
    );
  } else {
    if (text !== "") messages.push({ v, type: "input", data: text });
    for (const key of keys) {
      checkKey(key);
      messages.push({ v, type: "key", key });
    }
    if (values.enter === true) messages.push({ v, type: "key", key: "enter" });
    if (messages.length === 0) {
      throw new UsageError("Nothing to send: give TEXT, --key, --enter, --signal, --resize or --json");
    }
  }
  const client = await connectDaemon(values);
  try {
    for (const message of messages) await client.call("session.send", { name, message });
    return 0;
  } finally {
    client.close();
  }
}

/**
 * `message` as a driver message, or `E_USAGE` saying what is wrong with it (before the daemon is asked):
 * a signal Specter cannot send (with those it can), a size out of range.
 */
function checkedMessage(message: unknown, flag: string): DriverMessage {
  const result = DriverMessageSchema.safeParse(message);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (flag === "--signal") {
    const given = (message as { signal: string }).signal;
    throw new UsageError(
      `Flag "--signal" needs a signal name, one of ${DRIVER_SIGNALS.join(", ")}; got "${given}"`,
      { details: { signal: given.slice(0, 40) } },
    );
  }
  const where = issue === undefined || issue.path.length === 0 ? "" : `${issue.path.join(".")}: `;
  const what = flag === "--json" ? "is not a driver message" : "is out of range";
  throw new UsageError(`Flag "${flag}" ${what}: ${where}${issue?.message ?? "invalid"}`);
}

/** A key name the terminal knows, or `E_USAGE` naming the nearest one (before the daemon is asked). */
function checkKey(key: string): void {
  try {
    encodeKey(key);
  } catch (error: unknown) {
    if (!(error instanceof SpecterError)) throw error;
    throw new UsageError(`Flag "--key": ${error.message}`, {
      cause: error,
      details: { key: key.slice(0, 80) },
    });
  }
}

// ── kill ────────────────────────────────────────────────────────────────────────────────────────

const KILL_FLAGS = {
  ...CLIENT_FLAGS,
  purge: { type: "boolean", description: "Also remove its frame log and saved files once it ended" },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** `specter kill`'s help. */
export const KILL_DOC: CommandDoc = {
  name: "kill",
  usage: ["specter kill NAME [--purge]"],
  about: `Ends session NAME (SIGHUP and SIGTERM to its processes, SIGKILL after the grace time). Its log stays
readable (specter logs) unless --purge.`,
  groups: [{ title: "Flags", flags: KILL_FLAGS }],
};

/** Runs `specter kill`. */
export async function killCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, commandOptions(KILL_DOC));
  const name = nameOf(positionals[0], "kill");
  const client = await connectDaemon(values);
  try {
    await client.call("session.kill", { name, purge: values.purge === true });
    return 0;
  } finally {
    client.close();
  }
}

// ── logs ────────────────────────────────────────────────────────────────────────────────────────

const LOGS_FLAGS = {
  "state-dir": WHERE_FLAGS["state-dir"],
  from: { type: "string", value: "SEQ", description: "First frame (default: the oldest kept)" },
  view: {
    type: "string",
    value: "MODE",
    description:
      "ndjson (default: the frames), raw (the output as written; to a terminal, filtered as attach filters " +
      "it), compact or parsed (token views, as text)",
  },
  cast: {
    type: "string",
    value: "FILE.cast",
    description:
      "Write the session (from --from on) as an asciicast v2 recording instead (specter view plays it)",
  },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** `specter logs`'s help. */
export const LOGS_DOC: CommandDoc = {
  name: "logs",
  usage: [
    "specter logs NAME [--from SEQ] [--view ndjson|raw|compact|parsed] [--state-dir DIR]",
    "specter logs NAME --cast FILE.cast [--from SEQ] [--state-dir DIR]",
  ],
  about: `Prints session NAME's frame log from the state directory (no daemon needed; also after the daemon
or the machine went down). A damaged segment is reported on stderr and skipped.`,
  groups: [{ title: "Flags", flags: LOGS_FLAGS }],
};

/** Runs `specter logs`. */
export async function logsCommand(
  args: readonly string[],
  out: (text: string) => void,
  warn: (text: string) => void,
  write: (bytes: Uint8Array) => void,
): Promise<number> {
  const { values, positionals } = parseFlags(args, commandOptions(LOGS_DOC));
  const name = nameOf(positionals[0], "logs");
  const view = typeof values.view === "string" ? values.view : "ndjson";
  if (!["ndjson", "raw", "compact", "parsed"].includes(view)) {
    throw new UsageError(
      `Flag "--view" must be ndjson, raw, compact or parsed, got "${view.slice(0, 40)}"${
        didYouMean(view, ["ndjson", "raw", "compact", "parsed"])
      }`,
    );
  }
  let from: number | undefined;
  if (typeof values.from === "string") {
    from = Number(values.from);
    if (!Number.isSafeInteger(from) || from < 0) {
      throw new UsageError(`Flag "--from" must be a seq, got "${values.from}"`);
    }
  }
  const dir = join(sessionDir(whereOf(values).stateDir, name), "frames");
  try {
    Deno.statSync(dir);
  } catch {
    // The same code and exit status as attach, send and kill of a session the daemon does not have.
    throw new SessionError(
      "E_SESSION_UNKNOWN",
      `No session is named "${name}" (no log of it in "${whereOf(values).stateDir}")`,
      { details: { name } },
    );
  }
  const frames = readLog(dir, {
    ...(from === undefined ? {} : { from }),
    onCorrupt: (e) => warn(`specter: ${e.code}: ${e.message}`),
  })
    .map((record) => record.frame);
  if (typeof values.cast === "string") {
    if (values.view !== undefined) throw new UsageError('Flags "--cast" and "--view" do not go together');
    const { writeCastOf } = await import("./logs_cast.ts");
    writeCastOf(frames, values.cast, name);
    return 0;
  }
  if (view === "ndjson") {
    for (const frame of frames) out(JSON.stringify(frame));
    return 0;
  }
  if (view === "raw") {
    const text = frames.filter((frame) => frame.type === "stdout").map((frame) => payloadText(frame)).join(
      "",
    );
    // A terminal is a person's, and the log is the program's: what it may not do through attach it may
    // not do through logs either. Piped or redirected, the output stays exactly as written.
    // On a terminal, as attach does: its title pushed first, and every mode the output switched on (the
    // alternate screen, mouse reporting, a hidden cursor, a scroll region, …) switched off after it.
    if (!Deno.stdout.isTerminal()) {
      write(encoder.encode(text));
      return 0;
    }
    const shown = new OuterFilter().feed(text);
    const modes = new OuterModes();
    modes.observe(shown);
    write(encoder.encode(OuterModes.ENTER + shown + modes.restore()));
    return 0;
  }
  const start = frames.find((frame) => frame.type === "start");
  const size = start?.type === "start" ? { cols: start.cols, rows: start.rows } : {};
  const model = view === "compact" ? new CompactView() : await ParsedView.create(size);
  for (const frame of frames) feedView(model, frame);
  const text = renderText(await model.end());
  write(encoder.encode(text));
  return 0;
}

// ── attach ──────────────────────────────────────────────────────────────────────────────────────

const ATTACH_FLAGS = {
  ...CLIENT_FLAGS,
  watch: {
    type: "boolean",
    description:
      "Watch only (read-only): the session drawn at this window's size, keys not sent; t takes control",
  },
  take: {
    type: "boolean",
    description: "Take control from the client that has it (it then watches, and is told so)",
  },
  "detach-key": {
    type: "string",
    value: "KEY",
    description: `The key that detaches: ${DETACH_KEY_FORMS} (default: ${DEFAULT_DETACH_KEY})`,
  },
  from: {
    type: "string",
    value: "SEQ",
    description: "Replay from this frame (default: the oldest kept; at most the last 32 MiB of frames)",
  },
  "allow-clipboard": {
    type: "boolean",
    description: "Let the program set this terminal's clipboard (OSC 52). Risky: what it puts there is " +
      "what you paste next, into your own shell too (a command ending in a newline runs). Reading the " +
      "clipboard stays refused",
  },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** The default detach key's byte: Ctrl-] (as telnet), a byte programs rarely need. */
export const DETACH_BYTE = 0x1d;

/** `specter attach`'s help. */
export const ATTACH_DOC: CommandDoc = {
  name: "attach",
  usage: ["specter attach NAME [--watch | --take] [--detach-key KEY] [--from SEQ] [--allow-clipboard]"],
  about: `Attaches this terminal to session NAME (like tmux attach): its history is replayed from the frame
log so the screen is right, then what it prints appears here and what you type goes to it. Ctrl-] detaches
(the session goes on; --detach-key picks another key). Whatever ends attach (detach, the program's end, a
signal, the daemon going away) switches off the modes the program set in this terminal (alternate screen,
mouse, keypad, bracketed paste, cursor, scroll region, colours) and gives the title back. Several clients
may attach: the first controls, later ones watch, read-only, the session drawn at their own window's size
(clipped or padded) under a status line; a watcher's t (or attach --take) takes control, and the client
that had it watches. Needs a terminal (E_USAGE otherwise: specter send and logs work without one). Exits 0
on detach, 128 + the signal's number when one ended it, with the program's exit code when it ends. What
the program prints is filtered first, as tmux does: it draws (colours, cursor, modes, mouse, titles without
control characters, http(s) links), but cannot set the clipboard, link to files, or make this terminal
answer queries (docs/security.md).`,
  groups: [{ title: "Flags", flags: ATTACH_FLAGS }],
};

/** Runs `specter attach`. */
export async function attachCommand(args: readonly string[], warn: (text: string) => void): Promise<number> {
  const { values, positionals } = parseFlags(args, commandOptions(ATTACH_DOC));
  const name = nameOf(positionals[0], "attach");
  const from = typeof values.from === "string" ? Number(values.from) : undefined;
  if (from !== undefined && (!Number.isSafeInteger(from) || from < 0)) {
    throw new UsageError(`Flag "--from" must be a seq, got "${values.from}"`);
  }
  if (values.watch === true && values.take === true) {
    throw new UsageError(`Flags "--watch" and "--take" do not go together`);
  }
  const key = values["detach-key"];
  return await runAttach(values, {
    name,
    from,
    watch: values.watch === true,
    take: values.take === true,
    allowClipboard: values["allow-clipboard"] === true,
    detachKey: parseDetachKey(typeof key === "string" ? key : DEFAULT_DETACH_KEY),
  }, warn);
}
