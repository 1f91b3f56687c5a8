/**
 * What the daemon makes of a client's line before anything is done for it: a JSON-RPC 2.0 request, and
 * each method's parameters checked against its schema. Pure, so that the whole layer can be tested (and
 * fuzzed) on text alone; the daemon calls these and nothing else to validate a call.
 *
 * @module
 */
import type { z } from "zod";
import { DaemonError } from "../errors.ts";
import {
  AgentOpenParamsSchema,
  AttachParamsSchema,
  CreateParamsSchema,
  HelloParamsSchema,
  JSONRPC_ERRORS,
  type JsonRpcRequest,
  JsonRpcRequestSchema,
  KillParamsSchema,
  NameParamsSchema,
  SendParamsSchema,
} from "../protocol/mod.ts";

/** A JSON-RPC error answered with its own code (not a Specter error's `SERVER_ERROR`). */
export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: Record<string, unknown>) {
    super(message);
  }
}

/** A client's line as a request; `E_DAEMON_PEER` when it is not JSON or not a JSON-RPC 2.0 request. */
export function parseRequest(line: string): JsonRpcRequest {
  try {
    return JsonRpcRequestSchema.parse(JSON.parse(line));
  } catch {
    throw new DaemonError("E_DAEMON_PEER", "Refused: the line is not a JSON-RPC 2.0 request");
  }
}

/** The schema of each method's parameters (`daemon.stop` takes any; others are unknown methods). */
export const METHOD_PARAMS = {
  "daemon.hello": HelloParamsSchema,
  "session.create": CreateParamsSchema,
  "session.attach": AttachParamsSchema,
  "session.detach": NameParamsSchema,
  "session.send": SendParamsSchema,
  "session.screen": NameParamsSchema,
  "session.kill": KillParamsSchema,
  "agent.open": AgentOpenParamsSchema,
} as const;

/** A method whose parameters have a schema. */
export type CheckedMethod = keyof typeof METHOD_PARAMS;

/** `params` of `method`, checked (defaults filled in); an `INVALID_PARAMS` error naming each issue. */
export function paramsOf<M extends CheckedMethod>(
  method: M,
  params: unknown,
): z.output<(typeof METHOD_PARAMS)[M]> {
  const schema: z.ZodType = METHOD_PARAMS[method];
  const result = schema.safeParse(params);
  if (!result.success) {
    throw new RpcError(
      JSONRPC_ERRORS.INVALID_PARAMS,
      result.error.issues.map((issue) => `${issue.path.join(".") || "(params)"}: ${issue.message}`).join(
        "; ",
      ),
    );
  }
  return result.data as z.output<(typeof METHOD_PARAMS)[M]>;
}
