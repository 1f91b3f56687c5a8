import assert from "node:assert/strict";
import { testPolicy } from "../policy/_testing.ts";
import { loadPolicy, PRESET_NAMES, type PresetName } from "../policy/mod.ts";
import { SECCOMP_RULES } from "../../profiles/seccomp_rules.ts";
import { rulesFor } from "../sandbox/seccomp/mod.ts";
import { explainPolicy, formatExplanation, type PolicyExplanation } from "./policy_explain.ts";

/** The fixed run every golden describes. */
const CWD = "/work/project";
const HOME = "/home/specter-test";

function presetExplanation(name: PresetName): PolicyExplanation {
  const policy = loadPolicy(name, {
    workspace: CWD,
    home: HOME,
    acks: { unsafeWrite: true, network: false },
  });
  return explainPolicy(policy, { cwd: CWD, home: HOME });
}

/** Compares `actual` with the golden file, or rewrites the file when `UPDATE_GOLDENS=1`. */
async function assertGolden(name: string, actual: string): Promise<void> {
  const url = new URL(`../../fixtures/goldens/explain/${name}`, import.meta.url);
  if (Deno.env.get("UPDATE_GOLDENS") === "1") {
    await Deno.mkdir(new URL(".", url), { recursive: true });
    await Deno.writeTextFile(url, actual);
    return;
  }
  assert.equal(actual, await Deno.readTextFile(url), `${name} differs (rewrite with UPDATE_GOLDENS=1)`);
}

for (const name of PRESET_NAMES) {
  Deno.test(`explain ${name}: the text matches fixtures/goldens/explain/${name}.txt`, async () => {
    await assertGolden(`${name}.txt`, formatExplanation(presetExplanation(name)) + "\n");
  });

  Deno.test(`explain ${name}: the JSON form matches fixtures/goldens/explain/${name}.json`, async () => {
    await assertGolden(`${name}.json`, JSON.stringify(presetExplanation(name), null, 2) + "\n");
  });
}

Deno.test("explain is deterministic and lists the sections in a fixed order", () => {
  const first = presetExplanation("workspace");
  assert.deepEqual(presetExplanation("workspace"), first);
  assert.deepEqual(first.allows.map((s) => s.key), [
    "exec",
    "read",
    "write",
    "network",
    "env",
    "limits",
    "cwd",
  ]);
  assert.deepEqual(first.always.map((s) => s.key), ["privileges", "isolation", "filesystem", "seccomp"]);
  assert.equal(first.source, "preset:workspace");
  assert.equal(first.cwd, CWD);
});

function section(explanation: PolicyExplanation, key: string) {
  const found = [...explanation.allows, ...explanation.always].find((s) => s.key === key);
  assert.ok(found, `no section ${key}`);
  return found;
}

Deno.test("strict: only the program runs, nothing of yours is read or written, no network", () => {
  const strict = presetExplanation("strict");
  assert.equal(section(strict, "exec").summary, "only the program you start");
  assert.match(section(strict, "read").summary, /^none of your files/);
  assert.equal(
    section(strict, "write").summary,
    "nothing on your machine (a private /tmp only, discarded when the run ends)",
  );
  assert.match(section(strict, "network").summary, /^none/);
  assert.equal(section(strict, "env").summary, "only TERM, LANG, PATH, HOME");
  assert.match(
    section(strict, "cwd").summary,
    /^\/tmp \(the working directory \/work\/project is not visible\)$/,
  );
  // Every preset caps processes (a fork bomb meets a ceiling); the rest is the run's to set.
  assert.match(section(strict, "limits").summary, /^the run is stopped when it reaches one of these/);
  assert.ok(section(strict, "limits").items.some((item) => item.startsWith("processes: 512")));
});

Deno.test("a policy with env, network, budgets and a visible home says so", () => {
  const policy = testPolicy({
    source: "file:/p.json",
    exec: ["/usr/bin/git"],
    fs: { read: ["/home/me/src", "/srv/data"], write: ["/home/me/src/out"] },
    env: ["LANG", "GIT_AUTHOR_NAME"],
    network: "on",
    budgets: {
      wall_ms: 600_000,
      cpu_seconds: 30,
      memory_bytes: 2 * 1024 ** 3,
      processes: 64,
      output_bytes: 1000,
      file_size_bytes: 1024 ** 2,
    },
  });
  const explanation = explainPolicy(policy, { cwd: "/home/me/src/app", home: "/home/me/src" });
  assert.deepEqual(section(explanation, "exec").items.slice(0, 1), ["/usr/bin/git"]);
  assert.deepEqual(section(explanation, "read").items.slice(0, 3), [
    "/home/me/src",
    "/srv/data",
    "/home/me/src/out",
  ]);
  assert.match(section(explanation, "read").items.join("\n"), /for DNS and TLS: hosts, resolv\.conf/);
  assert.deepEqual(section(explanation, "write").items[0], "/home/me/src/out");
  assert.match(section(explanation, "write").summary, /--ack-unsafe-write/);
  assert.match(section(explanation, "network").summary, /--ack-network/);
  assert.match(
    section(explanation, "env").summary,
    /, and LANG, GIT_AUTHOR_NAME when set in your environment/,
  );
  assert.ok(section(explanation, "env").items.includes("HOME=/home/me/src (your home directory)"));
  assert.ok(section(explanation, "env").items.includes("GIT_AUTHOR_NAME: your values"));
  assert.deepEqual(section(explanation, "limits").items, [
    "wall clock: 10 min (wall_ms = 600000)",
    "CPU time of all its processes: 30 s (cpu_seconds = 30)",
    "memory of all its processes: 2 GiB (memory_bytes = 2147483648)",
    "processes: 64 (processes = 64)",
    "terminal output: 1000 bytes (output_bytes = 1000)",
    "size of any file it writes: 1 MiB (file_size_bytes = 1048576)",
    "note: util-linux prlimit starts the program (it is present inside) to set the kernel limits",
  ]);
  assert.equal(section(explanation, "cwd").summary, "/home/me/src/app (the working directory)");
  assert.match(section(explanation, "isolation").summary, /the network is shared/);
});

Deno.test("the seccomp line counts every rule of the table", () => {
  assert.match(
    section(presetExplanation("strict"), "seccomp").summary,
    new RegExp(`^${rulesFor(SECCOMP_RULES, { network: false }).length} rules deny `),
  );
});

Deno.test("the text puts each section on one line and its items below", () => {
  const text = formatExplanation(presetExplanation("basic"));
  const lines = text.split("\n");
  assert.equal(lines[0], `Policy preset:basic, for a run in ${CWD}`);
  assert.ok(
    lines.includes("  Programs that may run: the program you start, and the programs in these places"),
  );
  assert.ok(lines.includes("    - /usr/local/bin"));
  assert.ok(lines.includes("Always, under the Linux sandbox (bubblewrap):"));
  assert.ok(!text.endsWith("\n"));
});
