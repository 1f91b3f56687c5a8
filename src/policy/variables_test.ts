import assert from "node:assert/strict";
import { expandVariables } from "./variables.ts";

const VALUES = { workspace: "/w/proj", home: "/home/me" };

Deno.test("workspace and home are substituted anywhere in a path", () => {
  assert.deepEqual(expandVariables("${workspace}", VALUES), {
    value: "/w/proj",
    used: ["workspace"],
    unknown: [],
  });
  assert.deepEqual(expandVariables("${home}/.cache/${workspace}${home}", VALUES), {
    value: "/home/me/.cache//w/proj/home/me",
    used: ["home", "workspace"],
    unknown: [],
  });
});

Deno.test("paths without references are unchanged", () => {
  for (const path of ["/usr/bin", "/a/$b", "/a/${", "/a/${1x}", "/a/$workspace"]) {
    assert.deepEqual(expandVariables(path, VALUES), { value: path, used: [], unknown: [] }, path);
  }
});

Deno.test("unknown references are reported once and left as written", () => {
  assert.deepEqual(expandVariables("/${project}/${project}/${HOME}", VALUES), {
    value: "/${project}/${project}/${HOME}",
    used: [],
    unknown: ["${project}", "${HOME}"],
  });
});
