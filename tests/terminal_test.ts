/**
 * The terminal model against real programs: a full-screen alternate-screen UI drawn by python3,
 * snapshotted through the library and through `specter run` + a `snapshot` driver message.
 */
import assert from "node:assert/strict";
import { Ajv2020 } from "ajv/dist/2020.js";
import { type ScreenSnapshot, snapshotText, type SpawnOptions, type Transcript } from "../src/mod.ts";
import { DENO, ROOT, sessionTest, start } from "./_helpers.ts";

const PYTHON = "/usr/bin/python3";
type Json = Record<string, unknown>;

/**
 * A menu on the alternate screen: a title, a blue header bar, three items (the selected one inverse),
 * an inverse status line on the last row, cursor hidden, application cursor keys on. Down (`ESC O B`,
 * or `j`) selects the next item; any other arrow encoding is reported on the status line; `q` leaves the
 * alternate screen and prints "bye". Every drawing ends with `ESC [3;5H`, the marker tests wait for.
 */
const MENU = String.raw`
import os, sys, termios, tty
fd = sys.stdin.fileno()
saved = termios.tcgetattr(fd)
tty.setraw(fd)
cols, rows = os.get_terminal_size(fd)
items = ["Open", "Save", "Quit"]
selected = 0
note = ""
def draw():
    out = ["\x1b[H\x1b[2J", "\x1b[1;37;44m" + " Specter menu".ljust(cols) + "\x1b[0m"]
    for i, item in enumerate(items):
        style = "\x1b[7m" if i == selected else ""
        out.append("\x1b[%d;3H%s%s\x1b[0m" % (i + 3, style, item))
    status = " %s selected: %d %s" % ("q: quit", selected + 1, note)
    out.append("\x1b[%d;1H\x1b[7m%s\x1b[0m" % (rows, status.ljust(cols)))
    out.append("\x1b[3;5H")
    os.write(1, "".join(out).encode())
os.write(1, b"\x1b]2;Specter UI\x07\x1b[?1049h\x1b[?25l\x1b[?1h")
draw()
try:
    while True:
        key = os.read(fd, 16)
        if key == b"q":
            break
        if key in (b"\x1bOB", b"j"):
            selected = (selected + 1) % len(items)
        else:
            note = "unexpected " + key.hex()
        draw()
finally:
    termios.tcsetattr(fd, termios.TCSAFLUSH, saved)
    os.write(1, b"\x1b[?1l\x1b[?25h\x1b[?1049lbye\r\n")
`;

const DRAWN = "\x1b[3;5H";

function menu(options: Partial<SpawnOptions> = {}): Transcript {
  return start({ argv: [PYTHON, "-c", MENU], cols: 40, rows: 8, screen: true, ...options });
}

/** Waits for the `n`-th complete drawing of the menu. */
async function drawn(r: Transcript, n = 1): Promise<void> {
  await r.until(() => r.text.split(DRAWN).length > n, 10_000, `drawing ${n}`);
}

const FIRST_SCREEN = [
  '# 40x8 cursor 4,2 hidden alt=true title="Specter UI"',
  " Specter menu",
  "",
  "  Open",
  "  Save",
  "  Quit",
  "",
  "",
  " q: quit selected: 1",
  "",
].join("\n");

sessionTest("a full-screen alternate-screen UI is snapshotted exactly through the library", async () => {
  const r = menu();
  await drawn(r);
  const first = await r.session.screen({ cells: true });
  assert.equal(snapshotText(first), FIRST_SCREEN);
  assert.equal(first.partial, false);
  assert.equal(r.session.applicationCursor, true);
  assert.deepEqual(first.cells?.[0], [{ text: " Specter menu".padEnd(40), fg: 7, bg: 4, bold: true }]);
  assert.deepEqual(first.cells?.[2], [{ text: "  " }, { text: "Open", inverse: true }]);
  assert.deepEqual(first.cells?.[3], [{ text: "  Save" }]);
  assert.deepEqual(first.cells?.[7], [{ text: " q: quit selected: 1".padEnd(40), inverse: true }]);

  // DECCKM is on: `down` is sent as ESC O B, which the menu understands.
  r.session.press("down");
  await drawn(r, 2);
  const second = await r.session.screen({ cells: true });
  assert.equal(second.lines[7], " q: quit selected: 2");
  assert.deepEqual(second.cells?.[3], [{ text: "  " }, { text: "Save", inverse: true }]);

  r.session.press("q");
  const exit = await r.exit();
  assert.equal(exit.code, 0);
  const last = await r.session.screen(); // Still available after exit.
  assert.equal(last.alt_screen, false);
  assert.equal(last.cursor.visible, true);
  assert.deepEqual(last.lines, ["bye"]);
  assert.equal(r.session.applicationCursor, false);
});

