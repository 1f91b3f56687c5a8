/**
 * The sandboxed program leads its terminal's session (`setsid --ctty` inside bwrap): what that gives it and
 * what it must not. It may run job control within its own session; it must not move the terminal's
 * foreground to a group outside it, steal the terminal from a session that holds it, push input (TIOCSTI)
 * or reach the sandbox's init. And a ctrl-c that the terminal did not turn into a signal (raw mode) must
 * not make the program's own exit status read as a death by SIGINT.
 */
import assert from "node:assert/strict";
import { sessionTest } from "../_helpers.ts";
import { Transcript } from "../../src/mod.ts";
import { spawn } from "../../src/session/spawn_session.ts";
import { ERRNO, preset, PYTHON, results } from "./_sandbox.ts";

function sandboxed(argv: string[]): Transcript {
  return new Transcript(spawn({
    argv,
    idleMs: 0,
    timeoutMs: 30_000,
    sandbox: { mode: "bwrap", policy: preset("basic") },
  }));
}

/** Terminal and signal attacks from the session leader; each prints `RESULT name errno-or-ok`. */
const ATTACKS = `
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
TIOCSPGRP, TIOCSCTTY, TIOCSTI, TIOCNOTTY, TIOCCONS, TIOCVHANGUP = 0x5410, 0x540E, 0x5412, 0x5422, 0x541D, 0x5437
def call(fn):
    ctypes.set_errno(0)
    return 'ok' if fn() >= 0 else str(ctypes.get_errno())
def say(name, value): print('RESULT', name, value, flush=True)
def pgrp_arg(n): return ctypes.byref(ctypes.c_int(n))
stat = open('/proc/self/stat').read().rsplit(')', 1)[1].split()
say('leader', 'ok' if int(stat[3]) == os.getpid() and int(stat[5]) == os.getpid() else 'no')
# The sandbox's init is pid 1 (its process group is bwrap's, outside); 0 and unused numbers name none.
for target in (1, 0, 99999):
    say('tiocspgrp_%d' % target, call(lambda: libc.ioctl(0, TIOCSPGRP, pgrp_arg(target))))
say('tiocsti', call(lambda: libc.ioctl(0, TIOCSTI, b'x')))
say('tioccons', call(lambda: libc.ioctl(0, TIOCCONS, 0)))
say('tiocvhangup', call(lambda: libc.ioctl(0, TIOCVHANGUP, 0)))
# A child in a session of its own tries to take the terminal from ours (arg 1: steal, CAP_SYS_ADMIN only).
pid = os.fork()
if pid == 0:
    os.setsid()
    say('steal', call(lambda: libc.ioctl(0, TIOCSCTTY, 1)))
    os._exit(0)
os.waitpid(pid, 0)
# Job control inside its own session still works: a child group made the foreground and back.
child = os.fork()
if child == 0:
    time.sleep(5)
    os._exit(0)
os.setpgid(child, child)
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
say('fg_own_group', call(lambda: libc.ioctl(0, TIOCSPGRP, pgrp_arg(child))))
say('fg_back', call(lambda: libc.ioctl(0, TIOCSPGRP, pgrp_arg(os.getpid()))))
os.kill(child, signal.SIGKILL); os.waitpid(child, 0)
# Signals at the sandbox's init are dropped by the kernel (no handler): the session goes on.
os.kill(1, signal.SIGKILL)
# Giving the terminal up (TIOCNOTTY) hangs up only our own foreground group (us), then it is taken back.
signal.signal(signal.SIGHUP, signal.SIG_IGN)
say('notty', call(lambda: libc.ioctl(0, TIOCNOTTY, 0)))
say('retake', call(lambda: libc.ioctl(0, TIOCSCTTY, 0)))
print('STILL-HERE', flush=True)
sys.exit(7)
`;

sessionTest("sandbox: the session leader cannot reach outside its session through the terminal", async () => {
  const r = sandboxed([PYTHON, "-c", ATTACKS]);
  const exit = await r.exit(20_000);
  const got = results(r.text);
  assert.equal(got.leader, "ok", r.text);
  // Not in our session (init's group), or no such group: never the foreground.
  assert.equal(got.tiocspgrp_1, ERRNO.EPERM, r.text);
  assert.equal(got.tiocspgrp_0, ERRNO.ESRCH, r.text);
  assert.equal(got.tiocspgrp_99999, ERRNO.ESRCH, r.text);
  assert.equal(got.tiocsti, ERRNO.EPERM, r.text);
  assert.equal(got.tioccons, ERRNO.EPERM, r.text);
  assert.equal(got.tiocvhangup, ERRNO.EPERM, r.text);
  assert.equal(got.steal, ERRNO.EPERM, r.text);
  assert.equal(got.fg_own_group, "ok", r.text);
  assert.equal(got.fg_back, "ok", r.text);
  assert.equal(got.notty, "ok", r.text);
  assert.equal(got.retake, "ok", r.text);
  assert.match(r.text, /STILL-HERE/);
  // The program's own exit, not a launcher's death.
  assert.deepEqual([exit.code, exit.signal], [7, null], JSON.stringify(exit));
});

sessionTest(
  "sandbox: a ctrl-c read as a key in raw mode leaves the program's own exit 130 as code 130",
  async () => {
    // fzf, for one, reads ctrl-c as a key in raw mode and exits 130 itself: no signal was ever raised.
    const r = sandboxed([
      PYTHON,
      "-c",
      "import os, sys, tty\ntty.setraw(0)\nprint('READY', end='\\r\\n', flush=True)\n" +
      "key = os.read(0, 1)\nprint('KEY', key.hex(), end='\\r\\n', flush=True)\nsys.exit(130)",
    ]);
    await r.output("READY", 15_000);
    r.session.press("ctrl-c");
    await r.output("KEY 03", 10_000);
    const exit = await r.exit(10_000);
    // Without a sandbox (and before setsid) this reads code 130; a SIGINT was never sent or generated.
    assert.deepEqual([exit.code, exit.signal], [130, null], JSON.stringify(exit));
  },
);
