/**
 * The agent tools as JSON-RPC 2.0 over NDJSON (one request or response per line), as `specter agent`
 * serves them on stdio. Malformed JSON is -32700, a request that is not JSON-RPC (or a line over the cap)
 * -32600, an unknown method -32601, invalid params -32602; a Specter error is -32000 with its stable code in
 * `error.data.code`. Requests run concurrently; one that fails never stops the others.
 *
 * `session.subscribe` streams a session's frames as `session.frame` notifications, in any view, from any
 * `seq`. A client that does not read never holds the program back: its subscription reads the frame log
 * at the pace its notifications are written, and one that falls behind the log's window gets an `overflow`
 * frame in place of what it missed.
 *
 * @module
 */
import type { z } from "zod";
import { SpecterError, toSpecterError } from "../errors.ts";
import {
  CloseSessionParamsSchema,
  ExecCommandParamsSchema,
  JSONRPC_ERRORS,
  JsonRpcRequestSchema,
  ListSessionsParamsSchema,
  ReadOutputParamsSchema,
  requestIdOf,
  StartParamsSchema,
  SubscribeParamsSchema,
  type TokenMode,
  UnsubscribeParamsSchema,
  WriteStdinParamsSchema,
} from "../protocol/mod.ts";
import { DriverLineSplitter } from "../frames/mod.ts";
import type { Subscription } from "../session/mod.ts";
import type { AgentTools } from "./tools.ts";
import { viewFrames } from "./view_stream.ts";

/** Longest request line taken (bytes); a longer one is answered with -32600 and skipped. */
export const MAX_REQUEST_BYTES = 1024 * 1024;
/**
 * Requests in progress, and bytes of responses not yet written, above which no more input is read until
 * they drop: a client that sends without reading slows itself down instead of growing the server's memory.
 */
export const MAX_PENDING_REQUESTS = 256;
export const MAX_UNSENT_BYTES = 8 * 1024 * 1024;

type Id = string | number | null;

/** Where the server reads requests and writes responses. */
export interface RpcIo {
  readonly input: ReadableStream<Uint8Array>;
  /** Writes one line's bytes (newline included); resolves once written. */
  write(bytes: Uint8Array): Promise<void>;
}

const encoder = new TextEncoder();

class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: Record<string, unknown>) {
    super(message);
  }
}

/**
 * Serves `tools` on `io` until the input ends; then ends every session, unless `keepSessions` (the daemon
 * serves many agents' connections on one set of tools, and an agent that reconnects finds its sessions).
 */
