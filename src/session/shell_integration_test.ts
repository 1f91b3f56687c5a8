import assert from "node:assert/strict";
import { knownShell, NONCE_FD, shellIntegration } from "./shell_integration.ts";

const NONCE = "0123456789abcdef";

Deno.test("knownShell: an interactive bash or zsh, by name, with options only", () => {
  const cases: [string, string[], string | null][] = [
    ["/usr/bin/bash", [], "bash"],
    ["/bin/bash", ["-i"], "bash"],
    ["/usr/bin/zsh", ["--login"], "zsh"],
    ["/usr/bin/bash", ["-c", "ls"], null],
    ["/usr/bin/bash", ["script.sh"], null],
    ["/usr/bin/zsh", ["-"], null],
    ["/usr/bin/bash", ["--", "x"], null],
    ["/usr/bin/sh", [], null],
    ["/usr/bin/fish", [], null],
    ["/opt/bashful", [], null],
  ];
  for (const [program, args, want] of cases) {
    assert.equal(knownShell(program, args), want, `${program} ${args}`);
  }
});

Deno.test("bash: an init file that runs the rc files first, then marks carrying the nonce", () => {
  const it = shellIntegration("bash", ["-i"], {}, "/run/specter/shell", NONCE)!;
  assert.deepEqual(it.args, ["--init-file", "/run/specter/shell/bash_init", "-i"]);
  assert.deepEqual(it.env, {});
  assert.equal(it.nonce, NONCE);
  const init = it.files[0]!.content;
  assert.equal(it.files[0]!.name, "bash_init");
  const rc = init.indexOf(". ~/.bashrc");
  assert.ok(init.indexOf(". /etc/bash.bashrc") < rc && rc < init.indexOf("PROMPT_COMMAND="));
  // The nonce is in no file: the shell reads it first of all from its descriptor, which it then closes.
  assert.ok(!init.includes(NONCE));
  const read = init.indexOf(`read -r __specter_nonce <&${NONCE_FD}; exec ${NONCE_FD}<&-;`);
  assert.ok(read > 0 && read < init.indexOf(". /etc/bash.bashrc"), init);
  assert.ok(init.includes("133;C;specter=%s") && init.includes("133;D;%s;specter=%s"));
  // Marks only to a terminal (not into a file a redirected shell writes); no trace of their making.
  assert.ok(init.includes("if [[ -t 1 ]]; then printf") && init.includes("set +x"), init);
  assert.doesNotMatch(init, /^\s*(export|declare -x|typeset -x)\b/m, "the nonce is never exported");
});

Deno.test("bash: a login shell, --norc or --rcfile, or no directory, gets its marks through the environment", () => {
  for (const args of [["-l"], ["-il"], ["-li"], ["--login"], ["--norc"], ["--rcfile", "x"], ["--posix"]]) {
    const it = shellIntegration("bash", args, {}, "/run/specter/shell", NONCE)!;
    assert.deepEqual(it.args, args);
    assert.deepEqual(it.files, []);
    assert.ok(!JSON.stringify(it.env).includes(NONCE), "the nonce is in no variable");
    assert.ok(it.env.PROMPT_COMMAND?.includes(`read -r __specter_nonce <&${NONCE_FD}`), String(args));
    assert.equal(it.env.PS0, "${__specter_c-}", String(args));
    assert.ok(it.env.PROMPT_COMMAND?.includes("set +x") && it.env.PROMPT_COMMAND.includes("[[ -t 1 ]]"));
  }
  assert.deepEqual(shellIntegration("bash", [], {}, null, NONCE)!.files, []);
});

Deno.test("zsh: ZDOTDIR points at the integration, the user's own travels beside it", () => {
  const it = shellIntegration("zsh", [], { ZDOTDIR: "/home/me/.config/zsh" }, "/run/specter/shell", NONCE)!;
  assert.deepEqual(it.env, { ZDOTDIR: "/run/specter/shell", SPECTER_USER_ZDOTDIR: "/home/me/.config/zsh" });
  assert.deepEqual(it.args, []);
  assert.equal(it.files[0]!.name, ".zshenv");
  const zshenv = it.files[0]!.content;
  assert.ok(!zshenv.includes(NONCE) && zshenv.includes("133;D;%s;specter=%s"));
  const read = zshenv.indexOf(`read -r __specter_nonce <&${NONCE_FD};`);
  assert.ok(read > 0 && read < zshenv.indexOf("source "), zshenv);
  assert.equal(shellIntegration("zsh", [], {}, "/d", NONCE)!.env.SPECTER_USER_ZDOTDIR, "");
});

Deno.test("zsh: no startup files (-f) or no directory: no integration", () => {
  assert.equal(shellIntegration("zsh", ["-f"], {}, "/d", NONCE), null);
  assert.equal(shellIntegration("zsh", [], {}, null, NONCE), null);
});

Deno.test("a nonce that could break out of the files is refused", () => {
  for (const nonce of ["short", "abc'def0123", "abcdefgh\n123", "a".repeat(65)]) {
    assert.throws(() => shellIntegration("bash", [], {}, "/d", nonce));
  }
});
