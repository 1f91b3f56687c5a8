/**
 * The recovery of sessions after a restart: a starting daemon takes back every session its keeper holds
 * (each continues from where its frame log ends, its screen and tail rebuilt from the log, its audit
 * chain continued), records the end of those that ended while no daemon ran, and lists the sessions that
 * ended before it started from their exit records.
 *
 * @module
 */
import { join } from "node:path";
import { FrameSchema, SavedSessionSchema } from "../protocol/mod.ts";
import { adopt } from "../session/mod.ts";
import { AGENT_LOG_SHAPE } from "./agent_output_log.ts";
import { FrameStore, listSegments, readLog } from "./frame_store.ts";
import type { KeptSession } from "./keeper_client.ts";
import type { KeeperLink } from "./keeper_link.ts";
import type { Registry } from "./registry.ts";
import type { SessionHost } from "./session_host.ts";
import type { SessionRecords } from "./session_records.ts";
import { sessionDir } from "./paths.ts";
import type { DaemonLog } from "./options.ts";

/** Frames of a session's log a restarted daemon reads back to rebuild its screen and tail. */
const RESUME_HISTORY = 5000;

/** What recovery works with: the daemon's other rooms. */
export interface RecoveryParts {
  readonly stateDir: string;
  readonly registry: Registry;
  readonly keeper: KeeperLink;
  readonly host: SessionHost;
  readonly records: SessionRecords;
  readonly log: DaemonLog;
}

/** Takes back what the keeper holds: each session continues from where its log ends. */
export function takeBack(parts: RecoveryParts): void {
  for (const kept of parts.keeper.client.kept) {
    // One session that cannot be taken back never stops the daemon (nor the others).
    try {
      takeBackOne(parts, kept);
    } catch (error: unknown) {
      parts.log(`session "${kept.id}" cannot be taken back (${String(error)}); the keeper ends it`);
      const entry = parts.registry.get(kept.id);
      entry?.store?.close();
      parts.registry.delete(kept.id);
      parts.keeper.client.release(kept.id);
    }
  }
}

function takeBackOne(parts: RecoveryParts, kept: KeptSession): void {
  const { registry, host, records } = parts;
  const keeper = parts.keeper.client;
  const { id: name, held_from: heldFrom } = kept;
  const dir = sessionDir(parts.stateDir, name);
  const saved = SavedSessionSchema.parse(JSON.parse(Deno.readTextFileSync(join(dir, "session.json"))));
  const store = FrameStore.open({
    dir: join(dir, "frames"),
    session: name,
    ...(saved.agent_key === null ? {} : AGENT_LOG_SHAPE),
  });
  const from = Math.max(store.lastRaw, heldFrom);
  const oldest = listSegments(join(dir, "frames"))[0] ?? 0;
  const history = readLog(join(dir, "frames"), {
    from: Math.max(oldest, store.nextSeq - RESUME_HISTORY),
    before: store.nextSeq,
    onCorrupt: (error) => parts.log(error.message),
  }).map((record) => record.frame);
  const entry = registry.add(name, dir, saved, store);
  entry.delivered = store.nextSeq - 1;
  entry.acked = from;
  const last = history.at(-1);
  if (last?.type === "exit") {
    entry.exit = last;
    store.close();
    entry.store = null;
    keeper.release(name);
    records.auditEnd(entry, last);
    // Its end recorded as `SessionHost.run` records it, so that the next daemon lists it too.
    host.recordExit(entry, last);
    return;
  }
  const handed = keeper.resume(name, from);
  entry.session = adopt(
    {
      child: { pid: handed.pid, master: handed.master, io: handed.io, ttyPath: handed.ttyPath },
      backend: saved.backend,
      watcher: keeper,
      // Its cgroups are the keeper's (see the launch): watched again, and removed when it ends.
      cgroups: { placements: saved.cgroups, owner: keeper.keeperPid },
    },
    {
      argv: saved.argv,
      cwd: saved.cwd,
      cols: saved.cols,
      rows: saved.rows,
      // Without a terminal its input can be closed (the keeper knows; the saved session does not say).
      ...(kept.tty ? {} : { tty: false }),
      id: name,
      title: saved.title ?? undefined,
      description: saved.description ?? undefined,
      parentAgent: saved.parent_agent ?? undefined,
      // Its shell's marks are checked with the nonce they were made with.
      ...(saved.mark_nonce === null ? {} : { commandMarkNonce: saved.mark_nonce }),
      // Its deadline and output budget go on (counted from `started` and the output offset).
      ...(saved.timeout_ms === null ? {} : { timeoutMs: saved.timeout_ms }),
      ...(saved.limits === null ? {} : {
        limits: {
          memoryBytes: saved.limits.memory_bytes ?? undefined,
          cpuSeconds: saved.limits.cpu_seconds ?? undefined,
          processes: saved.limits.processes ?? undefined,
          fileSizeBytes: saved.limits.file_size_bytes ?? undefined,
        },
      }),
      ...(saved.max_output === null ? {} : { maxOutputBytes: saved.max_output }),
      // Not set up again: the program runs in the sandbox it was started in (adopt spawns nothing).
      sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" },
    },
    {
      sink: (frame) => host.sink(entry, frame),
      endInput: (written) => parts.keeper.client.closeInput(name, written),
      resume: {
        nextSeq: store.nextSeq,
        history,
        outputOffset: from,
        started: saved.started,
        inputClosed: kept.input_closed,
      },
    },
  );
  parts.log(
    `session "${name}" taken back: pid ${handed.pid}, output from offset ${from}, next seq ${store.nextSeq}`,
  );
  entry.rows = records.rowsFor(entry);
  entry.rows?.seed(history);
  entry.audit = records.resumeAudit(entry, {
    session_id: name,
    pid: handed.pid,
    output_offset: from,
    next_seq: store.nextSeq,
    keeper_pid: keeper.keeperPid,
  });
  host.run(entry);
}

/** Sessions that ended before this daemon started: listed from their exit records. */
export function loadEnded(stateDir: string, registry: Registry): void {
  let names: string[] = [];
  try {
    names = [...Deno.readDirSync(join(stateDir, "sessions"))].map((entry) => entry.name);
  } catch {
    return; // No session was ever made here.
  }
  for (const name of names) {
    if (registry.has(name)) continue;
    const dir = sessionDir(stateDir, name);
    try {
      const saved = SavedSessionSchema.parse(JSON.parse(Deno.readTextFileSync(join(dir, "session.json"))));
      const parsed = FrameSchema.parse(JSON.parse(Deno.readTextFileSync(join(dir, "exit.json"))));
      if (parsed.type !== "exit") continue;
      const exit = parsed;
      const entry = registry.add(name, dir, saved, null);
      entry.exit = exit;
      entry.delivered = exit.seq;
      entry.loggedTo = exit.seq;
    } catch {
      // Not a session directory, or one without its end recorded: not listed.
    }
  }
}
