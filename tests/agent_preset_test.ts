/**
 * `specter agent` with no `--policy`: the `agent` preset, through the real CLI and real sandboxes. An
 * agent's shell strings run the system's programs in a real git repository, a `#!` script runs, every
 * secret is unreadable (each entry of `SECRET_PATHS`, created in a temporary home), nothing outside `/tmp`
 * is writable, `/tmp` is private, there is no network; `--policy workspace --ack-unsafe-write` writes the
 * workspace (as root too); `workdir` is honoured or refused; `shell` and `login` run real shells; a
 * failure the policy causes carries a one-line `policy_hint`.
 */
import assert from "node:assert/strict";
import { CliProcess } from "./_helpers.ts";
import { SECRET_PATHS } from "../src/sandbox/mod.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };

interface Result {
  output: string;
  exit_code?: number;
  shell?: string;
  policy_hint?: string;
  [key: string]: unknown;
}
interface Answer {
  id: number;
  result?: Result;
  error?: { message: string; data?: { code?: string; reason?: string } };
}

/** Runs `specter agent ARGS` with `env`, sends each request (ids 1…), and returns the answers by id. */
async function agent(
  args: string[],
  env: Record<string, string>,
  calls: { method?: string; params: Record<string, unknown> }[],
): Promise<Map<number, Answer>> {
  const cli = new CliProcess(["agent", ...args], env);
  // One at a time: each answer is awaited before the next call, as an agent does.
  for (const [i, call] of calls.entries()) {
    await cli.send({ jsonrpc: "2.0", id: i + 1, method: call.method ?? "exec_command", params: call.params });
    await cli.waitForStdout(`"id":${i + 1},`);
  }
  await cli.closeStdin();
  const { code, stdout, stderr } = await cli.result();
  assert.equal(code, 0, stderr);
  const answers = new Map<number, Answer>();
  for (const line of new TextDecoder().decode(stdout).split("\n")) {
    if (line === "") continue;
    const message = JSON.parse(line) as Answer;
    if (typeof message.id === "number") answers.set(message.id, message);
  }
  return answers;
}

function result(answers: Map<number, Answer>, id: number): Result {
  const answer = answers.get(id);
  assert.ok(answer?.result !== undefined, `call ${id}: ${JSON.stringify(answer)}`);
  return answer.result;
}

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args],
    cwd,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
}

