/**
 * Generates `spec/data-model.md` from the code: the public API of `src/mod.ts` (from `deno doc`), every
 * format of `src/protocol/` with its fields (from the zod schemas), and every error code with the release
 * it first shipped in and the exit status it gives; and `docs/cli.md` from the CLI's flag tables
 * (`scripts/gen_cli_docs.ts`). `deno task docs` writes them; `--check` fails when a committed file is
 * stale (CI runs it with the schemas).
 *
 * @module
 */
import { MIGRATIONS } from "../src/history/mod.ts";
import { z } from "zod";
import { ERROR_CODE_SINCE, ERROR_CODES, type ErrorCode } from "../src/errors.ts";
import { exitCodeForError } from "../src/cli/exit_codes.ts";
import { DriverMessageSchema, FrameSchema, PROTOCOL_VERSION } from "../src/protocol/mod.ts";
import { SCHEMAS } from "./gen_schema.ts";
import { renderCliDocs } from "./gen_cli_docs.ts";

const ROOT = new URL("../", import.meta.url);

/** One JSON Schema object as `z.toJSONSchema` writes it (the parts read here). */
interface JsonSchema {
  readonly type?: string | string[];
  readonly description?: string;
  readonly properties?: Record<string, JsonSchema>;
  readonly required?: string[];
  readonly oneOf?: JsonSchema[];
  readonly anyOf?: JsonSchema[];
  readonly const?: unknown;
  readonly enum?: unknown[];
  readonly items?: JsonSchema;
}

function jsonSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { target: "draft-2020-12", io: "output" }) as JsonSchema;
}

/** A field's type in a few words. */
function typeOf(schema: JsonSchema): string {
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (schema.enum) return schema.enum.map((v) => `\`${JSON.stringify(v)}\``).join(" \\| ");
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map(typeOf).join(" \\| ");
  if (schema.type === "array") return `${schema.items ? typeOf(schema.items) : "value"}[]`;
  return Array.isArray(schema.type) ? schema.type.join(" \\| ") : schema.type ?? "object";
}

function cell(text: string | undefined): string {
  return (text ?? "").replaceAll("|", "\\|").replaceAll("\n", " ");
}

/** A table of an object schema's fields (`skip`: fields every variant shares, listed once). */
function fieldTable(schema: JsonSchema, skip: readonly string[] = []): string {
  const rows = Object.entries(schema.properties ?? {}).filter(([name]) => !skip.includes(name)).map((
    [name, field],
  ) =>
    `| \`${name}\` | ${typeOf(field)} | ${schema.required?.includes(name) ? "yes" : "no"} | ${
      cell(field.description)
    } |`
  );
  if (rows.length === 0) return "No fields of its own.\n";
  return ["| field | type | required | meaning |", "| --- | --- | --- | --- |", ...rows].join("\n") + "\n";
}

/** One section per variant of a discriminated union, named by its `type`. */
function variants(schema: JsonSchema, shared: readonly string[]): string {
  return (schema.oneOf ?? schema.anyOf ?? []).map((variant) => {
    const type = variant.properties?.type?.const;
    return `#### \`${String(type)}\`\n\n${fieldTable(variant, [...shared, "type"])}`;
  }).join("\n");
}

/** The first sentence of a doc comment ("e.g." and "i.e." do not end one). */
function firstSentence(doc: string): string {
  const paragraph = (doc.split("\n\n")[0] ?? "").replaceAll("\n", " ");
  const end = /(?<!\be\.g|\bi\.e)\.(\s|$)/.exec(paragraph);
  return end === null ? paragraph : paragraph.slice(0, end.index + 1);
}

interface DocSymbol {
  readonly name: string;
  readonly declarations: { readonly kind: string; readonly jsDoc?: { readonly doc?: string } }[];
}

/** The public API: every export of `src/mod.ts` with its kind and the first sentence of its doc. */
async function publicApi(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", "src/mod.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error("deno doc failed");
  const doc = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    nodes: Record<string, { symbols: DocSymbol[] }>;
  };
  const symbols = Object.values(doc.nodes).flatMap((n) => n.symbols);
  const rows = symbols.map((s) => {
    const first = firstSentence(s.declarations[0]?.jsDoc?.doc ?? "");
    return `| \`${s.name}\` | ${s.declarations[0]?.kind ?? ""} | ${cell(first.trim())} |`;
  }).sort();
  return ["| name | kind | what it is |", "| --- | --- | --- |", ...rows].join("\n") + "\n";
}

function errorTable(): string {
  const rows = (Object.keys(ERROR_CODES) as ErrorCode[]).map((code) =>
    `| \`${code}\` | ${ERROR_CODE_SINCE[code]} | ${exitCodeForError(code)} | ${cell(ERROR_CODES[code])} |`
  );
  return ["| code | since | exit status | meaning |", "| --- | --- | --- | --- |", ...rows].join("\n") + "\n";
}

