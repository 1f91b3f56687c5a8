/**
 * The tokens remote clients present: made at each start (a viewer and a control token), or read from
 * `--token-file`. A presented token is compared with every known one in constant time (sha256 digests of
 * both sides, so lengths do not leak either), and the token itself never leaves this module except to
 * `remote.json` (mode 0600, for `specter url`).
 *
 * @module
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { RemoteError } from "./errors.ts";
import {
  type TokenEntry,
  type TokenFile,
  TokenFileSchema,
  TokenSchema,
  type TokenScope,
} from "../protocol/mod.ts";

/** Largest token file read. */
export const MAX_TOKEN_FILE_BYTES = 64 * 1024;

/** What a presented token grants. */
export interface Grant {
  readonly scope: TokenScope;
  /** The only sessions it may see, or null for all. */
  readonly sessions: ReadonlySet<string> | null;
  /** How the audit log names the token: its label, else its scope and position. */
  readonly label: string;
}

interface Known {
  readonly digest: Uint8Array;
  readonly grant: Grant;
}

function digest(text: string): Uint8Array {
  return createHash("sha256").update(text, "utf8").digest();
}

/** A new random token (32 bytes, base64url: 43 characters). */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** The tokens a daemon accepts. */
export class TokenSet {
  readonly #known: readonly Known[];

  private constructor(entries: readonly TokenEntry[]) {
    this.#known = entries.map((entry, index) => ({
      digest: digest(entry.token),
      grant: {
        scope: entry.scope,
        sessions: entry.sessions === undefined ? null : new Set(entry.sessions),
        label: entry.label ?? `${entry.scope} token #${index + 1}`,
      },
    }));
  }

  /** From a validated token file. */
  static of(file: TokenFile): TokenSet {
    return new TokenSet(file.tokens);
  }

  /** A viewer and a control token made now. */
  static generate(): { set: TokenSet; viewer: string; control: string } {
    const viewer = newToken();
    const control = newToken();
    return {
      set: new TokenSet([
        { token: viewer, scope: "viewer", label: "viewer token (made at start)" },
        { token: control, scope: "control", label: "control token (made at start)" },
      ]),
      viewer,
      control,
    };
  }

  /**
   * What `presented` grants, or null. Every known token is compared (no early exit), each in constant
   * time over equal-length digests.
   */
  check(presented: string): Grant | null {
    const theirs = digest(presented);
    let found: Grant | null = null;
    for (const known of this.#known) {
      if (timingSafeEqual(known.digest, theirs) && found === null) found = known.grant;
    }
    return found;
  }
}

/**
 * Reads `--token-file`: a regular file (not a link, not a FIFO) owned by this user, of mode 0600 or
 * stricter, at most {@link MAX_TOKEN_FILE_BYTES}, holding one bare token (a control token) or a JSON token
 * list ({@link TokenFileSchema}). Checked on the opened descriptor, which must be the file looked at.
 */
export function readTokenFile(path: string): TokenFile {
  const refuse = (why: string, cause?: unknown): never => {
    throw new RemoteError("E_REMOTE_TOKEN_FILE", `The token file "${path}" ${why}`, {
      cause,
      details: { path },
    });
  };
  let before: Deno.FileInfo;
  try {
    before = Deno.lstatSync(path);
  } catch (error: unknown) {
    return refuse("cannot be read", error);
  }
  // Looked at before opening: a FIFO would block the open, a link would be followed by it.
  if (!before.isFile) refuse("is not a regular file (links are not followed)");
  let text: string;
  const file = Deno.openSync(path, { read: true });
  try {
    const info = file.statSync();
    if (info.ino !== before.ino || info.dev !== before.dev) refuse("changed while it was opened");
    if (info.uid !== Deno.uid()) refuse(`belongs to uid ${info.uid}, not to this user (${Deno.uid()})`);
    if (((info.mode ?? 0) & 0o077) !== 0) {
      refuse(`has mode ${((info.mode ?? 0) & 0o777).toString(8)}: others may read it (chmod 600)`);
    }
    if (info.size > MAX_TOKEN_FILE_BYTES) refuse(`is larger than ${MAX_TOKEN_FILE_BYTES} bytes`);
    const buffer = new Uint8Array(MAX_TOKEN_FILE_BYTES + 1);
    let length = 0;
    for (;;) {
      const n = file.readSync(buffer.subarray(length));
      if (n === null || n === 0) break;
      length += n;
      if (length > MAX_TOKEN_FILE_BYTES) refuse(`is larger than ${MAX_TOKEN_FILE_BYTES} bytes`);
    }
    text = new TextDecoder("utf-8", { fatal: true }).decode(buffer.subarray(0, length));
  } catch (error: unknown) {
    if (error instanceof RemoteError) throw error;
    return refuse("cannot be read", error);
  } finally {
    file.close();
  }
  const trimmed = text.trim();
  if (!trimmed.startsWith("{")) {
    // One bare token: the whole file, one line.
    const token = TokenSchema.safeParse(trimmed);
    if (!token.success || trimmed.includes("\n")) {
      refuse("holds neither one token (24 to 256 of A-Z a-z 0-9 _ ~ . -) nor a JSON token list");
    }
    return { tokens: [{ token: trimmed, scope: "control", label: "control token (token file)" }] };
  }
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch (error: unknown) {
    return refuse("is not valid JSON", error);
  }
  const parsed = TokenFileSchema.safeParse(json);
  if (!parsed.success) {
    // The issue's path and what is wrong only: never a value (it may be a token), nor the name of an unknown
    // field, which zod quotes (a token written where a field name goes is one).
    const issue = parsed.error.issues[0]!;
    const what = issue.code === "unrecognized_keys"
      ? "a field other than token, scope, sessions and label"
      : issue.message;
    return refuse(`is not a valid token list (${issue.path.join(".") || "(file)"}: ${what})`);
  }
  return parsed.data;
}
