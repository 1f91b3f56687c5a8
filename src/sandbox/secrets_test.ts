import assert from "node:assert/strict";
import {
  coverSecrets,
  CREDENTIAL_NAME,
  SECRET_PATHS,
  type SecretFs,
  secretHomes,
  secretMasks,
} from "./secrets.ts";
import type { Policy } from "../policy/mod.ts";

/** A fake file system: `dirs` and `files` exist (with their parents as directories), `links` map a link to its target. */
function fakeFs(files: string[], dirs: string[] = [], links: Record<string, string> = {}): SecretFs {
  const allDirs = new Set(dirs);
  for (const path of [...files, ...dirs, ...Object.keys(links)]) {
    for (let at = path.lastIndexOf("/"); at > 0; at = path.lastIndexOf("/", at - 1)) {
      allDirs.add(path.slice(0, at));
    }
  }
  return {
    kind: (path) =>
      path in links ? "symlink" : allDirs.has(path) ? "dir" : files.includes(path) ? "file" : null,
    realPath: (path) => links[path] ?? (allDirs.has(path) || files.includes(path) ? path : null),
    names: (dir) =>
      [...new Set([...allDirs, ...files, ...Object.keys(links)])]
        .filter((p) => p.startsWith(`${dir}/`) && !p.slice(dir.length + 1).includes("/"))
        .map((p) => p.slice(dir.length + 1)),
  };
}

const HOME = "/home/me";

function concrete(path: string): string {
  return path.startsWith("~/") ? `${HOME}${path.slice(1)}` : path;
}

function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

for (const { path: entry } of SECRET_PATHS) {
  Deno.test(`secret ${entry}: covered where a grant only contains it, shown where a grant names it`, () => {
    const path = concrete(entry);
    const isDir =
      !/\.(json|toml)$|credentials$|shadow-?$|gshadow-?$|sudoers$|_key$|opasswd$|keytab$|token$|netrc$|npmrc$|pypirc$|pgpass$|my\.cnf$/
        .test(path);
    const fs = isDir ? fakeFs([], [path]) : fakeFs([path]);
    const homes = secretHomes(HOME, fs);
    // A grant of its parent (a working directory above it) shows it: it is covered.
    const masks = secretMasks([parentOf(path)], homes, fs);
    assert.deepEqual(isDir ? masks.dirs : masks.files, [path]);
    assert.deepEqual(isDir ? masks.files : masks.dirs, []);
    // Not visible at all: nothing to cover.
    assert.deepEqual(secretMasks(["/srv/elsewhere"], homes, fs), { dirs: [], files: [] });
    // Named by a grant (itself, or a path inside it): explicit, shown.
    assert.deepEqual(secretMasks([parentOf(path), path], homes, fs), { dirs: [], files: [] });
    // Absent on the host: nothing to mount over.
    assert.deepEqual(secretMasks([parentOf(path)], homes, fakeFs([])), { dirs: [], files: [] });
  });
}

Deno.test("secrets: ~/ entries are taken in every home (the caller's, /root, each one in /home)", () => {
  const fs = fakeFs([], ["/home/me/.ssh", "/home/bob/.ssh", "/root/.ssh"]);
  assert.deepEqual(secretHomes(HOME, fs).sort(), ["/home/bob", "/home/me", "/root"]);
  const masks = secretMasks(["/home/bob", "/root/proj"], secretHomes(HOME, fs), fs);
  assert.deepEqual(masks.dirs, ["/home/bob/.ssh"]);
});

Deno.test("secrets: any name with 'credential' in a visible home or its .config is covered", () => {
  const fs = fakeFs(["/home/bob/my-credentials.json", "/home/bob/.config/Credentials.db", "/home/bob/notes"]);
  assert.ok(CREDENTIAL_NAME.test("gcloud-CREDENTIAL"));
  const masks = secretMasks(["/home/bob"], secretHomes(HOME, fs), fs);
  assert.deepEqual(masks.files, ["/home/bob/.config/Credentials.db", "/home/bob/my-credentials.json"]);
});

Deno.test("secrets: a link is followed once and its target covered where a grant shows it", () => {
  const fs = fakeFs([], ["/work/keys"], { "/home/bob/.ssh": "/work/keys" });
  assert.deepEqual(secretMasks(["/home/bob", "/work"], secretHomes(HOME, fs), fs).dirs, ["/work/keys"]);
  // Its target hidden anyway: nothing to cover.
  assert.deepEqual(secretMasks(["/home/bob"], secretHomes(HOME, fs), fs).dirs, []);
});

Deno.test("coverSecrets: merged with the artifact covers, outermost only; a backend that cannot cover refuses", () => {
  const fs = fakeFs(["/home/bob/.netrc", "/home/bob/.config/gh/hosts.yml"], ["/home/bob/.ssh"]);
  const policy = {
    exec: [],
    fs: { read: ["/home/bob"], write: [] },
    source: "preset:agent",
  } as unknown as Policy;
  const covers = coverSecrets(policy, ["/home/bob/.config"], HOME, true, fs);
  assert.deepEqual(covers.hide, ["/home/bob/.config", "/home/bob/.ssh"]);
  assert.deepEqual(covers.hideFiles, ["/home/bob/.netrc"]);
  assert.throws(() => coverSecrets(policy, [], HOME, false, fs), { code: "E_SANDBOX_UNAVAILABLE" });
  assert.deepEqual(coverSecrets({ ...policy, fs: { read: ["/srv"], write: [] } }, [], HOME, false, fs), {
    hide: [],
    hideFiles: [],
  });
});
