/**
 * Attaching a client to a session: the answer, the logged frames from the client's `seq` (a huge history
 * as its tail, after an `overflow` frame), what the log failed to keep from the session's memory, then
 * the live frames, all in one turn so that none is missed or doubled. Control (typing, resizing) goes to
 * one client at a time; `take` moves it.
 *
 * @module
 */
import { join } from "node:path";
import type { z } from "zod";
import { DaemonError } from "../errors.ts";
import type { AttachParamsSchema, Frame, SessionEntry } from "../protocol/mod.ts";
import type { Peer } from "../remote/mod.ts";
import { ptyExitedOf, REMOTE_ATTACH_HISTORY_BYTES } from "./remote_access.ts";
import { listSegments, readLogText } from "./frame_store.ts";
import { type Entry, sendFrame } from "./registry.ts";
import type { DaemonLog } from "./options.ts";

/** Bytes of logged frames an attach sends before the live ones; older ones become an `overflow` frame. */
const ATTACH_HISTORY_BYTES = 32 * 1024 * 1024;

const encoder = new TextEncoder();

/**
 * Attaches `connection` to `entry`: the answer (`answer`, else an attach result), logged frames, then live
 * ones. The caller has answered nothing: this sends the answer itself (request `id`).
 */
export function attach(
  entry: Entry,
  connection: Peer,
  params: z.infer<typeof AttachParamsSchema>,
  id: string | number | null,
  log: DaemonLog,
  answer?: SessionEntry,
): void {
  const logId = entry.logId === "" ? null : entry.logId;
  if (params.log_id !== undefined && params.log_id !== logId) {
    // A client resuming a log that is gone (the session was made again): its seqs mean nothing here.
    throw new DaemonError(
      "E_LOG_SEEK",
      `Session "${entry.name}" has log "${logId}", not "${params.log_id}"`,
      {
        details: { log_id: logId },
      },
    );
  }
  const oldest = listSegments(join(entry.dir, "frames"))[0] ?? 0;
  // A seq before what rotation kept: an error for a client resuming (it would miss frames), the oldest
  // kept for one that only asks for history.
  if (params.from !== undefined && params.from < oldest && params.log_id !== undefined) {
    throw new DaemonError("E_LOG_SEEK", `Session "${entry.name}" no longer holds frame ${params.from}`, {
      details: { from: params.from, oldest },
    });
  }
  const from = Math.max(params.from ?? 0, oldest);
  const control = params.control && entry.exit === null &&
    (entry.controller === null || entry.controller === connection || params.take === true);
  if (control && entry.controller !== null && entry.controller !== connection) {
    // Taken: the client that had control watches from now on, and is told so (specter attach --take).
    entry.controller.send({
      jsonrpc: "2.0",
      method: "session.control",
      params: { name: entry.name, control: false },
    });
  }
  const records = history(entry, connection, params, from, log);
  if (control) entry.controller = connection;
  // The answer, the logged frames, then the live ones: all in this turn, so that none is missed.
  connection.send({
    jsonrpc: "2.0",
    id,
    result: answer ?? {
      name: entry.name,
      log_id: entry.logId === "" ? null : entry.logId,
      control,
      next_seq: entry.delivered + 1,
    },
  });
  // One write for the whole history: a frame per write() costs more than reading the log did.
  if (records.length > 0) {
    const name = JSON.stringify(entry.name);
    const lines = records.map((record) =>
      `{"jsonrpc":"2.0","method":"frame","params":{"name":${name},"frame":${record.text}}}\n`
    );
    connection.sendBytes(encoder.encode(lines.join("")));
  }
  if (entry.exit === null) entry.watchers.add(connection);
  else {
    if (connection.access.scope !== "local") {
      sendFrame(connection, entry.name, ptyExitedOf(entry.name, entry.exit, entry.saved));
    }
    connection.send({ jsonrpc: "2.0", method: "session.end", params: { name: entry.name } });
  }
}

/** The frames from `from` a client is sent before the live ones, as the text of each. */
function history(
  entry: Entry,
  connection: Peer,
  params: z.infer<typeof AttachParamsSchema>,
  from: number,
  log: DaemonLog,
): { seq: number; text: string }[] {
  const logged = Math.min(entry.delivered, entry.loggedTo);
  const dropped: { range: [number, number] | null } = { range: null };
  const records: { seq: number; text: string }[] = from <= logged
    ? readLogText(join(entry.dir, "frames"), {
      from,
      to: logged,
      // A damaged record claiming a seq the log was never given is not sent (nor ends the reading early).
      before: entry.loggedTo + 1,
      ...(params.log_id === undefined ? {} : { logId: params.log_id }),
      onCorrupt: (error) => log(error.message),
      // A huge history is sent as its tail: the client's queue stays bounded (see `HARD_UNSENT_BYTES`), and a
      // remote client's smaller still (reading it holds the daemon's thread).
      tailBytes: connection.access.scope === "local" ? ATTACH_HISTORY_BYTES : REMOTE_ATTACH_HISTORY_BYTES,
      onDropped: (first, last) => dropped.range = [first, last],
    })
    : [];
  if (dropped.range !== null) {
    const [first, last] = dropped.range;
    const overflow: Frame = {
      seq: last,
      ts: Date.now() / 1000,
      type: "overflow",
      reason: "lagged",
      missed_from: first,
      missed_to: last,
    };
    records.unshift({ seq: last, text: JSON.stringify(overflow) });
  }
  // Delivered but not logged (logging failed): from the session's memory, which keeps the latest
  // frames (an `overflow` frame stands in for older ones).
  if (entry.delivered > logged && entry.session !== null) {
    const memory = entry.session.subscribe({ from: Math.max(from, logged + 1) });
    for (const frame of memory.takeNow()) {
      if (frame.seq <= entry.delivered) records.push({ seq: frame.seq, text: JSON.stringify(frame) });
    }
    memory.close();
  }
  return records;
}