/** A temporary home with a git project in it: `{ root, home, proj }`, removed by `fn`'s end. */
async function withProject(fn: (dirs: { root: string; home: string; proj: string }) => Promise<void>) {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "specter-agent-preset-" }));
  const home = `${root}/home`;
  const proj = `${home}/proj`;
  try {
    await Deno.mkdir(proj, { recursive: true });
    await Deno.writeTextFile(`${proj}/notes.txt`, "alpha\nbeta\ngamma beta\n");
    await Deno.writeTextFile(`${proj}/hello.c`, '#include <stdio.h>\nint main(void) { puts("built"); }\n');
    await Deno.writeTextFile(`${proj}/run.sh`, '#!/bin/sh\necho "script ran in $(pwd)"\n');
    await Deno.chmod(`${proj}/run.sh`, 0o755);
    await git(proj, "init", "-q");
    await git(proj, "add", "notes.txt", "run.sh", "hello.c");
    await git(proj, "commit", "-q", "-m", "first commit");
    await Deno.writeTextFile(`${proj}/untracked.txt`, "new\n");
    await fn({ root, home, proj });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test({
  name: "agent preset: with no --policy, shell strings run ls, wc, grep, git status and git log in the " +
    "working directory, a #! script runs, and cc builds into /tmp",
  ...sanitize,
  async fn() {
    await withProject(async ({ home, proj }) => {
      const answers = await agent(["--cwd", proj], { HOME: home }, [
        { params: { cmd: "ls" } },
        { params: { cmd: "wc -l notes.txt" } },
        { params: { cmd: "grep -c beta notes.txt" } },
        { params: { cmd: "git status --short" } },
        { params: { cmd: "git log --oneline" } },
        { params: { cmd: "pwd" } },
        { params: { cmd: "./run.sh" } },
        { params: { cmd: ["./run.sh"] } },
        // An ordinary build: the compiler reads the workspace and the system headers, writes to /tmp.
        { params: { cmd: "cc hello.c -o /tmp/hello && /tmp/hello" } },
      ]);
      assert.deepEqual(result(answers, 1).output.split(/\s+/).filter(Boolean).sort(), [
        "hello.c",
        "notes.txt",
        "run.sh",
        "untracked.txt",
      ]);
      assert.equal(result(answers, 2).output, "3 notes.txt\n");
      assert.equal(result(answers, 3).output, "2\n");
      assert.equal(result(answers, 4).output, "?? untracked.txt\n");
      assert.match(result(answers, 5).output, /^[0-9a-f]{7,} (?:\(HEAD -> \w+\) )?first commit\n$/);
      assert.equal(result(answers, 6).output, `${proj}\n`);
      assert.equal(result(answers, 7).output, `script ran in ${proj}\n`);
      assert.equal(result(answers, 8).output, `script ran in ${proj}\n`);
      assert.equal(result(answers, 9).output, "built\n");
      for (let id = 1; id <= 9; id++) assert.equal(result(answers, id).exit_code, 0, `call ${id}`);
    });
  },
});

/** Creates `path` as a directory holding a `secret` file, or as a file, each holding `marker`. */
async function plant(path: string, marker: string): Promise<"dir" | "file"> {
  const isFile = /\.(json|toml)$|credentials$|_key$|token$|netrc$|npmrc$|pypirc$|pgpass$|my\.cnf$/.test(path);
  await Deno.mkdir(isFile ? path.slice(0, path.lastIndexOf("/")) : path, { recursive: true });
  if (isFile) await Deno.writeTextFile(path, marker);
  else await Deno.writeTextFile(`${path}/secret`, marker);
  return isFile ? "file" : "dir";
}

/** The command that reads `path` (a file, or a directory's listing and its `secret`). */
function readCmd(path: string, kind: "dir" | "file"): string {
  return kind === "file" ? `cat '${path}'` : `ls -A '${path}'; cat '${path}/secret'`;
}

const HOME_SECRETS = SECRET_PATHS.filter((s) => s.path.startsWith("~/")).map((s) => s.path);

/**
 * One shell command that reads every path (one sandbox start instead of one each: each costs the preset's
 * binds), and the per-path output and status it printed. The markers carry a random tag, which no secret
 * holds.
 */
function readAll(paths: { path: string; kind: "dir" | "file" }[]): {
  cmd: string;
  split(output: string): { output: string; status: number }[];
} {
  const tag = crypto.randomUUID().slice(0, 8);
  const cmd = paths.map(({ path, kind }, i) =>
    `echo "<${tag} ${i}>"; { ${readCmd(path, kind)}; } 2>&1; echo "<${tag} status $?>"`
  ).join("; ");
  return {
    cmd,
    split(output) {
      return paths.map((_, i) => {
        const at = output.indexOf(`<${tag} ${i}>\n`);
        assert.ok(at >= 0, `no output for entry ${i}`);
        const rest = output.slice(at + `<${tag} ${i}>\n`.length);
        const end = rest.search(new RegExp(`<${tag} status (\\d+)>`));
        assert.ok(end >= 0, `no status for entry ${i}`);
        return { output: rest.slice(0, end), status: Number(/status (\d+)/.exec(rest.slice(end))![1]) };
      });
    },
  };
}

Deno.test({
  name: "agent preset: every ~/ secret of the caller's home is unreadable",
  ...sanitize,
  async fn() {
    await withProject(async ({ home, proj }) => {
      const kinds: ("dir" | "file")[] = [];
      for (const [i, entry] of HOME_SECRETS.entries()) {
        kinds.push(await plant(`${home}${entry.slice(1)}`, `SECRET-${i}`));
      }
      const reads = readAll(
        HOME_SECRETS.map((entry, i) => ({ path: `${home}${entry.slice(1)}`, kind: kinds[i]! })),
      );
      const answers = await agent(["--cwd", proj], { HOME: home }, [
        { params: { cmd: reads.cmd, token_mode: "raw", max_output_tokens: 100_000, yield_time_ms: 30_000 } },
      ]);
      for (const [i, r] of reads.split(result(answers, 1).output.replaceAll("\r\n", "\n")).entries()) {
        const entry = HOME_SECRETS[i]!;
        assert.doesNotMatch(r.output, new RegExp(`SECRET-${i}\\b`), entry);
        assert.notEqual(r.status, 0, `${entry}: ${r.output}`);
      }
    });
  },
});

Deno.test({
  name: "agent preset: in another user's home as working directory, every ~/ secret and *credential* file " +
    "is covered (empty directory or unreadable file) while the rest of the home is readable",
  ...sanitize,
  ignore: Deno.uid() !== 0, // Needs a directory in /home, which only root may make.
  async fn() {
    await withProject(async ({ home }) => {
      const other = await Deno.makeTempDir({ dir: "/home", prefix: "specter-test-" });
      try {
        const kinds: ("dir" | "file")[] = [];
        for (const [i, entry] of HOME_SECRETS.entries()) {
          kinds.push(await plant(`${other}${entry.slice(1)}`, `SECRET-${i}`));
        }
        await Deno.writeTextFile(`${other}/service-credentials.json`, "SECRET-NAMED");
        await Deno.writeTextFile(`${other}/readme.txt`, "visible\n");
        const reads = readAll(
          HOME_SECRETS.map((entry, i) => ({ path: `${other}${entry.slice(1)}`, kind: kinds[i]! })),
        );
        const answers = await agent(["--cwd", other], { HOME: home }, [
          {
            params: { cmd: reads.cmd, token_mode: "raw", max_output_tokens: 100_000, yield_time_ms: 30_000 },
          },
          { params: { cmd: `cat '${other}/service-credentials.json'` } },
          { params: { cmd: "cat readme.txt" } },
        ]);
        for (const [i, r] of reads.split(result(answers, 1).output.replaceAll("\r\n", "\n")).entries()) {
          const entry = HOME_SECRETS[i]!;
          assert.doesNotMatch(r.output, new RegExp(`SECRET-${i}\\b`), entry);
          assert.notEqual(r.status, 0, `${entry}: ${r.output}`);
          // Covered, not merely missing: a file is there but cannot be opened, a directory is empty.
          if (kinds[i] === "file") assert.match(r.output, /Permission denied/, entry);
          else assert.match(r.output, /secret: No such file or directory/, entry);
        }
        const named = result(answers, 2);
        assert.doesNotMatch(named.output, /SECRET-NAMED/);
        assert.match(named.output, /Permission denied/);
        assert.equal(result(answers, 3).output, "visible\n");
      } finally {
        await Deno.remove(other, { recursive: true });
      }
    });
  },
});

Deno.test({
  name: "agent preset: /etc secrets, /root and other users' homes are unreadable",
  ...sanitize,
  async fn() {
    await withProject(async ({ home, proj }) => {
      const etc = SECRET_PATHS.filter((s) => s.path.startsWith("/etc/")).map((s) => s.path);
      const present = etc.filter((path) => {
        try {
          Deno.lstatSync(path);
          return true;
        } catch {
          return false;
        }
      });
      assert.ok(present.includes("/etc/shadow"), "this host has /etc/shadow");
      let rootNames: string[] = [];
      try {
        rootNames = [...Deno.readDirSync("/root")].map((e) => e.name);
      } catch {
        // Not root: /root is unreadable on the host too; the sandbox must still not list it.
      }
      const answers = await agent(["--cwd", proj], { HOME: home }, [
        ...etc.map((path) => ({ params: { cmd: `ls -d '${path}' && cat '${path}'` } })),
        { params: { cmd: "ls -A /root" } },
        { params: { cmd: "ls -A /home" } },
      ]);
      for (const [i, path] of etc.entries()) {
        const r = result(answers, i + 1);
        assert.notEqual(r.exit_code, 0, `${path}: ${r.output}`);
        assert.match(r.output, /No such file or directory/, path);
      }
      const root = result(answers, etc.length + 1).output;
      for (const name of rootNames) assert.ok(!root.split(/\s+/).includes(name), `/root/${name} is listed`);
      const homes = result(answers, etc.length + 2).output.split(/\s+/).filter(Boolean);
      const hostHomes = [...Deno.readDirSync("/home")].map((e) => e.name);
      for (const name of hostHomes) assert.ok(!homes.includes(name), `/home/${name} is listed`);
    });
  },
});

Deno.test({
  name: "agent preset: nothing outside /tmp is writable, /tmp is private to the session, no network",
  ...sanitize,
  async fn() {
    await withProject(async ({ home, proj }) => {
      const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = (listener.addr as Deno.NetAddr).port;
      let accepted = 0;
      const accepting = (async () => {
        for await (const conn of listener) {
          accepted++;
          conn.close();
        }
      })();
      const marker = `specter-private-${crypto.randomUUID()}`;
      try {
        const answers = await agent(["--cwd", proj], { HOME: home }, [
          { params: { cmd: "echo x > new.txt" } },
          { params: { cmd: `echo x > '${home}/x'` } },
          { params: { cmd: "touch /usr/x /etc/x /x" } },
          { params: { cmd: `echo private > /tmp/${marker} && cat /tmp/${marker}` } },
          { params: { cmd: `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected` } },
        ]);
        assert.notEqual(result(answers, 1).exit_code, 0);
        assert.match(result(answers, 1).output, /Read-only file system/);
        // The home is not shown: a write to its path lands in the session's own /tmp at most, never on the host.
        assert.notEqual(result(answers, 3).exit_code, 0);
        assert.equal(result(answers, 4).output, "private\n");
        assert.notEqual(result(answers, 5).exit_code, 0);
        assert.doesNotMatch(result(answers, 5).output, /connected/);
        await assert.rejects(Deno.stat(`${proj}/new.txt`));
        await assert.rejects(Deno.stat(`${home}/x`));
        await assert.rejects(Deno.stat(`/tmp/${marker}`)); // The session's /tmp is its own.
        assert.equal(accepted, 0);
      } finally {
        listener.close();
        await accepting.catch(() => {});
      }
    });
  },
});

Deno.test({
  name: "agent: --policy workspace --ack-unsafe-write writes the workspace (as the caller, also as root)",
  ...sanitize,
  async fn() {
    await withProject(async ({ home, proj }) => {
      const answers = await agent(["--cwd", proj, "--policy", "workspace", "--ack-unsafe-write"], {
        HOME: home,
      }, [
        { params: { cmd: "echo written > out.txt && git status --short" } },
      ]);
      assert.equal(result(answers, 1).exit_code, 0, result(answers, 1).output);
      assert.equal(await Deno.readTextFile(`${proj}/out.txt`), "written\n");
      assert.equal((await Deno.stat(`${proj}/out.txt`)).uid, Deno.uid()); // Root's file when root runs it.
      // Without the acknowledgement the policy is refused before anything runs.
      const cli = new CliProcess(["agent", "--cwd", proj, "--policy", "workspace"], { HOME: home });
      await cli.closeStdin();
      const refused = await cli.result();
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /E_POLICY_WRITE_ACK/);
    });
  },
});

