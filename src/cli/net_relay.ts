/**
 * `specter net-relay`: a hidden command (not in `specter help`), started by a run with a network allow
 * list through `nsenter --target PID --net`, so that it runs in that sandbox's network namespace. It
 * relays `127.0.0.1:3128` there to the run's proxy on a unix socket (see `relay/net_relay.ts`), prints
 * `ready` once it listens, and exits when its stdin closes or the sandbox's process is gone.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { runNetRelay } from "../relay/mod.ts";
import { type CommandDoc, commandOptions, type FlagTable, HELP_FLAG } from "./flag_table.ts";
import { parseFlags } from "./parse_flags.ts";
import { runAsMain, writeLine } from "./standalone.ts";

const NET_RELAY_FLAGS = {
  to: { type: "string", value: "PATH", description: "The proxy's unix socket (required)" },
  pid: {
    type: "string",
    value: "PID",
    description: "The sandbox's process; the relay ends with it (required)",
  },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** Its flags' documentation (the command is not listed in `specter help`: Specter starts it itself). */
export const NET_RELAY_DOC: CommandDoc = {
  name: "net-relay",
  usage: ["specter net-relay --to PATH --pid PID"],
  about: `Relays 127.0.0.1:3128 in the network namespace it runs in to a unix socket (started by a run with
a network allow list, inside its sandbox's network namespace; not meant to be run by hand).`,
  groups: [{ title: "Relay flags", flags: NET_RELAY_FLAGS }],
};

/** Runs `specter net-relay`. */
export async function netRelayCommand(args: readonly string[], out: (text: string) => void): Promise<number> {
  const { values, positionals } = parseFlags(args, commandOptions(NET_RELAY_DOC));
  if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]!.slice(0, 80)}"`);
  const to = values.to;
  if (typeof to !== "string" || !to.startsWith("/")) {
    throw new UsageError('Flag "--to" must be an absolute path');
  }
  const pidText = values.pid;
  const pid = typeof pidText === "string" && /^[1-9][0-9]{0,9}$/.test(pidText) ? Number(pidText) : NaN;
  if (!Number.isSafeInteger(pid)) throw new UsageError('Flag "--pid" must be a process id');
  await runNetRelay({ to, pid, stop: stdinClosed(), ready: () => out("ready") });
  return 0;
}

/** Resolves when stdin reaches its end or fails: the supervisor is done or gone. */
async function stdinClosed(): Promise<void> {
  const buffer = new Uint8Array(256);
  try {
    while ((await Deno.stdin.read(buffer)) !== null) {
      // Bytes on stdin mean nothing: only its end does.
    }
  } catch {
    // A broken stdin is as good as a closed one.
  }
}

// Run as the main module: how a run starts its relay under `deno run` (`self_command.ts`).
if (import.meta.main) {
  Deno.exit(
    await runAsMain(
      "net-relay",
      Deno.args,
      (rest) => netRelayCommand(rest, (text) => writeLine(Deno.stdout, text)),
    ),
  );
}
