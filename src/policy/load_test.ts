import assert from "node:assert/strict";
import { relative } from "node:path";
import { PolicyError } from "../errors.ts";
import type { PolicyContext } from "./check.ts";
import { loadPolicy, MAX_POLICY_FILE_BYTES, readPolicy } from "./load.ts";

const CTX: PolicyContext = {
  workspace: "/work/proj",
  home: "/home/me",
  acks: { unsafeWrite: false, network: false },
};

async function withDir(fn: (dir: string) => Promise<void> | void): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "specter-policy-" }));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a preset name reads the preset", () => {
  const reading = readPolicy("basic", CTX);
  assert.equal(reading.source, "preset:basic");
  assert.equal(reading.policy?.source, "preset:basic");
  assert.deepEqual(reading.problems, []);
});

Deno.test("JSON and TOML files are read by extension; the source is the absolute path", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/p.json`, '{"version":1,"exec":["/usr/bin"]}');
    await Deno.writeTextFile(`${dir}/p.toml`, 'version = 1\nexec = ["/usr/bin"]\n');
    for (const name of ["p.json", "p.toml"]) {
      const reading = readPolicy(`${dir}/${name}`, CTX);
      assert.deepEqual(reading.problems, []);
      assert.equal(reading.source, `file:${dir}/${name}`);
      assert.equal(reading.policy?.source, `file:${dir}/${name}`);
      assert.deepEqual(reading.policy?.exec, ["/usr/bin"]);
    }
  });
});

Deno.test("a relative file path is resolved against the current directory", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/p.json`, '{"version":1}');
    const reading = readPolicy(relative(Deno.cwd(), `${dir}/p.json`), CTX);
    assert.deepEqual(reading.problems, []);
    assert.equal(reading.source, `file:${dir}/p.json`);
  });
});

Deno.test("file problems come back in document order, with the source", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/p.toml`, 'version = 1\nnetwork = "on"\n[fs]\nread = ["/etc"]\n');
    const reading = readPolicy(`${dir}/p.toml`, CTX);
    assert.equal(reading.policy, null);
    assert.equal(reading.source, `file:${dir}/p.toml`);
    assert.deepEqual(reading.problems.map((p) => p.code), ["E_POLICY_NETWORK_ACK", "E_POLICY_BROAD_ROOT"]);
  });
});

function onlyProblem(spec: string, code: string, message: RegExp): void {
  const reading = readPolicy(spec, CTX);
  assert.equal(reading.policy, null);
  assert.equal(reading.problems.length, 1);
  assert.equal(reading.problems[0]?.code, code);
  assert.equal(reading.problems[0]?.field, "(policy)");
  assert.match(reading.problems[0]!.message, message);
}

Deno.test("E_POLICY_NOT_FOUND: unknown name, missing file, empty name", async () => {
  onlyProblem(
    "strcit",
    "E_POLICY_NOT_FOUND",
    /^The policy "strcit" is neither a preset \(strict, basic, workspace, agent\) nor a file: no such file; did you mean "strict"\?$/,
  );
  onlyProblem("zzzzzz", "E_POLICY_NOT_FOUND", /no such file$/);
  await withDir(async (dir) => {
    onlyProblem(`${dir}/missing.toml`, "E_POLICY_NOT_FOUND", /neither a preset/);
    await Deno.remove(dir);
    onlyProblem(`${dir}/missing.toml`, "E_POLICY_NOT_FOUND", /neither a preset/);
    await Deno.mkdir(dir);
  });
  onlyProblem("", "E_POLICY_NOT_FOUND", /name is empty/);
});

Deno.test("E_FILE_TYPE: a directory, FIFO or device (also behind a symlink) fails at once, no hang", async () => {
  await withDir(async (dir) => {
    await Deno.mkdir(`${dir}/d.json`);
    new Deno.Command("mkfifo", { args: [`${dir}/fifo.json`] }).outputSync();
    await Deno.symlink("/dev/zero", `${dir}/zero.json`);
    await Deno.symlink("/dev/urandom", `${dir}/random.toml`);
    const started = performance.now();
    for (const name of ["d.json", "fifo.json", "zero.json", "random.toml"]) {
      onlyProblem(`${dir}/${name}`, "E_FILE_TYPE", /not a regular file/);
    }
    onlyProblem("/dev/zero", "E_FILE_TYPE", /is a char, not a regular file/);
    // A FIFO nobody writes would block a blocking open forever; a device would stream forever.
    assert.ok(performance.now() - started < 2000);
  });
});

Deno.test("E_FILE_TOO_LARGE: a policy file over the cap is refused before it is parsed", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/big.json`, " ".repeat(MAX_POLICY_FILE_BYTES + 1));
    onlyProblem(`${dir}/big.json`, "E_FILE_TOO_LARGE", /larger than 1048576 bytes/);
    await Deno.writeTextFile(`${dir}/edge.json`, " ".repeat(MAX_POLICY_FILE_BYTES));
    onlyProblem(`${dir}/edge.json`, "E_POLICY_PARSE", /not valid JSON/);
  });
});

