// deno-lint-ignore-file no-control-regex -- the tests look for control characters in what was printed.
/**
 * What a sandboxed program can make a person's terminal do through `specter attach` (and `logs --view raw`
 * on a terminal), and through the listings that print what it chose: a real daemon session prints a
 * clipboard write, a `file://` link, hostile titles and a battery of queries among ordinary drawing, and
 * the exact bytes that reach the outer terminal are asserted.
 */
import assert from "node:assert/strict";
import { ROOT, withTempDir, withTimeout } from "./_helpers.ts";
import { cleanUp, create, specter, startDaemon, type TestDaemon, whereArgs } from "./_daemon.ts";

function daemonTest(name: string, fn: (daemon: TestDaemon, dir: string) => Promise<void>): void {
  Deno.test({ name, sanitizeOps: false, sanitizeResources: false }, async () => {
    await withTempDir(async (dir) => {
      const daemon = await startDaemon(dir, ["--history", `${dir}/data/log.sqlite`]);
      try {
        await withTimeout(fn(daemon, dir), 60_000, name);
      } catch (error) {
        console.error(daemon.log.join("\n"));
        throw error;
      } finally {
        await cleanUp(daemon);
      }
    });
  });
}

/** The program's output, as `printf` escapes (octal, so that `sh`'s printf reads it everywhere). */
const HOSTILE = [
  "\\033[31mred\\033[0m ",
  "\\033[?1049h\\033[?1000;1006h\\033[?2004h\\033[2 q",
  "\\033]52;c;ZWNobyBwd25lZA==\\007", // Clipboard write: "echo pwned".
  "\\033]52;c;?\\007", // Clipboard read.
  "\\033]8;;file:///etc/passwd\\033\\\\local\\033]8;;\\033\\\\ ",
  "\\033]8;;https://example.com/\\033\\\\web\\033]8;;\\033\\\\ ",
  "\\033]0;evil\\033[6n\\007", // A title with an ESC: ends the title unfinished.
  "\\033]2;safe\\342\\200\\256txt\\001\\007", // A bidi override and a C0 in a title.
  "\\033[c\\033[>c\\033[=c\\033[5n\\033[6n\\033[?6n\\033[?2026\\044p\\033[>q\\033[18t\\033[21t\\033[14t",
  "\\033P\\044qm\\033\\\\\\033P+q544e\\033\\\\", // DECRQSS, XTGETTCAP.
  "\\033]11;?\\007\\033]4;1;?\\033\\\\\\033]10;#ffffff\\007",
  "\\302\\233c\\302\\2356n", // C1 CSI (U+009B) DA, and U+009D.
  "\\033[?1049l ok\\n",
].join("");

/** What reaches the outer terminal: the drawing, in 7-bit form, and nothing else (the pty made \n \r\n). */
const EXPECTED = "\x1b[31mred\x1b[0m " +
  "\x1b[?1049h\x1b[?1000;1006h\x1b[?2004h\x1b[2 q" +
  "local\x1b]8;;\x1b\\ " +
  "\x1b]8;;https://example.com/\x1b\\web\x1b]8;;\x1b\\ " +
  "\x07" + // The BEL that was meant to end the unfinished title.
  "\x1b]2;safetxt\x07" +
  "\x1b]10;#ffffff\x07" +
  "\x1b[?1049l ok\r\n";

/**
 * A terminal for attach (python3's pty: stdin and stdout; stderr apart), as a person's would be: what it
 * writes there is what their terminal would read.
 */
const PTY = `import pty, os, sys
r, w = os.pipe()
pid, fd = pty.fork()
if pid == 0:
    os.dup2(w, 2)
    os.execvp(sys.argv[1], sys.argv[1:])
os.close(w)
out = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
err = os.read(r, 65536)
sys.stdout.buffer.write(out)
sys.stderr.buffer.write(err)
sys.exit(os.waitstatus_to_exitcode(status))`;

/** What attach writes on entry (the title pushed) and, after this output, on exit (modes off, a new line). */
const ENTER = "\x1b[22;0t";
const RESTORE = "\x1b[0m\x1b[?1000;1006;2004l\x1b[0 q\x1b]110\x07\x1b]0;\x07\x1b[23;0t\r\r\n";

