/**
 * The daemon's TCP listener as the CLI configures it: `--bind` and its companions turned into a
 * {@link ListenConfig}, remembered in `listen.json` (mode 0600, in the private state directory) so that
 * the next daemon listens at the same address with the same tokens, and changed on a running daemon
 * (`specter daemon listen`, `specter daemon revoke`). Nothing is written when no listener was configured.
 *
 * @module
 */
import { join } from "node:path";
import { SpecterError, UsageError } from "../errors.ts";
import type { Daemon, RemoteListen } from "../daemon/mod.ts";
import { readOwnFile } from "../daemon/mod.ts";
import { DEFAULT_MAX_CLIENTS, newToken, readTokenFile, RemoteError, TokenSet } from "../remote/mod.ts";
import { type ListenConfig, ListenConfigSchema, type RemoteInfo, RemoteInfoSchema } from "../protocol/mod.ts";
import { writeFileWhole } from "../fsafe/mod.ts";
import { absolute } from "./daemon_client.ts";
import type { FlagValues } from "./flags.ts";

/** The listener file's name in the state directory. */
export const LISTEN_FILE = "listen.json";
/** The flags that need `--bind`. */
const COMPANIONS = [
  "tls-cert",
  "tls-key",
  "token-file",
  "allow-host",
  "max-clients",
  "compress",
  "insecure-bind",
];

/** `HOST:PORT` (or `PORT`, or `[V6]:PORT`) as hostname and port; `E_USAGE` otherwise. */
export function parseBind(bind: string): { hostname: string; port: number } {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s]*)):(\d{1,5})$/.exec(bind) ?? /^()()(\d{1,5})$/.exec(bind);
  if (match === null || Number(match[3]) > 65535) {
    throw new UsageError(`Flag "--bind" takes HOST:PORT (or PORT), not "${bind.slice(0, 80)}"`);
  }
  return { hostname: match[1] || match[2] || "127.0.0.1", port: Number(match[3]) };
}

/**
 * The listener `values` ask for (null without `--bind`). Tokens: none with `--token-file` (the file has
 * them); else `previous`'s when it made some (remembered until `specter daemon revoke`), else new ones.
 */
export function listenConfigOf(values: FlagValues, previous: ListenConfig | null): ListenConfig | null {
  const bind = values.bind;
  for (const name of COMPANIONS) {
    if (bind === undefined && values[name] !== undefined) {
      throw new UsageError(`Flag "--${name}" needs --bind`);
    }
  }
  if (bind === undefined) return null;
  if (typeof bind !== "string") throw new UsageError('Flag "--bind" needs a value');
  parseBind(bind);
  const cert = values["tls-cert"];
  const key = values["tls-key"];
  if ((cert === undefined) !== (key === undefined)) {
    throw new UsageError('Flags "--tls-cert" and "--tls-key" go together');
  }
  const compress = values.compress ?? "none";
  if (compress !== "zstd" && compress !== "none") {
    throw new UsageError(`Flag "--compress" takes zstd or none, not "${String(compress).slice(0, 40)}"`);
  }
  let maxClients = DEFAULT_MAX_CLIENTS;
  if (values["max-clients"] !== undefined) {
    maxClients = Number(values["max-clients"]);
    if (!Number.isInteger(maxClients) || maxClients < 1 || maxClients > 10_000) {
      throw new UsageError('Flag "--max-clients" takes a whole number from 1 to 10000');
    }
  }
  const tokenFile = typeof values["token-file"] === "string"
    ? absolute(values["token-file"], "token-file")
    : null;
  const allow = values["allow-host"];
  const keep = tokenFile === null && previous !== null && previous.viewer_token !== null &&
    previous.control_token !== null;
  return {
    bind,
    tls_cert: typeof cert === "string" ? absolute(cert, "tls-cert") : null,
    tls_key: typeof key === "string" ? absolute(key, "tls-key") : null,
    insecure: values["insecure-bind"] === true,
    allow_hosts: (Array.isArray(allow) ? allow : [allow]).filter((n): n is string => typeof n === "string"),
    max_clients: maxClients,
    compress,
    token_file: tokenFile,
    viewer_token: tokenFile !== null ? null : keep ? previous.viewer_token : newToken(),
    control_token: tokenFile !== null ? null : keep ? previous.control_token : newToken(),
  };
}

/** `config` with new tokens (or the token file read again): what `specter daemon revoke` does. */
export function withNewTokens(config: ListenConfig): ListenConfig {
  if (config.token_file !== null) return config;
  return { ...config, viewer_token: newToken(), control_token: newToken() };
}

