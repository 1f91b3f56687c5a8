/**
 * Shell integration: OSC 133 command marks injected into an interactive bash or zsh the way terminals do
 * it, without touching the user's rc files. bash starts with `--init-file FILE`, a file that runs what an
 * interactive bash runs (`/etc/bash.bashrc`, `~/.bashrc`) and then adds the marks; zsh starts with
 * `ZDOTDIR` pointing at a directory whose `.zshenv` puts the user's `ZDOTDIR` back, runs the user's
 * `.zshenv` and adds the marks through `precmd`/`preexec` hooks.
 *
 * Each mark carries `specter=NONCE`, so that no other program can make one: not a file being shown, not a
 * command the shell runs. The nonce is in no file and no environment variable: the shell reads it from
 * descriptor {@link NONCE_FD} before anything else runs (its start-up files included) and closes it, and
 * keeps it in an unexported variable. Under bwrap the shell also runs from an exec-only copy of itself,
 * which the kernel makes non-dumpable, so its commands (same uid) cannot read its memory either
 * (`shell_setup.ts`). Tracing (`set -x`) is off while a mark is printed.
 *
 * Pure: where the files go (`dir`) is the caller's; under bwrap they are bound read-only into the sandbox
 * from a pipe, elsewhere they are written to a private temp directory.
 *
 * @module
 */

/** The shells Specter integrates with. */
export type KnownShell = "bash" | "zsh";

/**
 * The descriptor the shell reads the marks' nonce from, once, first thing (then closes it). High, above
 * every descriptor bwrap uses, and the same under every backend.
 */
export const NONCE_FD = 200;

/** A file the integration needs, by name inside its directory. */
export interface ShellFile {
  readonly name: string;
  readonly content: string;
}

/** How the shell is started instead: its arguments, environment additions and files. */
export interface ShellIntegration {
  readonly shell: KnownShell;
  /** The arguments after the program. */
  readonly args: readonly string[];
  /** Variables to add to (or override in) the program's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Files to place in the integration directory; empty when the environment alone does it. */
  readonly files: readonly ShellFile[];
  /** The nonce every mark carries (the shell gets it on {@link NONCE_FD}). */
  readonly nonce: string;
}

/** Options a bash takes that decide what it reads at start-up (the init file would be skipped or clash). */
const BASH_STARTUP_OPTIONS = new Set(["-l", "--login", "--rcfile", "--init-file", "--norc", "--posix"]);
/** zsh options that skip the startup files. */
const ZSH_NO_RCS = new Set(["-f", "--no-rcs", "--norcs", "-d", "--no-globalrcs"]);

/**
 * The shell `program` is when started with `args` as an interactive shell (no `-c`, no script, no
 * operand), or null.
 */
export function knownShell(program: string, args: readonly string[]): KnownShell | null {
  const name = program.split("/").at(-1);
  if (name !== "bash" && name !== "zsh") return null;
  const interactive = args.every((arg) => arg.startsWith("-") && arg !== "-c" && arg !== "-" && arg !== "--");
  return interactive ? name : null;
}

/** A fresh nonce for marks (32 hex digits). */
export function markNonce(): string {
  return crypto.randomUUID().replaceAll("-", "");
}

/**
 * How to start `shell` with marks. `dir` is where {@link ShellIntegration.files} will be, as the program
 * sees it; null when no file can be given to the program (bash then gets its marks through `PS0` and
 * `PROMPT_COMMAND` in the environment, which an rc file setting either replaces; zsh gets none). `env` is
 * the program's environment as it would be (zsh: the user's `ZDOTDIR` is kept there).
 */
export function shellIntegration(
  shell: KnownShell,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  dir: string | null,
  nonce: string = markNonce(),
): ShellIntegration | null {
  if (!/^[A-Za-z0-9]{8,64}$/.test(nonce)) throw new Error(`Bad nonce "${nonce.slice(0, 80)}"`);
  if (shell === "bash") {
    // A login shell (`-l`, also bundled as in `-il`) reads the profile files, not the init file.
    const login = args.some((arg) => /^-[A-Za-z]*l[A-Za-z]*$/.test(arg));
    if (dir === null || login || args.some((arg) => BASH_STARTUP_OPTIONS.has(arg))) {
      return { shell, args, env: bashMarksEnv(), files: [], nonce };
    }
    return {
      shell,
      args: ["--init-file", `${dir}/bash_init`, ...args],
      env: {},
      files: [{ name: "bash_init", content: bashInit() }],
      nonce,
    };
  }
  if (dir === null || args.some((arg) => ZSH_NO_RCS.has(arg))) return null;
  return {
    shell,
    args,
    // The user's own ZDOTDIR (or none) travels in SPECTER_USER_ZDOTDIR; .zshenv puts it back.
    env: { ZDOTDIR: dir, SPECTER_USER_ZDOTDIR: env.ZDOTDIR ?? "" },
    files: [{ name: ".zshenv", content: zshEnv() }],
    nonce,
  };
}

/** The shell's variable holding the nonce (not exported: the shell's commands never see it). */
const NONCE_VAR = "__specter_nonce";

/**
 * Reads the nonce from {@link NONCE_FD} and closes it (bash). Errors hidden (without it, no marks), by a
 * group's redirection: on `exec` itself, `2>/dev/null` would silence the shell for good.
 */
const BASH_READ_NONCE = `{ IFS= read -r ${NONCE_VAR} <&${NONCE_FD}; exec ${NONCE_FD}<&-; } 2>/dev/null; ` +
  // Under allexport (bash -a, a start-up file's set -a) the assignment exported it: not any more.
  `export -n ${NONCE_VAR}`;
