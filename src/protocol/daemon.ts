/**
 * The daemon's formats: its JSON-RPC methods (the session methods beside the agent tools), the frame
 * log's segment header, the keeper's messages, and a session's saved description in the state directory.
 *
 * @module
 */
import { z } from "zod";
import { DriverMessageSchema } from "./driver.ts";
import { DURATION_TOO_LONG, MAX_DURATION_MS } from "./durations.ts";

/** The daemon protocol's version (`daemon.hello`): a client speaking another one is refused. */
export const DAEMON_PROTOCOL = 1;

/** The `format` of a frame log segment's header line. */
export const LOG_FORMAT = "specter-frame-log/1";

/** The first line of every frame log segment. */
export const LogHeaderSchema = z.strictObject({
  format: z.literal(LOG_FORMAT),
  log_id: z.string().min(1).max(100).describe("The log's identity; a seq is only meaningful with it"),
  session: z.string().describe("The session's name"),
  first_seq: z.int().nonnegative().describe("The seq of the segment's first record"),
  created: z.number().describe("Unix time (s) the segment was created"),
});
/** A frame log segment's header. */
export type LogHeader = z.infer<typeof LogHeaderSchema>;

/** A session name: what `specter new NAME` takes and every other command refers to. */
export const SessionNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/).describe(
  "Letters, digits, '.', '_' and '-' (at most 64, not starting with '.', '_' or '-')",
);

/** Flag values as `specter new` parsed them (the flags of `run`), checked again by the daemon. */
export const FlagValuesSchema = z.record(
  z.string(),
  z.union([z.string(), z.boolean(), z.array(z.string())]),
);

/** `daemon.hello`: the first call of every client. */
export const HelloParamsSchema = z.strictObject({
  protocol: z.int(),
  compress: z.enum(["zstd", "none"]).optional().describe(
    "WebSocket clients: zstd asks for the daemon's messages as binary zstd frames (each one or more NDJSON " +
      "lines) when the daemon runs with --compress zstd; the answer says what was agreed",
  ),
});
/** `daemon.hello`'s answer. */
export const HelloResultSchema = z.strictObject({
  protocol: z.literal(DAEMON_PROTOCOL),
  version: z.string(),
  pid: z.int(),
  state_dir: z.string(),
  scope: z.enum(["local", "viewer", "control"]).optional().describe(
    "What this client may do: local (the unix socket), or its token's scope",
  ),
  compress: z.enum(["zstd", "none"]).optional().describe("The compression agreed (WebSocket clients)"),
});

/** `session.create`: starts a named session (the policy flags are `run`'s). */
export const CreateParamsSchema = z.strictObject({
  name: SessionNameSchema,
  argv: z.array(z.string()).min(1),
  cwd: z.string().min(1).describe("The client's working directory (absolute)"),
  flags: FlagValuesSchema.default({}),
  if_exists: z.enum(["error", "reuse"]).default("error").describe(
    "A running session of that name: error (E_SESSION_EXISTS) or reuse it",
  ),
  author: z.string().max(200).optional().describe(
    "Who, by name (a user's), for the command log; a remote client's rows name its token instead. Who kind " +
      "of author it is (human, agent, remote) Specter decides from the connection",
  ),
  attach: z.boolean().default(false).describe(
    "Attach this connection at once (as session.attach from the first frame, controlling when nobody does): " +
      "frames follow the answer",
  ),
  persist: z.boolean().default(false).describe(
    "Keep what the program writes in its home across restarts of the program and the daemon (a " +
      "per-session directory beside the state directory, bound as HOME; removed by kill --purge)",
  ),
});

/**
 * `agent.open`: this connection speaks the agent tools from now on (`specter agent --daemon`), their
 * sessions living in the daemon. Agents opened with the same flags and directory share their sessions.
 */
export const AgentOpenParamsSchema = z.strictObject({
  cwd: z.string().min(1),
  flags: FlagValuesSchema.default({}),
});

