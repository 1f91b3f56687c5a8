import assert from "node:assert/strict";
import type { Policy } from "../policy/types.ts";
import { testPolicy } from "../policy/_testing.ts";
import { fdInfo } from "../fsafe/mod.ts";
import { realizePolicy } from "./realize.ts";

const ROOT = Deno.uid() === 0;

function policy(fs: Partial<Policy["fs"]>, exec: string[] = []): Policy {
  return testPolicy({ exec, fs: { read: fs.read ?? [], write: fs.write ?? [] } });
}

/** `chown -h`: the link itself, as a program other than root would own it. */
function lchown(path: string, uid: number): void {
  const out = new Deno.Command("chown", { args: ["-h", `${uid}:${uid}`, path] }).outputSync();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
}

async function withDir(body: (dir: string) => void | Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "specter-realize-" });
  try {
    await body(await Deno.realPath(dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const opts = (cwd: string) => ({ cwd, home: "/home/nobody-here", strictWrite: false });

Deno.test({
  name: "a grant through a symlink a non-root program made is refused, naming the path and the link",
  ignore: !ROOT,
  fn: () =>
    withDir((dir) => {
      Deno.mkdirSync(`${dir}/real`);
      Deno.symlinkSync(`${dir}/real`, `${dir}/link`);
      lchown(`${dir}/link`, 65534);
      for (const fs of [{ write: [`${dir}/link`] }, { read: [`${dir}/link/x`] }]) {
        assert.throws(() => realizePolicy(policy(fs), opts(dir)), (e: unknown) => {
          const error = e as { code: string; message: string; problems: { code: string }[] };
          return error.problems[0]!.code === "E_POLICY_SYMLINK" && error.message.includes(`"${dir}/link`);
        });
      }
      // The link's owner is not all that counts: root's link in a directory others can write is not trusted.
      lchown(`${dir}/link`, 0);
      Deno.chmodSync(dir, 0o777);
      assert.throws(
        () => realizePolicy(policy({ write: [`${dir}/link`] }), opts(dir)),
        /E_POLICY_SYMLINK|symlink/,
      );
    }),
});

Deno.test({
  name:
    "root's links are followed only in system trees (a root caller's sandbox writes root's links elsewhere)",
  ignore: !ROOT,
  fn: () =>
    withDir((dir) => {
      Deno.chmodSync(dir, 0o755);
      Deno.mkdirSync(`${dir}/real`);
      Deno.symlinkSync("real", `${dir}/rel`);
      Deno.symlinkSync("/", `${dir}/slash`);
      // Root-owned, in a root-owned 0755 directory, but outside the system trees: refused.
      for (const link of ["rel", "slash"]) {
        assert.throws(() => realizePolicy(policy({ write: [`${dir}/${link}`] }), opts(dir)), (e: unknown) => {
          const error = e as { code: string; message: string };
          return error.code === "E_POLICY_SYMLINK" && error.message.includes("outside the system trees");
        });
      }
      // The system's own links are followed, and checked again where they land.
      let merged = false;
      try {
        merged = Deno.lstatSync("/bin").isSymlink;
      } catch {
        // No /bin: nothing to follow.
      }
      if (merged) {
        const realized = realizePolicy(policy({}, ["/bin/sh"]), opts(dir));
        try {
          assert.deepEqual(realized.policy.exec, [Deno.realPathSync("/bin/sh")]);
        } finally {
          realized.close();
        }
      }
    }),
});

Deno.test("entries that resolve to one place are opened and bound once", () => {
  let merged = false;
  try {
    merged = Deno.lstatSync("/bin").isSymlink;
  } catch {
    // No /bin: nothing to merge.
  }
  if (!merged) return;
  const realized = realizePolicy(policy({}, ["/usr/bin", "/bin"]), opts("/"));
  try {
    assert.deepEqual(realized.policy.exec, ["/usr/bin"]);
  } finally {
    realized.close();
  }
});

Deno.test("missing read and exec entries stay as written and bind nothing; a missing write grant is refused", () =>
  withDir((dir) => {
    Deno.mkdirSync(`${dir}/out`);
    const realized = realizePolicy(
      policy({ read: [`${dir}/missing`], write: [`${dir}/out`] }, [`${dir}/nope`]),
      opts(dir),
    );
    try {
      assert.deepEqual(realized.policy.fs.read, [`${dir}/missing`]);
      assert.ok(!realized.opened.has(`${dir}/missing`) && !realized.opened.has(`${dir}/nope`));
      assert.ok(realized.opened.has(`${dir}/out`));
    } finally {
      realized.close();
    }
    const missing = (e: unknown) =>
      (e as { problems: { code: string }[] }).problems[0]!.code === "E_POLICY_PATH_MISSING";
    assert.throws(() => realizePolicy(policy({ write: [`${dir}/missing`] }), opts(dir)), missing);
    // Inside a write grant a read-only entry must exist: moved away for the launch and back afterwards,
    // it would be writable.
    Deno.mkdirSync(`${dir}/w`);
    assert.throws(
      () => realizePolicy(policy({ read: [`${dir}/w/data`], write: [`${dir}/w`] }), opts(dir)),
      missing,
    );
  }));

Deno.test("what is opened stays what was checked when the path is swapped for a symlink afterwards", () =>
  withDir((dir) => {
    Deno.mkdirSync(`${dir}/work`);
    const before = Deno.statSync(`${dir}/work`).ino;
    const realized = realizePolicy(policy({ write: [`${dir}/work`] }), opts(dir));
    try {
      // The attacker's move: the granted directory renamed away, a link to / in its place.
      Deno.renameSync(`${dir}/work`, `${dir}/moved`);
      Deno.symlinkSync("/", `${dir}/work`);
      const identity = realized.opened.get(`${dir}/work`)!.info.identity;
      assert.equal(identity, fdInfo(realized.opened.get(`${dir}/work`)!.fd).identity);
      assert.ok(identity.endsWith(`:${before}`), `${identity} is still the checked directory`);
      assert.equal(Deno.statSync(`${dir}/moved`).ino, before);
    } finally {
      realized.close();
    }
  }));

Deno.test("strict-write protects existing names by descriptor and never binds through a planted symlink", () =>
  withDir((dir) => {
    Deno.mkdirSync(`${dir}/.ssh`);
    Deno.writeTextFileSync(`${dir}/real-bashrc`, "");
    Deno.symlinkSync("/etc", `${dir}/.git`);
    Deno.symlinkSync(`${dir}/real-bashrc`, `${dir}/.bashrc`);
    const realized = realizePolicy(policy({ write: [dir] }), { ...opts(dir), strictWrite: true });
    try {
      assert.deepEqual([...realized.protect], [`${dir}/.ssh`]);
      assert.equal(realized.opened.get(`${dir}/.ssh`)!.info.kind, "dir");
      assert.ok(!realized.opened.has(`${dir}/.git`) && !realized.opened.has("/etc"));
    } finally {
      realized.close();
    }
  }));