/** The same in zsh, which closes a descriptor above 9 only through a variable. */
const ZSH_READ_NONCE = `{ IFS= read -r ${NONCE_VAR} <&${NONCE_FD}; __specter_fd=${NONCE_FD}; ` +
  `exec {__specter_fd}<&-; } 2>/dev/null; unset __specter_fd; typeset +x ${NONCE_VAR}`;

/** `printf` formats of the marks, taking the nonce (and the status first, for `end`). */
const START = "\\033]133;C;specter=%s\\007";
const END = "\\033]133;D;%s;specter=%s\\007\\033]133;A;specter=%s\\007";
/**
 * bash's start mark, made at each prompt into `__specter_c` and printed by `PS0` (prompt expansion, at
 * execution). Marks go only to a terminal: a shell whose output the user redirected to a file (`exec >
 * >(tee log)`) would put the nonce where its commands can read it.
 */
const BASH_START_MARK =
  `if [[ -t 2 ]]; then printf -v __specter_c '${START}' "$${NONCE_VAR}"; else __specter_c=; fi; ` +
  "export -n __specter_c";
const PS0_START = "${__specter_c-}";

/**
 * The environment that marks bash's commands where no init file can be given: `PS0` at execution,
 * `PROMPT_COMMAND` at the next prompt (an rc file that sets either replaces it). The nonce is read from
 * its descriptor at the first prompt: startup files run before then, and what they start could read it.
 */
function bashMarksEnv(): Record<string, string> {
  return {
    PS0: PS0_START,
    // Tracing is off while the marks are made (a trace line would carry the nonce), and back after.
    PROMPT_COMMAND: `__specter_status=$?; { __specter_x=$-; set +x; } 2>/dev/null; ` +
      `if [[ -z "\${${NONCE_VAR}+x}" ]]; then ${BASH_READ_NONCE}; fi; ` +
      `if [[ -n "\${${NONCE_VAR}}" ]]; then ` +
      `if [[ -t 1 ]]; then printf '${END}' "$__specter_status" "$${NONCE_VAR}" "$${NONCE_VAR}"; fi; ` +
      `${BASH_START_MARK}; fi; if [[ $__specter_x == *x* ]]; then set -x; fi`,
  };
}

/** The bash init file: the nonce, what an interactive bash runs, then the marks. */
function bashInit(): string {
  return `# Specter's shell integration (OSC 133 command marks). bash reads this instead of ~/.bashrc
# (--init-file). First of all, before any start-up file: the marks' nonce, read once from its descriptor,
# which is then closed; it stays in this shell's unexported variable.
${BASH_READ_NONCE}
# bash-completion loads a command's completion from the user's data directory when it is first completed,
# into this shell: under HOME, which the shell's commands can write. Not from there.
BASH_COMPLETION_USER_DIR=/run/specter/shell/no-user-completions
if [ -r /etc/bash.bashrc ]; then . /etc/bash.bashrc; fi
if [ -r ~/.bashrc ]; then . ~/.bashrc; fi
__specter_prompt() {
  local code=$?
  local -
  set +x
  if [[ -t 1 ]]; then printf '${END}' "$code" "$${NONCE_VAR}" "$${NONCE_VAR}"; fi
  ${BASH_START_MARK}
  return "$code"
}
# Before the user's prompt commands, so that $? is the command's status; PROMPT_COMMAND may be an array.
if [[ "$(declare -p PROMPT_COMMAND 2>/dev/null)" == "declare -a"* ]]; then
  PROMPT_COMMAND=(__specter_prompt "\${PROMPT_COMMAND[@]}")
else
  PROMPT_COMMAND="__specter_prompt\${PROMPT_COMMAND:+; \$PROMPT_COMMAND}"
fi
PS0="\${PS0-}"'${PS0_START}'
`;
}

/** The zsh `.zshenv`: the nonce, the user's ZDOTDIR back, the user's `.zshenv`, then the marks' hooks. */
function zshEnv(): string {
  return `# Specter's shell integration (OSC 133 command marks). zsh read this because ZDOTDIR pointed here.
# First of all: the marks' nonce, read once from its descriptor, which is then closed; it stays in this
# shell's unexported variable. Then the user's ZDOTDIR is put back, so zsh reads the user's own startup
# files after this one.
${ZSH_READ_NONCE}
if [[ -n "\${SPECTER_USER_ZDOTDIR-}" ]]; then ZDOTDIR=$SPECTER_USER_ZDOTDIR; else unset ZDOTDIR; fi
unset SPECTER_USER_ZDOTDIR
if [[ -r "\${ZDOTDIR:-$HOME}/.zshenv" ]]; then source "\${ZDOTDIR:-$HOME}/.zshenv"; fi
if [[ -o interactive ]]; then
  # Marks go only to a terminal (a redirected shell would write the nonce where its commands can read).
  __specter_precmd() {
    local code=$?
    setopt localoptions noxtrace
    if [[ -t 1 ]]; then printf '${END}' "$code" "$${NONCE_VAR}" "$${NONCE_VAR}"; fi
  }
  __specter_preexec() {
    setopt localoptions noxtrace
    if [[ -t 1 ]]; then printf '${START}' "$${NONCE_VAR}"; fi
  }
  # First in line, so that $? is the command's status whatever the user's rc files add.
  typeset -ga precmd_functions preexec_functions
  precmd_functions=(__specter_precmd $precmd_functions)
  preexec_functions=(__specter_preexec $preexec_functions)
fi
`;
}