/** `specter attach NAME FLAGS` on a terminal, once NAME ended: what reached the terminal. */
async function attach(daemon: TestDaemon, name: string, flags: string[] = []): Promise<Uint8Array> {
  const out = await new Deno.Command("python3", {
    args: ["-c", PTY, Deno.execPath(), "run", "-A", `${ROOT}/main.ts`, "attach", name, ...whereArgs(daemon)]
      .concat(["--no-autostart", ...flags]),
    stdin: "null",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.match(stderr, new RegExp(`\\[${name} ended with code 0\\]`));
  return out.stdout;
}

/** Waits until session NAME has ended. */
async function ended(daemon: TestDaemon, name: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const ls = await specter(["ls", ...whereArgs(daemon), "--no-autostart", "--json"]);
    const row = ls.stdout.trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))
      .find((r) => r.name === name);
    if (row !== undefined && row.running === false) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Session "${name}" did not end`);
}

daemonTest("attach: only the drawing reaches the outer terminal, byte for byte", async (daemon) => {
  await create(daemon, "hostile", ["sh", "-c", `printf '${HOSTILE}'`]);
  await ended(daemon, "hostile");
  // What the program wrote is in the log as it was (the filter is the outer terminal's, not the log's).
  const raw = await specter(["logs", "hostile", "--view", "raw", "--state-dir", daemon.stateDir]);
  assert.match(raw.stdout, /\x1b\]52;c;ZWNobyBwd25lZA==\x07/);
  assert.match(raw.stdout, /\x1b\[6n/);
  assert.match(raw.stdout, /\x1bP\$qm/);
  const bytes = await attach(daemon, "hostile");
  // The modes the program left on (mouse, paste, cursor shape, a colour, the title) are switched off.
  // The outer pty turns each \n into \r\n once more (attach's raw mode keeps output processing).
  assert.equal(new TextDecoder().decode(bytes), ENTER + EXPECTED.replace("\r\n", "\r\r\n") + RESTORE);
  // No C1 control, even UTF-8 encoded, and no ESC that does not start a passed sequence.
  assert.ok(!new TextDecoder().decode(bytes).match(/[\x80-\x9f]/));
});

daemonTest("attach --allow-clipboard passes the clipboard write, never its read", async (daemon) => {
  await create(daemon, "clip", ["sh", "-c", `printf '${HOSTILE}'`]);
  await ended(daemon, "clip");
  const text = new TextDecoder().decode(await attach(daemon, "clip", ["--allow-clipboard"]));
  const write = "\x1b]52;c;ZWNobyBwd25lZA==\x07";
  const drawn = EXPECTED.replace("\x1b[2 q", `\x1b[2 q${write}`).replace("\r\n", "\r\r\n");
  assert.equal(text, ENTER + drawn + RESTORE);
  assert.ok(!text.includes("52;c;?"));
  const help = await specter(["attach", "--help"]);
  const said = help.stdout.replace(/\s+/g, " ");
  assert.match(said, /--allow-clipboard Let the program set this terminal's clipboard \(OSC 52\)\. Risky: /);
  assert.match(said, /what you paste next, into your own shell too/);
});

daemonTest(
  "logs --view raw filters on a terminal and switches off the modes it left on; raw in a pipe",
  async (daemon) => {
    await create(daemon, "raw", ["sh", "-c", `printf '${HOSTILE}'`]);
    await ended(daemon, "raw");
    // A real terminal for `logs` (python3's pty): what it writes is what a person's terminal would read.
    const script = `import pty, os, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
os.waitpid(pid, 0)
sys.stdout.buffer.write(out)`;
    const out = await new Deno.Command("python3", {
      args: ["-c", script, Deno.execPath(), "run", "-A", `${ROOT}/main.ts`, "logs", "raw", "--view", "raw"]
        .concat(["--state-dir", daemon.stateDir]),
    }).output();
    // The pty turns each \n into \r\n once more; otherwise the bytes are attach's, and so is the restore
    // after them (without the new line attach adds before its own message).
    assert.equal(
      new TextDecoder().decode(out.stdout),
      ENTER + EXPECTED.replace("\r\n", "\r\r\n") + RESTORE.slice(0, -"\r\r\n".length),
    );
  },
);

daemonTest("ls and history print control characters in argv and commands escaped", async (daemon, dir) => {
  // The third argument is sh's $0: any string the user (or an agent) chose.
  await create(daemon, "argv", ["sh", "-c", ":", "x\x1b]52;c;QQ==\x07y\u009b6n\u202ez"]);
  const ls = await specter(["ls", ...whereArgs(daemon), "--no-autostart"]);
  assert.equal(ls.code, 0, ls.stderr);
  const row = ls.stdout.split("\n").find((line) => line.startsWith("argv\t"));
  assert.ok(row !== undefined, ls.stdout);
  assert.match(row, /\t\S*sh -c : x\\e\]52;c;QQ==\\x07y\\x9b6n\\u\{202e\}z$/);
  assert.doesNotMatch(ls.stdout, /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]/);
  // --json keeps the exact strings.
  const json = await specter(["ls", ...whereArgs(daemon), "--no-autostart", "--json"]);
  assert.ok(json.stdout.includes(JSON.stringify("x\x1b]52;c;QQ==\x07y\u009b6n\u202ez")));
  // A command's text in the command log (here the program's own command line) is escaped likewise.
  await create(daemon, "cmd", ["sh", "-c", "echo hi # \x1b]0;pwned\x07\r\u009b6n"]);
  await ended(daemon, "cmd");
  const history = await specter(["history", "--history", `${dir}/data/log.sqlite`]);
  assert.equal(history.code, 0, history.stderr);
  const line = history.stdout.split("\n").find((l) => l.includes("echo hi"));
  assert.ok(line !== undefined, history.stdout);
  assert.match(line, /\techo hi # \\e\]0;pwned\\x07\\r\\x9b6n$/);
  assert.doesNotMatch(history.stdout, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
});
