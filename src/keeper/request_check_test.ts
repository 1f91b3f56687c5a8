/**
 * The keeper's request check (`_request_check.ts`, generated from the schema's JSON Schema) holds to
 * `KeeperRequestSchema`, the zod schema it comes from: both take and refuse the same documents.
 */
import assert from "node:assert/strict";
import { KeeperRequestSchema } from "../protocol/mod.ts";
import { isKeeperRequest } from "./_request_check.ts";
import { decodeKeeperRequest } from "./messages.ts";

const VALID: readonly Record<string, unknown>[] = [
  { op: "spawn", id: "s1", argv: ["sh"], env: {}, cols: 80, rows: 24, tty: true, targets: [] },
  {
    op: "spawn",
    id: "s2",
    argv: ["sh", "-c", "x"],
    argv0: "-sh",
    env: { A: "1", "": "" },
    cwd: "/tmp",
    cols: 1,
    rows: 1,
    tty: false,
    ctty: false,
    targets: [3, 4, 9],
  },
  { op: "resume", id: "s1", from: 0 },
  { op: "ack", id: "s1", offset: 2 ** 53 - 1 },
  { op: "release", id: "" },
  { op: "close_input", id: "s1", after: 4096 },
];

/** Values a field is set to in the mutations: each type JSON has, and the numbers at every bound. */
const VALUES: readonly unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1,
  2,
  3,
  1.5,
  -0.5,
  2 ** 53,
  2 ** 53 - 1,
  -(2 ** 53),
  1e308,
  "",
  "x",
  "3",
  [],
  ["x"],
  [3],
  [2],
  [3.5],
  {},
  { A: "1" },
  { A: 1 },
  "spawn",
  "release",
];

function agree(value: unknown, label: string): void {
  const zod = KeeperRequestSchema.safeParse(value).success;
  assert.equal(
    isKeeperRequest(value),
    zod,
    `${label}: ${JSON.stringify(value)} (zod ${zod ? "takes" : "refuses"} it)`,
  );
}

Deno.test("isKeeperRequest takes every valid request, as KeeperRequestSchema does", () => {
  for (const request of VALID) {
    // zod's output is its input: the keeper, which uses the document as it is, misses no default or transform.
    assert.deepEqual(KeeperRequestSchema.parse(request), request, JSON.stringify(request));
    assert.equal(isKeeperRequest(request), true, JSON.stringify(request));
  }
});

Deno.test("isKeeperRequest and KeeperRequestSchema agree on each field removed, replaced or added", () => {
  let refused = 0;
  for (const request of VALID) {
    const keys = [...Object.keys(request), "op", "id", "from", "offset", "after", "extra", "targets"];
    for (const key of keys) {
      const { [key]: _gone, ...without } = request;
      agree(without, `without ${key}`);
      for (const value of VALUES) {
        const changed = { ...request, [key]: value };
        agree(changed, `${key} set`);
        if (!KeeperRequestSchema.safeParse(changed).success) refused++;
      }
    }
  }
  // The mutations reach both answers (a check that took or refused everything would not pass the above,
  // but say it): most are refused.
  assert.ok(refused > 500, `only ${refused} mutations refused`);
});

Deno.test("isKeeperRequest refuses what is not a request object", () => {
  for (const value of [null, undefined, 0, "", "release", [], [VALID[4]], true]) agree(value, "root");
});

Deno.test("decodeKeeperRequest refuses a __proto__ key anywhere (zod would drop it, the check would read it)", () => {
  for (
    const text of [
      '{"op":"release","id":"s","__proto__":{"x":1}}',
      '{"__proto__":{"op":"release","id":"s"}}',
      '{"op":"spawn","id":"s","argv":["x"],"env":{"__proto__":"y"},"cols":1,"rows":1,"tty":true,"targets":[]}',
      '{"op":"spawn","id":"s","argv":["x"],"env":{"__proto__":3},"cols":1,"rows":1,"tty":true,"targets":[]}',
    ]
  ) {
    const decoded = decodeKeeperRequest(new TextEncoder().encode(text));
    assert.ok("refusal" in decoded, text);
    // The refusal still names the request's id when it has one, so that the daemon's call fails at once.
    const id = (JSON.parse(text) as { id?: unknown }).id;
    assert.equal(
      decoded.refusal.op === "error" ? decoded.refusal.id : null,
      typeof id === "string" ? id : undefined,
    );
  }
  // Other keys JSON text can name: the two agree (a repeated key keeps its last value in both).
  for (
    const text of [
      '{"op":"release","id":"s","constructor":1}',
      '{"op":"release","id":"s","op":"ack"}',
      '{"op":"ack","id":"s","offset":1,"op":"release"}',
      '{"op":"spawn","id":"s","argv":["x"],"env":{"constructor":"y"},"cols":1,"rows":1,"tty":true,"targets":[]}',
    ]
  ) {
    const json = JSON.parse(text);
    agree(json, text);
    assert.equal("request" in decodeKeeperRequest(new TextEncoder().encode(text)), isKeeperRequest(json));
  }
});

Deno.test("isKeeperRequest and KeeperRequestSchema agree on random documents (seeded)", () => {
  let seed = 0x2765;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  let taken = 0;
  for (let i = 0; i < 3000; i++) {
    const doc: Record<string, unknown> = { ...pick(VALID) };
    for (let n = Math.floor(next() * 3); n > 0; n--) {
      const key = pick([...Object.keys(doc), "op", "id", "argv", "env", "targets", "cols", "z"]);
      if (next() < 0.3) delete doc[key];
      else doc[key] = pick(VALUES);
    }
    agree(doc, `document ${i}`);
    if (isKeeperRequest(doc)) {
      taken++;
      assert.deepEqual(KeeperRequestSchema.parse(doc), doc, `document ${i}: zod's output differs`);
    }
  }
  assert.ok(taken > 300 && taken < 2700, `${taken} of 3000 taken: the mix should reach both answers`);
});
