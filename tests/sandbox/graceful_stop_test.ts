/**
 * Graceful stop under bwrap: SIGTERM/SIGINT to Specter and a driver `terminate` reach the program inside
 * the sandbox (never the launcher, whose death would take the sandbox down at once), the grace period is
 * honoured, SIGKILL follows when it runs out, the exit frame says which, and no bwrap is left behind.
 *
 * @module
 */
import assert from "node:assert/strict";
import { CliProcess, sessionTest, withTempDir } from "../_helpers.ts";

const SANDBOX = ["--policy", "workspace", "--ack-unsafe-write"];

/** A process as /proc shows it: pid plus start time, so a reused pid is not mistaken for it. */
interface Tracked {
  readonly pid: number;
  readonly start: string;
  readonly what: string;
}

function statOf(pid: number): string[] | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return [
      stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
      ...stat.slice(stat.lastIndexOf(")") + 2).split(" "),
    ];
  } catch {
    return null; // Reaped.
  }
}

function track(pid: number, what: string): Tracked {
  const stat = statOf(pid);
  if (stat === null) throw new Error(`${what} (${pid}) is not running`);
  return { pid, start: stat[20]!, what }; // [0] comm, [1] state … [20] starttime (field 22).
}

function childrenOf(pid: number): number[] {
  const text = Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim();
  return text === "" ? [] : text.split(" ").map(Number);
}

/** The launcher (Specter's child), the sandbox's init (its child) and the program (the init's child). */
function sandboxTree(launcher: number): Tracked[] {
  const [init] = childrenOf(launcher);
  assert(init !== undefined, "the launcher has a child");
  const [program] = childrenOf(init);
  assert(program !== undefined, "the sandbox's init has a child");
  return [track(launcher, "launcher"), track(init, "sandbox init"), track(program, "program")];
}

/** Fails when one of `tree` still exists: alive, a zombie, or reparented to the host's init. */
function assertReaped(tree: readonly Tracked[]): void {
  for (const { pid, start, what } of tree) {
    const stat = statOf(pid);
    if (stat === null || stat[20] !== start) continue;
    throw new Error(`${what} ${pid} (${stat[0]}) is left behind: state ${stat[1]}, parent ${stat[2]}`);
  }
}

interface Run {
  readonly cli: CliProcess;
  readonly tree: Tracked[];
  readonly dir: string;
}

async function startRun(dir: string, script: string, flags: string[] = []): Promise<Run> {
  await Deno.chmod(dir, 0o777); // The program runs as nobody inside the sandbox.
  const cli = new CliProcess(["run", ...SANDBOX, "--cwd", dir, ...flags, "--", "/bin/sh", "-c", script]);
  await cli.waitForStdout(`"data":"up`);
  return { cli, tree: sandboxTree(launcherPid(cli)), dir };
}

/** Specter's child running bwrap (after setpriv, when root: it keeps the pid). */
function launcherPid(cli: CliProcess): number {
  const launchers = childrenOf(cli.child.pid).filter((pid) => statOf(pid)?.[0] === "bwrap");
  assert(launchers.length === 1, `one bwrap launcher, found ${launchers.length}`);
  return launchers[0]!;
}

async function finish(run: Run): Promise<{ code: number; exit: Record<string, unknown> }> {
  const { code, stdout } = await run.cli.result();
  const frames = new TextDecoder().decode(stdout).split("\n").filter((l) => l.startsWith("{")).map((l) =>
    JSON.parse(l) as Record<string, unknown>
  );
  assert(frames[0]?.type === "start" && frames[0].sandbox === "bwrap", JSON.stringify(frames[0]));
  const exit = frames.at(-1)!;
  assert(exit.type === "exit", JSON.stringify(frames.slice(-3)));
  assertReaped(run.tree);
  return { code, exit };
}

const TRAP_AND_EXIT =
  "trap '' HUP; trap 'echo cleaned > marker; exit 0' TERM; echo up; while :; do sleep 1; done";
const IGNORE = "trap '' HUP TERM INT; echo up; while :; do sleep 1; done";

sessionTest(
  "SIGTERM to specter reaches the sandboxed program: it cleans up and exits within the grace",
  async () => {
    await withTempDir(async (dir) => {
      const run = await startRun(dir, TRAP_AND_EXIT, ["--grace", "20s"]);
      const sent = performance.now();
      run.cli.child.kill("SIGTERM");
      const { code, exit } = await finish(run);
      assert(performance.now() - sent < 10_000, "it ended long before the grace ran out");
      assert(exit.code === 0 && exit.signal === null, JSON.stringify(exit));
      assert(exit.stop === "graceful", JSON.stringify(exit));
      assert(code === 0, `specter exits with the program's code, got ${code}`);
      assert((await Deno.readTextFile(`${dir}/marker`)).trim() === "cleaned", "the TERM trap ran");
    });
  },
);

