/**
 * Fuzz targets of the remote listener's files, read from a scratch directory (on tmpfs where there is one):
 *
 * - `token_file`: `--token-file` as the daemon reads it (`readTokenFile`): bare tokens and JSON lists,
 *   mutated, not UTF-8, too large, of loose modes, links and directories. Oracle: only `E_REMOTE_TOKEN_FILE`;
 *   taken only when a regular file of mode 0600 or stricter; every token taken is valid and is granted
 *   its first entry's scope by `TokenSet`; a refusal never quotes a token-like string of the file.
 * - `remote_json`: `STATE/remote.json` as `specter url` reads it (`urlFromState`). Oracle: only the documented
 *   errors; a printed address is the file's URL with the right page, session and the scope's token.
 *
 * @module
 */
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { readTokenFile, TokenSet } from "../../src/remote/tokens.ts";
import { RemoteInfoSchema, TokenFileSchema, TokenSchema } from "../../src/protocol/mod.ts";
import { SpecterError } from "../../src/errors.ts";
import { urlFromState } from "../../src/cli/url.ts";
import { Crash, expectTyped, type FuzzTarget, generateJsonish } from "./_common.ts";
import { bytesOf, mutateBytes, randomByteString, utf8 } from "./_bytes.ts";
import { randomString } from "./_mutate.ts";
import type { Prng } from "./_prng.ts";

let scratchRoot: string | null = null;

/** Where this process's scratch files go: one directory per pid (workers share it), on tmpfs if any. */
function scratchPath(): string {
  let base = Deno.env.get("TMPDIR") ?? "/tmp";
  try {
    if (Deno.statSync("/dev/shm").isDirectory) base = "/dev/shm";
  } catch {
    // No tmpfs: the system's temporary directory.
  }
  return join(base, `specter-fuzz-${Deno.pid}`);
}

function scratchRootOf(): string {
  const root = scratchPath();
  try {
    Deno.mkdirSync(root, { mode: 0o700 });
  } catch (error: unknown) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
  // Made by this user and no link: a directory someone else put there first is not used.
  const info = Deno.lstatSync(root);
  if (!info.isDirectory || info.uid !== Deno.uid()) return Deno.makeTempDirSync({ prefix: "specter-fuzz-" });
  Deno.chmodSync(root, 0o700);
  return root;
}

// Each worker (a module instance of its own) works in a directory of its own: a worker terminated as hung
// may still be writing, and the one after it must not find its files.
const WORKER_DIR = `w-${crypto.randomUUID()}`;

/** A private directory for this worker's files (on tmpfs when there is one), made once. */
export function scratchDir(name: string): string {
  scratchRoot ??= scratchRootOf();
  const dir = join(scratchRoot, WORKER_DIR, name);
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** Removes this process's scratch files (`deno task fuzz` calls it at the end; workers cannot). */
export function removeScratch(): void {
  removeQuietly(scratchRoot ?? scratchPath());
}

function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch {
    // Not there.
  }
}

// --- token_file --------------------------------------------------------------------------------------

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~.-";

function randomToken(rng: Prng, length = 24 + rng.below(40)): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[rng.below(ALPHABET.length)];
  return out;
}

const TOKEN_A = "viewer-token-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const TOKEN_B = "control.token~BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";
const TOKEN_VALUES: readonly unknown[] = [
  { tokens: [{ token: TOKEN_A, scope: "viewer" }] },
  {
    tokens: [
      { token: TOKEN_A, scope: "viewer", label: "the wall screen" },
      { token: TOKEN_B, scope: "control", sessions: ["a", "b.1"], label: "ci" },
      { token: TOKEN_A, scope: "control" },
    ],
  },
  { tokens: [{ token: TOKEN_B, scope: "control", sessions: [] }] },
];
const TOKEN_TEXTS = [...TOKEN_VALUES.map((v) => JSON.stringify(v, null, 2)), TOKEN_A, `${TOKEN_B}\n`];
const TOKEN_TOKENS = [
  '"token":',
  '"scope":"control"',
  '"sessions":["a"]',
  '"label":"x"',
  `"${TOKEN_B}":`,
  TOKEN_A,
  "\n",
  "\r\n",
  " ",
  "\uFEFF",
  "{",
  "[",
];

