/**
 * `waitsForInput` on real programs under a real terminal (python3's pty): a question the prompt patterns do
 * not know (`read -p`, python's `input()`, `bc`, `cat`) is seen as waiting for input from the kernel's view
 * of the process, and a program that sleeps, computes or reads a pipe is not. Through the agent tools, such
 * a question ends `exec_command`'s wait as a prompt, long before its yield time.
 */
import assert from "node:assert/strict";
import { waitsForInput } from "../src/launch/mod.ts";
import { withLoggedTools } from "./_agent_tools.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };

/**
 * Runs `argv` on a terminal of its own (python3's pty.spawn) and asks `waitsForInput` every 100 ms until it
 * says yes or `tries` run out; returns its last answer.
 */
async function probe(argv: string[], tries: number): Promise<boolean> {
  const child = new Deno.Command("python3", {
    args: ["-c", "import pty, sys; pty.spawn(sys.argv[1:])", ...argv],
    stdin: "piped",
    stdout: "null",
  }).spawn();
  try {
    let seen = false;
    for (let i = 0; i < tries && !seen; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = waitsForInput(child.pid);
    }
    return seen;
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
}

Deno.test({
  name: "input wait: read -p, input(), bc and cat wait for their terminal; sleep, a busy loop, a pipe and " +
    "a poll on pipes do not",
  ...sanitize,
  async fn() {
    for (
      const argv of [
        ["bash", "--norc", "-c", "read -p 'Proceed? ' x"],
        ["python3", "-c", "input('name: ')"],
        ["bc", "-q"],
        ["cat"],
      ]
    ) assert.equal(await probe(argv, 50), true, argv.join(" "));
    for (
      const argv of [
        ["sleep", "5"],
        ["sh", "-c", "while :; do :; done"],
        ["sh", "-c", "sleep 5 | cat"],
        ["sh", "-c", "cat < /dev/zero > /dev/null"],
        // poll with no timeout on two pipes, its stdin the terminal (a build tool's wait looks the same).
        ["python3", "-c", "import subprocess; subprocess.run(['sleep', '5'], capture_output=True)"],
      ]
    ) {
      // Asked for 1 s: never seen as waiting for input.
      assert.equal(await probe(argv, 10), false, argv.join(" "));
    }
    assert.equal(waitsForInput(2 ** 22 + 1), false, "no such process");
    assert.equal(waitsForInput(Deno.pid, "/proc", "riscv64"), false, "another architecture: no answer");
  },
});

Deno.test({
  name: "input wait: exec_command returns at a question no pattern knows as a prompt, not at its yield time",
  ...sanitize,
  fn: () =>
    withLoggedTools(async (tools) => {
      for (
        const cmd of [
          "read -p 'Enter value> ' x; echo got-$x",
          "python3 -c \"print('got-' + input('Your name: '))\"",
        ]
      ) {
        const asked = await tools.execCommand({ cmd, yield_time_ms: 20_000 });
        assert.equal(asked.returned_on, "prompt", JSON.stringify(asked));
        assert.equal(asked.running, true);
        const answered = await tools.writeStdin({
          session_id: asked.session_id!,
          chars: "yes\r",
          yield_time_ms: 20_000,
        });
        assert.equal(answered.returned_on, "exit", JSON.stringify(answered));
        assert.match(answered.output, /got-yes/);
      }
      // A program that computes quietly is not waiting: its call ends at its exit.
      const busy = await tools.execCommand({ cmd: "sleep 1.5; echo done", yield_time_ms: 20_000 });
      assert.equal(busy.returned_on, "exit");
    }),
});