/** What the daemon's server takes: the TLS files and the token file are read now. */
export function listenOf(config: ListenConfig): RemoteListen {
  let tls: RemoteListen["tls"] = null;
  if (config.tls_cert !== null && config.tls_key !== null) {
    try {
      tls = { cert: Deno.readTextFileSync(config.tls_cert), key: Deno.readTextFileSync(config.tls_key) };
    } catch (error: unknown) {
      throw new RemoteError(
        "E_REMOTE_BIND",
        `Cannot read the TLS certificate or key: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }
  const tokens = config.token_file !== null ? TokenSet.of(readTokenFile(config.token_file)) : TokenSet.of({
    tokens: [
      { token: config.viewer_token!, scope: "viewer", label: "viewer token (made by the daemon)" },
      { token: config.control_token!, scope: "control", label: "control token (made by the daemon)" },
    ],
  });
  return {
    ...parseBind(config.bind),
    tls,
    insecure: config.insecure,
    tokens,
    allowHosts: config.allow_hosts,
    maxClients: config.max_clients,
    compress: config.compress,
  };
}

/**
 * The remembered listener, or null (none configured). A damaged file is `E_REMOTE_BIND`; one that is not
 * this user's own (or a state directory that is not private) is `E_DAEMON_UNTRUSTED`.
 */
export function loadListenConfig(stateDir: string): ListenConfig | null {
  const bytes = readOwnFile(stateDir, LISTEN_FILE, 64 * 1024, "listener file");
  if (bytes === null) return null;
  try {
    return ListenConfigSchema.parse(JSON.parse(new TextDecoder().decode(bytes)));
  } catch (error: unknown) {
    const path = join(stateDir, LISTEN_FILE);
    throw new RemoteError(
      "E_REMOTE_BIND",
      `The listener file "${path}" is damaged (specter daemon listen again)`,
      {
        cause: error,
        details: { path },
      },
    );
  }
}

/** Writes `listen.json` (0600) and `remote.json` (0600, for `specter url`) of a daemon listening at `url`. */
export function rememberListener(stateDir: string, config: ListenConfig, url: string): void {
  // Port 0 picked a free port: the next daemon takes that one again, so that addresses given out still work.
  const { hostname, port } = parseBind(config.bind);
  const taken = Number(new URL(url).port || (url.startsWith("https:") ? 443 : 80));
  const saved = port === 0
    ? { ...config, bind: `${hostname.includes(":") ? `[${hostname}]` : hostname}:${taken}` }
    : config;
  writeFileWhole(join(stateDir, LISTEN_FILE), JSON.stringify(saved) + "\n", "listener file", 0o600);
  const info: RemoteInfo = RemoteInfoSchema.parse({
    url,
    pid: Deno.pid,
    tls: config.tls_cert !== null,
    compress: config.compress,
    token_file: config.token_file,
    viewer_token: config.viewer_token,
    control_token: config.control_token,
  });
  writeFileWhole(join(stateDir, "remote.json"), JSON.stringify(info) + "\n", "remote access file", 0o600);
}

/** Removes `listen.json` and `remote.json`: no listener any more. */
export function forgetListener(stateDir: string): void {
  for (const name of [LISTEN_FILE, "remote.json"]) {
    try {
      Deno.removeSync(join(stateDir, name));
    } catch {
      // Not there: nothing to forget.
    }
  }
}

/** What the daemon's `control` option takes. */
export type DaemonControl = (
  daemon: Daemon,
  method: "daemon.listen" | "daemon.revoke",
  params: unknown,
) => Promise<unknown>;

/**
 * `daemon.listen` (params `{flags}` with `--bind` and its companions, paths absolute; or `{off: true}`) and
 * `daemon.revoke` (new tokens, or the token file read again), for the daemon's `control` option.
 */
export function listenControl(stateDir: string): DaemonControl {
  return async (daemon: Daemon, method: "daemon.listen" | "daemon.revoke", params: unknown) => {
    const p = (params ?? {}) as { flags?: unknown; off?: unknown };
    if (method === "daemon.listen" && p.off === true) {
      await daemon.relisten(null);
      forgetListener(stateDir);
      return { listener: null };
    }
    const previous = loadListenConfig(stateDir);
    let config: ListenConfig | null;
    if (method === "daemon.revoke") {
      if (previous === null || daemon.remoteUrl === null) {
        throw new RemoteError(
          "E_REMOTE_BIND",
          "The daemon listens on no TCP address: there is no token to revoke",
        );
      }
      config = withNewTokens(previous);
    } else {
      if (typeof p.flags !== "object" || p.flags === null || Array.isArray(p.flags)) {
        throw new UsageError('"daemon.listen" takes {flags} or {off: true}');
      }
      config = listenConfigOf(p.flags as FlagValues, previous);
      if (config === null) throw new UsageError("specter daemon listen needs HOST:PORT");
    }
    const listen = listenOf(config);
    let url: string | null;
    try {
      url = await daemon.relisten(listen);
    } catch (error: unknown) {
      // None listens now: `specter url` must not print the old address.
      forgetRemoteInfo(stateDir);
      throw error instanceof SpecterError
        ? error
        : new RemoteError("E_REMOTE_BIND", String(error), { cause: error });
    }
    rememberListener(stateDir, config, url!);
    return { listener: url };
  };
}

function forgetRemoteInfo(stateDir: string): void {
  try {
    Deno.removeSync(join(stateDir, "remote.json"));
  } catch {
    // Not there.
  }
}
