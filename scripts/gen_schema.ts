/**
 * Generates the JSON Schemas in `spec/schema/` from the zod schemas (the single source of truth).
 * `deno task schema` writes them; `--check` fails when a committed file is stale.
 *
 * @module
 */
import { z } from "zod";
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

if (import.meta.main) {
  const check = Deno.args.includes("--check");
  const dir = new URL("../spec/schema/", import.meta.url);
  let stale = 0;
  for (const name of Object.keys(SCHEMAS) as (keyof typeof SCHEMAS)[]) {
    const path = new URL(name, dir);
    const text = render(name);
    if (check) {
      const current = await Deno.readTextFile(path).catch(() => "");
      if (current !== text) {
        console.error(`spec/schema/${name} is stale: run deno task schema`);
        stale++;
      }
    } else {
      await Deno.writeTextFile(path, text);
      console.log(`wrote spec/schema/${name}`);
    }
  }
  if (stale > 0) Deno.exit(1);
}
