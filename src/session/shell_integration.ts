/**
 * Shell integration: OSC 133 command marks injected into an interactive bash or zsh the way terminals do
 * it, without touching the user's rc files. bash starts with `--init-file FILE`, a file that runs what an
 * interactive bash runs (`/etc/bash.bashrc`, `~/.bashrc`) and then adds the marks; zsh starts with
 * `ZDOTDIR` pointing at a directory whose `.zshenv` puts the user's `ZDOTDIR` back, runs the user's
 * `.zshenv` and adds the marks through `precmd`/`preexec` hooks. Each mark carries `specter=NONCE`, so
 * marks that merely appear in output (a file being shown) cannot end a command.
 *
 * Pure: where the files go (`dir`) is the caller's; under bwrap they are bound read-only into the sandbox
 * from a pipe, elsewhere they are written to a private temp directory.
 *
 * @module
 */

/** The shells Specter integrates with. */
export type KnownShell = "bash" | "zsh";

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
  /** The nonce every mark carries. */
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
      return { shell, args, env: bashMarksEnv(nonce), files: [], nonce };
    }
    return {
      shell,
      args: ["--init-file", `${dir}/bash_init`, ...args],
      env: {},
      files: [{ name: "bash_init", content: bashInit(nonce) }],
      nonce,
    };
  }
  if (dir === null || args.some((arg) => ZSH_NO_RCS.has(arg))) return null;
  return {
    shell,
    args,
    // The user's own ZDOTDIR (or none) travels in SPECTER_USER_ZDOTDIR; .zshenv puts it back.
    env: { ZDOTDIR: dir, SPECTER_USER_ZDOTDIR: env.ZDOTDIR ?? "" },
    files: [{ name: ".zshenv", content: zshEnv(nonce) }],
    nonce,
  };
}

/**
 * The marks for `nonce` as escapes that both `printf` and bash's prompt expansion (`PS0`) turn into bytes:
 * `start` (C, a command runs) and `end`, a printf format taking the status (D;STATUS, then A: the prompt).
 */
function marks(nonce: string): { start: string; end: string } {
  return {
    start: `\\033]133;C;specter=${nonce}\\007`,
    end: `\\033]133;D;%s;specter=${nonce}\\007\\033]133;A;specter=${nonce}\\007`,
  };
}

/**
 * The environment that marks bash's commands where no init file can be given: `PS0` at execution,
 * `PROMPT_COMMAND` at the next prompt (an rc file that sets either replaces it).
 */
function bashMarksEnv(nonce: string): Record<string, string> {
  const { start, end } = marks(nonce);
  return { PS0: start, PROMPT_COMMAND: `__specter_status=$?; printf '${end}' "$__specter_status"` };
}

/** The bash init file: what an interactive bash runs, then the marks. */
function bashInit(nonce: string): string {
  const { start, end } = marks(nonce);
  return `# Specter's shell integration (OSC 133 command marks). bash reads this instead of ~/.bashrc
# (--init-file), so it first runs what an interactive bash runs.
if [ -r /etc/bash.bashrc ]; then . /etc/bash.bashrc; fi
if [ -r ~/.bashrc ]; then . ~/.bashrc; fi
__specter_prompt() {
  local code=$?
  printf '${end}' "$code"
  return "$code"
}
# Before the user's prompt commands, so that $? is the command's status; PROMPT_COMMAND may be an array.
if [[ "$(declare -p PROMPT_COMMAND 2>/dev/null)" == "declare -a"* ]]; then
  PROMPT_COMMAND=(__specter_prompt "\${PROMPT_COMMAND[@]}")
else
  PROMPT_COMMAND="__specter_prompt\${PROMPT_COMMAND:+; \$PROMPT_COMMAND}"
fi
PS0="\${PS0-}${start}"
`;
}

/** The zsh `.zshenv`: the user's ZDOTDIR back, the user's `.zshenv`, then the marks' hooks. */
function zshEnv(nonce: string): string {
  const { start, end } = marks(nonce);
  return `# Specter's shell integration (OSC 133 command marks). zsh read this because ZDOTDIR pointed here;
# the user's ZDOTDIR is put back first, so zsh reads the user's own startup files after this one.
if [[ -n "\${SPECTER_USER_ZDOTDIR-}" ]]; then ZDOTDIR=$SPECTER_USER_ZDOTDIR; else unset ZDOTDIR; fi
unset SPECTER_USER_ZDOTDIR
if [[ -r "\${ZDOTDIR:-$HOME}/.zshenv" ]]; then source "\${ZDOTDIR:-$HOME}/.zshenv"; fi
if [[ -o interactive ]]; then
  __specter_precmd() {
    local code=$?
    printf '${end}' "$code"
  }
  __specter_preexec() { printf '${start}'; }
  # First in line, so that $? is the command's status whatever the user's rc files add.
  typeset -ga precmd_functions preexec_functions
  precmd_functions=(__specter_precmd $precmd_functions)
  preexec_functions=(__specter_preexec $preexec_functions)
fi
`;
}