Deno.test({
  name: "agent: workdir is honoured (relative to the server's), or refused with E_SPAWN_CWD, never replaced",
  ...sanitize,
  async fn() {
    await withProject(async ({ root, home, proj }) => {
      await Deno.mkdir(`${proj}/sub`);
      await Deno.mkdir(`${root}/outside`);
      const answers = await agent(["--cwd", proj], { HOME: home }, [
        { params: { cmd: "pwd", workdir: "sub" } },
        { params: { cmd: "pwd", workdir: `${root}/outside` } },
        { params: { cmd: "pwd", workdir: "nope" } },
        { params: { cmd: "pwd", workdir: "notes.txt" } },
        { method: "list_sessions", params: {} },
      ]);
      assert.equal(result(answers, 1).output, `${proj}/sub\n`);
      for (const [id, reason] of [[2, "hidden"], [3, "missing"], [4, "not_directory"]] as const) {
        const error = answers.get(id)?.error;
        assert.equal(error?.data?.code, "E_SPAWN_CWD", `call ${id}`);
        assert.equal(error?.data?.reason, reason, `call ${id}`);
      }
      const sessions = (answers.get(5)?.result as unknown as { sessions: { cwd: string }[] }).sessions;
      assert.deepEqual(sessions.map((s) => s.cwd), [`${proj}/sub`]);
    });
  },
});