/** A token file's text: a bare token, a JSON list, mutated; sometimes a token put where a key goes. */
function tokenFileText(rng: Prng): string {
  const roll = rng.below(20);
  if (roll < 3) {
    const token = randomToken(rng, rng.pick([23, 24, 43, 256, 257, 24 + rng.below(233)]));
    return utf8(rng.pick(["", " ", "\n"]) + token + rng.pick(["", "\n", "\r\n", " \n\n", `\n${token}`]));
  }
  if (roll < 5) {
    // A token as a key (a hand-written file gone wrong): a refusal must not quote it.
    const token = randomToken(rng);
    return utf8(rng.pick([
      JSON.stringify({ tokens: [{ [token]: "control" }] }),
      JSON.stringify({ [token]: { scope: "viewer" } }),
      JSON.stringify({ tokens: [{ token: TOKEN_A, scope: "viewer", [token]: 1 }] }),
      JSON.stringify({ tokens: { [token]: "control" } }),
    ]));
  }
  if (roll < 6) {
    return utf8(
      JSON.stringify({ tokens: Array.from({ length: 65 }, () => ({ token: TOKEN_A, scope: "viewer" })) }),
    );
  }
  if (roll < 7) return mutateBytes(rng, utf8(rng.pick(TOKEN_TEXTS)));
  return utf8(generateJsonish(rng, TOKEN_VALUES, TOKEN_TEXTS, TOKEN_TOKENS));
}

/** Runs of token characters (24 or more) in `text`: anything that could be a token. */
function tokenLike(text: string): string[] {
  return text.match(/[A-Za-z0-9_~.-]{24,}/g) ?? [];
}

const tokenFile: FuzzTarget = {
  name: "token_file",
  about:
    "--token-file as the daemon reads it (readTokenFile, TokenSet): bare tokens, JSON lists, modes, links",
  generate(rng) {
    const kind = rng.chance(0.95) ? "file" : rng.pick(["link", "dir"]);
    const mode = rng.chance(0.8) ? 0o600 : rng.pick([0o400, 0o640, 0o604, 0o700, 0o644, 0o200]);
    const text = rng.below(1000) < 3
      ? utf8(`${randomToken(rng)}\n`) + "\n".repeat(64 * 1024)
      : tokenFileText(rng);
    return `${kind} ${mode.toString(8)}\n${rng.chance(0.03) ? randomByteString(rng, 100) : text}`;
  },
  run(input) {
    const newline = input.indexOf("\n");
    const [kind, modeText] = input.slice(0, newline).split(" ") as [string, string];
    const bytes = bytesOf(input.slice(newline + 1));
    const mode = parseInt(modeText, 8);
    const dir = scratchDir("token");
    const path = join(dir, "tokens");
    removeQuietly(path);
    const target = join(dir, "target");
    if (kind === "dir") Deno.mkdirSync(path);
    else {
      Deno.writeFileSync(kind === "link" ? target : path, bytes);
      Deno.chmodSync(kind === "link" ? target : path, mode);
      if (kind === "link") Deno.symlinkSync(target, path);
    }
    let file;
    try {
      file = readTokenFile(path);
    } catch (error: unknown) {
      if (!(error instanceof SpecterError) || error.code !== "E_REMOTE_TOKEN_FILE") throw error;
      const told = error.message.replaceAll(path, "");
      const text = new TextDecoder().decode(bytes);
      for (const run of tokenLike(text)) {
        if (told.includes(run)) throw new Crash(`A refusal quotes "${run.slice(0, 40)}…" of the file`);
      }
      return;
    }
    if (kind !== "file" || (mode & 0o077) !== 0 || bytes.length > 64 * 1024) {
      throw new Crash(`A ${kind} of mode ${modeText} and ${bytes.length} bytes was taken`);
    }
    if (!TokenFileSchema.safeParse(file).success) throw new Crash("A token file taken is not valid");
    const set = TokenSet.of(file);
    for (const entry of file.tokens) {
      if (!TokenSchema.safeParse(entry.token).success) throw new Crash("An invalid token was taken");
      const first = file.tokens.find((e) => e.token === entry.token)!;
      const grant = set.check(entry.token);
      if (grant === null || grant.scope !== first.scope) throw new Crash("A token was not granted its scope");
      const sessions = first.sessions === undefined ? undefined : [...new Set(first.sessions)].sort();
      if (!isDeepStrictEqual(grant.sessions === null ? undefined : [...grant.sessions].sort(), sessions)) {
        throw new Crash("A token was not granted its sessions");
      }
    }
    if (set.check(`${file.tokens[0]!.token}x`) !== null || set.check("") !== null) {
      throw new Crash("A token not in the file was granted");
    }
  },
};

// --- remote_json -------------------------------------------------------------------------------------

/** Stands for this process's pid in a case (a live daemon of this user's); never a real pid (> pid_max). */
const SELF_PID = 4194304;
/** Stands for the path of a valid token file in a case. */
const TOKENS_PATH = "@TOKENS@";
const URL_TOKEN_V = "v".repeat(43);
const URL_TOKEN_C = "c".repeat(43);

