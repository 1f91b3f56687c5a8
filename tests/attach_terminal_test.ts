/**
 * `specter attach` in real terminals, as a person uses it: two tmux windows (a 120×40 one and a 90×25 one,
 * on a tmux server of this test's own) run a shell each, and tmux says which modes their terminals are
 * in (`#{alternate_on}`, `#{mouse_any_flag}`, …) and what they show (capture-pane).
 *
 * The session's program switches on what a full-screen program does (alternate screen, mouse with SGR
 * reports, application cursor keys and keypad, bracketed paste, focus events, hidden cursor, insert mode,
 * a scroll region, a title) and echoes what it reads. Checked: every mode is off again after the detach
 * key and after `kill -TERM` of attach; a watcher of another size sees the screen clipped, not wrapped,
 * with "watching (read-only)", its keys refused on the status line, and takes control with `t` (the
 * controller is told and watches); `--detach-key "ctrl-b d"`; attach without a terminal is a typed error
 * with no trace, in a pipe to `head` too.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DENO, ROOT, withTempDir, withTimeout } from "./_helpers.ts";
import { cleanUp, create, startDaemon, type TestDaemon, whereArgs } from "./_daemon.ts";

/** The modes tmux 3.3 reports for a pane (it has no format for bracketed paste or focus events). */
const MODES = "alt=#{alternate_on} mouse=#{mouse_any_flag} sgr=#{mouse_sgr_flag} keypad=#{keypad_flag} " +
  "ckeys=#{keypad_cursor_flag} cursor=#{cursor_flag} insert=#{insert_flag} origin=#{origin_flag} " +
  "wrap=#{wrap_flag} region=#{scroll_region_upper}-#{scroll_region_lower} title=#{pane_title}";

/** A 120-column line: ten A, ten B, … ten L. Wrapped in 90 columns, a line would start with J. */
const WIDE = Array.from({ length: 12 }, (_, i) => String.fromCharCode(65 + i).repeat(10)).join("");

/** The session's program: modes on, then it echoes lines ("wide" prints {@link WIDE}). sh builtins only. */
const PROGRAM = "printf '\\033[?1049h\\033[?1000;1006h\\033[?1h\\033=\\033[?2004h\\033[?1004h\\033[?25l" +
  "\\033]2;in-session\\007\\033[5;20r\\033[4hready\\n'; " +
  `while read l; do case "$l" in wide) echo ${WIDE};; *) echo "got-$l";; esac; done`;

class Tmux {
  readonly socket: string;
  readonly target: string;
  constructor(socket: string, target: string) {
    this.socket = socket;
    this.target = target;
  }
  async run(...args: string[]): Promise<string> {
    const out = await new Deno.Command("tmux", { args: ["-S", this.socket, ...args] }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, `tmux ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
    return text;
  }
  keys(...keys: string[]): Promise<string> {
    return this.run("send-keys", "-t", this.target, ...keys);
  }
  async modes(): Promise<string> {
    return (await this.run("display", "-p", "-t", this.target, MODES)).trim();
  }
  async screen(): Promise<string[]> {
    return (await this.run("capture-pane", "-p", "-t", this.target)).split("\n");
  }
  /** Waits until `check` holds of the modes and the screen (at most 30 s); says what was seen if not. */
  async until(what: string, check: (modes: string, screen: string) => boolean): Promise<void> {
    let modes = "";
    let screen = "";
    for (let i = 0; i < 300; i++) {
      modes = await this.modes();
      screen = (await this.screen()).join("\n");
      if (check(modes, screen)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${this.target}: ${what} did not happen.\nmodes: ${modes}\nscreen:\n${screen}`);
  }
  /** The pid of what the pane's shell runs now. */
  async child(): Promise<number> {
    const shell = (await this.run("display", "-p", "-t", this.target, "#{pane_pid}")).trim();
    const ps = await new Deno.Command("ps", { args: ["-o", "pid=", "--ppid", shell] }).output();
    const pid = Number(new TextDecoder().decode(ps.stdout).trim().split("\n")[0]);
    assert.ok(pid > 0, `no child of the shell ${shell}`);
    return pid;
  }
}

/** Every mode a session may have switched on, off (tmux's defaults, and the title set before attach). */
function allOff(rows: number): string {
  return `alt=0 mouse=0 sgr=0 keypad=0 ckeys=0 cursor=1 insert=0 origin=0 wrap=1 region=0-${rows - 1} ` +
    "title=before";
}

