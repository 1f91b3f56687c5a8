/**
 * Help texts of the `specter` command.
 *
 * @module
 */
import { FILTER_NAMES } from "../policy/mod.ts";
import { VERSION } from "../version.ts";

const SESSION_FLAGS_HELP = `Sandbox flags (default: --sandbox auto --policy strict, bubblewrap on Linux):
  --policy PRESET|FILE     strict (default: only the program runs, no host files, no network),
                           basic (system programs may run), workspace (read/write the cwd; needs
                           --ack-unsafe-write), or a policy file (spec/policy.md). Alias --sandbox-profile
  --sandbox MODE           auto | bwrap | seatbelt | external | none. auto never falls back: if the backend
                           cannot run, the run fails with E_SANDBOX_UNAVAILABLE and the fix
  --ack-unsafe-write       Acknowledge a policy that allows host writes (fs.write)
  --ack-network            Acknowledge a policy that allows network
  --ack-host-sockets       Acknowledge a policy that grants host unix sockets (fs.sockets)
  --strict-write           Keep .git, shell start-up files and credentials (.ssh, .netrc, …) read-only
                           inside writable roots; needs --ack-unsafe-write
  --ack-external-sandbox   Required with --sandbox external (the caller's container is the sandbox)
  --unsafe-no-sandbox      With --ack-no-network-enforcement: run WITHOUT any sandbox (prints a warning)
  --ack-no-network-enforcement

Session flags:
  --shell                  Run the command through /bin/sh -c (default: exec argv directly)
  --env NAME=VALUE         Add/override a variable (repeatable). The child gets only TERM, LANG,
                           PATH, HOME plus these
  --cwd DIR                Absolute working directory (default: current directory)
  --cols N, --rows N       Terminal size (default 80x24, at most 1000x500)
  --id ID                  Session id (default: random UUID)
  --title T, --description D, --parent-agent A
                           Metadata carried in the start and exit frames
  --idle DUR               Quiet time before an idle frame (default 200ms; 0 disables)
  --prompt-regex RE        Emit a prompt frame when RE matches the current line (repeatable)
  --timeout DUR            Wall-clock limit: terminate, exit.timed_out = true
  --max-output SIZE        Output budget: overflow frame (max_output), then SIGKILL (exec: 16M by default)
  --max-memory SIZE        Memory of the whole process tree, tmpfs files included (capsule_kill memory)
  --max-cpu DUR            CPU time of the whole tree, exited children included (capsule_kill cpu)
  --max-procs N            Processes in the tree (capsule_kill processes; presets: 512)
  --max-file-size SIZE     Largest file the program may write (RLIMIT_FSIZE)
                           The ceilings (and --timeout, --max-output) only tighten the policy's budgets
  --buffer SIZE            Unconsumed frame bytes before reading pauses (default 8M)
  --overflow-timeout DUR   Buffer full this long: overflow frame (buffer), then SIGKILL (default 5s)
  --grace DUR              SIGHUP/SIGTERM → SIGKILL grace when terminating (default 2s)
  --last-lines N           Lines kept for exit.last_lines (default 20)
  --record FILE.cast       Write an asciicast v2 recording; --record-input also records input
Durations: 200ms, 5s, 2m, 1h. Sizes: 1000, 512K, 8M, 1G.`;

