/**
 * Driver input: the NDJSON messages a driver writes to `specter run`'s stdin (or passes to
 * `Session.send`). Every message carries `"v": 1`.
 *
 * @module
 */
import { z } from "zod";
import { ProtocolError } from "../errors.ts";
import { PROTOCOL_VERSION, type SignalNameSchema } from "./schema.ts";

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

/** Type bytes into the terminal: UTF-8 text, or base64 when `binary` is true. */
export const InputMessageSchema = z.strictObject({
  v,
  type: z.literal("input"),
  data: z.string(),
  binary: z.boolean().optional(),
});

/** Press a named key, e.g. `enter`, `ctrl-c`, `alt-x`, `shift-up`, `f5`. */
export const KeyMessageSchema = z.strictObject({ v, type: z.literal("key"), key: z.string().min(1) });

/** Resize the terminal (the child gets SIGWINCH). */
export const ResizeMessageSchema = z.strictObject({
  v,
  type: z.literal("resize"),
  cols: z.int().min(1).max(10000),
  rows: z.int().min(1).max(10000),
});

/** Send a signal to the program (the direct child). */
export const SignalMessageSchema = z.strictObject({
  v,
  type: z.literal("signal"),
  signal: z.enum(DRIVER_SIGNALS),
});

/** End the session: SIGHUP and SIGTERM to its processes, SIGKILL after `grace_ms` (default 2000). */
export const TerminateMessageSchema = z.strictObject({
  v,
  type: z.literal("terminate"),
  grace_ms: z.int().nonnegative().optional(),
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
 * `v`, `E_PROTOCOL` for anything else wrong, with the offending field named.
 */
export function parseDriverLine(line: string): DriverMessage {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error: unknown) {
    throw new ProtocolError("E_PROTOCOL", `Driver line is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ProtocolError("E_PROTOCOL", "Driver line must be a JSON object");
  }
  const record = value as Record<string, unknown>;
  if (record.v !== PROTOCOL_VERSION) {
    throw new ProtocolError(
      "E_PROTOCOL_VERSION",
      `Driver message version "v" must be ${PROTOCOL_VERSION}, got ${JSON.stringify(record.v) ?? "nothing"}`,
      { details: { supported: String(PROTOCOL_VERSION) } },
    );
  }
  if (typeof record.type !== "string" || !DRIVER_TYPES.has(record.type as DriverMessage["type"])) {
    throw new ProtocolError(
      "E_PROTOCOL",
      `Unknown driver message type ${JSON.stringify(record.type) ?? "nothing"}`,
      {
        details: { known: [...DRIVER_TYPES] },
      },
    );
  }
  const parsed = DriverMessageSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join(".") || "(message)";
    throw new ProtocolError(
      "E_PROTOCOL",
      `Invalid "${record.type}" message: field "${field}": ${issue?.message}`,
      {
        details: { field },
      },
    );
  }
  return parsed.data;
}
