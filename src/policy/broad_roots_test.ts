import assert from "node:assert/strict";
import { BROAD_ROOTS, broadRootReason, stripTrailingSlashes } from "./broad_roots.ts";

const HOME = "/home/me";

for (const root of BROAD_ROOTS) {
  Deno.test(`broad root ${root} is rejected`, () => {
    assert.equal(broadRootReason(root, HOME), `is the broad root "${root}"`);
  });
}

Deno.test("broad roots are compared without case (macOS file systems ignore it)", () => {
  assert.match(broadRootReason("/users", HOME) ?? "", /broad root "\/users"/);
  assert.match(broadRootReason("/USR", HOME) ?? "", /broad root/);
});

Deno.test("subpaths of broad roots are fine", () => {
  for (
    const path of ["/usr/share/doc", "/home/me/project", "/etc/hosts", "/tmp/x", "/var/lib/app", "/opt/tool"]
  ) {
    assert.equal(broadRootReason(path, HOME), null, path);
  }
});

Deno.test("the home directory itself is rejected, also with a trailing slash in HOME", () => {
  assert.equal(broadRootReason("/srv/users/me", "/srv/users/me"), 'is the home directory "/srv/users/me"');
  assert.equal(broadRootReason("/srv/users/me", "/srv/users/me/"), 'is the home directory "/srv/users/me"');
});

Deno.test("a directory containing the home directory is rejected", () => {
  assert.equal(broadRootReason("/srv/users", "/srv/users/me"), 'contains the home directory "/srv/users/me"');
  assert.equal(broadRootReason("/srv/user", "/srv/users/me"), null, "a prefix that is not a parent is fine");
});

Deno.test("an empty, relative or root home skips the home checks", () => {
  for (const home of ["", "me", "/"]) assert.equal(broadRootReason("/srv/data", home), null, home);
});

Deno.test("stripTrailingSlashes keeps the root and the empty string", () => {
  assert.equal(stripTrailingSlashes("/a/b//"), "/a/b");
  assert.equal(stripTrailingSlashes("///"), "/");
  assert.equal(stripTrailingSlashes(""), "");
});
