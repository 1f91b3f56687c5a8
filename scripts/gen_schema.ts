/**
 * Generates the JSON Schemas in `spec/schema/` from the zod schemas (the single source of truth).
 * `deno task schema` writes them; `--check` fails when a committed file is stale.
 *
 * @module
 */
import { z } from "zod";
import { Ajv2020 } from "ajv/dist/2020.js";
import standalone from "ajv/dist/standalone/index.js";
import {
  AgentOpenParamsSchema,
  AttachParamsSchema,
  AuditRecordSchema,
  BundleChecksumsSchema,
  CastEventSchema,
  CastHeaderSchema,
  CloseSessionParamsSchema,
  CreateParamsSchema,
  DaemonStatusSchema,
  DriverMessageSchema,
  ExecCommandParamsSchema,
  ExecResultSchema,
  FrameSchema,
  HelloParamsSchema,
  HelloResultSchema,
  KeeperEventSchema,
  KeeperRequestSchema,
  ListenConfigSchema,
  LogHeaderSchema,
  NetEventSchema,
  ReadOutputParamsSchema,
  RemoteErrorBodySchema,
  RemoteInfoSchema,
  ResolvedScenarioSchema,
  RunResultSchema,
  SavedSessionSchema,
  SendParamsSchema,
  SessionEntrySchema,
  SessionListingSchema,
  StartParamsSchema,
  StartResultSchema,
  SubscribeParamsSchema,
  TokenFileSchema,
  ToolResultSchema,
  ViewEventSchema,
  WriteStdinParamsSchema,
} from "../src/protocol/mod.ts";
import { ScenarioSchema } from "../src/scenario/schema.ts";
import { PolicyFileSchema } from "../src/policy/schema.ts";
import { ReplayDifferenceSchema, ReplayReportSchema } from "../src/replay/replay.ts";

/** Every generated schema: file name → zod schema and title. */
export const SCHEMAS = {
  "frame.schema.json": { schema: FrameSchema, title: "Specter frame (protocol v1)" },
  "daemon-create.schema.json": { schema: CreateParamsSchema, title: "Specter daemon session.create: params" },
  "daemon-attach.schema.json": { schema: AttachParamsSchema, title: "Specter daemon session.attach: params" },
  "daemon-send.schema.json": { schema: SendParamsSchema, title: "Specter daemon session.send: params" },
  "daemon-session.schema.json": { schema: SessionEntrySchema, title: "Specter daemon session.list entry" },
  "daemon-hello.schema.json": { schema: HelloParamsSchema, title: "Specter daemon daemon.hello: params" },
  "daemon-hello-result.schema.json": {
    schema: HelloResultSchema,
    title: "Specter daemon daemon.hello: result",
  },
  "remote-token-file.schema.json": {
    schema: TokenFileSchema,
    title: "Specter daemon --token-file (JSON form)",
  },
  "remote-info.schema.json": {
    schema: RemoteInfoSchema,
    title: "Specter daemon remote.json (for specter url)",
  },
  "daemon-listen.schema.json": {
    schema: ListenConfigSchema,
    title: "Specter daemon listen.json (the remembered listener)",
  },
  "daemon-status.schema.json": {
    schema: DaemonStatusSchema,
    title: "Specter daemon status --json",
  },
  "remote-error.schema.json": {
    schema: RemoteErrorBodySchema,
    title: "Specter daemon: a refused HTTP request's body",
  },
  "daemon-agent-open.schema.json": {
    schema: AgentOpenParamsSchema,
    title: "Specter daemon agent.open: params",
  },
  "frame-log-header.schema.json": {
    schema: LogHeaderSchema,
    title: "Specter frame log segment header (first line of sessions/NAME/frames/*.ndjson)",
  },
  "daemon-saved-session.schema.json": {
    schema: SavedSessionSchema,
    title: "Specter daemon saved session (sessions/NAME/session.json)",
  },
  "keeper-request.schema.json": {
    schema: KeeperRequestSchema,
    title: "Specter keeper message from the daemon",
  },
  "keeper-event.schema.json": { schema: KeeperEventSchema, title: "Specter keeper message to the daemon" },
  "driver.schema.json": { schema: DriverMessageSchema, title: "Specter driver message (protocol v1)" },
  "policy.schema.json": { schema: PolicyFileSchema, title: "Specter policy file (version 1)" },
  "scenario.schema.json": { schema: ScenarioSchema, title: "Specter scenario (version 1)" },
  "exec-result.schema.json": { schema: ExecResultSchema, title: "Specter exec result (specter exec stdout)" },
  "run-result.schema.json": { schema: RunResultSchema, title: "Specter scenario run result (run.json)" },
  "replay.schema.json": { schema: ReplayReportSchema, title: "Specter replay report (replay/replay.json)" },
  "audit.schema.json": { schema: AuditRecordSchema, title: "Specter audit record (audit.ndjson line)" },
  "net-event.schema.json": {
    schema: NetEventSchema,
    title: "Specter network proxy event (a net audit record's fields, with ts and event)",
  },
  "checksums.schema.json": {
    schema: BundleChecksumsSchema,
    title: "Specter bundle checksums (checksums.json)",
  },
  "scenario-resolved.schema.json": {
    schema: ResolvedScenarioSchema,
    title: "Specter resolved scenario (scenario.resolved.json)",
  },
  "agent-exec-command.schema.json": {
    schema: ExecCommandParamsSchema,
    title: "Specter agent tool exec_command: params",
  },
  "agent-write-stdin.schema.json": {
    schema: WriteStdinParamsSchema,
    title: "Specter agent tool write_stdin: params",
  },
  "agent-read-output.schema.json": {
    schema: ReadOutputParamsSchema,
    title: "Specter agent tool read_output: params",
  },
  "agent-close-session.schema.json": {
    schema: CloseSessionParamsSchema,
    title: "Specter agent tool close_session: params",
  },
  "agent-tool-result.schema.json": {
    schema: ToolResultSchema,
    title: "Specter agent tool result (exec_command, write_stdin, read_output, close_session)",
  },
  "agent-session-listing.schema.json": {
    schema: SessionListingSchema,
    title: "Specter agent list_sessions entry",
  },
  "agent-subscribe.schema.json": {
    schema: SubscribeParamsSchema,
    title: "Specter agent session.subscribe: params",
  },
  "agent-start.schema.json": {
    schema: StartParamsSchema,
    title: "Specter agent session.start: params",
  },
  "agent-start-result.schema.json": {
    schema: StartResultSchema,
    title: "Specter agent session.start: result",
  },
  "view-event.schema.json": {
    schema: ViewEventSchema,
    title: "Specter view event (specter view, token_mode compact and parsed)",
  },
  "cast-header.schema.json": {
    schema: CastHeaderSchema,
    title: "Specter recording header (.cast line 1)",
  },
  "cast-event.schema.json": {
    schema: CastEventSchema,
    title: "Specter recording event (.cast line)",
  },
  "replay-diff.schema.json": {
    schema: z.array(ReplayDifferenceSchema),
    title: "Specter replay differences (replay/diff.json)",
  },
} as const;

