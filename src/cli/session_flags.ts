/**
 * The flags every session command (`run`, `exec`, `verify`) accepts, documented: the sandbox flags and the
 * session flags, as two help groups. {@link sessionOptions} turns their values into spawn options.
 *
 * @module
 */
import { type FlagGroup, type FlagTable, HELP_FLAG } from "./flag_table.ts";
import { SANDBOX_MODES } from "./flags.ts";
import { countLimit } from "./units.ts";

/** Which sandbox runs the program, under which policy, and the acknowledgements it needs. */
export const SANDBOX_FLAGS = {
  policy: {
    type: "string",
    value: "PRESET|FILE",
    description: "strict (default; agent/mcp: agent), basic (system programs), workspace (read/write the " +
      "cwd; needs --ack-unsafe-write), agent (system programs, cwd read-only), or a policy file " +
      "(spec/policy.md)",
  },
  "sandbox-profile": { type: "string", value: "PRESET|FILE", description: "Alias of --policy" },
  sandbox: {
    type: "string",
    value: "MODE",
    description: `${SANDBOX_MODES.join(" | ")}. auto never falls back: if the backend cannot run, the ` +
      "run fails with E_SANDBOX_UNAVAILABLE and the fix",
  },
  "ack-unsafe-write": {
    type: "boolean",
    description: "Acknowledge a policy that allows host writes (fs.write)",
  },
  "ack-network": {
    type: "boolean",
    description: 'Acknowledge a policy that allows network ("on" or an allow list, --allow-net)',
  },
  "allow-net": {
    type: "string",
    value: "HOST[:PORT],…",
    multiple: true,
    description: "Allow only these hosts, through Specter's proxy (repeatable; needs --ack-network): a " +
      "name, *.domain (its subdomains only), an IPv4 address or [IPv6]; no port: every port. Added to the " +
      'policy\'s allow list, or replaces its network "off"; refused with network "on"',
  },
  "ack-host-sockets": {
    type: "boolean",
    description: "Acknowledge a policy that grants host unix sockets (fs.sockets)",
  },
  "strict-write": {
    type: "boolean",
    description: "Keep .git, shell start-up files and credentials (.ssh, .netrc, …) read-only inside " +
      "writable roots; needs --ack-unsafe-write",
  },
  "ack-external-sandbox": {
    type: "boolean",
    description: "Required with --sandbox external (the caller's container is the sandbox)",
  },
  "unsafe-no-sandbox": {
    type: "boolean",
    description: "With --ack-no-network-enforcement: run WITHOUT any sandbox (prints a warning); the same " +
      "as --sandbox none, which needs both flags too",
  },
  "ack-no-network-enforcement": {
    type: "boolean",
    description: "Required with --unsafe-no-sandbox: acknowledge that nothing then limits the network (or " +
      "anything else)",
  },
} as const satisfies FlagTable;