async function startTmux(
  dir: string,
  socket: string,
  name: string,
  cols: number,
  rows: number,
): Promise<Tmux> {
  const conf = join(dir, "tmux.conf");
  Deno.writeTextFileSync(conf, "set -g status off\nset -g allow-rename off\n");
  const tmux = new Tmux(socket, name);
  await tmux.run(
    "-f",
    conf,
    "new-session",
    "-d",
    "-s",
    name,
    "-x",
    String(cols),
    "-y",
    String(rows),
    "env",
    `PATH=${dir}/bin:/usr/bin:/bin`,
    "PS1=$ ",
    "bash",
    "--norc",
    "--noprofile",
  );
  // The outer terminal's own title, which attach must give back.
  await tmux.keys("printf '\\033]2;before\\033\\\\'; clear", "Enter");
  await tmux.until("the title", (modes) => modes.endsWith("title=before"));
  return tmux;
}

/**
 * A test with a daemon of its own, `specter` on its shells' PATH (this checkout, this daemon), and a tmux
 * server of its own (its socket in the test's directory, removed with it).
 */
function tmuxTest(
  name: string,
  fn: (daemon: TestDaemon, dir: string, socket: string) => Promise<void>,
  timeoutMs: number,
): void {
  Deno.test({ name, sanitizeOps: false, sanitizeResources: false }, async () => {
    await withTempDir(async (dir) => {
      const daemon: TestDaemon = await startDaemon(dir);
      const socket = join(dir, "tmux.sock");
      Deno.mkdirSync(join(dir, "bin"));
      const where = whereArgs(daemon).map((arg) => `'${arg}'`).join(" ");
      Deno.writeTextFileSync(
        join(dir, "bin", "specter"),
        `#!/bin/sh\nc="$1"; shift\nexec '${DENO}' run -A '${ROOT}/main.ts' "$c" ${where} --no-autostart "$@"\n`,
      );
      Deno.chmodSync(join(dir, "bin", "specter"), 0o755);
      try {
        await withTimeout(fn(daemon, dir, socket), timeoutMs, name);
      } catch (error) {
        console.error(daemon.log.join("\n"));
        throw error;
      } finally {
        await new Deno.Command("tmux", { args: ["-S", socket, "kill-server"] }).output();
        await cleanUp(daemon);
      }
    });
  });
}

tmuxTest(
  "attach in real terminals: modes put back on detach and SIGTERM, a watcher clipped, take, no tty",
  async (daemon, dir, socket) => {
    // At the big window's size: attaching there resizes nothing, so the program's scroll region reaches
    // that terminal (a resize resets it, as a real terminal's does: see the next test).
    await create(daemon, "vi", ["sh", "-c", PROGRAM], ["--cols", "120", "--rows", "40"]);
    const big = await startTmux(dir, socket, "big", 120, 40);
    const small = await startTmux(dir, socket, "small", 90, 25);

    // 1. The controller: the program's modes reach the outer terminal, and the detach key puts them back.
    await big.keys("specter attach vi; echo rc=$?", "Enter");
    const on = (modes: string) =>
      modes.startsWith("alt=1 mouse=1 sgr=1 keypad=1 ckeys=1 cursor=0 insert=1") &&
      modes.includes("region=4-19") && modes.endsWith("title=in-session");
    await big.until("the program's modes", on);
    await big.keys("C-]");
    await big.until("the detach", (_, screen) => screen.includes("rc=0"));
    assert.equal(await big.modes(), allOff(40));
    assert.match((await big.screen()).join("\n"), /\[detached from vi\]/);

    // 2. The same after kill -TERM of attach.
    await big.keys("clear; specter attach vi; echo rc=$?", "Enter");
    await big.until("the program's modes again", on);
    await big.keys("wide", "Enter");
    await big.until("the wide line", (_, screen) => screen.includes(WIDE));
    const attached = await big.child();
    Deno.kill(attached, "SIGTERM");
    await big.until("the end by SIGTERM", (_, screen) => screen.includes("rc=143"));
    assert.equal(await big.modes(), allOff(40));
    assert.match((await big.screen()).join("\n"), /\[detached from vi by SIGTERM\]/);

    // 3. A controller again, and a watcher in a smaller window: clipped, read-only, and says so.
    await big.keys("clear; specter attach vi; echo rc=$?", "Enter");
    await big.until("the program's modes a third time", on);
    await big.keys("wide", "Enter");
    await small.keys("clear; specter attach vi; echo rc=$?", "Enter");
    await small.until(
      "the watcher's view",
      (modes, screen) =>
        modes.startsWith("alt=1 mouse=0") &&
        /watching vi \(read-only\) · 120×40 in 90×25 · t: take control/.test(screen),
    );
    const seen = await small.screen();
    assert.ok(seen.includes(WIDE.slice(0, 90)), `clipped at 90 columns:\n${seen.join("\n")}`);
    assert.ok(!seen.some((line) => line.includes("JJJ")), `nothing wrapped:\n${seen.join("\n")}`);
    assert.match(
      seen[24]!,
      /^ watching vi \(read-only\) · 120×40 in 90×25 · t: take control · ctrl-\]: detach/,
    );
    // Its keys are refused, visibly, and never reach the program.
    await small.keys("x", "Enter");
    await small.until(
      "the refusal",
      (_, screen) => screen.includes("keys are not sent while watching"),
    );
    await big.keys("y", "Enter");
    await big.until("the controller's line", (_, screen) => screen.includes("got-y"));
    assert.ok(
      !(await big.screen()).join("\n").includes("got-x"),
      "a watcher's key reached the program",
    );

    // 4. The watcher takes control; the controller is told, and watches at its own size.
    await small.keys("t");
    await small.until(
      "control",
      (modes, screen) => modes.startsWith("alt=1 mouse=1 sgr=1") && !screen.includes("watching"),
    );
    await big.until(
      "the notice",
      (modes, screen) =>
        modes.startsWith("alt=1 mouse=0") && screen.includes("another client took control of vi"),
    );
    await small.keys("hello", "Enter");
    await big.until("the new controller's line, watched", (_, screen) => screen.includes("got-hello"));
    await small.keys("C-]");
    await small.until("the detach", (_, screen) => screen.includes("rc=0"));
    assert.equal(await small.modes(), allOff(25));
    await big.keys("C-]");
    await big.until("the watcher's detach", (_, screen) => screen.includes("rc=0"));
    assert.equal(await big.modes(), allOff(40));

    // 5. Another detach key, tmux-like.
    await small.keys("clear; specter attach vi --detach-key 'ctrl-b d'; echo rc=$?", "Enter");
    await small.until("the program's modes", (modes) => modes.startsWith("alt=1 mouse=1"));
    await small.keys("C-]", "C-b", "d");
    await small.until("the detach", (_, screen) => screen.includes("rc=0"));
    assert.equal(await small.modes(), allOff(25));
    assert.match((await small.screen()).join("\n"), /\[attached to vi: detach with ctrl-b d\]/);

    // 6. No terminal: a typed error, no trace; in a pipe to head too.
    await small.keys("clear; specter attach vi | head -1; echo rc=${PIPESTATUS[0]}", "Enter");
    await small.until("the refusal in a pipe", (_, screen) => screen.includes("rc=2"));
    const piped = (await small.screen()).join("\n");
    assert.match(
      piped,
      /specter: E_USAGE: specter attach needs a terminal, and its stdout is not one: use/,
    );
    assert.doesNotMatch(piped, /Uncaught|BrokenPipe|\n\s+at /);
    const out = await new Deno.Command(DENO, {
      args: ["run", "-A", `${ROOT}/main.ts`, "attach", "vi", ...whereArgs(daemon), "--no-autostart"],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, stderr);
    assert.match(
      stderr,
      /^specter: E_USAGE: specter attach needs a terminal, and its stdin is not one: /,
    );
    assert.match(stderr, /"specter send vi TEXT" .* "specter logs vi"/);
    assert.doesNotMatch(stderr, /Uncaught|\n\s+at /);
    assert.equal(out.stdout.length, 0);
  },
  240_000,
);

