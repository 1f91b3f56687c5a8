/** exec_command's parameters. */
export type ExecCommandParams = {
    /** A shell command line (run by the sandbox's shell) or an argv array (run directly) */
    cmd: string | string[];
    /** Working directory: absolute, or relative to the server's (default: the server's). It must exist and be visible under the server's policy, else the call fails with E_SPAWN_CWD (never another directory) */
    workdir?: string;
    /** The shell that runs a string cmd, a path or a name on PATH (bash, sh, zsh); default bash, else sh */
    shell?: string;
    /** Run a string cmd in a login shell (-l -c: it reads /etc/profile and the profile in HOME first); default false */
    login?: boolean;
    /** Run on a terminal (default true). false: plain pipes-like stdio (a socket), no echo, no colours or pagers from programs that check for a terminal; control keys are bytes, not signals */
    tty?: boolean;
    /** Return after this long if the program neither exits, finishes the command nor waits at a prompt (default 10000, clamped 250-30000). A program still running keeps its session_id. */
    yield_time_ms?: number;
    /** Most tokens of output to return (default 10000). Over it, the head and tail are kept with every error, failure and warning line from the middle; the rest stays readable with read_output. */
    max_output_tokens?: number;
    /** compact (default): text without colours, progress bars in their final state, repeats counted; parsed: full-screen programs as their screen and changed rows; raw: the bytes as written */
    token_mode?: "raw" | "compact" | "parsed";
    /** Extra environment variables */
    env?: Record<string, string>;
};
/** write_stdin's parameters. */
export type WriteStdinParams = {
    /** A session id returned by exec_command (a number is taken as its decimal string) */
    session_id: string | number;
    /** Text to type (\r is Enter). Empty or absent: wait until something happens (exit, a finished command, a prompt, or new output followed by quiet) instead of polling; do not poll in a loop. */
    chars?: string;
    /** Named keys to press after chars, e.g. ["ctrl-c"], ["up"] */
    keys?: string[];
    /** After chars and keys, end the program's input (it reads end-of-file: wc, sort, jq -s then finish). Only for tty false; on a terminal press keys ["ctrl-d"] instead */
    close_stdin?: boolean;
    /** Return after this long at most (default 10000, clamped 250-30000; for a wait, default 30000, clamped 5000-300000) */
    yield_time_ms?: number;
    /** Most tokens of output to return (default 10000). Over it, the head and tail are kept with every error, failure and warning line from the middle; the rest stays readable with read_output. */
    max_output_tokens?: number;
    /** compact (default): text without colours, progress bars in their final state, repeats counted; parsed: full-screen programs as their screen and changed rows; raw: the bytes as written */
    token_mode?: "raw" | "compact" | "parsed";
};
/** read_output's parameters. */
export type ReadOutputParams = {
    /** A session id returned by exec_command (a number is taken as its decimal string) */
    session_id: string | number;
    /** First frame to read (results carry their seq range; a page's next_from_seq continues it) */
    from_seq: number;
    /** Characters of frame from_seq's output already read: a page's next_from_offset (default 0) */
    from_offset?: number;
    /** Last frame to read (default: the latest). One call returns one page of whole lines within max_output_tokens; while more is true, call again with next_from_seq and next_from_offset */
    to_seq?: number;
    /** compact (default): text without colours, progress bars in their final state, repeats counted; parsed: full-screen programs as their screen and changed rows; raw: the bytes as written */
    token_mode?: "raw" | "compact" | "parsed";
    /** Most tokens of output to return (default 10000). Over it, the head and tail are kept with every error, failure and warning line from the middle; the rest stays readable with read_output. */
    max_output_tokens?: number;
};
/** close_session's parameters. */
export type CloseSessionParams = {
    /** A session id returned by exec_command (a number is taken as its decimal string) */
    session_id: string | number;
    /** SIGKILL at once instead of SIGTERM with a grace period */
    force?: boolean;
};
/** session.subscribe's parameters. */
export type SubscribeParams = {
    /** A session id returned by exec_command (a number is taken as its decimal string) */
    session_id: string | number;
    from_seq?: number;
    token_mode?: "raw" | "compact" | "parsed";
};
/** What exec_command, write_stdin, read_output and close_session return. */
export type ToolResult = {
    /** Present while the program runs: pass it to write_stdin */
    session_id?: string;
    /** Output since the previous call (or the range asked for), in token_mode */
    output: string;
    running: boolean;
    /** The program's exit code, once it exited */
    exit_code?: number;
    /** The signal that ended it, if one did */
    signal?: string;
    timed_out: boolean;
    wall_time_ms: number;
    /** True when output does not show all of its range: cut to max_output_tokens, or frames not shown or dropped (see dropped) */
    truncated: boolean;
    /** Tokens of the output before any cut */
    original_token_count: number;
    token_mode: "raw" | "compact" | "parsed";
    /** What ended the wait */
    returned_on: "exit" | "command" | "prompt" | "quiet" | "yield";
    /** alternate: a full-screen program (TUI) is running */
    screen: "normal" | "alternate";
    /** First frame the output covers */
    from_seq: number;
    /** Last frame the output covers */
    to_seq: number;
    /** Once the program exited: its last lines of output */
    last_lines?: string[];
    /** read_output: the frame the next page starts in */
    next_from_seq?: number;
    /** read_output: characters of frame next_from_seq's output this and earlier pages showed (pass as from_offset; 0 when the next page starts at a frame's start) */
    next_from_offset?: number;
    /** read_output: true while frames of the range asked for remain after this page (call again with next_from_seq and next_from_offset) */
    more?: boolean;
    /** Frames of the range that no log holds any more (an output-log budget dropped them): they cannot be read */
    dropped?: {
        from_seq: number;
        to_seq: number;
    };
    /** The shell that ran a string cmd */
    shell?: string;
    /** With returned_on command: the command a shell finished (OSC 133) and its status, as the shell claims it (exit_code above is the kernel's, for the program itself) */
    command?: {
        command?: string;
        exit_code: number | null;
        duration_ms: number;
        /** shell: marked by Specter's integration (only the shell can); output: marks any program could print */
        reported_by: "shell" | "output";
    };
    /** A session ended to make room for this one */
    pruned?: string;
    /** When the command failed on something the sandbox policy forbids (a hidden path or program, a read-only file system): one line naming the policy and the flag that would allow it */
    policy_hint?: string;
};
/** One session in list_sessions. */
export type SessionListing = {
    session_id: string;
    argv: string[];
    cwd: string;
    running: boolean;
    exit_code: number | null;
    timed_out: boolean;
    /** ISO 8601 */
    started: string;
    /** ISO 8601: the last output or call */
    last_activity: string;
    /** Tokens of output returned to the agent so far */
    output_tokens: number;
};
/** A frame of a session (token_mode raw). */
export type RawFrame = {
    seq: number;
    ts: number;
    type: "start";
    protocol: 1;
    /** Specter version */
    version: string;
    session: {
        /** Session id, unique per process run */
        id: string;
        /** --title, or null */
        title: string | null;
        /** --description, or null */
        description: string | null;
        /** --parent-agent, or null */
        parent_agent: string | null;
    };
    /** The program (absolute path) and its arguments */
    argv: string[];
    cwd: string;
    cols: number;
    rows: number;
    pid: number;
    /** Sandbox backend in force: bwrap, seatbelt, external or none */
    sandbox?: string;
    /** The policy enforced, e.g. "preset:strict" or "file:/abs/path" */
    policy?: string;
    /** Directory holding this run's audit log and other artifacts */
    artifacts?: string;
} | {
    seq: number;
    ts: number;
    type: "stdout";
    /** UTF-8 text, or base64 when binary is true */
    data: string;
    /** Present (true) only when data is base64 */
    binary?: true;
} | {
    seq: number;
    ts: number;
    type: "stdin";
    /** UTF-8 text, or base64 when binary is true */
    data: string;
    /** Present (true) only when data is base64 */
    binary?: true;
    /** The key name, when the input came from a key message */
    key?: string;
} | {
    seq: number;
    ts: number;
    type: "resize";
    cols: number;
    rows: number;
} | {
    seq: number;
    ts: number;
    type: "resize_ack";
    cols: number;
    rows: number;
} | {
    seq: number;
    ts: number;
    type: "prompt";
    /** The prompt pattern the line matched, or "OSC 133;A" when the shell marked its prompt itself */
    regex: string;
    /** The current line, ANSI-stripped */
    line: string;
} | {
    seq: number;
    ts: number;
    type: "idle";
    dur_ms: number;
} | {
    seq: number;
    ts: number;
    type: "overflow";
    /** buffer: the frame consumer stayed behind for --overflow-timeout; max_output: --max-output was reached; lagged: this subscriber fell behind the frame log, which no longer holds missed_from … missed_to (the overflow frame takes the seq of the last one) */
    reason: "buffer" | "max_output" | "lagged";
    limit?: number;
    /** lagged: the first seq this subscriber missed */
    missed_from?: number;
    /** lagged: the last seq this subscriber missed */
    missed_to?: number;
} | {
    seq: number;
    ts: number;
    type: "capsule_kill";
    reason: "memory" | "cpu" | "wall" | "processes" | "output";
    /** The ceiling: bytes, CPU seconds, milliseconds or processes */
    limit: number;
    /** What was measured when it was breached */
    value?: number;
    /** What enforced the memory, cpu or processes ceiling (absent for wall and output, which Specter's clock and reader enforce) */
    enforced_by?: "cgroup-v1" | "cgroup-v2" | "pidns-sampler" | "session-sampler" | "rlimit";
} | {
    seq: number;
    ts: number;
    type: "signal";
    signal: "HUP" | "INT" | "QUIT" | "ILL" | "TRAP" | "ABRT" | "BUS" | "FPE" | "KILL" | "USR1" | "SEGV" | "USR2" | "PIPE" | "ALRM" | "TERM" | "CHLD" | "CONT" | "STOP" | "TSTP" | "TTIN" | "TTOU" | "URG" | "XCPU" | "XFSZ" | "VTALRM" | "PROF" | "WINCH" | "IO" | "SYS";
    pid: number;
    /** The signal actually sent when it differs (TSTP with default action goes as STOP: the orphaned group would drop it) */
    delivered_as?: "HUP" | "INT" | "QUIT" | "ILL" | "TRAP" | "ABRT" | "BUS" | "FPE" | "KILL" | "USR1" | "SEGV" | "USR2" | "PIPE" | "ALRM" | "TERM" | "CHLD" | "CONT" | "STOP" | "TSTP" | "TTIN" | "TTOU" | "URG" | "XCPU" | "XFSZ" | "VTALRM" | "PROF" | "WINCH" | "IO" | "SYS";
} | {
    seq: number;
    ts: number;
    type: "stopped";
    signal: ("HUP" | "INT" | "QUIT" | "ILL" | "TRAP" | "ABRT" | "BUS" | "FPE" | "KILL" | "USR1" | "SEGV" | "USR2" | "PIPE" | "ALRM" | "TERM" | "CHLD" | "CONT" | "STOP" | "TSTP" | "TTIN" | "TTOU" | "URG" | "XCPU" | "XFSZ" | "VTALRM" | "PROF" | "WINCH" | "IO" | "SYS") | null;
} | {
    seq: number;
    ts: number;
    type: "continued";
} | {
    seq: number;
    ts: number;
    type: "exit";
    /** Exit code, or null when the program died of a signal */
    code: number | null;
    /** Terminating signal, or null */
    signal: (("HUP" | "INT" | "QUIT" | "ILL" | "TRAP" | "ABRT" | "BUS" | "FPE" | "KILL" | "USR1" | "SEGV" | "USR2" | "PIPE" | "ALRM" | "TERM" | "CHLD" | "CONT" | "STOP" | "TSTP" | "TTIN" | "TTOU" | "URG" | "XCPU" | "XFSZ" | "VTALRM" | "PROF" | "WINCH" | "IO" | "SYS") | string) | null;
    timed_out: boolean;
    duration_ms: number;
    /** Last lines of output, ANSI-stripped; empty when there was none */
    last_lines: string[];
    session: {
        /** Session id, unique per process run */
        id: string;
        /** --title, or null */
        title: string | null;
        /** --description, or null */
        description: string | null;
        /** --parent-agent, or null */
        parent_agent: string | null;
    };
    /** Bytes of output read from the terminal */
    output_bytes?: number;
    /** Strict-write: protected names (.git, .envrc, …) the run created under its write roots (reported, not prevented) */
    protected_created?: string[];
    /** Strict-write: why a write root could not be walked again after the run (a walk cap); absent when none */
    protected_unchecked?: string[];
    /** Present when Specter stopped the program (terminate, SIGINT/SIGTERM/SIGHUP to Specter, --timeout): graceful, it ended within the grace period after SIGHUP/SIGTERM; killed, it was SIGKILLed when the grace period ran out (or at once) */
    stop?: "graceful" | "killed";
} | {
    seq: number;
    ts: number;
    type: "command";
    /** The command line as typed, when Specter saw it typed */
    command?: string;
    /** The status the shell reported, or null when it reported none */
    exit_code: number | null;
    /** From the command's start mark to its end mark */
    duration_ms: number;
    /** First frame of the command's output */
    output_from_seq: number;
    /** Last frame of the command's output */
    output_to_seq: number;
    /** Who reported the command's end and status: shell (Specter's integration, whose marks carry a nonce that only the shell holds), or output (marks without it, which any program in the session can print). Either way a claim of the shell's, never the kernel's: a program's own exit code is in exit */
    reported_by: "shell" | "output";
} | {
    seq: number;
    ts: number;
    type: "error";
    code: string;
    message: string;
    details?: Record<string, unknown>;
} | {
    seq: number;
    ts: number;
    type: "ping";
} | {
    seq: number;
    ts: number;
    type: "pong";
    id?: string | number;
} | {
    seq: number;
    ts: number;
    type: "snapshot";
    /** The name given in the snapshot message */
    name?: string;
    screen: {
        cols: number;
        rows: number;
        cursor: {
            /** Column, 0-based */
            x: number;
            /** Row of the visible screen, 0-based */
            y: number;
            /** False after DECTCEM off (ESC [?25l) */
            visible: boolean;
        };
        /** True while the alternate screen (ESC [?1049h and kin) is active */
        alt_screen: boolean;
        /** The window title set by OSC 0 or OSC 2; "" when never set */
        title: string;
        /** True when the screen may lack output: the model was built late and older output was no longer retained, or the program was killed (timeout, ceiling) or exited with output the model had no time left to parse */
        partial: boolean;
        /** The visible screen, top to bottom; each line's trailing blanks and the trailing empty lines trimmed */
        lines: string[];
        /** Only when asked for: per row, the styled runs up to its last non-blank or styled cell (trailing styled blanks are kept, unlike in lines) */
        cells?: {
            /** The characters of the run (a wide character counts once) */
            text: string;
            /** Foreground: palette index 0-255 or #rrggbb; absent: default */
            fg?: number | string;
            /** Background: palette index 0-255 or #rrggbb; absent: default */
            bg?: number | string;
            bold?: true;
            dim?: true;
            italic?: true;
            underline?: true;
            inverse?: true;
        }[][];
    };
} | {
    seq: number;
    ts: number;
    type: "pty_exited";
    /** The session's name (a daemon session's id) */
    session_id: string;
    /** The exit code, or null when the program died of a signal */
    exit_code: number | null;
    /** The terminating signal, or null */
    signal?: string | null;
    /** Last lines of output, ANSI-stripped */
    last_lines: string[];
    session_title: string | null;
    session_description: string | null;
    parent_agent: string | null;
    /** The session's --timeout ended it */
    timed_out: boolean;
} | {
    seq: number;
    ts: number;
    type: "net";
    /** allowed: a rule matched the host and port (and an address it allows, for a name that resolved); reason is then null, or says why no connection was made after all (the name did not resolve, the connect failed, the proxy stopped); refused: no rule, only addresses the rule does not allow, a malformed request or a limit */
    decision: "allowed" | "refused";
    /** The request method ("CONNECT", "GET", …); "" when none was read */
    method: string;
    /** The host asked for, canonical (lower case, IPv6 without brackets); "" when none was read */
    host: string;
    /** The port asked for; 0 when none was read */
    port: number;
    /** The allow-list rule that matched, as written; null when none */
    rule: string | null;
    /** Why it was refused or failed (a short sentence); null for a connection that was made */
    reason: string | null;
    /** The address the proxy connected to (or, refused by address, the first address the name resolved to); null when there was none */
    address: string | null;
    /** Bytes sent to the server (plain HTTP: with the head) */
    bytes_up: number;
    /** Bytes from the server passed to the program */
    bytes_down: number;
    /** From the connection's accept to its close */
    duration_ms: number;
};
/** An event of the compact or parsed view. */
export type ViewEvent = {
    type: "text";
    /** Text, at most 512 UTF-8 bytes, cut at line ends where possible */
    data: string;
    /** The last raw frame this event covers (live views) */
    seq?: number;
    /** Seconds since the recording's start (recordings) */
    time?: number;
} | {
    type: "line_update";
    /** The line's text; empty for a status row the program took away (its progress ended) */
    data: string;
    /** 1-based row of a status row drawn away from the cursor */
    row?: number;
    /** The last raw frame this event covers (live views) */
    seq?: number;
    /** Seconds since the recording's start (recordings) */
    time?: number;
} | {
    type: "screen";
    /** Top to bottom, trailing blanks and trailing empty rows trimmed */
    rows: string[];
    /** True on the alternate screen */
    alternate: boolean;
    /** The last raw frame this event covers (live views) */
    seq?: number;
    /** Seconds since the recording's start (recordings) */
    time?: number;
} | {
    type: "rows";
    /** The rows last shown moved up this many rows first (the top ones left the screen); then the listed rows changed */
    scrolled?: number;
    rows: {
        row: number;
        text: string;
    }[];
    /** The last raw frame this event covers (live views) */
    seq?: number;
    /** Seconds since the recording's start (recordings) */
    time?: number;
} | {
    type: "prompt";
    kind: "pager";
    /** The prompt as shown, e.g. "--More--(42%)" or "(END)" */
    text: string;
    /** The last raw frame this event covers (live views) */
    seq?: number;
    /** Seconds since the recording's start (recordings) */
    time?: number;
};
/** A tool as a function definition for a model (name, description for the model, JSON Schema). */
export interface ToolDefinition {
    readonly name: string;
    readonly description: string;
    readonly parameters: Readonly<Record<string, unknown>>;
}
/** The five tools, as `specter agent --schema jsonschema` prints them. */
export declare const TOOL_DEFINITIONS: readonly ToolDefinition[];
/** The Specter version these types were generated from. */
export declare const PROTOCOL_SOURCE_VERSION = "0.6.0";
