import assert from "node:assert/strict";
import type { Policy } from "../policy/types.ts";
import { testPolicy } from "../policy/_testing.ts";
import { type RealizeFs, realizePolicy } from "./realize.ts";

function policy(fs: Partial<Policy["fs"]>, exec: string[] = []): Policy {
  return testPolicy({ exec, fs: { read: fs.read ?? [], write: fs.write ?? [] } });
}

/** A fake filesystem: `links` maps a path to its resolved target; `files` are plain existing paths. */
function fakeFs(links: Record<string, string>, files: string[] = []): RealizeFs {
  const realPath = (path: string): string | null => {
    for (const [link, target] of Object.entries(links)) {
      if (path === link) return target;
      if (path.startsWith(`${link}/`)) return target + path.slice(link.length);
    }
    return files.some((f) => f === path || f.startsWith(`${path}/`)) ? path : null;
  };
  return {
    realPath,
    isSymlink: (path) => Object.hasOwn(links, path),
    exists: (path) => realPath(path) !== null && files.includes(realPath(path)!),
  };
}

const opts = { cwd: "/w", home: "/home/me", strictWrite: false };

Deno.test("a write root that is a symlink to / is refused with both paths named", () => {
  assert.throws(
    () => realizePolicy(policy({ write: ["/w/link"] }), opts, fakeFs({ "/w/link": "/" })),
    (e: unknown) => {
      const error = e as { code: string; message: string; problems: { field: string }[] };
      return error.code === "E_POLICY_BROAD_ROOT" && error.problems[0]!.field === "fs.write[0]" &&
        error.message.includes('"/w/link"') && error.message.includes('"/"');
    },
  );
});

Deno.test("symlinks into forbidden trees are refused for every list", () => {
  const fs = fakeFs({ "/w/run": "/run", "/w/etc": "/etc", "/w/sys": "/sys/fs/cgroup" });
  assert.throws(() => realizePolicy(policy({ write: ["/w/run"] }), opts, fs), {
    code: "E_POLICY_BROAD_ROOT",
  });
  assert.throws(() => realizePolicy(policy({ read: ["/w/etc"] }), opts, fs), { code: "E_POLICY_BROAD_ROOT" });
  assert.throws(() => realizePolicy(policy({}, ["/w/sys"]), opts, fs), { code: "E_POLICY_BROAD_ROOT" });
});

Deno.test("entries that resolve to one place are bound once", () => {
  const fs = fakeFs({ "/bin": "/usr/bin" }, ["/usr/bin"]);
  assert.deepEqual(realizePolicy(policy({}, ["/usr/bin", "/bin"]), opts, fs).policy.exec, ["/usr/bin"]);
});

Deno.test("harmless symlinks are bound at their resolved location; missing paths stay as written", () => {
  const fs = fakeFs({ "/w/data": "/srv/data" }, ["/srv/data", "/w"]);
  const realized = realizePolicy(policy({ read: ["/w/data", "/w/missing"], write: ["/w"] }), opts, fs);
  assert.deepEqual(realized.policy.fs.read, ["/srv/data", "/w/missing"]);
  assert.deepEqual(realized.policy.fs.write, ["/w"]);
});

Deno.test("strict-write protects existing names, never binds through a planted symlink", () => {
  const fs = fakeFs(
    { "/w/.git": "/etc", "/w/.bashrc": "/w/real-bashrc" },
    ["/w", "/w/.ssh", "/w/real-bashrc", "/etc"],
  );
  const realized = realizePolicy(policy({ write: ["/w"] }), { ...opts, strictWrite: true }, fs);
  // .git -> /etc is outside every writable root: nothing to protect, and it is never bound through.
  // .bashrc -> /w/real-bashrc is writable here: its target is protected instead.
  assert.deepEqual([...realized.protect].sort(), ["/w/.ssh", "/w/real-bashrc"]);
  assert.ok(!realized.protect.includes("/w/.git") && !realized.protect.includes("/etc"));
});