Deno.test("E_POLICY_PARSE: wrong extension, invalid UTF-8, bad syntax", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/p.yaml`, "version: 1\n");
    onlyProblem(`${dir}/p.yaml`, "E_POLICY_PARSE", /must end in "\.json" or "\.toml"/);
    await Deno.writeFile(`${dir}/latin1.json`, new Uint8Array([0x7b, 0xe9, 0x7d]));
    onlyProblem(`${dir}/latin1.json`, "E_POLICY_PARSE", /not valid UTF-8/);
    await Deno.writeTextFile(`${dir}/bad.json`, "{");
    onlyProblem(`${dir}/bad.json`, "E_POLICY_PARSE", /not valid JSON/);
    await Deno.writeTextFile(`${dir}/bad.toml`, "version =");
    onlyProblem(`${dir}/bad.toml`, "E_POLICY_PARSE", /not valid TOML/);
  });
});

Deno.test("loadPolicy returns the frozen policy or throws a PolicyError with every problem", () => {
  const policy = loadPolicy("strict", CTX);
  assert.ok(Object.isFrozen(policy));
  assert.throws(() => loadPolicy("workspace", { ...CTX, workspace: "/" }), (e: unknown) => {
    assert.ok(e instanceof PolicyError);
    assert.equal(e.code, "E_POLICY_BROAD_ROOT");
    assert.deepEqual(e.problems.map((p) => p.code), [
      "E_POLICY_BROAD_ROOT",
      "E_POLICY_WRITE_ACK",
      "E_POLICY_BROAD_ROOT",
    ]);
    assert.match(e.message, /\(and 2 more problem\(s\)\)$/);
    assert.equal(e.details.source, "preset:workspace");
    assert.equal(e.details.field, "fs.read[0]");
    return true;
  });
});

Deno.test("deeply nested JSON and TOML policies are typed problems, never a stack overflow", async () => {
  await withDir(async (dir) => {
    const depth = 200_000;
    await Deno.writeTextFile(
      `${dir}/deep.json`,
      `{"version":1,"exec":${"[".repeat(depth)}${"]".repeat(depth)}}`,
    );
    const codes = (spec: string) => readPolicy(spec, CTX).problems.map((p) => `${p.code} ${p.field}`);
    assert.deepEqual(codes(`${dir}/deep.json`), ["E_POLICY_SCHEMA exec[0]"]);
    await Deno.writeTextFile(
      `${dir}/deep_obj.json`,
      `{"version":1,"replay":${'{"a":'.repeat(depth / 2)}1${"}".repeat(depth / 2)}}`,
    );
    assert.deepEqual(codes(`${dir}/deep_obj.json`), ["E_POLICY_UNKNOWN_KEY replay.a"]);
    await Deno.writeTextFile(
      `${dir}/deep.toml`,
      `version = 1\nexec = ${"[".repeat(depth)}${"]".repeat(depth)}\n`,
    );
    onlyProblem(`${dir}/deep.toml`, "E_POLICY_PARSE", /not valid TOML/);
  });
});

Deno.test("the agent preset shows a broad working directory as nothing; other presets refuse it", () => {
  const project = readPolicy("agent", CTX);
  assert.ok(project.policy?.fs.read.includes("/work/proj"));
  for (const workspace of ["/", "/home/me", "/tmp", "/etc", "/root"]) {
    const agent = readPolicy("agent", { ...CTX, workspace });
    assert.deepEqual(agent.problems, [], workspace);
    assert.ok(!agent.policy!.fs.read.includes(workspace), workspace);
    assert.deepEqual(agent.policy!.fs.read, project.policy!.fs.read.filter((p) => p !== "/work/proj"));
  }
  const workspace = readPolicy("workspace", {
    ...CTX,
    workspace: "/",
    acks: { unsafeWrite: true, network: false },
  });
  assert.equal(workspace.policy, null);
  assert.ok(workspace.problems.some((p) => p.code === "E_POLICY_BROAD_ROOT"));
});