sessionTest("20 runs of the same UI give byte-identical snapshot text", async () => {
  const texts = new Set<string>();
  const jsons = new Set<string>();
  for (let i = 0; i < 20; i++) {
    const r = menu();
    await drawn(r);
    const snap = await r.session.screen({ cells: true });
    texts.add(snapshotText(snap));
    jsons.add(JSON.stringify(snap));
    r.session.press("q");
    assert.equal((await r.exit()).code, 0);
  }
  assert.deepEqual([...texts], [FIRST_SCREEN]);
  assert.equal(jsons.size, 1);
}, 60_000);

sessionTest("a session without `screen` builds the model on the first request from its history", async () => {
  const r = menu({ screen: false });
  await drawn(r);
  const snap = await r.session.screen();
  assert.equal(snapshotText(snap), FIRST_SCREEN);
  assert.equal(snap.partial, false);
  r.session.press("q");
  await r.exit();
});

sessionTest(
  "a late model whose history was cut says partial; the model takes over from then on",
  async () => {
    const r = start({
      argv: ["bash", "-c", 'for i in $(seq 1 200); do echo "line $i"; done; read -r x; echo "got $x"'],
      cols: 20,
      rows: 4,
      screenHistory: 100,
    });
    await r.output("line 200\r\n");
    const snap = await r.session.screen();
    assert.equal(snap.partial, true);
    assert.deepEqual(snap.lines, ["line 198", "line 199", "line 200"]);
    r.session.write("ok\r");
    await r.exit();
    const end = await r.session.screen();
    assert.equal(end.partial, true);
    assert.deepEqual(end.lines, ["line 200", "ok", "got ok"]);
  },
);

sessionTest("the model outranks the output scanner for DECCKM (a reset ESC c switches it off)", async () => {
  const script = String.raw`
import os, sys, tty
tty.setraw(0)
os.write(1, b"\x1b[?1h\x1bcready")
os.write(1, ("got " + os.read(0, 16).hex() + "\r\n").encode())
`;
  const r = start({ argv: [PYTHON, "-c", script], screen: true });
  await r.output("ready");
  await r.session.screen(); // The model has parsed the reset.
  assert.equal(r.session.applicationCursor, false);
  r.session.press("up");
  await r.output(/got [0-9a-f]+/);
  assert.match(r.text, /got 1b5b41/); // ESC [ A, not ESC O A.
  await r.exit();
});

sessionTest("resizes reach the model in order with the output", async () => {
  const r = start({
    argv: ["bash", "-c", 'read -r; stty size; printf "%s" "$(printf "%.0sx" $(seq 1 30))"; read -r'],
    cols: 20,
    rows: 5,
    screen: true,
  });
  await r.until((f) => f.type === "start");
  r.session.resize(30, 6);
  r.session.write("\r");
  await r.output("x".repeat(30));
  const snap = await r.session.screen();
  assert.equal(snap.cols, 30);
  assert.equal(snap.rows, 6);
  assert.deepEqual(snap.lines.slice(-2), ["6 30", "x".repeat(30)]);
  r.session.write("\r");
  await r.exit();
});

sessionTest("a flood with the model on is parsed completely (watermarks hold the reader back)", async () => {
  const lines = 1_000_000;
  const r = start({
    argv: [PYTHON, "-c", `import sys\nfor i in range(${lines}): sys.stdout.write("flood line %07d\\n" % i)`],
    cols: 40,
    rows: 3,
    screen: true,
  });
  const exit = await r.exit(60_000);
  assert.equal(exit.code, 0);
  assert.equal(exit.output_bytes, lines * 20); // 19 characters + CR LF each.
  const snap = await r.session.screen();
  const line = (i: number) => `flood line ${String(i).padStart(7, "0")}`;
  assert.deepEqual(snap.lines, [line(lines - 2), line(lines - 1)]);
}, 90_000);