Deno.test({
  name: "agent: shell and login run a string cmd in bash, sh or zsh, as a login shell when asked",
  ...sanitize,
  async fn() {
    await withProject(async ({ home, proj }) => {
      // A home the sandbox shows (inside the workspace), whose profiles say who read them.
      const fake = `${proj}/fakehome`;
      await Deno.mkdir(fake);
      await Deno.writeTextFile(`${fake}/.bash_profile`, "echo READ-BASH-PROFILE\n");
      await Deno.writeTextFile(`${fake}/.profile`, "echo READ-PROFILE\n");
      await Deno.writeTextFile(`${fake}/.zprofile`, "echo READ-ZPROFILE\n");
      const env = { HOME: fake };
      const answers = await agent(["--cwd", proj], { HOME: home }, [
        { params: { cmd: "echo $0", env } },
        { params: { cmd: "shopt -q login_shell && echo LOGIN", shell: "bash", login: true, env } },
        { params: { cmd: "echo ran", shell: "sh", login: true, env } },
        { params: { cmd: "echo ran", shell: "sh", env } },
        {
          params: { cmd: "[[ -o login ]] && echo LOGIN; echo $ZSH_VERSION", shell: "zsh", login: true, env },
        },
        { params: { cmd: "[[ -o login ]] || echo NOT-LOGIN", shell: "/usr/bin/zsh", login: false, env } },
        { params: { cmd: ["echo", "x"], shell: "zsh" } },
      ]);
      assert.equal(result(answers, 1).output, "/bin/bash\n");
      assert.equal(result(answers, 1).shell, "/bin/bash");
      assert.equal(result(answers, 2).output, "READ-BASH-PROFILE\nLOGIN\n");
      assert.equal(result(answers, 3).output, "READ-PROFILE\nran\n");
      assert.equal(result(answers, 3).shell, "sh");
      assert.equal(result(answers, 4).output, "ran\n");
      assert.match(result(answers, 5).output, /^READ-ZPROFILE\nLOGIN\n\d+\.\d+/);
      assert.equal(result(answers, 6).output, "NOT-LOGIN\n");
      assert.equal(answers.get(7)?.error?.data?.code, "E_USAGE");
    });
  },
});

