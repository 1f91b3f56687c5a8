/**
 * Driver input: the NDJSON messages a driver writes to `specter run`'s stdin (or passes to
 * `Session.send`). Every message carries `"v": 1`.
 *
 * @module
 */
import { z } from "zod";
import { ProtocolError } from "../errors.ts";
import { clip } from "../suggest.ts";
import { PROTOCOL_VERSION, type SignalNameSchema } from "./frames.ts";
import { DURATION_TOO_LONG, MAX_DURATION_MS } from "./durations.ts";

/** The signals a driver may send. */
export const DRIVER_SIGNALS = [
  "INT",
  "TERM",
  "KILL",
  "HUP",
  "QUIT",
  "TSTP",
  "CONT",
  "WINCH",
  "USR1",
  "USR2",
] as const satisfies readonly z.infer<typeof SignalNameSchema>[];

const v = z.literal(PROTOCOL_VERSION);

/**
 * The largest terminal a driver (or `--cols`/`--rows`) may ask for. 1000 × 500 cells: far beyond any real
 * screen, while the terminal model and a `snapshot` with per-cell attributes stay within tens of MB and
 * about a second (10000 × 10000 took 1.2 GB and 6 s).
 */
export const MAX_COLS = 1000;
/** The largest number of rows; see {@link MAX_COLS}. */
export const MAX_ROWS = 500;
/** The longest driver line, newline excluded. Longer lines are discarded up to their newline. */
export const MAX_DRIVER_LINE_BYTES = 1 << 20;

/** `value` as JSON (`nothing` for undefined), clipped to `ECHO_CHARS` (`suggest.ts`) characters. */
export function excerpt(value: unknown): string {
  return clip(JSON.stringify(value) ?? "nothing");
}

// Standard base64 with padding; linear (no backtracking) on a line of the largest size.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** True when `data` is standard, padded base64 (what a binary `input` message must carry). */
export function isBase64(data: string): boolean {
  return BASE64.test(data);
}

/** Type bytes into the terminal: UTF-8 text, or base64 when `binary` is true. */
export const InputMessageSchema = z.strictObject({
  v,
  type: z.literal("input"),
  data: z.string(),
  binary: z.boolean().optional(),
});

/** Press a named key, e.g. `enter`, `ctrl-c`, `alt-x`, `shift-up`, `f5`. */
export const KeyMessageSchema = z.strictObject({ v, type: z.literal("key"), key: z.string().min(1).max(64) });

/** Resize the terminal (the child gets SIGWINCH). */
export const ResizeMessageSchema = z.strictObject({
  v,
  type: z.literal("resize"),
  cols: z.int().min(1).max(MAX_COLS),
  rows: z.int().min(1).max(MAX_ROWS),
});

/** Send a signal to the program (the direct child). */
export const SignalMessageSchema = z.strictObject({
  v,
  type: z.literal("signal"),
  signal: z.enum(DRIVER_SIGNALS),
});

/**
 * End the session: SIGHUP and SIGTERM to its processes, SIGKILL after `grace_ms` (default 2000; at most
 * {@link MAX_DURATION_MS}: a longer grace is `E_PROTOCOL`, never a timer that fires at once).
 */
export const TerminateMessageSchema = z.strictObject({
  v,
  type: z.literal("terminate"),
  grace_ms: z.int().nonnegative().max(MAX_DURATION_MS, DURATION_TOO_LONG).optional(),
});

/** Ask for a `pong` frame echoing `id`. */
export const PingMessageSchema = z.strictObject({
  v,
  type: z.literal("ping"),
  id: z.union([z.string(), z.number()]).optional(),
});

/** Ask for a `snapshot` frame of the screen (`cells`: include per-cell attributes). */
export const SnapshotMessageSchema = z.strictObject({
  v,
  type: z.literal("snapshot"),
  name: z.string().optional(),
  cells: z.boolean().optional(),
});

/** Any driver message. */
export const DriverMessageSchema = z.discriminatedUnion("type", [
  InputMessageSchema,
  KeyMessageSchema,
  ResizeMessageSchema,
  SignalMessageSchema,
  TerminateMessageSchema,
  PingMessageSchema,
  SnapshotMessageSchema,
]);

/** Any driver message. */
export type DriverMessage = z.infer<typeof DriverMessageSchema>;

const DRIVER_TYPES = new Set(DriverMessageSchema.options.map((o) => o.shape.type.value));

/**
 * Parses one NDJSON line into a driver message. Throws `E_PROTOCOL_VERSION` for a missing or unsupported
 * `v`, `E_RESIZE_RANGE` for a resize beyond {@link MAX_COLS} × {@link MAX_ROWS}, `E_PROTOCOL_BASE64` for
 * binary input that is not base64, `E_PROTOCOL` for anything else wrong, with the offending field named.
 * Messages quote at most `ECHO_CHARS` (`suggest.ts`) characters of the line.
 */
export function parseDriverLine(line: string): DriverMessage {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error: unknown) {
    throw new ProtocolError("E_PROTOCOL", `Driver line is not valid JSON: ${clip((error as Error).message)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ProtocolError("E_PROTOCOL", "Driver line must be a JSON object");
  }
  const record = value as Record<string, unknown>;
  if (record.v !== PROTOCOL_VERSION) {
    throw new ProtocolError(
      "E_PROTOCOL_VERSION",
      `Driver message version "v" must be ${PROTOCOL_VERSION}, got ${excerpt(record.v)}`,
      { details: { supported: String(PROTOCOL_VERSION) } },
    );
  }
  if (typeof record.type !== "string" || !DRIVER_TYPES.has(record.type as DriverMessage["type"])) {
    throw new ProtocolError(
      "E_PROTOCOL",
      `Unknown driver message type ${excerpt(record.type)}`,
      {
        details: { known: [...DRIVER_TYPES] },
      },
    );
  }
  const parsed = DriverMessageSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = clip(issue?.path.join(".") || "(message)");
    const range = record.type === "resize" && (field === "cols" || field === "rows") &&
      (issue?.code === "too_big" || issue?.code === "too_small");
    if (range) {
      throw new ProtocolError(
        "E_RESIZE_RANGE",
        `Resize "${field}" must be from 1 to ${field === "cols" ? MAX_COLS : MAX_ROWS}, got ${
          excerpt(record[field])
        }`,
        { details: { field, max_cols: MAX_COLS, max_rows: MAX_ROWS } },
      );
    }
    throw new ProtocolError(
      "E_PROTOCOL",
      `Invalid "${record.type}" message: field "${field}": ${clip(issue?.message ?? "invalid")}`,
      { details: { field } },
    );
  }
  const message = parsed.data;
  if (message.type === "input" && message.binary === true && !isBase64(message.data)) {
    throw new ProtocolError(
      "E_PROTOCOL_BASE64",
      `Binary input "data" is not padded standard base64: ${excerpt(message.data)}`,
      { details: { field: "data" } },
    );
  }
  return message;
}