sessionTest("a snapshot requested as the program ends still arrives, before exit", async () => {
  const r = start({ argv: ["bash", "-c", "read -r x; printf 'all done'"] });
  await r.until((f) => f.type === "start");
  // The program exits at once after this input, while the snapshot waits for the model to parse.
  r.session.write("\r");
  r.session.send({ v: 1, type: "snapshot", name: "end" });
  const exit = await r.exit();
  const index = r.frames.findIndex((f) => f.type === "snapshot");
  assert.ok(index >= 0 && index < r.frames.indexOf(exit), "the snapshot frame comes before exit");
  const frame = r.frames[index]!;
  assert.ok(frame.type === "snapshot");
  assert.equal(frame.name, "end");
  assert.equal(frame.screen.cells, undefined);
  assert.deepEqual((await r.session.screen()).lines, ["", "all done"]);
  assert.throws(() => r.session.send({ v: 1, type: "snapshot" }), /has ended/);
});

/** `specter run` with frames read as they come. */
class LiveCli {
  readonly frames: Json[] = [];
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  #wake: (() => void) | undefined;
  readonly #pump: Promise<void>;
  #text = "";

  constructor(args: string[]) {
    const child = new Deno.Command(DENO, {
      args: ["run", "--quiet", "-A", `${ROOT}/main.ts`, ...args],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
      cwd: ROOT,
    }).spawn();
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#pump = (async () => {
      let buffered = "";
      for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) {
        buffered += text;
        let nl: number;
        while ((nl = buffered.indexOf("\n")) >= 0) {
          const frame = JSON.parse(buffered.slice(0, nl)) as Json;
          buffered = buffered.slice(nl + 1);
          this.frames.push(frame);
          if (frame.type === "stdout") this.#text += frame.data as string;
        }
        this.#wake?.();
      }
      this.#wake?.();
    })();
  }

  get text(): string {
    return this.#text;
  }

  async send(...messages: Json[]): Promise<void> {
    // Several messages go in one write, so the driver reads them together (no exit can come between).
    await this.#writer.write(
      new TextEncoder().encode(messages.map((m) => JSON.stringify(m) + "\n").join("")),
    );
  }

  /** Waits until a frame satisfies `predicate`, returning that frame. */
  async until(predicate: (frame: Json) => boolean, what: string): Promise<Json> {
    const deadline = performance.now() + 10_000;
    for (;;) {
      const found = this.frames.find(predicate);
      if (found) return found;
      if (performance.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, 100);
      });
    }
  }

  async close(): Promise<number> {
    await this.#writer.close().catch(() => {/* the process already ended */});
    await this.#pump;
    return (await this.#child.status).code;
  }
}

sessionTest("specter run answers a snapshot driver message with a valid snapshot frame", async () => {
  const schema = JSON.parse(await Deno.readTextFile(`${ROOT}/spec/schema/frame.schema.json`));
  const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
  const cli = new LiveCli([
    "run",
    "--unsafe-no-sandbox",
    "--ack-no-network-enforcement",
    "--cols",
    "40",
    "--rows",
    "8",
    "--",
    PYTHON,
    "-c",
    MENU,
  ]);
  await cli.until(() => cli.text.includes(DRAWN), "the menu");
  await cli.send({ v: 1, type: "snapshot", name: "menu", cells: true });
  const frame = await cli.until((f) => f.type === "snapshot", "the snapshot frame");
  assert.ok(validate(frame), JSON.stringify(validate.errors));
  assert.equal(frame.name, "menu");
  const screen = frame.screen as ScreenSnapshot;
  assert.equal(snapshotText(screen), FIRST_SCREEN);
  assert.equal(screen.cells?.length, 8);

  await cli.send({ v: 1, type: "snapshot", extra: true });
  const error = await cli.until((f) => f.type === "error", "the error frame");
  assert.equal(error.code, "E_PROTOCOL");

  // One write: a snapshot asked for after the program exited and was reaped cannot be answered, and under
  // load the quit key could win that race if the two messages came in separate reads.
  await cli.send({ v: 1, type: "key", key: "q" }, { v: 1, type: "snapshot", name: "last" });
  const exit = await cli.until((f) => f.type === "exit", "exit");
  const last = cli.frames.findIndex((f) => f.type === "snapshot" && f.name === "last");
  assert.ok(last >= 0 && last < cli.frames.indexOf(exit), "the last snapshot comes before exit");
  for (const f of cli.frames) {
    assert.ok(validate(f), `${JSON.stringify(f)}: ${JSON.stringify(validate.errors)}`);
  }
  assert.equal(await cli.close(), 0);
}, 30_000);