/** Renders one schema as formatted JSON text. */
export function render(name: keyof typeof SCHEMAS): string {
  const { schema, title } = SCHEMAS[name];
  const json = z.toJSONSchema(schema, { target: "draft-2020-12", io: "output" });
  return JSON.stringify({ $id: `https://specter.invalid/schema/${name}`, title, ...json }, null, 2) + "\n";
}

/**
 * Generated checks: zod-free validators, compiled from a schema's JSON Schema, for a process that must not
 * load zod (the keeper: zod and the protocol's schemas are ~20 MiB of its memory, for one request shape).
 * Path under the repository → the schema file it is compiled from and the exported function's name.
 * `src/keeper/request_check_test.ts` holds each to its zod schema on valid and invalid messages.
 */
export const CHECKS = {
  "src/keeper/_request_check.ts": { schema: "keeper-request.schema.json", name: "isKeeperRequest" },
} as const satisfies Record<string, { schema: keyof typeof SCHEMAS; name: string }>;

/** Renders one generated check: ajv's standalone code for the schema, with a typed export. */
export function renderCheck(path: keyof typeof CHECKS): Promise<string> {
  const { schema, name } = CHECKS[path];
  const { $id: _id, ...json } = JSON.parse(render(schema));
  // strict: the compile fails on a keyword ajv would ignore, so the check never accepts what zod refuses
  // for that reason.
  const ajv = new Ajv2020({ code: { source: true, esm: true }, strict: true });
  const code = standalone.default(ajv, ajv.compile(json));
  // Some keywords (string lengths, formats, deep equality) call ajv's runtime helpers: the generated module
  // would then import ajv after all. Refuse, rather than ship a check that loads more than it should.
  if (/\brequire\(|\bimport\b/.test(code)) throw new Error(`The check for ${schema} needs ajv's runtime`);
  const text = [
    `// Generated by scripts/gen_schema.ts from spec/schema/${schema} (deno task schema): do not edit.`,
    "// deno-lint-ignore-file",
    "// @ts-nocheck: ajv's standalone code, untyped; the export below is typed.",
    code.replace(/^"use strict";export const validate = (\w+);export default \w+;/, "const validate = $1;"),
    "",
    `/** True when \`data\` has the shape of spec/schema/${schema} (no defaults applied, no copy made). */`,
    `export function ${name}(data: unknown): boolean {`,
    "  return validate(data) === true;",
    "}",
    "",
  ].join("\n");
  return formatted(text);
}

/** `text` as `deno fmt` leaves it (the repository's settings), so that the generated file reads as code. */
async function formatted(text: string): Promise<string> {
  const fmt = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext=ts", "-"],
    cwd: new URL("../", import.meta.url),
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = fmt.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const { code, stdout } = await fmt.output();
  if (code !== 0) throw new Error("deno fmt failed on a generated check");
  return new TextDecoder().decode(stdout);
}

if (import.meta.main) {
  const check = Deno.args.includes("--check");
  // Every generated file, by its path in the repository: the JSON Schemas, then the checks made from them.
  const files: [string, () => string | Promise<string>][] = [
    ...(Object.keys(SCHEMAS) as (keyof typeof SCHEMAS)[]).map((name) =>
      [`spec/schema/${name}`, () => render(name)] as [string, () => string]
    ),
    ...(Object.keys(CHECKS) as (keyof typeof CHECKS)[]).map((path) =>
      [path, () => renderCheck(path)] as [string, () => Promise<string>]
    ),
  ];
  let stale = 0;
  for (const [path, make] of files) {
    const url = new URL(`../${path}`, import.meta.url);
    const text = await make();
    if (check) {
      if ((await Deno.readTextFile(url).catch(() => "")) !== text) {
        console.error(`${path} is stale: run deno task schema`);
        stale++;
      }
    } else {
      await Deno.writeTextFile(url, text);
      console.log(`wrote ${path}`);
    }
  }
  if (stale > 0) Deno.exit(1);
}