/** The whole page. */
export async function render(): Promise<string> {
  const frame = jsonSchema(FrameSchema);
  const driver = jsonSchema(DriverMessageSchema);
  const files = Object.entries(SCHEMAS).map(([name, { title }]) =>
    `| ${title} | [\`${name}\`](schema/${name}) |`
  );
  return `<!-- Generated by \`deno task docs\` from src/ (scripts/gen_docs.ts); do not edit. -->

# Specter's data model

Everything a program, a script or an SDK exchanges with Specter: the public API of \`@specter/specter\`, the
formats of \`@specter/specter/protocol\` (frame and driver protocol version ${PROTOCOL_VERSION}) and the error codes. The
zod schemas in \`src/protocol/\` are the source of truth; from protocol version 1 on, formats only gain optional
fields, and error codes are never renamed or reused.

## Formats

| format | JSON Schema |
| --- | --- |
${files.join("\n")}

## Frames

Every frame has \`seq\` (per-session sequence number from 0, strictly increasing: the offset clients seek by) and
\`ts\` (seconds since the Unix epoch, microsecond precision), and a \`type\`:

${variants(frame, ["seq", "ts"])}
## Driver messages

Every message has \`v\` (the protocol version, ${PROTOCOL_VERSION}) and a \`type\`:

${variants(driver, ["v"])}
## The daemon's files

A daemon (\`specter daemon\`, started on first use by \`specter new\`, \`attach\`, \`ls\`, \`send\`, \`kill\` and
\`agent --daemon\`) keeps:

| path | what |
| --- | --- |
| \`$XDG_RUNTIME_DIR/specter/daemon.sock\` (else \`/tmp/specter-UID/\`) | its socket, in a 0700 directory; peers of another uid are refused (\`SO_PEERCRED\`), and clients refuse a socket, directory or listener not of their uid (\`E_DAEMON_UNTRUSTED\`) |
| \`STATE/daemon.lock\`, \`SOCKET.lock\` | \`flock\`s: one daemon per state directory and per socket |
| \`STATE/keeper.sock\`, \`STATE/keeper.lock\` | the keeper's \`SOCK_SEQPACKET\` socket (descriptors pass with \`SCM_RIGHTS\`) and lock |
| \`STATE/daemon.log\`, \`STATE/keeper.log\` | what each did (started, sessions started, taken back, ended, released, clients refused or dropped; never output), one timestamped line per event, each file rotated to \`.1\` at 1 MiB |
| \`STATE/sessions/NAME/session.json\` | the session as started ([\`daemon-saved-session.schema.json\`](schema/daemon-saved-session.schema.json)) |
| \`STATE/sessions/NAME/frames/SEQ.ndjson\` | the frame log: a header line ([\`frame-log-header.schema.json\`](schema/frame-log-header.schema.json)), then one frame per line; a frame may carry \`raw\`, the program's output bytes the log holds up to it |
| \`STATE/sessions/NAME/frames/SEQ.idx\` | a sparse index: \`seq offset\` lines (rebuildable; never trusted over the log) |
| \`STATE/sessions/NAME/exit.json\` | the \`exit\` frame of an ended session |
| \`STATE/../persist/NAME/\` (root: \`/var/lib/specter/persist/HASH/NAME/\`) | a \`--persist\` session's layer, bound at \`/home/specter\` |
| \`$XDG_DATA_HOME/specter/log.sqlite\` | the command log (below) |

\`STATE\` is \`$XDG_STATE_HOME/specter/daemon\` unless \`--state-dir\` says otherwise.

## The command log

SQLite (WAL, \`synchronous = NORMAL\`), one row per command a daemon session's shell marked (OSC 133). The schema
version is \`PRAGMA user_version\`; opening migrates forward, and a newer version is refused (\`E_LOG_WRITE\`).
Output is plain text (escape sequences removed), at most \`output_cap\` bytes kept (\`output_truncated\`,
\`output_bytes\` the original size), deflated. Times are Unix seconds.

${
    MIGRATIONS.map((sql, i) => `Version ${i + 1}:\n\n\`\`\`sql\n${sql.replace(/^ {2}/gm, "")}\n\`\`\`\n`)
      .join("\n")
  }
## Error codes

The exit status is what \`specter\` exits with when it reports the error itself.

${errorTable()}
## Public API (\`src/mod.ts\`)

${await publicApi()}`;
}

/** The generated pages: path under the repository root, and how each is rendered. */
const PAGES: readonly { readonly path: string; readonly render: () => string | Promise<string> }[] = [
  { path: "spec/data-model.md", render },
  { path: "docs/cli.md", render: renderCliDocs },
];

if (import.meta.main) {
  const check = Deno.args.includes("--check");
  let stale = 0;
  for (const page of PAGES) {
    const path = new URL(page.path, ROOT);
    const formatted = await format(await page.render());
    if (check) {
      const current = await Deno.readTextFile(path).catch(() => "");
      if (current !== formatted) {
        console.error(`${page.path} is stale: run \`deno task docs\``);
        stale++;
      }
    } else {
      await Deno.writeTextFile(path, formatted);
      console.log(`wrote ${page.path}`);
    }
  }
  if (stale > 0) Deno.exit(1);
}

/** The page as `deno fmt` leaves it (so that `deno fmt --check` and `--check` agree). */
async function format(text: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext", "md", "-"],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const out = await child.output();
  if (!out.success) throw new Error("deno fmt failed");
  return new TextDecoder().decode(out.stdout);
}
