import assert from "node:assert/strict";
import { ROOT_SANDBOX_UIDS, rootSandboxUid } from "./root_mapping.ts";

Deno.test("root's sandbox uid: in its range, the same every time, no account's or group's", () => {
  const uid = rootSandboxUid();
  assert.ok(
    uid >= ROOT_SANDBOX_UIDS.first && uid < ROOT_SANDBOX_UIDS.first + ROOT_SANDBOX_UIDS.count,
    String(uid),
  );
  // Below 2^31 (some tools read uids as signed) and systemd's foreign range; above its container range.
  assert.ok(ROOT_SANDBOX_UIDS.first + ROOT_SANDBOX_UIDS.count <= 2 ** 31 - 1);
  assert.ok(ROOT_SANDBOX_UIDS.first > 1_879_048_191);
  assert.equal(rootSandboxUid(), uid);
  for (const file of ["/etc/passwd", "/etc/group"]) {
    let ids: number[] = [];
    try {
      ids = Deno.readTextFileSync(file).split("\n").map((line) => Number(line.split(":")[2]));
    } catch {
      continue; // Not on this host.
    }
    assert.ok(!ids.includes(uid), `${uid} is in ${file}`);
  }
});
