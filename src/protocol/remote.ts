/**
 * Remote access to the daemon (`specter daemon --bind`): the WebSocket subprotocol names, the token file,
 * what the daemon records about its listener for `specter url`, and the errors an HTTP request is refused
 * with. The JSON-RPC over the WebSocket is the unix socket's (`daemon.ts`), one or more NDJSON lines per
 * message.
 *
 * @module
 */
import { z } from "zod";
import { SessionNameSchema } from "./daemon.ts";

/** The WebSocket subprotocol every client asks for (the server answers with it). */
export const WS_SUBPROTOCOL = "specter.v1";
/**
 * A browser cannot set headers on a WebSocket, so the page offers its token as a second subprotocol,
 * `specter.token.<token>` (as Kubernetes does): it never appears in a URL, a request line or a log.
 */
export const WS_TOKEN_PREFIX = "specter.token.";
/** The WebSocket's path. */
export const WS_PATH = "/v1/ws";
/**
 * Where a page asks whether its token still holds (`GET` with `Authorization: Bearer`): 204 yes, 401 no.
 * A browser's WebSocket never sees the handshake's 401 (only a close, code 1006); this says which it was.
 * A wrong token counts as a failed attempt, as on the WebSocket.
 */
export const TOKEN_PATH = "/v1/token";

/** What a token may do: watch sessions, or drive them too. */
export const TokenScopeSchema = z.enum(["viewer", "control"]);
/** A token's scope. */
export type TokenScope = z.infer<typeof TokenScopeSchema>;

/**
 * A token: URL- and subprotocol-safe characters only (a subprotocol is an HTTP token), long enough that
 * guessing is hopeless within the failed-attempt limits.
 */
export const TokenSchema = z.string().regex(/^[A-Za-z0-9_~.-]{24,256}$/).describe(
  "24 to 256 characters of A-Z a-z 0-9 _ ~ . -",
);

/** One token of a token file. */
export const TokenEntrySchema = z.strictObject({
  token: TokenSchema,
  scope: TokenScopeSchema,
  sessions: z.array(SessionNameSchema).max(1000).optional().describe(
    "The only sessions this token may see (and, for control, start); absent: every session",
  ),
  label: z.string().max(100).regex(/^[\x20-\x7e]*$/).optional().describe(
    "Who holds it, as the audit log names the token (the token itself is never logged)",
  ),
});
/** One token of a token file. */
export type TokenEntry = z.infer<typeof TokenEntrySchema>;

/**
 * `--token-file`'s JSON form (mode 0600, at most 64 KiB). A file holding a single bare token (one line)
 * is one control token.
 */
export const TokenFileSchema = z.strictObject({
  tokens: z.array(TokenEntrySchema).min(1).max(64),
});
/** A token file. */
export type TokenFile = z.infer<typeof TokenFileSchema>;

/**
 * `remote.json` in the state directory (mode 0600), written by a daemon that listens on TCP: where it
 * listens, and its per-start tokens when it made them (none with `--token-file`: the file has them).
 */
export const RemoteInfoSchema = z.strictObject({
  url: z.string().describe("The viewer's address (no token)"),
  pid: z.int().positive(),
  tls: z.boolean(),
  compress: z.enum(["zstd", "none"]),
  token_file: z.string().nullable().describe(
    "--token-file, or null when the tokens below were made at start",
  ),
  viewer_token: TokenSchema.nullable(),
  control_token: TokenSchema.nullable(),
});
/** `remote.json`. */
export type RemoteInfo = z.infer<typeof RemoteInfoSchema>;

/** Why an HTTP request was refused, with its status: the body is `{"error": {code, message}}`. */
export const REMOTE_REFUSALS = {
  E_REMOTE_AUTH: 401,
  E_REMOTE_ORIGIN: 403,
  E_REMOTE_HOST: 403,
  E_REMOTE_SCOPE: 403,
  E_REMOTE_LIMITED: 429,
  E_REMOTE_BUSY: 503,
  E_PATH_NOT_FOUND: 404,
  E_USAGE: 400,
} as const;
/** A refusal's code. */
export type RemoteRefusal = keyof typeof REMOTE_REFUSALS;

/** The body of a refused HTTP request. */
export const RemoteErrorBodySchema = z.strictObject({
  error: z.strictObject({
    code: z.enum(Object.keys(REMOTE_REFUSALS) as [RemoteRefusal, ...RemoteRefusal[]]),
    message: z.string(),
  }),
});

/**
 * `listen.json` in the state directory (mode 0600): the TCP listener a daemon was given (`--bind`, or
 * `specter daemon listen`), so that the next daemon listens there again with the same tokens. Written only
 * when a listener was configured; removed by `specter daemon listen off`. Paths are absolute.
 */
export const ListenConfigSchema = z.strictObject({
  bind: z.string().max(300).describe("HOST:PORT as given (a port of 0 is replaced by the port taken)"),
  tls_cert: z.string().nullable(),
  tls_key: z.string().nullable(),
  insecure: z.boolean(),
  allow_hosts: z.array(z.string().max(300)).max(64),
  max_clients: z.int().min(1).max(10_000),
  compress: z.enum(["zstd", "none"]),
  token_file: z.string().nullable().describe("--token-file, read again at each start; or null"),
  viewer_token: TokenSchema.nullable().describe("The viewer token made (null with a token file)"),
  control_token: TokenSchema.nullable().describe("The control token made (null with a token file)"),
});
/** `listen.json`. */
export type ListenConfig = z.infer<typeof ListenConfigSchema>;

/** `daemon.status`'s result (unix socket peers only): what `specter daemon status --json` prints. */
export const DaemonStatusSchema = z.strictObject({
  running: z.boolean().describe("False when no daemon answers (only the CLI prints that)"),
  pid: z.int().nullable(),
  version: z.string().nullable(),
  started: z.number().nullable().describe("When it started, in seconds since the epoch"),
  uptime_s: z.number().nullable(),
  socket: z.string(),
  state_dir: z.string(),
  listener: z.string().nullable().describe("The web viewer's address when it listens on TCP"),
  sessions: z.int().nullable().describe("Sessions it knows, running and ended"),
  running_sessions: z.int().nullable(),
  keeper_pid: z.int().nullable(),
});
/** `daemon.status`'s result. */
export type DaemonStatus = z.infer<typeof DaemonStatusSchema>;