export async function serveAgent(
  tools: AgentTools,
  io: RpcIo,
  maxLineBytes = MAX_REQUEST_BYTES,
  keepSessions = false,
): Promise<void> {
  let queue = Promise.resolve();
  let unsent = 0;
  const send = (message: unknown): Promise<void> => {
    const line = encoder.encode(JSON.stringify(message) + "\n");
    unsent += line.length;
    queue = queue.then(() => io.write(line)).catch(() => {
      // The client is gone: nothing more can be told; the input's end will close the tools.
    }).finally(() => void (unsent -= line.length));
    return queue;
  };
  const subscriptions = new Map<string, Subscription>();
  let nextSubscription = 1;
  const pending = new Set<Promise<void>>();

  const methods: Record<string, (params: unknown) => Promise<unknown> | unknown> = {
    exec_command: (p) => tools.execCommand(parse(ExecCommandParamsSchema, p)),
    write_stdin: (p) => tools.writeStdin(parse(WriteStdinParamsSchema, p)),
    read_output: (p) => tools.readOutput(parse(ReadOutputParamsSchema, p)),
    close_session: (p) => tools.closeSession(parse(CloseSessionParamsSchema, p)),
    list_sessions: (p) => (parse(ListSessionsParamsSchema, p ?? {}), tools.listSessions()),
    "session.start": (p) => tools.start(parse(StartParamsSchema, p)),
    "session.subscribe": (p) => {
      const params = parse(SubscribeParamsSchema, p);
      const agent = tools.get(params.session_id);
      const id = `s${nextSubscription++}`;
      const subscription = agent.session.subscribe({ from: params.from_seq ?? 0 });
      subscriptions.set(id, subscription);
      // The first frames go out after the answer: it is queued in the microtask that follows this
      // handler, before any timer runs, so a client knows the subscription before its frames arrive.
      const started = new Promise<void>((resolve) => setTimeout(resolve, 0));
      void started.then(() => stream(id, subscription, params.token_mode ?? "raw", send))
        .catch((error: unknown) => {
          // The stream broke (the session's view failed): say so to the subscriber, then end it.
          void send({
            jsonrpc: "2.0",
            method: "session.error",
            params: { subscription: id, error: toRpcError(error) },
          });
        })
        .finally(() => {
          subscription.close();
          subscriptions.delete(id);
          // The stream is over (the session ended and every frame went out, or it was unsubscribed).
          void send({ jsonrpc: "2.0", method: "session.end", params: { subscription: id } });
        });
      return { subscription: id };
    },
    "session.unsubscribe": (p) => {
      const { subscription } = parse(UnsubscribeParamsSchema, p);
      const found = subscriptions.get(subscription);
      found?.close();
      subscriptions.delete(subscription);
      return { unsubscribed: found !== undefined };
    },
  };

  const handle = async (line: string): Promise<void> => {
    let id: Id = null;
    let notification = false;
    try {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new RpcError(JSONRPC_ERRORS.PARSE_ERROR, "Parse error: the line is not valid JSON");
      }
      const request = JsonRpcRequestSchema.safeParse(value);
      if (!request.success) {
        const maybe = (value as { id?: unknown } | null)?.id;
        if (typeof maybe === "string" || typeof maybe === "number") id = maybe;
        throw new RpcError(
          JSONRPC_ERRORS.INVALID_REQUEST,
          "Invalid request: not a JSON-RPC 2.0 request object",
        );
      }
      id = request.data.id ?? null;
      notification = request.data.id === undefined;
      const method = methods[request.data.method];
      if (method === undefined || !Object.hasOwn(methods, request.data.method)) {
        throw new RpcError(
          JSONRPC_ERRORS.METHOD_NOT_FOUND,
          `Method not found: "${request.data.method.slice(0, 80)}"`,
        );
      }
      const result = await method(request.data.params);
      if (request.data.id !== undefined) await send({ jsonrpc: "2.0", id, result });
    } catch (error: unknown) {
      // A notification is never answered, not even with an error (JSON-RPC 2.0, section 4.1).
      if (!notification) await send({ jsonrpc: "2.0", id, error: toRpcError(error) });
    }
  };

  // An over-long line is answered at its end, with its id when the line shows it (first or last).
  const splitter = new DriverLineSplitter(maxLineBytes, { errorAtLineEnd: true });
  const reader = io.input.getReader();
  try {
    for (;;) {
      // Back-pressure on a client that sends faster than it reads: wait for answers to go out first.
      while (pending.size >= MAX_PENDING_REQUESTS || unsent >= MAX_UNSENT_BYTES) {
        await Promise.race([queue, ...pending]);
      }
      const { value, done } = await reader.read();
      if (done) break;
      for (const result of splitter.push(value)) {
        if ("error" in result) {
          void send({
            jsonrpc: "2.0",
            id: requestIdOf(result.head, result.tail),
            error: toRpcError(result.error, JSONRPC_ERRORS.INVALID_REQUEST),
          });
          continue;
        }
        if (result.line.trim() === "") continue;
        const task = handle(result.line);
        pending.add(task);
        void task.finally(() => pending.delete(task));
      }
    }
  } finally {
    reader.releaseLock();
    // The input ended: calls that only wait (an empty write_stdin, up to five minutes) end at once; calls
    // that run something finish (a piped `exec_command` gets its answer), then every session ends.
    for (const subscription of subscriptions.values()) subscription.close();
    tools.cancelWaits();
    await Promise.all(pending);
    if (!keepSessions) await tools.close();
    await queue;
  }
}

/** Validates params (absent params are `{}`), or throws -32602 naming the problems. */
function parse<T extends z.ZodType>(schema: T, params: unknown): z.infer<T> {
  const result = schema.safeParse(params ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) =>
    `${issue.path.length > 0 ? issue.path.join(".") : "params"}: ${issue.message}`
  );
  throw new RpcError(JSONRPC_ERRORS.INVALID_PARAMS, `Invalid params: ${problems.join("; ").slice(0, 500)}`, {
    problems,
  });
}

function toRpcError(error: unknown, code?: number): { code: number; message: string; data?: unknown } {
  if (error instanceof RpcError) {
    return { code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) };
  }
  const failure = error instanceof SpecterError ? error : toSpecterError(error);
  const rpcCode = code ??
    (failure.code === "E_USAGE" ? JSONRPC_ERRORS.INVALID_PARAMS : JSONRPC_ERRORS.SERVER_ERROR);
  return { code: rpcCode, message: failure.message, data: { code: failure.code, ...failure.details } };
}

/** Streams a subscription as notifications, each written before the next frame is read. */
async function stream(
  id: string,
  subscription: Subscription,
  mode: TokenMode,
  send: (message: unknown) => Promise<void>,
): Promise<void> {
  for await (const frame of viewFrames(subscription, mode)) {
    await send({ jsonrpc: "2.0", method: "session.frame", params: { subscription: id, frame } });
  }
}
