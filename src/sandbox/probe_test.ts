import assert from "node:assert/strict";
import { findSetsid, SETSID_CANDIDATES } from "./probe.ts";

Deno.test("findSetsid: util-linux's setsid is found where the host has it", () => {
  const real = SETSID_CANDIDATES.find((path) => {
    try {
      return Deno.statSync(path).isFile && Deno.realPathSync(path).endsWith("/setsid");
    } catch {
      return false; // Not on this host.
    }
  });
  assert.equal(findSetsid(), real ?? null);
});

Deno.test("findSetsid: a link to a multi-call binary (busybox) is not taken for setsid", async () => {
  const dir = await Deno.makeTempDir({ prefix: "specter-setsid-" });
  try {
    // busybox's setsid has neither --ctty nor --wait: `setsid --ctty --wait -- program` would exit 1.
    const busybox = `${dir}/busybox`;
    await Deno.writeTextFile(busybox, "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    await Deno.symlink(busybox, `${dir}/setsid`);
    assert.equal(findSetsid([`${dir}/setsid`]), null);
    // A real file named setsid is taken, after a multi-call link in an earlier place.
    await Deno.mkdir(`${dir}/bin`);
    await Deno.writeTextFile(`${dir}/bin/setsid`, "#!/bin/sh\n", { mode: 0o755 });
    assert.equal(findSetsid([`${dir}/setsid`, `${dir}/bin/setsid`]), `${dir}/bin/setsid`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