/** A session as `session.list` shows it. */
export const SessionEntrySchema = z.strictObject({
  name: z.string(),
  pid: z.int(),
  running: z.boolean(),
  exit_code: z.int().nullable(),
  signal: z.string().nullable(),
  timed_out: z.boolean().default(false).describe("It ended because its --timeout ran out"),
  duration_ms: z.number().nonnegative().nullable().default(null).describe("How long it ran, once it ended"),
  started: z.number().describe("Unix time (s)"),
  argv: z.array(z.string()),
  title: z.string().nullable(),
  description: z.string().nullable(),
  parent_agent: z.string().nullable(),
  clients: z.int().nonnegative(),
  next_seq: z.int().nonnegative(),
  log_id: z.string().nullable(),
  persist: z.string().nullable(),
  audit: z.string().nullable().describe("The session's audit log (`audit.ndjson`), when it has one"),
});
/** One session of `session.list`. */
export type SessionEntry = z.infer<typeof SessionEntrySchema>;

/** Parameters naming a session. */
export const NameParamsSchema = z.strictObject({ name: SessionNameSchema });

/** `session.attach`: frames from `from` on (default: the oldest kept), then live. */
export const AttachParamsSchema = z.strictObject({
  name: SessionNameSchema,
  from: z.int().nonnegative().optional(),
  log_id: z.string().optional().describe("The log id the client saw `from` in (else E_LOG_SEEK)"),
  control: z.boolean().default(true).describe(
    "Ask to control (type, resize). One client controls; the others watch",
  ),
  take: z.boolean().optional().describe(
    "With control: take it from the client that has it, which then watches and is told so by a " +
      "`session.control` notification (`{name, control: false}`)",
  ),
});

/** `session.attach`'s answer (frames follow as `frame` notifications). */
export const AttachResultSchema = z.strictObject({
  name: z.string(),
  log_id: z.string().nullable(),
  control: z.boolean(),
  next_seq: z.int().nonnegative(),
});

/** `session.send`: one driver message (input, key, resize, signal, snapshot, terminate). */
export const SendParamsSchema = z.strictObject({
  name: SessionNameSchema,
  message: DriverMessageSchema,
});

/** `session.kill`: ends a session; `purge` also removes its log and saved files. */
export const KillParamsSchema = z.strictObject({
  name: SessionNameSchema,
  purge: z.boolean().default(false),
});

/** A ceiling as launched: a number a cgroup file and `prlimit` take as it is (a safe integer's range). */
const ceiling = z.number().nonnegative().max(Number.MAX_SAFE_INTEGER).nullable();

/** A session's description saved in the state directory, so a restarted daemon can take it back. */
export const SavedSessionSchema = z.strictObject({
  name: z.string(),
  argv: z.array(z.string()),
  cwd: z.string(),
  cols: z.int().positive(),
  rows: z.int().positive(),
  started: z.number(),
  pid: z.int(),
  backend: z.string(),
  title: z.string().nullable(),
  description: z.string().nullable(),
  parent_agent: z.string().nullable(),
  policy_hash: z.string().nullable(),
  author_kind: z.enum(["human", "agent", "remote"]),
  author: z.string().nullable(),
  mark_nonce: z.string().regex(/^[A-Za-z0-9]{8,64}$/).nullable().default(null).describe(
    "The nonce its shell's marks carry (shell integration): a restarted daemon checks them with it",
  ),
  persist: z.string().nullable().default(null).describe("The session's persistent layer on the host"),
  agent_key: z.string().max(65536).nullable().default(null).describe(
    "For an agent's session: the agent tools it belongs to (their flags and directory), which a restarted daemon gives it back to",
  ),
  limits: z.strictObject({
    memory_bytes: ceiling,
    cpu_seconds: ceiling,
    processes: ceiling,
    file_size_bytes: ceiling,
  }).nullable().default(null).describe("Its resource ceilings as launched (policy budgets included)"),
  cgroups: z.array(z.strictObject({
    ceiling: z.enum(["memory", "processes", "cpu"]),
    dir: z.string(),
    version: z.enum(["v1", "v2"]),
  })).max(3).default([]).describe(
    "Its cgroups (owned by the keeper): a restarted daemon watches them again, and removes them at the end",
  ),
  timeout_ms: z.number().nonnegative().max(MAX_DURATION_MS, DURATION_TOO_LONG).nullable().default(null)
    .describe(
      "Its wall-clock limit (ms from `started`): a restarted daemon keeps the deadline",
    ),
  max_output: z.int().nonnegative().nullable().default(null).describe(
    "Its output budget in bytes: a restarted daemon counts on from the output already logged",
  ),
  audit: z.strictObject({ run_id: z.string(), dir: z.string() }).nullable().default(null).describe(
    "The session's audit log: its run id and artifacts directory (a restarted daemon appends to it)",
  ),
});
/** A saved session. */
export type SavedSession = z.infer<typeof SavedSessionSchema>;