/** The session itself: program, terminal, metadata, detection, budgets, recording. */
export const SESSION_FLAGS = {
  shell: { type: "boolean", description: "Run the command through /bin/sh -c (default: exec argv directly)" },
  env: {
    type: "string",
    value: "NAME=VALUE",
    multiple: true,
    description:
      "Add/override a variable (repeatable). The child gets only TERM, LANG, PATH, HOME plus these",
  },
  cwd: {
    type: "string",
    value: "DIR",
    description: "Absolute working directory (default: current directory)",
  },
  cols: {
    type: "string",
    value: "N",
    description: `Terminal width in columns (default 80, from 1 to ${countLimit("cols")})`,
  },
  rows: {
    type: "string",
    value: "N",
    description: `Terminal height in rows (default 24, from 1 to ${countLimit("rows")})`,
  },
  id: {
    type: "string",
    value: "ID",
    description: "Session id (default: random UUID). run and exec also name the run's artifacts directory " +
      "with it, so there it must be a plain name (letters, digits, . _ -; at most 128), else a random " +
      "id is used",
  },
  title: { type: "string", value: "T", description: "Title, carried in the start and exit frames" },
  description: {
    type: "string",
    value: "D",
    description: "Description, carried in the start and exit frames",
  },
  "parent-agent": {
    type: "string",
    value: "A",
    description: "The agent that started the session, carried in the start and exit frames",
  },
  idle: {
    type: "string",
    value: "DUR",
    description: "Quiet time before an idle frame (default 200ms; 0 disables)",
  },
  "prompt-regex": {
    type: "string",
    value: "RE",
    multiple: true,
    description: "Emit a prompt frame when RE matches the current line (repeatable)",
  },
  timeout: {
    type: "string",
    value: "DUR",
    description: "Wall-clock limit: terminate, exit.timed_out = true",
  },
  "max-output": {
    type: "string",
    value: "SIZE",
    description: "Output budget: overflow frame (max_output), then SIGKILL (exec: 16M by default)",
  },
  "max-memory": {
    type: "string",
    value: "SIZE",
    description: "Memory of the whole process tree, tmpfs files included (capsule_kill memory)",
  },
  "max-cpu": {
    type: "string",
    value: "DUR",
    description: "CPU time of the whole tree, exited children included (capsule_kill cpu)",
  },
  "max-procs": {
    type: "string",
    value: "N",
    description: "Processes in the tree (capsule_kill processes; presets: 512)",
  },
  "max-file-size": {
    type: "string",
    value: "SIZE",
    description: "Largest file the program may write (RLIMIT_FSIZE)",
  },
  buffer: {
    type: "string",
    value: "SIZE",
    description: "Unconsumed frame bytes before reading pauses (default 8M)",
  },
  "overflow-timeout": {
    type: "string",
    value: "DUR",
    description: "Buffer full this long: overflow frame (buffer), then SIGKILL (default 5s)",
  },
  grace: {
    type: "string",
    value: "DUR",
    description: "SIGHUP/SIGTERM → SIGKILL grace when terminating (default 2s)",
  },
  "last-lines": { type: "string", value: "N", description: "Lines kept for exit.last_lines (default 20)" },
  record: { type: "string", value: "FILE.cast", description: "Write an asciicast v2 recording" },
  "record-input": { type: "boolean", description: "With --record: record the input too" },
  artifacts: {
    type: "string",
    value: "DIR",
    description: "run and exec: the run's artifacts directory, where its audit log (audit.ndjson) goes " +
      "(default: $XDG_STATE_HOME/specter/runs/RUN_ID/)",
  },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** The two groups, as `run`, `exec` and `verify` show them after their own flags. */
export const SESSION_GROUPS: readonly FlagGroup[] = [
  {
    title: "Sandbox flags (default: --sandbox auto --policy strict, bubblewrap on Linux)",
    flags: SANDBOX_FLAGS,
  },
  {
    title: "Session flags",
    flags: SESSION_FLAGS,
    note: "The ceilings (--max-memory, --max-cpu, --max-procs, --max-file-size) and --timeout, " +
      "--max-output only tighten the policy's budgets. Durations: 200ms, 5s, 2m, 1h. Sizes: 1000, 512K, 8M, 1G.",
  },
];

/**
 * {@link SESSION_GROUPS} without the flags `omit` names: a command lists only the flags it takes (help
 * lists nothing that is then refused, and the parser refuses what is not listed); `policy`: the command's
 * default preset.
 */
export function sessionGroupsWithout(omit: readonly string[], policy = "strict"): FlagGroup[] {
  return SESSION_GROUPS.map((group) => ({
    ...group,
    // The agent tools default to another preset: the title says the command's own default.
    title: group.title.replace("--policy strict", `--policy ${policy}`),
    flags: Object.fromEntries(Object.entries(group.flags).filter(([name]) => !omit.includes(name))),
  }));
}