/** Help per command. */
export const HELP: Readonly<Record<string, string>> = {
  specter: `specter ${VERSION}: drive terminal programs through a real PTY as JSON frames

Usage:
  specter run  [flags] -- CMD ARGS…   Stream frames on stdout, read driver messages on stdin
  specter exec [flags] -- CMD ARGS…   Run to completion, print one JSON result
  specter policy check FILE|PRESET    Validate a policy file or preset, print every problem
  specter policy explain FILE|PRESET  What a policy allows and denies, in plain words
  specter policy render FILE|PRESET   The exact launch argv, seccomp table or Seatbelt profile, and hashes
  specter sandbox probe [--json]      Which sandbox backends can run here, and how to fix them
  specter test SCENARIO…              Run scenario files (spec/scenario.md); --json, --update-goldens
  specter replay DIR                  Re-run a scenario bundle and diff it with the recorded run
  specter replay report DIR           Print the latest replay's summary and diff
  specter verify GOLDEN -- CMD…       Diff a run's normalized screen/transcript with a golden (CI gate)
  specter audit verify FILE|RUN_DIR   Check an audit log's hash chain; prints the last hash to pin
  specter help <command>              Show help for a command
  specter --version

Exit codes: the program's own code; 124 timed out; 128+N killed by signal N;
2 usage error; 125 Specter failed; 126 not executable; 127 not found.`,
  run: `Usage: specter run [flags] -- CMD ARGS…

Streams frames (spec/protocol.md) on stdout and reads NDJSON driver messages on stdin, e.g.
  {"v":1,"type":"input","data":"ls\\r"}   {"v":1,"type":"key","key":"ctrl-c"}
  {"v":1,"type":"resize","cols":120,"rows":40}   {"v":1,"type":"signal","signal":"INT"}
  {"v":1,"type":"terminate","grace_ms":500}   {"v":1,"type":"ping","id":1}

Run flags:
  --framing ndjson|length  Frame encoding (default ndjson; length = 4-byte big-endian size + JSON)
  --close-on-eof           Terminate the session when stdin ends (default: keep running)
  --heartbeat DUR          Emit a ping frame every DUR

${SESSION_FLAGS_HELP}`,
  sandbox: `Usage: specter sandbox probe [--json]

Reports which sandbox backends can run on this machine and, for each that cannot, why and how to fix it.
Exits 0 when the backend --sandbox auto would use is available, 1 otherwise.`,
  audit: `Usage: specter audit verify FILE|RUN_DIR [--expect HASH] [--json]

Checks the hash chain of an audit log (audit.ndjson, or the one in a run's artifacts directory): every
record carries the sha256 of the record before it. Prints the number of records and the last record's
hash; pin that hash elsewhere and pass it as --expect to detect a rewritten tail.
Exits 0 when intact, 1 (E_AUDIT_TAMPERED) naming the first bad record (edited, removed, reordered,
inserted, torn last line) or a last hash other than --expect, 2 for bad usage or a path that is not a
regular file of at most 64 MiB.`,
  replay: `Usage: specter replay DIR [flags]
       specter replay report DIR [--json]

Re-runs the scenario recorded in a bundle (scenario.resolved.json) under the policy it recorded
(policy.effective.json) and compares snapshots, transcript and results with the recording after
normalization. A bundle is untrusted: before anything runs its checksums.json and events.ndjson are
verified, every recorded file is read beneath DIR without following links (regular files, size-capped),
and the recorded policy is validated again and printed on stderr; its write, network and socket grants
must be acknowledged again here (the bundle's own acknowledgements count for nothing). Writes
DIR/replay/normalization.json, replay.json, diff.json (on drift) and the new run's bundle in DIR/replay/run/.
Exit 0 verified match; 1 drift, or MATCH-UNVERIFIED (no difference, but --allow-unverified let an
unverified bundle through); 2 unusable bundle (E_REPLAY_INCOMPLETE, _TAMPERED, _EVENTS, _BUNDLE,
E_PATH_*, E_FILE_*), a grant not acknowledged (E_UNSAFE_ACK_REQUIRED) or a replayed run that could not
start (E_REPLAY_RUN).

  --strict                   No normalization at all (filters and scenario redactions off)
  --normalize LIST           all (default), none, or filters: ${FILTER_NAMES.join(",")}
  --explain                  Print the normalization settings, their sources and the recorded policy;
                             do not replay
  --ack-unsafe-write         Accept the recorded policy's fs.write grants
  --ack-network              Accept the recorded policy's network "on"
  --ack-host-sockets         Accept the recorded policy's fs.sockets grants
  --allow-unverified         Replay even when checksums or events do not verify (a missing or altered
                             policy.effective.json is still refused); the verdict is never a plain MATCH
  --require-checksums        Accepted for compatibility; checksums are required by default
  --require-events           Accepted for compatibility; events are required by default
  --json                     Print the report (with the diff) as JSON`,
  exec: `Usage: specter exec [flags] -- CMD ARGS…

Runs the command to completion and prints one JSON object:
  {success, session_id, output, exit_code, signal, timed_out, truncated, duration_ms}
Exits non-zero when the program failed.

Exec flags:
  --input TEXT             Type TEXT into the terminal at start; escapes \\r \\n \\t \\e \\xHH \\\\
                           are interpreted (\\r is Enter)
  --raw                    Keep output raw (default: ANSI stripped, CRLF → LF, CR redraws collapsed)

${SESSION_FLAGS_HELP}`,
  policy: `Usage: specter policy check FILE|PRESET [flags]
       specter policy explain FILE|PRESET [flags]
       specter policy render FILE|PRESET [--backend bwrap|seatbelt] [flags] [-- CMD ARGS…]

Every subcommand first validates a policy file (.json or .toml, spec/policy.md) or a preset (strict,
basic, workspace) for a run in --cwd. A bad policy prints every problem as "CODE field: message" (with
--json: {ok, source, problems, policy}) and exits 2. For a valid policy (exit 0):
  check      One "ok: …" line that summarizes what the policy allows
  explain    What the program may do and what the sandbox always enforces, in plain words
  render     The exact launch plan a run with the same options executes: the command line (environment
             values <redacted>), the seccomp rule table and its sha256 (bwrap) or the Seatbelt profile
             (seatbelt), and the fingerprint a run's audit log records. Default command: /bin/sh

Policy flags:
  --ack-unsafe-write       Accept a policy that allows host writes (fs.write)
  --ack-network            Accept a policy with network "on"
  --ack-host-sockets       Accept a policy that grants host unix sockets (fs.sockets)
  --cwd DIR                The run's working directory, \${workspace} (default: current directory)
  --json                   check: {ok, source, problems, policy}; explain: {source, cwd, allows, always,
                           policy}; render: {backend, source, program, program_cwd, argv, env_names,
                           fingerprint, seccomp | profile}

Render flags (the run's flags that change its plan; give the same ones as the run):
  --backend NAME           bwrap or seatbelt (default: this platform's). Seatbelt renders anywhere (text)
  --strict-write           As for run: protected names stay read-only (needs --ack-unsafe-write)
  --env NAME=VALUE         As for run (repeatable); the value is never printed
  --shell                  As for run: the command goes through /bin/sh -c
  --max-memory SIZE, --max-cpu DUR, --max-procs N, --max-file-size SIZE
                           As for run: ceilings (they add the prlimit launcher to the plan)`,
};
