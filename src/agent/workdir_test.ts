import assert from "node:assert/strict";
import { resolveWorkdir } from "./workdir.ts";
import type { Policy } from "../policy/mod.ts";

function policy(read: string[]): Policy {
  return { source: "preset:agent", exec: [], fs: { read, write: [] } } as unknown as Policy;
}

Deno.test("workdir: absent is the server's; relative resolves against it; shown ones are honoured", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  try {
    await Deno.mkdir(`${dir}/sub/deeper`, { recursive: true });
    assert.equal(resolveWorkdir(undefined, dir, policy([dir])), dir);
    assert.equal(resolveWorkdir("sub/deeper", dir, policy([dir])), `${dir}/sub/deeper`);
    assert.equal(resolveWorkdir("sub/..", dir, policy([dir])), dir);
    assert.equal(resolveWorkdir(`${dir}/sub`, "/", policy([dir])), `${dir}/sub`);
    // Without a sandbox any existing directory will do.
    assert.equal(resolveWorkdir("/", dir, null), "/");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("workdir: missing, a file, or hidden by the policy is E_SPAWN_CWD with its reason, never /tmp", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  try {
    await Deno.writeTextFile(`${dir}/file`, "");
    const refused = (requested: string, reason: string, message: RegExp) =>
      assert.throws(() => resolveWorkdir(requested, `${dir}`, policy([`${dir}/shown`])), (error: Error) => {
        const { code, details } = error as unknown as { code: string; details: { reason: string } };
        assert.equal(code, "E_SPAWN_CWD");
        assert.equal(details.reason, reason);
        assert.match(error.message, message);
        return true;
      });
    refused("nope", "missing", /does not exist/);
    refused("file", "not_directory", /not a directory/);
    refused(".", "hidden", /not visible under policy "agent"/);
    refused("/etc", "hidden", /not visible/);
    refused("/tmp", "hidden", /sandbox's \/tmp is its own/);
    // A link into a hidden place is judged by where it leads.
    await Deno.mkdir(`${dir}/shown`);
    await Deno.symlink("/etc", `${dir}/shown/etc`);
    refused("shown/etc", "hidden", /not visible/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