tmuxTest(
  "attach from a taller terminal: vim, started at 80×24 with its scroll region, fills all 30 rows; a kill " +
    "ends attach with 128 + the signal's number, and says so",
  async (daemon, dir, socket) => {
    const lines = 'call setline(1, map(range(1, 200), "\\"line \\" . v:val"))';
    await create(daemon, "vim", ["vim", "-u", "NONE", "-N", "-c", lines], ["--policy", "basic"]);
    const tall = await startTmux(dir, socket, "tall", 100, 30);
    await tall.keys("specter attach vim; echo rc=$?", "Enter");
    // vim at 30 rows: lines 1-29, then its command line. The replayed region (rows 1-24, from its start at
    // 80×24) must not outlive the resize: then rows 25-29 stay empty and the text scrolls off the top.
    await tall.until("vim filling the window", (_, screen) => {
      const rows = screen.split("\n");
      return rows[0] === "line 1" && rows[28] === "line 29";
    });
    await tall.keys("C-]");
    await tall.until("the detach", (_, screen) => screen.includes("rc=0"));
    await tall.keys("clear; specter attach vim; echo rc=$?", "Enter");
    await tall.until("vim again", (_, screen) => screen.split("\n")[0] === "line 1");
    await specterIn(dir, ["kill", "vim"]);
    await tall.until("the end by a signal", (_, screen) => /rc=\d+/.test(screen));
    const screen = (await tall.screen()).join("\n");
    const [, signal] = /\[vim was killed \((\w+)\)\]/.exec(screen) ?? assert.fail(screen);
    const number = { HUP: 1, KILL: 9, TERM: 15 }[signal!];
    assert.ok(number !== undefined, screen);
    assert.match(screen, new RegExp(`rc=${128 + number}\\b`));
  },
  60_000,
);

/** `specter ARGS` through the test's launcher (this checkout, its daemon). */
async function specterIn(dir: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(join(dir, "bin", "specter"), { args }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}