Deno.test({
  name: "agent: a failure the policy causes carries one policy_hint line naming the policy and the flag",
  ...sanitize,
  async fn() {
    await withProject(async ({ root, home, proj }) => {
      await Deno.mkdir(`${root}/outside`);
      await Deno.writeTextFile(`${root}/outside/data.txt`, "host data\n");
      const answers = await agent(["--cwd", proj], { HOME: home }, [
        { params: { cmd: "echo x > notes.txt" } },
        { params: { cmd: "cat /etc/shadow" } },
        { params: { cmd: `cat '${root}/outside/data.txt'` } },
        { params: { cmd: "cat no-such-file.txt" } },
        { params: { cmd: "grep -c beta notes.txt" } },
        { params: { cmd: "exec 3<>/dev/tcp/192.0.2.1/80" } },
      ]);
      assert.equal(
        result(answers, 1).policy_hint,
        `[specter: "${proj}/notes.txt" is read-only under policy "agent"; writes go to /tmp (private to the ` +
          "session); --policy workspace --ack-unsafe-write makes the working directory writable]",
      );
      assert.match(
        result(answers, 2).policy_hint ?? "",
        /^\[specter: "\/etc\/shadow" holds secrets and is hidden by policy "agent"; .*--policy FILE/,
      );
      assert.equal(
        result(answers, 3).policy_hint,
        `[specter: "${root}/outside/data.txt" is hidden by policy "agent" (the sandbox's /tmp is its own); ` +
          "--policy FILE with fs.read " +
          `${JSON.stringify([`${root}/outside/data.txt`])} would show it]`,
      );
      assert.equal(result(answers, 4).policy_hint, undefined); // Missing everywhere: not the policy.
      assert.equal(result(answers, 5).policy_hint, undefined); // Succeeded.
      assert.match(result(answers, 6).output, /Network is unreachable/);
      assert.equal(
        result(answers, 6).policy_hint,
        '[specter: there is no network under policy "agent"; a --policy FILE with network "on" (and ' +
          "--ack-network) allows it]",
      );
      for (const id of [1, 2, 3]) assert.ok(!result(answers, id).policy_hint!.includes("\n"));
      const strict = await agent(["--cwd", proj, "--policy", "strict"], { HOME: home }, [
        { params: { cmd: "ls" } },
        { params: { cmd: ["./run.sh"] } },
        // An ordinary build: the compiler reads the workspace and the system headers, writes to /tmp.
        { params: { cmd: "cc hello.c -o /tmp/hello && /tmp/hello" } },
      ]);
      assert.match(
        result(strict, 1).policy_hint ?? "",
        /^\[specter: "ls" \(\/usr\/bin\/ls\) is not visible under policy "strict"; --policy agent/,
      );
      // A script whose interpreter the policy hides: a typed error naming it (was a bare execvp error).
      assert.equal(strict.get(2)?.error?.data?.code, "E_SPAWN_NOT_EXECUTABLE");
      assert.match(
        strict.get(2)?.error?.message ?? "",
        /script for "\/bin\/sh", which policy "strict" does not show/,
      );
    });
  },
});