const REMOTE_VALUES: readonly unknown[] = [
  {
    url: "http://127.0.0.1:8080/",
    pid: SELF_PID,
    tls: false,
    compress: "none",
    token_file: null,
    viewer_token: URL_TOKEN_V,
    control_token: URL_TOKEN_C,
  },
  {
    url: "https://[::1]:8443/",
    pid: SELF_PID,
    tls: true,
    compress: "zstd",
    token_file: TOKENS_PATH,
    viewer_token: null,
    control_token: null,
  },
  {
    url: "http://127.0.0.1:1/",
    pid: 1,
    tls: false,
    compress: "none",
    token_file: "/nonexistent/tokens",
    viewer_token: null,
    control_token: null,
  },
];
const REMOTE_TEXTS = REMOTE_VALUES.map((v) => JSON.stringify(v));
const REMOTE_TOKENS = [
  '"pid":4194304',
  '"pid":0',
  '"pid":-1',
  '"token_file":null',
  `"${TOKENS_PATH}"`,
  "\n",
  "{",
  "}",
];
const URL_ARGS: readonly (readonly string[])[] = [
  [],
  ["--control"],
  ["--replay"],
  ["a"],
  ["--control", "a"],
  ["b.1"],
  [
    "x y",
  ],
  ["--replay", "--control", "zz"],
  ["a", "b"],
  ["--nope"],
];

let tokensPath: string | null = null;

const remoteJson: FuzzTarget = {
  name: "remote_json",
  about: "STATE/remote.json as specter url reads it (urlFromState), with its token file",
  generate(rng) {
    const args = rng.pick(URL_ARGS);
    const text = rng.chance(0.05)
      ? randomString(rng, rng.below(200))
      : generateJsonish(rng, REMOTE_VALUES, REMOTE_TEXTS, REMOTE_TOKENS);
    return `${JSON.stringify(args)}\n${rng.chance(0.1) ? mutateBytes(rng, utf8(text)) : utf8(text)}`;
  },
  run(input) {
    const newline = input.indexOf("\n");
    const args = JSON.parse(input.slice(0, newline)) as string[];
    const state = scratchDir("state");
    if (tokensPath === null) {
      tokensPath = join(scratchDir("url"), "tokens.json");
      Deno.writeTextFileSync(
        tokensPath,
        JSON.stringify({
          tokens: [{ token: TOKEN_A, scope: "viewer" }, {
            token: TOKEN_B,
            scope: "control",
            sessions: ["a"],
          }],
        }),
        { mode: 0o600 },
      );
    }
    const text = input.slice(newline + 1).replaceAll(String(SELF_PID), String(Deno.pid)).replaceAll(
      TOKENS_PATH,
      tokensPath,
    );
    Deno.writeFileSync(join(state, "remote.json"), bytesOf(text), { mode: 0o600 });
    const lines: string[] = [];
    const status = expectTyped(
      () => urlFromState(["--state-dir", state, ...args], (line) => lines.push(line)),
      ["E_REMOTE_BIND", "E_REMOTE_NONE", "E_REMOTE_TOKEN_FILE", "E_USAGE", "E_DAEMON_UNTRUSTED"],
    );
    if (status === undefined) return;
    if (status === null) {
      // No daemon listens (the pid in the file is gone): nothing printed, nothing started.
      if (lines.length > 0) throw new Crash(`specter url printed ${JSON.stringify(lines)} for a gone daemon`);
      return;
    }
    const info = RemoteInfoSchema.safeParse(JSON.parse(new TextDecoder().decode(bytesOf(text))));
    if (!info.success) throw new Crash("specter url took a remote.json that is not valid");
    const control = args.includes("--control");
    const name = args.find((a) => !a.startsWith("--"));
    let token = control ? info.data.control_token : info.data.viewer_token;
    if (info.data.token_file !== null) {
      const entries = readTokenFile(info.data.token_file).tokens;
      token = entries.find((t) =>
        t.scope === (control ? "control" : "viewer") &&
        (name === undefined || t.sessions === undefined || t.sessions.includes(name))
      )?.token ?? null;
    }
    const session = name === undefined ? "" : `session=${encodeURIComponent(name)}&`;
    const want = `${info.data.url}${args.includes("--replay") ? "replay" : ""}#${session}token=${token}`;
    if (status !== 0 || lines.length !== 1 || lines[0] !== want) {
      throw new Crash(
        `specter url printed ${JSON.stringify(lines)} (exit ${status}), expected ${JSON.stringify(want)}`,
      );
    }
  },
};

/** The targets of this file. */
export const FILE_TARGETS: readonly FuzzTarget[] = [tokenFile, remoteJson];