/** Messages the daemon sends its keeper (descriptors travel beside them, `SCM_RIGHTS`). */
export const KeeperRequestSchema = z.discriminatedUnion("op", [
  z.strictObject({
    op: z.literal("spawn"),
    id: z.string(),
    argv: z.array(z.string()).min(1),
    argv0: z.string().optional(),
    env: z.record(z.string(), z.string()),
    cwd: z.string().optional(),
    cols: z.int().positive(),
    rows: z.int().positive(),
    tty: z.boolean(),
    ctty: z.boolean().optional().describe(
      "False: the terminal does not become the launcher's controlling terminal (the program takes it)",
    ),
    targets: z.array(z.int().min(3)).describe("The child fd number of each passed descriptor, in order"),
  }),
  z.strictObject({ op: z.literal("resume"), id: z.string(), from: z.int().nonnegative() }),
  z.strictObject({ op: z.literal("ack"), id: z.string(), offset: z.int().nonnegative() }),
  z.strictObject({ op: z.literal("release"), id: z.string() }),
  z.strictObject({
    op: z.literal("close_input"),
    id: z.string(),
    after: z.int().nonnegative().describe(
      "Bytes of input the daemon wrote on the session's current relay before it: the keeper writes them " +
        "all to the program, then shuts down the writing side of its socket (`tty: false` only)",
    ),
  }),
]);
/** A message to the keeper. */
export type KeeperRequest = z.infer<typeof KeeperRequestSchema>;

/** What the keeper knows of one session. */
export const KeptSessionSchema = z.strictObject({
  id: z.string(),
  pid: z.int(),
  tty_path: z.string(),
  status: z.int().nullable().describe("The raw wait status once reaped, else null"),
  held_from: z.int().nonnegative().describe("Output offset of the oldest byte not acknowledged"),
  read_to: z.int().nonnegative().describe("Output offset after the last byte read from the terminal"),
  // Defaults: a keeper of an earlier version (it outlives the daemon's upgrade) does not send them.
  tty: z.boolean().default(true).describe("False when the program runs on a socket, without a terminal"),
  input_closed: z.boolean().default(false).describe("True once the daemon closed the program's input"),
});

/** Messages the keeper sends the daemon. */
export const KeeperEventSchema = z.discriminatedUnion("op", [
  z.strictObject({ op: z.literal("kept"), session: KeptSessionSchema }),
  z.strictObject({
    op: z.literal("hello"),
    pid: z.int(),
    count: z.int().nonnegative().describe("How many `kept` messages came before"),
  }),
  z.strictObject({ op: z.literal("spawned"), id: z.string(), pid: z.int(), tty_path: z.string() }),
  z.strictObject({ op: z.literal("resumed"), id: z.string(), pid: z.int(), tty_path: z.string() }),
  z.strictObject({ op: z.literal("exited"), id: z.string(), pid: z.int(), status: z.int() }),
  z.strictObject({
    op: z.literal("error"),
    id: z.string().optional(),
    code: z.string(),
    message: z.string(),
  }),
]);
/** A message from the keeper. */
export type KeeperEvent = z.infer<typeof KeeperEventSchema>;