sessionTest("a sandboxed program that dies of SIGTERM is reported as signal TERM, graceful", async () => {
  await withTempDir(async (dir) => {
    // HUP ignored, TERM default: the program dies of TERM (bwrap turns that into exit 143).
    const run = await startRun(dir, "trap '' HUP; echo up; exec sleep 60", ["--grace", "20s"]);
    run.cli.child.kill("SIGTERM");
    const { code, exit } = await finish(run);
    assert(exit.code === null && exit.signal === "TERM" && exit.stop === "graceful", JSON.stringify(exit));
    assert(code === 143, `got ${code}`);
  });
});

sessionTest(
  "a sandboxed program that ignores SIGTERM is SIGKILLed when the grace runs out, not before",
  async () => {
    await withTempDir(async (dir) => {
      const run = await startRun(dir, IGNORE, ["--grace", "1500ms"]);
      const sent = performance.now();
      run.cli.child.kill("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 1000));
      for (const process of run.tree) {
        assert(statOf(process.pid)?.[1] !== "Z", `${process.what} alive during the grace`);
      }
      const { code, exit } = await finish(run);
      const took = performance.now() - sent;
      assert(took >= 1450, `killed after ${took} ms, before the 1500 ms grace`);
      assert(took < 8000, `killed only after ${took} ms`);
      assert(exit.code === null && exit.signal === "KILL" && exit.stop === "killed", JSON.stringify(exit));
      assert(code === 137, `got ${code}`);
    });
  },
);

sessionTest("a second SIGINT to specter kills the sandboxed program at once", async () => {
  await withTempDir(async (dir) => {
    const run = await startRun(dir, IGNORE, ["--grace", "60s"]);
    const sent = performance.now();
    run.cli.child.kill("SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert(statOf(run.tree[2]!.pid)?.[1] !== "Z", "the program survives the first SIGINT");
    run.cli.child.kill("SIGINT");
    const { exit } = await finish(run);
    assert(performance.now() - sent < 15_000, "the grace was shortened");
    assert(exit.signal === "KILL" && exit.stop === "killed", JSON.stringify(exit));
  });
});

sessionTest("a driver terminate with grace_ms honours that grace inside the sandbox", async () => {
  await withTempDir(async (dir) => {
    const run = await startRun(dir, IGNORE, ["--grace", "60s"]);
    const sent = performance.now();
    await run.cli.send({ v: 1, type: "terminate", grace_ms: 800 });
    const { exit } = await finish(run);
    const took = performance.now() - sent;
    assert(took >= 750 && took < 8000, `killed after ${took} ms for a grace of 800 ms`);
    assert(exit.signal === "KILL" && exit.stop === "killed", JSON.stringify(exit));
  });
});

sessionTest("a driver terminate lets a sandboxed program that traps TERM clean up", async () => {
  await withTempDir(async (dir) => {
    const run = await startRun(dir, TRAP_AND_EXIT, ["--grace", "60s"]);
    await run.cli.send({ v: 1, type: "terminate", grace_ms: 20_000 });
    const { exit } = await finish(run);
    assert(exit.code === 0 && exit.stop === "graceful", JSON.stringify(exit));
    assert((await Deno.readTextFile(`${dir}/marker`)).trim() === "cleaned", "the TERM trap ran");
  });
});

sessionTest("a driver signal reaches the sandboxed program, not its launcher", async () => {
  await withTempDir(async (dir) => {
    const run = await startRun(dir, "trap 'echo got; exit 3' TERM; echo up; while :; do sleep 1; done");
    await run.cli.send({ v: 1, type: "signal", signal: "TERM" });
    await run.cli.send({ v: 1, type: "signal", signal: "TERM" }); // The shell waits for sleep first.
    const { code, exit } = await finish(run);
    assert(exit.code === 3 && exit.signal === null && exit.stop === undefined, JSON.stringify(exit));
    assert(code === 3, `got ${code}`);
  });
});

sessionTest("a sandboxed program that exits by itself leaves no bwrap behind", async () => {
  await withTempDir(async (dir) => {
    const run = await startRun(dir, "echo up; sleep 1; exit 5");
    const { code, exit } = await finish(run); // finish() fails if the launcher or init is left over.
    assert(exit.code === 5 && exit.signal === null && exit.stop === undefined, JSON.stringify(exit));
    assert(code === 5, `got ${code}`);
  });
});

sessionTest(
  "--timeout under bwrap: the grace is honoured, then SIGKILL; exit says timed out and killed",
  async () => {
    await withTempDir(async (dir) => {
      const run = await startRun(dir, IGNORE, ["--timeout", "1500ms", "--grace", "1s"]);
      const { code, exit } = await finish(run);
      assert(
        exit.timed_out === true && exit.signal === "KILL" && exit.stop === "killed",
        JSON.stringify(exit),
      );
      assert(Number(exit.duration_ms) >= 2400, `ended after ${exit.duration_ms} ms: before timeout + grace`);
      assert(code === 124, `got ${code}`);
    });
  },
);
